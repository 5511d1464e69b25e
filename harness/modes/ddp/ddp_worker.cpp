// ddp_worker.cpp — see ddp_worker.h.
#include "modes/ddp/ddp_worker.h"

#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <cstring>

#include "errors.h"
#include "metrics/phase_times_tensor.h"
#include "metrics/stopwatch.h"
#include "modes/sync_bn/sync_batch_norm.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes::ddp {
namespace {

uint64_t digest_bytes(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  const size_t n = static_cast<size_t>(c.numel() * c.element_size());
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

int64_t resolve_fault_tensor(const std::optional<FaultSpec>& fault,
                             const std::vector<std::string>& names) {
  if (!fault || fault->kind != FaultKind::kGrad) return -1;
  if (fault->tensor.empty()) return 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == fault->tensor) return static_cast<int64_t>(i);
  }
  throw InputError(
      fmt::format("--inject-fault tensor '{}' is not a parameter of the model (e.g. {})",
                  fault->tensor, names.empty() ? "" : names.front()));
}

// Per-step phase times, max over ranks (a step is as slow as its slowest rank).
std::vector<metrics::PhaseTimes> max_over_ranks(dist::Communicator& comm,
                                                const std::vector<metrics::PhaseTimes>& times) {
  // An empty list still joins the allgather (every rank must), as one row of zeros.
  const at::Tensor local =
      times.empty() ? at::zeros({1, 6}, at::kDouble) : metrics::phase_times_to_tensor(times);
  std::vector<metrics::PhaseTimes> worst =
      metrics::phase_times_from_tensor(at::stack(comm.allgather(local)).amax(0));
  worst.resize(times.size());
  return worst;
}

}  // namespace

const char* step_phase_name(StepPhase phase) {
  switch (phase) {
    case StepPhase::kData:
      return "loading data";
    case StepPhase::kForward:
      return "forward";
    case StepPhase::kBackward:
      return "backward";
    case StepPhase::kCommWait:
      return "waiting for gradient allreduce";
    case StepPhase::kOptimizer:
      return "optimizer step";
    case StepPhase::kDone:
      return "step done";
  }
  return "?";
}

at::Tensor state_digests(const torch::nn::Module& module, std::vector<std::string>* names) {
  std::vector<int64_t> digests;
  auto add = [&](const std::string& name, const at::Tensor& t) {
    digests.push_back(static_cast<int64_t>(digest_bytes(t)));
    if (names != nullptr) names->push_back(name);
  };
  for (const auto& p : module.named_parameters()) add(p.key(), p.value());
  return at::tensor(digests, at::kLong);
}

DdpWorkerResult run_ddp_worker(const scenarios::ScenarioSpec& spec,
                               scenarios::ScenarioInstance& instance,
                               const data::GlobalBatchPlan& plan, dist::Communicator& comm,
                               const DdpWorkerOptions& options) {
  const int rank = comm.rank();
  cast_floating_point(*instance.model.ptr(), options.dtype);
  instance.model.ptr()->train();
  auto sync_bn_control = std::make_shared<sync_bn::SyncBnControl>();
  if (options.sync_bn)
    sync_bn::convert_sync_batchnorm(*instance.model.ptr(), comm, sync_bn_control);
  DistributedModel model(instance.model, comm, options.ddp);
  // DDP semantics: the optimizer is created after the construction-time broadcast.
  auto optimizer = scenarios::make_optimizer(spec.optimizer, model.module().parameters());

  std::vector<std::string> names;
  for (const auto& p : model.module().named_parameters()) names.push_back(p.key());
  const int64_t fault_tensor = resolve_fault_tensor(options.fault, names);
  int64_t current_step = 0;
  if (fault_tensor >= 0 && options.fault->rank == rank) {
    const double scale = 1.0 + options.fault->eps;
    const int64_t fault_step = options.fault->step;
    model.set_gradient_tap(
        [&current_step, fault_tensor, scale, fault_step](int64_t index, at::Tensor& slot) {
          if (index == fault_tensor && current_step == fault_step) slot.mul_(scale);
        });
  }
  auto progress = [&](int64_t step, StepPhase phase) {
    if (options.on_progress) options.on_progress(step, phase);
  };

  DdpWorkerResult result;
  if (const Reducer* r = model.reducer())
    result.num_buckets = static_cast<int64_t>(r->buckets().size());
  // One training step; `checking` adds what the comparison needs and the perf phase omits.
  data::PlanCursor cursor(plan);
  auto run_step = [&](int64_t step, bool checking) {
    current_step = step;
    metrics::PhaseTimes t;
    metrics::Stopwatch watch;
    progress(step, StepPhase::kData);
    if (fault_fires(options.fault, FaultKind::kCrash, rank, step)) {
      throw WorkerFailure(fmt::format("rank {}: injected crash at step {}", rank, step));
    }
    // syncbn fault: from its step on, this rank normalises with local statistics only.
    sync_bn_control->skip_exchange = options.fault && options.fault->kind == FaultKind::kSyncBn &&
                                     options.fault->rank == rank && step >= options.fault->step;
    if (fault_fires(options.fault, FaultKind::kHang, rank, step)) {
      // Stop responding without exiting: only the launcher's timeout can end this.
      for (;;) pause();
    }
    data::StepPosition pos;
    const data::EpochPlan& epoch = cursor.seek(step, pos);
    const data::Batch batch = data::cast_batch(
        data::collate(*instance.dataset, epoch.local_batch(pos.step_in_epoch, rank), pos.epoch),
        options.dtype);
    t.data = watch.lap();

    progress(step, StepPhase::kForward);
    optimizer->zero_grad();
    at::Tensor loss =
        scenarios::compute_loss(spec.loss, model.forward(batch.inputs), batch.targets);
    if (fault_fires(options.fault, FaultKind::kNan, rank, step)) {
      loss = loss * std::numeric_limits<double>::quiet_NaN();
    }
    const double local_loss = loss.item<double>();
    if (!std::isfinite(local_loss)) {
      // Detected before any collective: a NaN is a failure, never a number to compare.
      throw WorkerFailure(
          fmt::format("rank {}: non-finite loss ({}) at step {}", rank, local_loss, step));
    }
    t.forward = watch.lap();

    progress(step, StepPhase::kBackward);
    loss.backward();
    t.backward = watch.lap();
    progress(step, StepPhase::kCommWait);
    t.comm_wait = model.reduce_gradients();
    if (checking) result.gradients.push_back(record_gradients(model.module(), options.grad_record));

    watch.lap();  // comm wait is measured by the reducer; gradient records are observation
    progress(step, StepPhase::kOptimizer);
    optimizer->step();
    t.optimizer = watch.lap();
    result.bytes_per_step = model.bytes_last_step();
    t.total = watch.total();
    progress(step, StepPhase::kDone);
    if (!checking) return t;

    // The global loss is the sample-weighted mean of the local means.
    const auto n = static_cast<double>(batch.inputs.size(0));
    at::Tensor loss_sum = at::tensor({local_loss * n, n}, at::kDouble);
    dist::allreduce_sum_blocking(comm, loss_sum);
    result.losses.push_back(loss_sum[0].item<double>() / loss_sum[1].item<double>());

    // Parameters must agree bit for bit across ranks after every step: DDP's whole promise.
    std::vector<std::string> state_names;
    const std::vector<at::Tensor> all = comm.allgather(state_digests(model.module(), &state_names));
    for (int r = 1; r < comm.world_size() && result.disagreement_step < 0; ++r) {
      const at::Tensor differs = all[static_cast<size_t>(r)].ne(all[0]);
      if (differs.any().item<bool>()) {
        const int64_t idx = differs.nonzero()[0][0].item<int64_t>();
        result.disagreement_step = step;
        result.disagreement_rank = r;
        result.disagreement_tensor = state_names[static_cast<size_t>(idx)];
      }
    }
    return t;
  };

  std::vector<metrics::PhaseTimes> check_times;
  for (int64_t step = 0; step < options.steps; ++step) check_times.push_back(run_step(step, true));
  result.final_state = capture_state(model.module());
  std::vector<metrics::PhaseTimes> perf_times;
  for (int64_t i = 0; i < options.warmup_steps + options.perf_steps; ++i) {
    const metrics::PhaseTimes t = run_step(options.steps + i, false);
    if (i >= options.warmup_steps) perf_times.push_back(t);
  }
  result.step_timings = max_over_ranks(comm, check_times);
  result.perf_timings = max_over_ranks(comm, perf_times);
  return result;
}

}  // namespace ddpbench::modes::ddp
