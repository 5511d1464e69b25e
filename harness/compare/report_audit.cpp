// report_audit.cpp — see report_audit.h.
#include "compare/report_audit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compare/check_limits.h"
#include "compare/collectives_audit.h"
#include "compare/throughput_spread.h"
#include "errors.h"
#include "stats/step_figures.h"

namespace ddpbench::compare {
namespace {

using reports::CheckRecord;
using reports::Measure;
using reports::ModeResult;
using reports::Stage;

[[noreturn]] void refuse(const std::string& what) {
  throw InputError(what + " (was the file edited?); re-run to get a report");
}

// A tolerance key of config.scenario_yaml (the scenario as `run --config` reproduces it).
double tolerance_key(const YAML::Node& tol, const char* key) {
  const YAML::Node n = tol[key];
  double v = 0;
  if (!n || !YAML::convert<double>::decode(n, v) || !std::isfinite(v) || v < 0) {
    refuse(
        fmt::format("config.scenario_yaml has no valid TOL.{}, so the limits its checks are "
                    "held to cannot be recomputed",
                    key));
  }
  return v;
}

LimitSettings settings_of(const reports::RunConfig& config) {
  YAML::Node doc;
  try {
    doc = YAML::Load(config.scenario_yaml);
  } catch (const YAML::Exception& e) {
    refuse(fmt::format("config.scenario_yaml is not YAML ({})", e.msg));
  }
  if (!doc.IsMap() || !doc["TOL"] || !doc["TOL"].IsMap()) {
    refuse("config.scenario_yaml has no TOL section, so the limits cannot be recomputed");
  }
  const YAML::Node tol = doc["TOL"];
  LimitSettings s;
  s.tolerances = {tolerance_key(tol, "FLOAT32_RTOL"), tolerance_key(tol, "FLOAT32_ATOL"),
                  tolerance_key(tol, "FLOAT64_RTOL"), tolerance_key(tol, "FLOAT64_ATOL"),
                  tolerance_key(tol, "GRAD_FLOAT32"), tolerance_key(tol, "GRAD_FLOAT64")};
  if (config.dtype != "float32" && config.dtype != "float64") {
    refuse(fmt::format("config.dtype is \"{}\", which ddpbench never trains in", config.dtype));
  }
  s.float64 = config.dtype == "float64";
  s.comm_hook = config.ddp.comm_hook;
  s.ddp_impl = config.ddp.impl;
  s.world_size = config.world_size;
  s.zero_stage = config.zero_stage;
  s.shard_group = config.shard_group;
  const YAML::Node optim = doc["OPTIM"];
  const YAML::Node clip = optim && optim.IsMap() ? optim["CLIP_GRAD_NORM"] : YAML::Node();
  s.clipping = clip && clip.IsScalar() && clip.Scalar() != "none";
  return s;
}

// Limits compared as the JSON round trip keeps them: exactly, with slack for a printed value.
bool same_limit(double stored, double expected) {
  return std::abs(stored - expected) <= 1e-12 * std::max(std::abs(expected), 1e-300);
}

// The rule the configuration gives a check named `c.name` of `mode` in dtype `settings`.
void require_limit(const CheckRecord& c, const std::string& mode, const LimitSettings& settings,
                   const std::string& where) {
  Measure measure = Measure::kExact;
  double atol = 0, rtol = 0, limit = 0;
  const ModeLimits m = mode_limits(settings, mode);
  switch (c.name) {
    case Stage::kLoss:
    case Stage::kParameters:
    case Stage::kBuffers:
      measure = Measure::kTolerance;
      atol = m.atol;
      rtol = m.rtol;
      limit = 1;
      break;
    case Stage::kEvaluation: {
      // The evaluation pass runs after training, with no compression hook: the dtype's own rule.
      const ModeLimits plain = mode_limits(settings, "single");
      measure = Measure::kTolerance;
      atol = plain.atol;
      rtol = plain.rtol;
      limit = 1;
      break;
    }
    case Stage::kGradients:
    case Stage::kUpdates:
    case Stage::kOptimizerState:
      measure = Measure::kNormalized;
      limit = m.gradient;
      break;
    case Stage::kMatchesDdp: {
      const AgreementLimits a = zero_ddp_agreement(settings);
      measure = a.bitwise ? Measure::kExact : Measure::kNormalized;
      limit = a.bitwise ? 0 : a.limit;
      break;
    }
    default:  // the ranks' agreement, the scale, an undetected fault: bit for bit
      break;
  }
  if (c.measure != measure || !same_limit(c.limit, limit) ||
      (measure == Measure::kTolerance &&
       (!same_limit(c.atol, atol) || !same_limit(c.rtol, rtol)))) {
    refuse(fmt::format(
        "{} ({}) is held to {} {} atol {:g} rtol {:g}, but its configuration (config.dtype {}, "
        "config.ddp.comm_hook {}, the TOL keys of config.scenario_yaml) gives {} {} atol {:g} "
        "rtol {:g}",
        where, reports::name_of(c.name), reports::name_of(c.measure), c.limit, c.atol, c.rtol,
        settings.float64 ? "float64" : "float32", settings.comm_hook, reports::name_of(measure),
        limit, atol, rtol));
  }
}

bool has_check(const ModeResult& r, Stage name) {
  return std::any_of(r.checks.begin(), r.checks.end(),
                     [name](const CheckRecord& c) { return c.name == name; });
}

// The result of `mode` at `world_size` (a `scale` sweep holds one per world size); any world size
// when `world_size` is 0.
const ModeResult* result_of(const reports::RunReport& report, reports::Mode mode,
                            int64_t world_size = 0) {
  for (const ModeResult& r : report.results) {
    if (r.mode == mode && (world_size == 0 || r.world_size == world_size)) return &r;
  }
  return nullptr;
}

// The checks `r`'s configuration produces (training/mode_phases.cpp, run/finish_run.cpp).
std::vector<Stage> required_checks(const reports::RunReport& report, const ModeResult& r) {
  using reports::Mode;
  std::vector<Stage> need;
  if (r.mode == Mode::kSingle || r.losses.empty()) return need;  // the reference; --perf-only
  const reports::RunConfig& config = report.config;
  const ModeResult* single = result_of(report, Mode::kSingle);
  if (single != nullptr && !single->losses.empty()) {
    need = {Stage::kLoss, Stage::kGradients,
            config.comparison == "lockstep" ? Stage::kUpdates : Stage::kParameters};
    if (config.amp == "fp16") need.push_back(Stage::kLossScale);
  }
  if (r.mode == Mode::kDdp || r.mode == Mode::kZero) need.push_back(Stage::kRanksBitwiseEqual);
  if (r.mode == Mode::kDdp && config.amp == "fp16") need.push_back(Stage::kRanksScaleEqual);
  if ((r.mode == Mode::kDp || r.mode == Mode::kDdp) &&
      r.evaluation.status == reports::EvaluationStatus::kDone) {
    need.push_back(Stage::kEvaluation);
  }
  const ModeResult* ddp = result_of(report, Mode::kDdp, r.world_size);
  if (r.mode == Mode::kZero && ddp != nullptr && !ddp->losses.empty() &&
      ddp->reference.name == r.reference.name) {
    need.push_back(Stage::kMatchesDdp);
  }
  return need;
}

// The loss check, recomputed from the losses the mode and its reference recorded
// (compare/mode_comparison.cpp's compare_losses): how many steps, the largest difference, and
// whether any step lies beyond the tolerance where the check counts none.
void require_loss_check(const ModeResult& r, const CheckRecord& c, const std::string& where) {
  const std::vector<double>& ref = r.reference.losses;
  double max_diff = 0;
  int64_t beyond = 0;
  for (size_t s = 0; s < ref.size(); ++s) {
    const double a = s < r.losses.size() ? r.losses[s] : NAN;
    const double diff = std::isnan(a - ref[s]) ? INFINITY : std::abs(a - ref[s]);
    const double bound = c.atol + c.rtol * std::abs(ref[s]);
    const double ratio = diff == 0 ? 0.0 : bound > 0 ? diff / bound : INFINITY;
    if (!(ratio <= c.limit)) ++beyond;
    max_diff = std::max(max_diff, diff);
  }
  const int64_t counted = c.items + c.incomparable;
  const int64_t excused = c.outside + c.divergent + c.floored + c.incomparable;
  // With none outside, divergent or left uncompared, the worst difference is the largest of all.
  const bool diff_ok = c.outside + c.divergent + c.incomparable > 0 ||
                       same_limit(c.max_abs_diff, max_diff) ||
                       (c.max_abs_diff == 0 && max_diff == 0);
  if (counted != static_cast<int64_t>(ref.size()) || beyond > excused || !diff_ok ||
      r.losses.size() != ref.size()) {
    refuse(fmt::format(
        "{} (loss) says {} step(s), {} outside, largest difference {:.3g}, but the recorded "
        "losses ({} of the mode, {} of its reference) give {} step(s) with {} beyond atol {:g} + "
        "rtol {:g} * |ref| and a largest difference {:.3g}",
        where, counted, c.outside, c.max_abs_diff, r.losses.size(), ref.size(), ref.size(), beyond,
        c.atol, c.rtol, max_diff));
  }
}

// Zero's memory rows against ddp's in the same run (modes/common/memory_footprint.h): stage 3
// holds a shard of the parameters, stages 1 and 2 all of them; stage 2 and 3 a shard of the
// gradients. Checked on rank 0, where every stage holds a share.
void require_zero_memory(const reports::RunReport& report, const ModeResult& zero) {
  const ModeResult* ddp = result_of(report, reports::Mode::kDdp, zero.world_size);
  if (ddp == nullptr || zero.memory.empty() || ddp->memory.empty() || zero.world_size < 2) return;
  const reports::RankMemoryRecord& z = zero.memory.front();
  const reports::RankMemoryRecord& d = ddp->memory.front();
  const int64_t stage = report.config.zero_stage;
  const bool params_sharded = z.parameter_bytes < d.parameter_bytes;
  const bool grads_sharded = z.gradient_bytes < d.gradient_bytes;
  if (params_sharded != (stage == 3) || grads_sharded != (stage >= 2)) {
    refuse(fmt::format(
        "config.zero_stage is {}, but zero's rank 0 at world size {} holds {} parameter and {} "
        "gradient bytes "
        "against ddp's {} and {}: stage 1 shards neither, stage 2 the gradients, stage 3 both",
        stage, zero.world_size, z.parameter_bytes, z.gradient_bytes, d.parameter_bytes,
        d.gradient_bytes));
  }
}

// The single-device baseline's samples/s every other point's scaling efficiency is taken
// against (run/judge_mode.cpp, and a `scale` sweep's one baseline), or none when it was not timed.
double baseline_samples_per_s(const reports::RunReport& report) {
  const ModeResult* single = result_of(report, reports::Mode::kSingle);
  return single != nullptr && single->throughput.timed_steps > 0 ? single->throughput.samples_per_s
                                                                 : 0.0;
}

// Result i's figures that its samples and the report's configuration determine: every timing
// figure (compare/throughput_spread.h), its scaling efficiency against the baseline, the bytes its
// bus bandwidth is computed from, and the repeats config.repeats asked for.
void audit_figures(const reports::RunReport& report, size_t i) {
  const ModeResult& r = report.results[i];
  const std::string where = fmt::format("results[{}]", i);
  const reports::ThroughputRecord& t = r.throughput;
  const double baseline = baseline_samples_per_s(report);
  const double efficiency =
      r.mode == reports::Mode::kSingle || baseline <= 0
          ? -1.0
          : stats::scaling_efficiency(t.samples_per_s, r.world_size, baseline);
  // Set where ddp timed its steps (run/judge_mode.cpp), 0 elsewhere; named before the bus
  // bandwidth computed from it.
  const int64_t bytes = r.mode == reports::Mode::kDdp && t.timed_steps > 0 ? r.bytes_per_step : 0;
  if (report.schema_version >= 9 && t.bytes_allreduced_per_step != bytes) {
    refuse(fmt::format(
        "field {}.throughput.bytes_allreduced_per_step is {} but {} reduces {} byte(s) per step "
        "({}.bytes_per_step; ddp's bus bandwidth counts them, no other mode's)",
        where, t.bytes_allreduced_per_step, reports::name_of(r.mode), bytes, where));
  }
  // The samples first: an edited samples/s is named as such, not as the efficiency it gives.
  audit_throughput(where + ".throughput", t, report.schema_version, r.world_size, efficiency);
  // Schema 8 reports, from before the stored repeats, pass unchecked (as audit_throughput).
  if (report.schema_version < 9) return;
  const bool agree = efficiency < 0 ? r.scaling_efficiency == -1
                                    : std::abs(r.scaling_efficiency - efficiency) <=
                                          1e-12 * std::max(1.0, efficiency);
  if (!agree) {
    refuse(
        fmt::format("field {}.scaling_efficiency is {} but its samples/s against the single-device "
                    "baseline's give {}",
                    where, r.scaling_efficiency, efficiency));
  }
  if (!r.scaling.empty() && r.scaling != report.config.scaling) {
    refuse(fmt::format("field {}.scaling is {} but config.scaling is {}", where, r.scaling,
                       report.config.scaling));
  }
  if (t.timed_steps > 0 && t.spread.repeats != report.config.repeats) {
    refuse(fmt::format(
        "config.repeats is {} but {}.throughput holds {} repeat(s) of the perf phase: each "
        "timed mode runs every repeat",
        report.config.repeats, where, t.spread.repeats));
  }
}

}  // namespace

void audit_report(const reports::RunReport& report) {
  const reports::RunConfig& config = report.config;
  const LimitSettings settings = settings_of(config);
  audit_shard_group(report);
  for (size_t i = 0; i < report.results.size(); ++i) {
    const ModeResult& r = report.results[i];
    const std::string mode(reports::name_of(r.mode));
    // (The reader refuses a mode twice at one world size: a point is recorded once.)
    if (std::find(config.modes.begin(), config.modes.end(), mode) == config.modes.end()) {
      refuse(fmt::format("results[{}].mode is {}, which config.modes ({}) does not name", i, mode,
                         fmt::join(config.modes, ",")));
    }
    audit_figures(report, i);
    LimitSettings at_world = settings;  // zero's rule against ddp depends on the world size
    at_world.world_size = r.world_size;
    const bool amp = config.amp != "off";
    if (!r.losses.empty() && r.mode != reports::Mode::kZero &&
        amp != (r.amp_vs_float32.steps > 0)) {
      refuse(fmt::format(
          "config.amp is {} but results[{}] ({}) records {} autocast step(s) against float32",
          config.amp, i, mode, r.amp_vs_float32.steps));
    }
    for (size_t j = 0; j < r.checks.size(); ++j) {
      const std::string where = fmt::format("results[{}].checks[{}]", i, j);
      require_limit(r.checks[j], mode, at_world, where);
      if (r.checks[j].name == Stage::kLoss) require_loss_check(r, r.checks[j], where);
      for (size_t k = 0; k < j; ++k) {
        if (r.checks[k].name == r.checks[j].name) {
          refuse(fmt::format("{} repeats results[{}].checks[{}] ({})", where, i, k,
                             reports::name_of(r.checks[j].name)));
        }
      }
    }
    LimitSettings float64 = at_world;
    float64.float64 = true;
    for (size_t j = 0; j < r.first_divergence.float64_checks.size(); ++j) {
      require_limit(r.first_divergence.float64_checks[j], mode, float64,
                    fmt::format("results[{}].first_divergence.float64_checks[{}]", i, j));
    }
    for (Stage need : required_checks(report, r)) {
      if (!has_check(r, need)) {
        refuse(fmt::format("results[{}] ({}) has no {} check, which its configuration produces", i,
                           mode, reports::name_of(need)));
      }
    }
    if (r.mode == reports::Mode::kZero) require_zero_memory(report, r);
    audit_collectives(report, i);
  }
}

}  // namespace ddpbench::compare
