// floor_measurement.cpp — see floor_measurement.h.
#include "training/floor_measurement.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "modes/common/step_loop.h"
#include "modes/common/training_state.h"
#include "scenarios/training_recipe.h"
#include "training/lockstep.h"
#include "training/stepped_reference.h"

namespace ddpbench::training {
namespace {

using reports::Stage;

double unit_roundoff(at::ScalarType t) { return t == at::kDouble ? 0x1p-52 : 0x1p-23; }

at::Tensor floor_host_double(const at::Tensor& t) { return t.detach().to(at::kCPU, at::kDouble); }

// twin - reference, undefined where either has none (a parameter without a gradient).
at::Tensor twin_diff(const at::Tensor& twin, const at::Tensor& ref) {
  if (!twin.defined() || !ref.defined() || twin.numel() == 0 || !twin.sizes().equals(ref.sizes())) {
    return {};
  }
  return floor_host_double(twin) - floor_host_double(ref);
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  if (a.numel() == 0 || !a.sizes().equals(b.sizes())) return 0.0;
  return (floor_host_double(a) - floor_host_double(b)).abs().max().item<double>();
}

// Every tensor of the twin by name against the reference's, as absolute floors of `check`.
void set_tensor_floors(compare::MeasuredFloors& floors, Stage check, int64_t step,
                       const torch::OrderedDict<std::string, at::Tensor>& twin,
                       const torch::OrderedDict<std::string, at::Tensor>& reference) {
  for (size_t i = 0; i < reference.size() && i < twin.size(); ++i) {
    floors.set(check, step, reference[i].key(),
               max_abs_diff(twin[i].value(), reference[i].value()));
  }
}

// The twin: `rule` with its K rank chunks forwarded on their own, each chunk's loss
// backpropagated on its own and the rank gradients summed in rank order, then divided by K
// (ReferenceRule::backward_rank_by_rank). Chunk by chunk, BatchNorm normalises each chunk with
// its own statistics as ghost BatchNorm does, and random draws are seeded per rank chunk as the
// reference seeds them (Note [Same random draws in every mode]); plain single-device training is
// cut into the world's K chunks, which a per-sample mean loss splits exactly.
// Under autocast (the reference already forwards piece by piece with fresh casts) the twin also
// nudges its summed gradients (ReferenceRule::nudge_gradients, Note [Mixed precision
// free-running]), by a unit of each entry's summed piece magnitudes.
modes::single::ReferenceRule twin_of(const RunSetup& setup, modes::single::ReferenceRule rule) {
  rule.backward_rank_by_rank = true;
  if (rule.autocast_per_chunk) {
    rule.nudge_gradients = true;
    return rule;
  }
  rule.forward_chunk_by_chunk = true;
  rule.forward_per_replica = false;
  if (rule.replicas == 1) rule.replicas = setup.world_size;
  return rule;
}

// "" when a twin step taken from the reference's own state is the reference's up to rounding
// (`cap` of the step's largest gradient, in every gradient); else what differs, in words.
std::string apart_beyond_rounding(const modes::TrainResult& reference,
                                  const std::vector<at::Tensor>& diffs, double cap) {
  double largest = 0.0;
  double moved = 0.0;
  for (size_t i = 0; i < diffs.size(); ++i) {
    const at::Tensor& g = reference.gradients.back()[i];
    if (g.defined() && g.numel() > 0) largest = std::max(largest, g.abs().max().item<double>());
    if (diffs[i].defined()) moved = std::max(moved, diffs[i].abs().max().item<double>());
  }
  if (moved <= cap * largest) return "";
  return fmt::format("moved a gradient by {:.3g} of the step's largest", moved / largest);
}

// (Note [Parted trajectories]) "" while a nudged twin's step is the reference's within `cap` of
// each quantity's scale (the loss; each gradient against its largest entry); else which left it.
std::string parted_beyond_cap(modes::StepLoop& reference, const modes::TrainResult& r,
                              double loss_floor, const std::vector<at::Tensor>& diffs, double cap) {
  if (!(loss_floor <= cap * std::abs(r.losses.back()))) {
    return fmt::format("the loss moved {:.3g} of itself", loss_floor / std::abs(r.losses.back()));
  }
  const auto names = reference.module().named_parameters();
  for (size_t i = 0; i < diffs.size() && i < names.size(); ++i) {
    const at::Tensor& g = r.gradients.back()[i];
    if (!diffs[i].defined() || !g.defined() || g.numel() == 0) continue;
    const double moved = diffs[i].abs().max().item<double>();
    const double scale = g.abs().max().item<double>();
    if (!(moved <= cap * scale)) {
      return fmt::format("{}'s gradient moved {:.3g} of its largest entry", names[i].key(),
                         moved / scale);
    }
  }
  return "";
}

}  // namespace

bool can_measure_floors(const RunSetup& setup, const modes::single::ReferenceRule& rule) {
  // The twin splits the batch into rank chunks (and, with accumulation, each chunk into its
  // micro-batches): it needs more than one, arithmetic that forwarding each piece on its own does
  // not change (not SyncBN's statistics over the ranks) and a loss that splits. Under autocast the
  // reference already forwards piece by piece with fresh casts, so the twin rounds as it does
  // (Note [Mixed precision free-running]).
  if (setup.world_size < 2) return false;
  if (rule.autocast_per_chunk) return true;  // the nudged twin changes nothing else
  return !rule.sync_bn_arithmetic && !rule.forward_micro_step_by_micro_step &&
         (rule.mean_of_replica_losses || scenarios::loss_is_sample_mean(setup.spec->loss));
}

compare::MeasuredFloors measure_floors(const PhaseInputs& in,
                                       const modes::single::ReferenceRule& rule,
                                       double gradient_limit) {
  const RunSetup& s = in.setup;
  modes::TrainOptions options = SteppedReference::base_options(s);
  options.checking = true;  // each step's loss and gradients, as the run recorded them
  options.grad_record = in.grad_record;
  options.start_state = s.start_state();
  SteppedReference reference_run(in, s.spec, rule, options);
  const modes::single::ReferenceRule twin_rule = twin_of(s, rule);
  SteppedReference twin_run(in, s.spec, twin_rule, options);
  modes::StepLoop& reference = reference_run.loop();
  modes::StepLoop& twin = twin_run.loop();

  compare::MeasuredFloors floors;
  floors.cap = std::sqrt(unit_roundoff(in.context.dtype()));
  // Note [Parted trajectories].
  const bool parts = !s.lockstep && twin_rule.nudge_gradients;
  floors.judged_mode_parts = parts;
  const std::string twin_text =
      twin_rule.nudge_gradients
          ? "a twin of the reference with each rank chunk backpropagated on its own, the rank "
            "gradients summed rank by rank and every entry then moved up or down as drawn by a "
            "unit in the last place of the chunks' summed magnitudes"
          : "a twin of the reference with each rank chunk forwarded and backpropagated on its "
            "own and the rank gradients summed rank by rank";
  floors.how = s.lockstep ? fmt::format(
                                "{}, which took each of steps {}-{} from the reference's "
                                "state",
                                twin_text, s.first_step(), s.check_steps - 1)
                          : fmt::format("{}, which trained steps {}-{} from the same start",
                                        twin_text, s.first_step(), s.check_steps - 1);
  for (int64_t step = s.first_step(); step < s.check_steps; ++step) {
    std::vector<at::Tensor> start;
    if (s.lockstep) {
      modes::TrainingState state =
          modes::capture_training_state(reference.module(), reference.optimizer());
      modes::load_training_state(twin.module(), twin.optimizer(), state);
      start = std::move(state.parameters);
    }
    twin.run_step(step);
    reference.run_step(step);
    const modes::TrainResult& r = reference.recorded();
    const modes::TrainResult& t = twin.recorded();
    std::vector<at::Tensor> diffs;
    for (size_t i = 0; i < r.gradients.back().size(); ++i) {
      diffs.push_back(twin_diff(t.gradients.back()[i], r.gradients.back()[i]));
    }
    if (s.lockstep || step == s.first_step()) {
      // From the reference's own state the twin differs from it in summation order and nothing
      // more, so by rounding; a model whose samples meet outside BatchNorm (a batch-wide mean,
      // SyncBN's whole-batch statistics), which chunking computes otherwise, differs by far
      // more, and then the twin measures no floor of the reference at all.
      const std::string apart = apart_beyond_rounding(r, diffs, floors.cap);
      if (!apart.empty()) {
        compare::MeasuredFloors none;
        none.how = fmt::format(
            "none measured: {} {} at step {}, beyond rounding, so it does not compute what the "
            "reference computes",
            twin_text, apart, step);
        return none;
      }
    }
    const double loss_floor = std::abs(t.losses.back() - r.losses.back());
    floors.set(Stage::kLoss, step, "loss", loss_floor);
    if (parts) {
      const std::string parted = parted_beyond_cap(reference, r, loss_floor, diffs, floors.cap);
      if (!parted.empty()) floors.set_parted(step, parted);
    }
    floors.set_gradient_diffs(step, std::move(diffs));
    if (!s.lockstep) continue;
    const auto names = reference.module().named_parameters();
    const std::vector<double> updates = update_errors(twin.module(), reference.module(), start,
                                                      gradient_limit, &reference.optimizer());
    for (size_t i = 0; i < updates.size(); ++i) {
      floors.set(Stage::kUpdates, step, names[i].key(), updates[i]);
    }
    set_tensor_floors(floors, Stage::kBuffers, step, twin.module().named_buffers(),
                      reference.module().named_buffers());
  }
  if (!s.lockstep) {
    set_tensor_floors(floors, Stage::kParameters, -1, twin.module().named_parameters(),
                      reference.module().named_parameters());
    set_tensor_floors(floors, Stage::kBuffers, -1, twin.module().named_buffers(),
                      reference.module().named_buffers());
  }
  if (floors.parted_step() >= 0) {
    floors.how += fmt::format(
        "; the twin's trajectory left the reference's at step {} ({}), so from there nothing "
        "beyond its fixed limit is comparable",
        floors.parted_step(), floors.parted_why());
  }
  return floors;
}

}  // namespace ddpbench::training
