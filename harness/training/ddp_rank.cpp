// ddp_rank.cpp — the ddp mode's part in run_rank_phases (rank_phases.h): its path
// (modes/ddp/ddp_path.h), the buckets a checkpoint records and --resume reuses, the scaler fault
// the step loop injects, and the checks its ranks make after the check phase (parameters, buffers
// and GradScaler scale equal on every rank; the evaluation pass).
#include <torch/torch.h>

#include "compare/mode_comparison.h"
#include "modes/ddp/ddp_path.h"
#include "training/evaluation.h"
#include "training/phase_steps.h"
#include "training/rank_phases.h"

namespace ddpbench::training {
namespace {

using modes::ModeKind;
using modes::ddp::DdpPath;

class DdpRankDriver final : public RankModeDriver {
 public:
  DdpRankDriver(const PhaseInputs& in, comm::Communicator& comm)
      : in_(in), comm_(comm), options_{in.setup.ddp, in.setup.fault, in.setup.sync_bn} {
    const RunSetup& s = in.setup;
    options_.in_join = s.in_join;
    // --resume from a DDP checkpoint: the buckets its step reduced with (made under this cap).
    if (s.resume && s.resume->meta.ddp_bucket_cap_bytes == s.ddp.reducer.limits.bucket_cap_bytes) {
      options_.ddp.resume_buckets = s.resume->meta.ddp_buckets;
    }
  }

  ModeKind mode() const override { return ModeKind::kDdp; }

  std::unique_ptr<modes::GradientPath> make_path(scenarios::ScenarioInstance& instance,
                                                 bool checking) override {
    modes::ddp::DdpPathOptions options = options_;
    if (!checking) {
      options.fault.reset();  // faults belong to the check phase
      options.checking = false;
      options.ddp.resume_buckets.clear();  // the perf phase starts from step 0
    }
    return std::make_unique<DdpPath>(*in_.setup.spec, instance, comm_, in_.context, options);
  }

  void add_check_options(modes::GradientPath& path, modes::TrainOptions& options,
                         ModeOutcome& o) override {
    const RunSetup& s = in_.setup;
    if (modes::fault_on_rank(s.fault, modes::FaultKind::kScaler, comm_.rank())) {
      options.diverged_scale_step = s.fault->step;
    }
    // Every rank settles the buckets the next step will use (a collective), rank 0 records
    // them in its checkpoint: a resumed run then sums in the uninterrupted run's order.
    auto& ddp = static_cast<DdpPath&>(path);
    options.after_step =
        checkpoint_keeper(in_, ModeKind::kDdp, o, nullptr, comm_.rank() == 0, [&ddp] {
          ddp.settle_buckets();
          return ddp.bucket_layout();
        });
  }

  bool measures_amp() const override { return true; }

  void after_check(modes::GradientPath& path, ModeOutcome& o) override {
    const RunSetup& s = in_.setup;
    auto& ddp = static_cast<DdpPath&>(path);
    const modes::ranks::RankDisagreement& d = ddp.disagreement();
    o.extra_checks.push_back(
        compare::rank_agreement_check(s.check_steps, d.step, d.rank, d.tensor));
    if (ddp.checks_buffers()) {
      const modes::ranks::RankDisagreement& b = ddp.buffer_disagreement();
      o.extra_checks.push_back(
          compare::buffer_agreement_check(s.check_steps, b.step, b.rank, b.tensor));
    }
    if (s.spec->amp == scenarios::AmpKind::kFp16) {
      const modes::ddp::ScaleDisagreement& g = ddp.scale_disagreement();
      o.extra_checks.push_back(
          compare::scale_agreement_check(s.check_steps, g.step, g.rank, g.scale, g.rank0_scale));
    }
    evaluate_ddp_rank(s, in_.context, ddp, comm_, o.evaluation, o.extra_checks);
  }

  // Each synchronised reduction: one allreduce per bucket it used (bucketed: one bucket in the
  // first step, the rebuilt ones after; c10d: PyTorch's Reducer's buckets) or per parameter some
  // rank used (naive), and the used-parameter map's where the engine reduces it.
  std::optional<ReductionRule> reduction_rule(modes::GradientPath& path) const override {
    const auto& ddp = static_cast<const DdpPath&>(path);
    ReductionRule rule;
    rule.allreduce_by_step = ddp.required_allreduces();
    rule.reduce_scatter = 0;
    switch (in_.setup.ddp.impl) {
      case modes::ddp::DdpImpl::kNaive:
        rule.what = "ddp naive (one allreduce per parameter some rank used)";
        break;
      case modes::ddp::DdpImpl::kC10d:
        rule.what = "ddp c10d (PyTorch's Reducer: one allreduce per bucket it reduced)";
        break;
      case modes::ddp::DdpImpl::kBucketed:
        rule.what = "ddp (one allreduce per bucket it reduced)";
        break;
    }
    return rule;
  }

  void record_path(modes::GradientPath& path, ModeOutcome& o) override {
    const auto& ddp = static_cast<const DdpPath&>(path);
    o.bytes_per_step = ddp.bytes_per_step();
    o.buckets = ddp.num_buckets();
    o.gradient_collectives_per_step = ddp.gradient_collectives_per_step();
  }

 private:
  const PhaseInputs& in_;
  comm::Communicator& comm_;
  modes::ddp::DdpPathOptions options_;  // the check phase's
};

}  // namespace

std::unique_ptr<RankModeDriver> make_ddp_driver(const PhaseInputs& in, comm::Communicator& comm) {
  return std::make_unique<DdpRankDriver>(in, comm);
}

}  // namespace ddpbench::training
