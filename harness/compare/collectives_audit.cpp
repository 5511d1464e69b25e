// collectives_audit.cpp — see collectives_audit.h.
#include "compare/collectives_audit.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "errors.h"

namespace ddpbench::compare {
namespace {

using reports::Mode;
using reports::ModeResult;
using reports::StepCollectivesRecord;

[[noreturn]] void refuse_collectives(const std::string& what) {
  throw InputError(what + " (was the file edited?); re-run to get a report");
}

// What a checked step's gradient reduction issues on rank 0 (training/zero_rank.cpp's and
// ddp_rank.cpp's ReductionRule), from the report's configuration and the step's own counts where
// the rule depends on the buckets, which a report does not keep.
struct StepRule {
  bool holds = true;
  std::string wants;  // what the configuration issues, in words
};

StepRule zero_rule(const reports::RunConfig& config, const StepCollectivesRecord& c) {
  const int64_t sync = config.no_sync ? 1 : config.accumulation_steps;
  const int64_t stage = config.zero_stage;
  StepRule rule;
  if (stage <= 1) {
    // One all-reduce per bucket and the used-parameter map's, per synchronising micro-step.
    rule.holds = c.reduction_reduce_scatter == 0 && c.reduction_allreduce % sync == 0 &&
                 c.reduction_allreduce / sync >= 2;
    rule.wants = fmt::format(
        "no reduce-scatter and, in each of its {} synchronising micro-step(s), one all-reduce per "
        "bucket and the used-parameter map's",
        sync);
    return rule;
  }
  // Stages 2 and 3: a reduce-scatter per bucket in the shard group, the used-parameter map's
  // all-reduce and, under HSDP, each bucket's over the replicas; --amp fp16 agrees on overflow
  // once.
  const int64_t buckets = c.reduction_reduce_scatter / sync;
  const bool hsdp = config.shard_group > 0;
  const int64_t fp16 = config.amp == "fp16" ? 1 : 0;
  const int64_t allreduces = (1 + (hsdp ? buckets : 0)) * sync + fp16;
  rule.holds =
      buckets > 0 && c.reduction_reduce_scatter % sync == 0 && c.reduction_allreduce == allreduces;
  rule.wants = fmt::format(
      "{} all-reduce(s) for {} reduce-scatter(s): the used-parameter map's{} per synchronising "
      "micro-step ({}){}",
      allreduces, c.reduction_reduce_scatter, hsdp ? " and each bucket's over the replicas" : "",
      sync, fp16 > 0 ? ", and --amp fp16's overflow agreement" : "");
  return rule;
}

std::optional<size_t> collectives_check(const ModeResult& r) {
  for (size_t k = 0; k < r.checks.size(); ++k) {
    if (r.checks[k].name == reports::Stage::kCollectives) return k;
  }
  return std::nullopt;
}

}  // namespace

void audit_shard_group(const reports::RunReport& report) {
  const reports::RunConfig& config = report.config;
  const int64_t s = config.shard_group;
  if (s == 0) return;
  const bool zero =
      std::find(config.modes.begin(), config.modes.end(), "zero") != config.modes.end();
  if (!zero || config.zero_stage < 2) {
    refuse_collectives(fmt::format(
        "config.shard_group is {}, but HSDP shards the zero mode at stage 2 or 3 only, and "
        "config.zero_stage is {}{}",
        s, config.zero_stage, zero ? "" : " without zero in config.modes"));
  }
  for (size_t i = 0; i < report.results.size(); ++i) {
    const ModeResult& r = report.results[i];
    if (r.mode != Mode::kZero) continue;
    if (s < 2 || s >= r.world_size || r.world_size % s != 0) {
      refuse_collectives(fmt::format(
          "config.shard_group is {}, but results[{}] (zero) ran {} ranks: a run records HSDP's "
          "shard group S only with 2 <= S < K and S dividing K",
          s, i, r.world_size));
    }
  }
}

void audit_collectives(const reports::RunReport& report, size_t i) {
  const ModeResult& r = report.results[i];
  if (r.collectives.empty() || (r.mode != Mode::kZero && r.mode != Mode::kDdp)) return;
  const std::optional<size_t> k = collectives_check(r);
  // ddp's reductions are judged since after its counts were first recorded (schema 11 alike).
  if (!k && r.mode == Mode::kDdp) return;
  if (!k) {
    refuse_collectives(fmt::format(
        "results[{}] ({}) records rank 0's collectives per checked step but has no collectives "
        "check, which its configuration produces",
        i, reports::name_of(r.mode)));
  }
  const reports::CheckRecord& check = r.checks[*k];
  const bool names_rank0 = check.outside > 0 && check.tensor == "rank 0";
  // Rank 0's first step that its configuration's rule does not give.
  std::optional<size_t> first;
  StepRule broken;
  for (size_t j = 0; j < r.collectives.size() && !first; ++j) {
    const StepCollectivesRecord& c = r.collectives[j];
    StepRule rule;
    if (r.mode == Mode::kZero) {
      rule = zero_rule(report.config, c);
    } else {
      rule.holds = c.reduction_reduce_scatter == 0;  // ddp all-reduces its buckets
      rule.wants = "no reduce-scatter";
    }
    if (!rule.holds) {
      first = j;
      broken = rule;
    }
  }
  const std::string mesh = r.mode == Mode::kZero
                               ? fmt::format("zero stage {} with config.shard_group {}",
                                             report.config.zero_stage, report.config.shard_group)
                               : std::string("ddp");
  if (first) {
    const StepCollectivesRecord& c = r.collectives[*first];
    if (names_rank0 && check.step == c.step) return;
    refuse_collectives(fmt::format(
        "results[{}].collectives[{}] says rank 0 issued {} all-reduce(s) and {} reduce-scatter(s) "
        "in step {}'s gradient reduction (reduction_allreduce, reduction_reduce_scatter), where {} "
        "issues {}, yet results[{}].checks[{}] (collectives) {}",
        i, *first, c.reduction_allreduce, c.reduction_reduce_scatter, c.step, mesh, broken.wants, i,
        *k,
        check.outside == 0 ? std::string("found every rank's counts right")
                           : fmt::format("names {} at step {} first", check.tensor, check.step)));
  }
  // Stage 1's bucket count is not recorded, so its rule holds counts of any bucket count.
  const bool exact = r.mode == Mode::kZero && report.config.zero_stage >= 2;
  if (names_rank0 && exact) {
    refuse_collectives(fmt::format(
        "results[{}].checks[{}] (collectives) says rank 0 issued the wrong collectives in step {}, "
        "but results[{}].collectives records what {} issues in every step",
        i, *k, check.step, i, mesh));
  }
}

}  // namespace ddpbench::compare
