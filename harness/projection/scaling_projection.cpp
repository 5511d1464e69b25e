// scaling_projection.cpp — see scaling_projection.h.
#include "projection/scaling_projection.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "errors.h"
#include "projection/interconnect_fit.h"
#include "quoted_input.h"
#include "reports/format/json_fields.h"  // kMaxWorldSize: the largest world size a report may hold

namespace ddpbench::projection {
namespace {

// One timed DDP result of the input, reduced to what the model reads.
struct MeasuredDdp {
  int64_t world_size = 0;
  double step_s = 0;     // the step samples_per_s rests on (the median): samples_per_step / it
  double exposed_s = 0;  // comm_wait: gradient reduction not hidden behind backward
  double compute_s = 0;  // step_s - exposed_s
  double backward_s = 0;
  double bytes = 0;
  int64_t buckets = 0;
  double samples_per_step = 0;
  double samples_per_s = 0;
  double efficiency = -1;
};

double step_seconds(const reports::ThroughputRecord& t) {
  return t.samples_per_step / t.samples_per_s;
}

// The phases are means over the timed steps, so they are parts of the MEAN step; the throughput
// (samples_per_s) comes from the median step (Note [Weak figures]). On a noisy machine the two
// differ by more than a phase's rounding (measured: a mean comm wait of 16.3 ms beside a median
// step of 15.7 ms, ddp at 4 ranks on 2 cores). Reports without the mean fall back to the median.
double mean_step_seconds(const reports::ThroughputRecord& t) {
  return t.step_time_mean_s > 0 ? t.step_time_mean_s : step_seconds(t);
}

bool timed(const reports::ModeResult& r) {
  return r.throughput.timed_steps > 0 && r.throughput.samples_per_s > 0 &&
         r.throughput.samples_per_step > 0;
}

// Note [Phases within the step]: every phase is maxed over ranks per step and the step's time is
// the max over ranks of the whole step (reports/METRICS.md), so each phase's mean is at most the
// mean step, and their sum at most five of them. A report past that was edited or damaged, and
// the model would read nonsense from it: comm_wait beyond the step left no compute and projected
// 1400% efficiency. Refused, naming the field; a relative slack covers rounding. Phases are
// compared with the mean step (mean_step_seconds), never with the median the throughput uses.
void check_phases(const reports::RunReport& report, const std::string& source) {
  constexpr double kSlack = 1e-3;
  for (size_t i = 0; i < report.results.size(); ++i) {
    const reports::ModeResult& r = report.results[i];
    if (r.mode != reports::Mode::kDdp || !timed(r)) continue;
    const std::string where = fmt::format("results[{}] (ddp, world size {})", i, r.world_size);
    const double step = mean_step_seconds(r.throughput);
    if (!std::isfinite(step) || step <= 0) {
      throw InputError(fmt::format(
          "{}: {}: throughput.step_time_mean_s (or samples_per_step / samples_per_s) gives no "
          "finite step time (was the file edited?); pass a report written by ddpbench",
          source, where));
    }
    const reports::PhaseRecord& p = r.throughput.phases;
    const std::pair<const char*, double> phases[] = {{"data_s", p.data},
                                                     {"forward_s", p.forward},
                                                     {"backward_s", p.backward},
                                                     {"comm_wait_s", p.comm_wait},
                                                     {"optimizer_s", p.optimizer}};
    for (const auto& [name, seconds] : phases) {
      if (!std::isfinite(seconds) || seconds > step * (1 + kSlack)) {
        throw InputError(fmt::format(
            "{}: {}: throughput.phases.{} = {:g} s is longer than the mean step it is part of "
            "({:g} s, throughput.step_time_mean_s; was the file edited?); pass a report written "
            "by ddpbench",
            source, where, name, seconds, step));
      }
    }
    if (p.comm_wait >= step) {
      throw InputError(fmt::format(
          "{}: {}: throughput.phases.comm_wait_s = {:g} s fills the whole mean step ({:g} s), "
          "leaving no compute to project (was the file edited?); pass a report written by ddpbench",
          source, where, p.comm_wait, step));
    }
  }
}

std::vector<MeasuredDdp> measured_ddp_points(const reports::RunReport& report) {
  std::vector<MeasuredDdp> points;
  for (const reports::ModeResult& r : report.results) {
    if (r.mode != reports::Mode::kDdp || !timed(r)) continue;
    MeasuredDdp m;
    m.world_size = r.world_size;
    m.step_s = step_seconds(r.throughput);
    // The exposed share of the mean step (both means), applied to the median step the
    // throughput is measured with.
    const double exposed_share =
        std::min(r.throughput.phases.comm_wait / mean_step_seconds(r.throughput), 1.0);
    m.exposed_s = exposed_share * m.step_s;
    m.compute_s = m.step_s - m.exposed_s;
    m.backward_s = r.throughput.phases.backward;
    m.bytes = static_cast<double>(r.throughput.bytes_allreduced_per_step);
    m.buckets = r.buckets;
    m.samples_per_step = r.throughput.samples_per_step;
    m.samples_per_s = r.throughput.samples_per_s;
    m.efficiency = r.scaling_efficiency;
    points.push_back(m);
  }
  std::sort(points.begin(), points.end(),
            [](const MeasuredDdp& a, const MeasuredDdp& b) { return a.world_size < b.world_size; });
  return points;
}

void check_options(const ProjectionOptions& o) {
  if (o.devices.empty()) {
    throw InputError("project --devices: no device count given; list some, e.g. 8,64,512");
  }
  for (size_t i = 0; i < o.devices.size(); ++i) {
    if (o.devices[i] < 1 || o.devices[i] > reports::kMaxWorldSize) {
      throw InputError(
          fmt::format("project --devices: {} is out of range; give device counts "
                      "from 1 to {}, e.g. 8,64,512",
                      o.devices[i], reports::kMaxWorldSize));
    }
    for (size_t j = 0; j < i; ++j) {
      if (o.devices[i] == o.devices[j]) {
        throw InputError(fmt::format(
            "project --devices: {} appears twice; list each once (e.g. 8,64,512)", o.devices[i]));
      }
    }
  }
  if (o.link_gbit_s.empty()) {
    throw InputError("project --link-gbps: no link speed given; list some, e.g. 100,400");
  }
  for (size_t i = 0; i < o.link_gbit_s.size(); ++i) {
    if (!std::isfinite(o.link_gbit_s[i]) || o.link_gbit_s[i] <= 0) {
      throw InputError(
          fmt::format("project --link-gbps: {} is not a link speed; give Gbit/s "
                      "greater than 0, e.g. 100,400",
                      o.link_gbit_s[i]));
    }
    for (size_t j = 0; j < i; ++j) {
      if (o.link_gbit_s[i] == o.link_gbit_s[j]) {
        throw InputError(
            fmt::format("project --link-gbps: {} appears twice; list each once (e.g. 100,400)",
                        o.link_gbit_s[i]));
      }
    }
  }
  if (!std::isfinite(o.alpha_s) || o.alpha_s < 0) {
    throw InputError(
        "project --alpha-us: the latency must be a finite number of microseconds >= 0, e.g. 5");
  }
}

std::string world_sizes_text(const std::vector<MeasuredDdp>& points) {
  std::vector<int64_t> ks;
  for (const MeasuredDdp& m : points) ks.push_back(m.world_size);
  return fmt::format("{}", fmt::join(ks, ","));
}

std::vector<CommSample> comm_samples(const std::vector<MeasuredDdp>& points) {
  std::vector<CommSample> samples;
  for (const MeasuredDdp& m : points) {
    samples.push_back({m.world_size, m.bytes, m.backward_s, m.exposed_s});
  }
  return samples;
}

// The overlap fraction the projection uses, and one sentence saying where it comes from.
std::pair<double, std::string> overlap_of(const std::vector<MeasuredDdp>& comm_points,
                                          const MeasuredDdp& reference, double max_overlap,
                                          AllreduceAlgo algo) {
  if (max_overlap == 0) {
    return {0, reference.buckets == 0
                   ? "0: the naive DDP strategy allreduces after backward, so nothing overlaps"
                   : "0: one gradient bucket, ready only when backward ends, so nothing overlaps"};
  }
  const int needed = fitted_parameter_count(max_overlap);
  if (static_cast<int>(comm_points.size()) < needed) {
    return {0, fmt::format("0, assumed (conservative): with {} buckets the overlap is fitted with "
                           "alpha and beta and needs {} measured world sizes >= 2; the report "
                           "has {} ({})",
                           reference.buckets, needed, comm_points.size(),
                           world_sizes_text(comm_points))};
  }
  const InterconnectFit fit = fit_interconnect(algo, comm_samples(comm_points), max_overlap);
  return {fit.overlap_fraction,
          fmt::format("{:.3f}: fitted with alpha and beta on the exposed communication at K={} "
                      "(at most (b-1)/b = {:.3f} with b = {} buckets)",
                      fit.overlap_fraction, world_sizes_text(comm_points), max_overlap,
                      reference.buckets)};
}

// Fits on the smallest world sizes, as many as the model has parameters, and predicts the rest.
reports::ProjectionValidation validate(const std::vector<MeasuredDdp>& comm_points,
                                       double max_overlap, AllreduceAlgo algo,
                                       const std::string& source) {
  reports::ProjectionValidation v;
  const int params = fitted_parameter_count(max_overlap);
  const std::string names = params == 3 ? "alpha, beta and the overlap fraction" : "alpha and beta";
  if (static_cast<int>(comm_points.size()) <= params) {
    v.note = fmt::format(
        "no validation possible: the model fits {} ({} parameters) and needs {} measured world "
        "sizes >= 2 to hold one out; {} has {} ({}). Measure more, e.g. `ddpbench scale "
        "--modes ddp --gpus 1,2,3,4`",
        names, params, params + 1, quoted_input(source), comm_points.size(),
        world_sizes_text(comm_points));
    return v;
  }
  const std::vector<MeasuredDdp> fit_points(comm_points.begin(), comm_points.begin() + params);
  const InterconnectFit fit = fit_interconnect(algo, comm_samples(fit_points), max_overlap);
  v.possible = true;
  for (const MeasuredDdp& m : fit_points) v.fit_world_sizes.push_back(m.world_size);
  v.fitted_alpha_s = fit.link.alpha_s;
  v.fitted_beta_s_per_byte = fit.link.beta_s_per_byte;
  v.fitted_overlap_fraction = fit.overlap_fraction;
  // Predictions use what the fit points measured only: the largest one's compute and backward.
  const MeasuredDdp& base = fit_points.back();
  const double window = fit.overlap_fraction * base.backward_s;
  for (size_t i = params; i < comm_points.size(); ++i) {
    const MeasuredDdp& m = comm_points[i];
    reports::HeldOutPoint h;
    h.world_size = m.world_size;
    h.measured_step_s = m.step_s;
    h.measured_exposed_comm_s = m.exposed_s;
    h.predicted_exposed_comm_s =
        exposed_comm_seconds(allreduce_seconds(algo, m.world_size, m.bytes, fit.link), window);
    h.predicted_step_s = base.compute_s + h.predicted_exposed_comm_s;
    h.step_error = (h.predicted_step_s - h.measured_step_s) / h.measured_step_s;
    h.comm_error = m.exposed_s > 0 ? (h.predicted_exposed_comm_s - m.exposed_s) / m.exposed_s
                                   : std::numeric_limits<double>::quiet_NaN();
    v.max_abs_step_error = std::max(v.max_abs_step_error, std::abs(h.step_error));
    if (!std::isnan(h.comm_error)) {
      v.max_abs_comm_error = std::max(v.max_abs_comm_error, std::abs(h.comm_error));
    }
    v.held_out.push_back(h);
  }
  v.note = fmt::format("fitted on K={}, predicted K={}", world_sizes_text(fit_points),
                       world_sizes_text({comm_points.begin() + params, comm_points.end()}));
  return v;
}

}  // namespace

namespace {

// Every (link, device count) point of `options`, projected from the basis `b`.
std::vector<reports::ProjectedPoint> projected_points(const reports::ProjectionBasis& b,
                                                      double bytes,
                                                      const ProjectionOptions& options) {
  std::vector<reports::ProjectedPoint> points;
  std::vector<int64_t> devices = options.devices;
  std::sort(devices.begin(), devices.end());
  for (double gbit : options.link_gbit_s) {
    const LinkParams link{options.alpha_s, beta_from_gbit_s(gbit)};
    for (int64_t n : devices) {
      reports::ProjectedPoint p;
      p.link_gbit_s = gbit;
      p.devices = n;
      p.allreduce_s = allreduce_seconds(options.algo, n, bytes, link);
      p.exposed_comm_s = exposed_comm_seconds(p.allreduce_s, b.overlap_window_s);
      p.step_s = b.compute_s + p.exposed_comm_s;
      p.samples_per_s = b.per_device_batch * static_cast<double>(n) / p.step_s;
      // The model cannot scale better than linearly: any excess is noise between the two
      // measured runs behind t(1) and C, not a prediction (reports/METRICS.md, "Projection").
      p.scaling_efficiency = std::min(1.0, b.baseline_step_s / p.step_s);
      points.push_back(p);
    }
  }
  return points;
}

}  // namespace

reports::ProjectionReport project_scaling(const reports::RunReport& measured,
                                          const ProjectionOptions& options) {
  check_options(options);
  const std::string source = quoted_input(options.source);
  check_phases(measured, source);
  const std::vector<MeasuredDdp> ddp = measured_ddp_points(measured);
  if (ddp.empty()) {
    throw InputError(fmt::format(
        "{} has no timed ddp result: project starts from DDP's measured step; pass the "
        "report.json of `ddpbench scale --modes ddp --gpus 1,2,4` or of `ddpbench run --modes "
        "single,ddp --gpus 2` (without --check-only)",
        source));
  }
  std::vector<MeasuredDdp> comm_points;
  for (const MeasuredDdp& m : ddp) {
    if (m.world_size >= 2) comm_points.push_back(m);
  }
  if (comm_points.empty()) {
    throw InputError(fmt::format(
        "{} has ddp results only at world size 1, where nothing is allreduced: measure at least "
        "one world size >= 2, e.g. `ddpbench scale --modes ddp --gpus 1,2,4`",
        source));
  }
  const MeasuredDdp& ref = comm_points.back();
  if (ref.bytes <= 0) {
    throw InputError(fmt::format(
        "{}: the ddp result at world size {} allreduced 0 bytes per step, so there is no "
        "communication to project; pass a report of a model with trainable parameters",
        source, ref.world_size));
  }

  reports::ProjectionReport out;
  reports::ProjectionBasis& b = out.basis;
  b.source = options.source;
  b.scenario = measured.config.scenario;
  b.backend = measured.config.ddp.backend;
  b.device = measured.context.device;
  b.scaling = measured.config.scaling;
  b.reference_world_size = ref.world_size;
  b.per_device_batch = ref.samples_per_step / static_cast<double>(ref.world_size);
  b.bytes_per_step = static_cast<int64_t>(ref.bytes);
  b.buckets = ref.buckets;
  b.step_s = ref.step_s;
  b.compute_s = ref.compute_s;
  b.backward_s = ref.backward_s;
  // With b buckets filled in turn during backward, the first can start after 1/b of it at the
  // earliest: at most (b-1)/b of backward can hide communication.
  const double max_overlap =
      ref.buckets > 1 ? static_cast<double>(ref.buckets - 1) / static_cast<double>(ref.buckets) : 0;
  std::tie(b.overlap_fraction, b.overlap_source) =
      overlap_of(comm_points, ref, max_overlap, options.algo);
  b.overlap_window_s = b.overlap_fraction * b.backward_s;
  b.baseline_step_s = ref.compute_s;
  b.baseline_source =
      "model: the reference's compute time (the input has no weak-scaling single-device "
      "baseline)";
  for (const reports::ModeResult& r : measured.results) {
    if (r.mode == reports::Mode::kSingle && timed(r) && measured.config.scaling == "weak") {
      b.baseline_step_s = step_seconds(r.throughput);
      b.baseline_source =
          "measured: the input's single-device step at the same per-device batch (weak "
          "scaling)";
    }
  }

  out.model.algo = algo_name(options.algo);
  out.model.formula = algo_formula(options.algo);
  out.model.alpha_s = options.alpha_s;
  out.validation = validate(comm_points, max_overlap, options.algo, options.source);
  for (const MeasuredDdp& m : ddp) {
    out.measured.push_back({m.world_size, m.step_s, m.samples_per_s, m.efficiency, m.exposed_s});
  }

  out.projected = projected_points(b, ref.bytes, options);
  return out;
}

}  // namespace ddpbench::projection
