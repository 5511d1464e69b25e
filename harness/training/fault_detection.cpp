// fault_detection.cpp — see fault_detection.h.
#include "training/fault_detection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "errors.h"
#include "modes/common/fault_table.h"
#include "modes/ddp/comm_hook.h"
#include "reports/verdict.h"
#include "scenarios/scenario.h"
#include "training/comparison_policy.h"

namespace ddpbench::training {
namespace {

// Note [Detectable faults]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A grad fault (modes/common/fault_injection.h) multiplies rank R's local gradient g_R of one
// tensor by (1 + eps) at step S, before the reduction (the reducer's tap on the bucket slot; the
// naive strategy's before its allreduce). eps is relative to that rank's gradient, not absolute.
// The reduction averages over the W ranks, so the averaged gradient becomes
//     g' = g + eps * g_R / W.
// The gradients check (compare/mode_comparison.h) judges the normalized error
//     max |g' - g_ref| / max |g_ref|        (full gradients; fingerprints measure alike)
// against the gradient tolerance T of comparison_policy(): the scenario's per-dtype
// gradient_float32 / gradient_float64, widened with an fp16 or bf16 comm hook to 8 ulps of the
// wire format (8 * 2^-11 = 3.9e-3, 8 * 2^-8 = 3.1e-2). With g close to g_ref (the run is
// otherwise correct) the fault's error is
//     e = |eps| / W * rho,    rho = max |g_R| / max |g|.
// rho depends on the data: about 1 when the ranks' shards give alike gradients (the usual case),
// W when rank R alone uses the tensor at step S, 0 when R's gradient of it is zero then (the
// tensor is unused there, or R has run out of batches). The later loss and parameter checks see
// only lr * e of the parameters, far less. So:
//   - up front, the fault is undetectable for rho = 1 when |eps| <= W * T: refused, naming eps, T
//     and W * T, the smallest eps the run detects (require_detectable_fault);
//   - since rho is only known after training, a grad fault whose mode then failed no check was not
//     detected, and the run FAILs saying so (undetected_fault_check) instead of passing;
//   - with --trace the small fault is not refused: the trace records its difference for `ddpbench
//     diff` to measure against a clean run (how a rounding-sized change looks there), and the run
//     itself still FAILs through undetected_fault_check.
// Examples: linear_mse float32 (T = 2e-5), W = 2: eps 1e-7 gives e = 5e-8, refused; it detects
// eps above 4e-5. --comm-hook fp16: T = 3.9e-3, so the default eps 1e-3 (e = 5e-4) is refused;
// it detects eps above 7.8e-3.

std::string fault_text(const modes::FaultSpec& f) {
  return fmt::format("grad:rank={},step={},eps={:g}{}", f.rank, f.step, f.eps,
                     f.tensor.empty() ? "" : ",tensor=" + f.tensor);
}

bool judges_ddp_gradients(const RunSetup& s) {
  return s.fault && s.fault->kind == modes::FaultKind::kGrad &&
         s.has_mode(modes::ModeKind::kSingle) && s.has_per_rank_mode();
}

double gradient_tolerance(const RunSetup& s) {
  return comparison_policy(s, modes::ModeKind::kDdp, "full").gradient_tolerance;
}

// Where the tolerance comes from, for the error line.
std::string tolerance_origin(const RunSetup& s, double tolerance) {
  const scenarios::Tolerances& t = s.spec->tolerances;
  const double own = s.context.dtype == at::kDouble ? t.gradient_float64 : t.gradient_float32;
  if (tolerance != own) {
    const char* hook = modes::ddp::comm_hook_name(s.ddp.reducer.comm_hook);
    return fmt::format("8 ulps of {}, the wire format of --comm-hook {}", hook, hook);
  }
  return fmt::format("{}'s {} gradient tolerance", s.spec->name, s.dtype_name());
}

}  // namespace

void require_detectable_fault(const RunSetup& setup) {
  if (!judges_ddp_gradients(setup) || setup.trace) return;
  const modes::FaultSpec& f = *setup.fault;
  const double tolerance = gradient_tolerance(setup);
  const auto w = static_cast<double>(setup.world_size);
  const double smallest = w * tolerance;
  if (std::abs(f.eps) > smallest) return;
  throw InputError(fmt::format(
      "--inject-fault {}: eps {:g} is below what this run can detect: scaling rank {}'s gradient "
      "by 1+eps moves the average over {} ranks by about |eps|/{} = {:g} of its size, inside "
      "the run's gradient tolerance {:g} ({}); it detects eps above {:g} ({} x {:g}): pass a "
      "larger eps",
      fault_text(f), f.eps, f.rank, setup.world_size, setup.world_size, std::abs(f.eps) / w,
      tolerance, tolerance_origin(setup, tolerance), smallest, setup.world_size, tolerance));
}

namespace {

// A failing check of one exact item, the fault that was not seen.
reports::CheckRecord unseen_fault(const modes::FaultSpec& f, std::string detail) {
  reports::CheckRecord c;
  c.name = reports::Stage::kInjectedFault;
  c.measure = reports::Measure::kExact;
  c.limit = 0;
  c.items = 1;
  c.outside = 1;
  c.error = 1;
  c.status = reports::check_status(c, {});  // fail: its one item is outside
  c.tensor = f.tensor;
  c.step = f.step;
  c.detail = std::move(detail);
  return c;
}

bool any_failed(const std::vector<reports::CheckRecord>& checks) {
  return std::any_of(checks.begin(), checks.end(), [](const reports::CheckRecord& c) {
    return c.status == reports::CheckStatus::kFail;
  });
}

}  // namespace

std::optional<reports::CheckRecord> undetected_fault_check(
    const RunSetup& setup, modes::ModeKind mode, const std::vector<reports::CheckRecord>& checks) {
  // Only the kinds whose row says so, in the modes they go into (fault_table.h).
  if (!setup.fault) return std::nullopt;
  const modes::FaultRow& row = modes::fault_row(setup.fault->kind);
  if (!row.must_be_caught || (row.modes & modes::mode_bit(mode)) == 0) return std::nullopt;
  if (row.kind == modes::FaultKind::kDesync || row.kind == modes::FaultKind::kShape) {
    // A backend that reduced mismatched collectives without an error, and numbers no check saw
    // move: the ring comparison after the mode (Note [The flight recorder]) did not run there.
    if (any_failed(checks)) return std::nullopt;
    return unseen_fault(
        *setup.fault,
        fmt::format("the injected fault {} was not detected: rank {}'s collectives differed from "
                    "its peers' from step {} on, the backend reduced them without an error, and "
                    "no check saw the result; --debug-collectives stops such a run before the "
                    "collective",
                    fault_text(*setup.fault), setup.fault->rank, setup.fault->step));
  }
  if (row.kind != modes::FaultKind::kGrad) {
    // zero's own faults (shard, owner, gather, state), which only zero's checks can see.
    if (checks.empty() || any_failed(checks)) return std::nullopt;
    const modes::FaultSpec& f = *setup.fault;
    return unseen_fault(
        f, fmt::format(
               "the injected fault {}:rank={},step={},eps={:g} was not detected: every check of "
               "zero passed. A {} ({} digits) may round a change by 1+eps away, and in lockstep "
               "the next step starts from the reference's state again, so only that step's "
               "update (within 2 ulps of each parameter), optimizer state and, with ddp in the "
               "run, matches_ddp can see it; inject a larger eps, or run free-running with ddp",
               modes::fault_name(f.kind), f.rank, f.step, f.eps, setup.dtype_name(),
               setup.context.dtype == at::kDouble ? "about 16" : "about 7"));
  }
  if (!setup.has_mode(modes::ModeKind::kSingle)) {
    // With ddp and zero judged against each other, the fault went into both alike and no
    // reference judges either (a ddp-only run is judged by nothing here: its state file is for
    // an outside oracle, which sees the fault).
    const bool pair =
        setup.has_mode(modes::ModeKind::kDdp) && setup.has_mode(modes::ModeKind::kZero);
    if (!pair || any_failed(checks)) return std::nullopt;
    return unseen_fault(
        *setup.fault,
        fmt::format("the injected fault {} was not detected: it goes into every per-rank mode of "
                    "the run alike, and without single nothing judges {}'s gradients against a "
                    "reference (zero's matches_ddp compares two faulted modes); add single to "
                    "--modes",
                    fault_text(*setup.fault), modes::mode_name(mode)));
  }
  // Without a gradients check nothing judged this mode against a reference.
  const bool judged = std::any_of(checks.begin(), checks.end(), [](const reports::CheckRecord& c) {
    return c.name == reports::Stage::kGradients;
  });
  if (!judged || any_failed(checks)) return std::nullopt;
  const modes::FaultSpec& f = *setup.fault;
  const double tolerance = gradient_tolerance(setup);
  reports::CheckRecord c = unseen_fault(f, "");
  c.detail = fmt::format(
      "the injected fault {} was not detected: every check of ddp passed (gradient tolerance "
      "{:g}). Scaling rank {}'s gradient by 1+eps moves the average over {} ranks by |eps|/{} x "
      "max|rank {}'s gradient| / max|average|, which is 0 where rank {}'s gradient of that tensor "
      "is zero at step {} (an unused parameter, or a rank out of batches); inject a larger eps, "
      "or into another tensor or step",
      fault_text(f), tolerance, f.rank, setup.world_size, setup.world_size, f.rank, f.rank, f.step);
  if (setup.spec->amp == scenarios::AmpKind::kFp16) {
    // Measured: cifar_resnet18 at a batch of 12 overflows float16 at the default 2^16 in both
    // of its first steps, and a fault there was discarded with the step.
    c.detail +=
        "; under --amp fp16 the GradScaler skips a step whose gradients overflowed and discards "
        "every rank's gradients, so a fault there has nothing to move: inject it at a step the "
        "report's skipped_steps does not list, or lower --grad-scaler-init";
  }
  return c;
}

}  // namespace ddpbench::training
