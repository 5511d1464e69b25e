// config_record.cpp — see config_record.h.
#include "run/config_record.h"

#include <fmt/format.h>

#include "comm/backend_support.h"
#include "modes/common/fault_injection.h"
#include "modes/common/fault_table.h"
#include "modes/ddp/comm_hook.h"
#include "modes/ddp/distributed_model.h"
#include "scenarios/scenario_config.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::run {
namespace {

reports::SamplerRecord sampler_record(const data::DistributedSampler& sampler) {
  const auto& o = sampler.options();
  reports::SamplerRecord r{o.dataset_size,
                           o.num_replicas,
                           o.shuffle,
                           o.drop_last,
                           o.seed,
                           sampler.num_samples(),
                           sampler.total_size(),
                           sampler.padded_count(),
                           sampler.dropped_count()};
  data::DistributedSampler epoch0 = sampler;
  epoch0.set_epoch(0);
  const auto ranks = epoch0.all_indices();
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    const auto n = std::min<size_t>(ranks[rank].size(), reports::kPartitionPreview);
    r.preview.emplace_back(ranks[rank].begin(), ranks[rank].begin() + static_cast<int64_t>(n));
    std::vector<bool> pad;
    for (size_t j = 0; j < n; ++j) {
      pad.push_back(epoch0.is_padding(static_cast<int64_t>(rank), static_cast<int64_t>(j)));
    }
    r.preview_padding.push_back(std::move(pad));
  }
  return r;
}

reports::DdpSettings ddp_settings(const training::RunSetup& s) {
  reports::DdpSettings d;
  d.impl = modes::ddp::ddp_impl_name(s.ddp.impl);
  d.bucket_cap_bytes = s.ddp.reducer.limits.bucket_cap_bytes;
  d.first_bucket_bytes = s.ddp.reducer.limits.first_bucket_bytes;
  d.comm_hook = modes::ddp::comm_hook_name(s.ddp.reducer.comm_hook);
  d.broadcast_buffers = s.ddp.broadcast_buffers;
  d.find_unused_parameters = s.ddp.reducer.find_unused_parameters;
  d.sync_bn = s.sync_bn;
  d.backend = comm::backend_name(s.backend);
  d.static_graph = s.ddp.static_graph;
  d.gradient_as_bucket_view = s.ddp.gradient_as_bucket_view;
  return d;
}

}  // namespace

reports::RunConfig config_record(const training::RunSetup& s, int64_t threads,
                                 const RunDescription& run) {
  const scenarios::ScenarioSpec& spec = *s.spec;
  reports::RunConfig c;
  c.scenario = spec.name;
  c.model = spec.model_name;
  c.dataset = run.dataset;
  c.loss = scenarios::describe_loss(spec);
  c.optimizer = scenarios::describe_optimizer(spec.optimizer, spec.clip_grad_norm);
  for (modes::ModeKind m : s.modes) c.modes.push_back(modes::mode_name(m));
  c.steps = s.steps;
  c.global_batch = s.global_batch;
  c.local_batch = run.plan->local_batch();
  c.world_size = s.world_size;
  c.steps_per_epoch = run.plan->steps_per_epoch();
  c.seed = s.seed;
  c.threads = threads;
  c.dtype = s.dtype_name();
  c.amp = scenarios::amp_name(spec.amp);
  c.data_dir = s.request.data_dir;
  c.sampler = sampler_record(run.plan->sampler());
  c.ddp = ddp_settings(s);
  c.warmup_steps = s.warmup_steps;
  c.repeats = s.repeats;
  c.cpu_pinning = s.cpu_pinning;
  c.scaling = s.strong_scaling ? "strong" : "weak";
  c.zero_stage = s.has_mode(modes::ModeKind::kZero) ? s.zero_stage : 0;
  c.shard_group = s.shard_group;
  c.scenario_config = spec.configured_by;
  c.scenario_yaml = scenarios::scenario_yaml(spec);
  c.accumulation_steps = s.accumulation_steps;
  c.no_sync = s.no_sync;
  c.comparison = s.lockstep ? "lockstep" : "free-running";
  c.gradient_check = run.grad_record;
  // A slowdown is not part of what the runs compute: it stands for a slower commit, which the
  // gate must be able to compare with a clean one (config.slowdown is not a numbers field).
  if (s.fault && modes::acts_on_timed_steps(*s.fault)) {
    c.slowdown = modes::fault_text(*s.fault);
  } else if (s.fault) {
    c.inject_fault = modes::fault_text(*s.fault);
  }
  c.first_step = s.first_step();
  c.eval_size = s.eval_size;
  c.model_file = spec.model_file;
  c.model_notes = spec.model_notes;
  c.options = s.recorded_options;
  return c;
}

}  // namespace ddpbench::run
