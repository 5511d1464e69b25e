// zero_rank.cpp — the zero mode's part in run_rank_phases (rank_phases.h): its path at the run's
// stage (modes/zero/zero_path.h), checkpoints of the optimizer state gathered from every shard's
// owner, and its ranks' agreement check after the check phase. Its check phase takes no float32
// shadow steps (amp_vs_float32 is reported for single, dp and ddp).
#include <fmt/format.h>
#include <torch/torch.h>

#include "compare/mode_comparison.h"
#include "modes/zero/zero_path.h"
#include "training/phase_steps.h"
#include "training/rank_phases.h"

namespace ddpbench::training {
namespace {

using modes::ModeKind;
using modes::zero::ZeroPath;

class ZeroRankDriver final : public RankModeDriver {
 public:
  ZeroRankDriver(const PhaseInputs& in, comm::Communicator& comm) : in_(in), comm_(comm) {}

  ModeKind mode() const override { return ModeKind::kZero; }

  std::unique_ptr<modes::GradientPath> make_path(scenarios::ScenarioInstance& instance,
                                                 bool checking) override {
    modes::zero::ZeroPathOptions options{in_.setup.zero_stage, in_.setup.fault, checking};
    if (!checking) options.fault.reset();  // faults belong to the check phase
    options.sync_bn = in_.setup.sync_bn;
    options.in_join = in_.setup.in_join;
    options.shard_group = in_.setup.shard_group;
    options.bucket_bytes = in_.setup.ddp.reducer.limits.bucket_cap_bytes;
    return std::make_unique<ZeroPath>(*in_.setup.spec, instance, comm_, in_.context, options);
  }

  void add_check_options(modes::GradientPath& path, modes::TrainOptions& options,
                         ModeOutcome& o) override {
    auto& zero = static_cast<ZeroPath&>(path);
    options.after_step = checkpoint_keeper(
        in_, ModeKind::kZero, o,
        [&zero, this](torch::optim::Optimizer& local) {
          return zero.consolidated_optimizer(local, in_.setup.spec->optimizer);
        },
        comm_.rank() == 0);
  }

  bool measures_amp() const override { return false; }

  void after_check(modes::GradientPath& path, ModeOutcome& o) override {
    const modes::ranks::RankDisagreement& d = static_cast<ZeroPath&>(path).disagreement();
    o.extra_checks.push_back(
        compare::rank_agreement_check(in_.setup.check_steps, d.step, d.rank, d.tensor));
  }

  void record_path(modes::GradientPath& path, ModeOutcome& o) override {
    o.bytes_per_step = static_cast<const ZeroPath&>(path).bytes_per_step();
  }

  std::optional<ReductionRule> reduction_rule(modes::GradientPath& path) const override {
    const auto& zero = static_cast<const ZeroPath&>(path);
    const RunSetup& s = in_.setup;
    ReductionRule rule;
    rule.allreduce = zero.reduction_allreduces();
    rule.reduce_scatter = zero.reduction_reduce_scatters();
    const bool fp16 = s.spec->amp == scenarios::AmpKind::kFp16;
    rule.allreduce_per_step = fp16 && zero.agrees_on_overflow() ? 1 : 0;
    rule.synchronising_micro_steps = s.no_sync ? 1 : s.accumulation_steps;
    rule.what = s.has_replicas()
                    ? fmt::format("zero stage {} under HSDP ({} replicas of a {}-way shard)",
                                  s.zero_stage, s.world_size / s.shard_group, s.shard_group)
                    : fmt::format("zero stage {}", s.zero_stage);
    return rule;
  }

 private:
  const PhaseInputs& in_;
  comm::Communicator& comm_;
};

}  // namespace

std::unique_ptr<RankModeDriver> make_zero_driver(const PhaseInputs& in, comm::Communicator& comm) {
  return std::make_unique<ZeroRankDriver>(in, comm);
}

}  // namespace ddpbench::training
