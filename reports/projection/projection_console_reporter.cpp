// projection_console_reporter.cpp — what `ddpbench project` prints: what the projection starts
// from, how well the model predicted the input's own held-out world sizes (or why it could not be
// checked), and the table of projected points.
#include <fmt/format.h>

#include <cmath>

#include "reports/projection/projection_reporters.h"

namespace ddpbench::reports {
namespace {

std::string console_ms(double s) { return fmt::format("{:.3f} ms", 1e3 * s); }

// "+3.0%", or "-" for an error that is not defined (nothing measured to compare with).
std::string percent(double error) {
  return std::isnan(error) ? std::string("-") : fmt::format("{:+.1f}%", 100 * error);
}

std::string validation_text(const ProjectionValidation& v) {
  if (!v.possible) return fmt::format("validation: {}\n", v.note);
  const std::string bandwidth =
      v.fitted_beta_s_per_byte > 0
          ? fmt::format("{:.3g} Gbit/s", 8 / v.fitted_beta_s_per_byte / 1e9)
          : std::string("unbounded (no bandwidth term fitted)");
  std::string out = fmt::format(
      "validation ({}): measured interconnect alpha {:.1f} us, bandwidth {}, overlap {:.3f}\n",
      v.note, 1e6 * v.fitted_alpha_s, bandwidth, v.fitted_overlap_fraction);
  out += fmt::format("  {:>5} {:>14} {:>14} {:>8} {:>15} {:>15} {:>8}\n", "K", "measured step",
                     "predicted step", "error", "measured comm", "predicted comm", "error");
  for (const HeldOutPoint& h : v.held_out) {
    out += fmt::format("  {:>5} {:>14} {:>14} {:>8} {:>15} {:>15} {:>8}\n", h.world_size,
                       console_ms(h.measured_step_s), console_ms(h.predicted_step_s),
                       percent(h.step_error), console_ms(h.measured_exposed_comm_s),
                       console_ms(h.predicted_exposed_comm_s), percent(h.comm_error));
  }
  out += fmt::format(
      "  largest error on held-out world sizes: step time {:.1f}%, exposed communication "
      "{:.1f}%\n",
      100 * v.max_abs_step_error, 100 * v.max_abs_comm_error);
  return out;
}

}  // namespace

std::string projection_console(const ProjectionReport& r) {
  const ProjectionBasis& b = r.basis;
  std::string out = fmt::format(
      "projection of {} ({}, {} over {}) from the ddp point at K={}: step {}, compute {}, "
      "backward {}, {} bytes allreduced per step in {} bucket(s), {:g} samples per device\n",
      b.scenario, b.source, b.device.empty() ? "-" : b.device, b.backend.empty() ? "-" : b.backend,
      b.reference_world_size, console_ms(b.step_s), console_ms(b.compute_s),
      console_ms(b.backward_s), b.bytes_per_step, b.buckets, b.per_device_batch);
  out += fmt::format("overlap fraction {}; window {}\n", b.overlap_source,
                     console_ms(b.overlap_window_s));
  out += fmt::format("efficiency baseline t(1) = {}: {}\n", console_ms(b.baseline_step_s),
                     b.baseline_source);
  out += fmt::format("model: {} allreduce, {}, alpha {:g} us (--alpha-us)\n", r.model.algo,
                     r.model.formula, 1e6 * r.model.alpha_s);
  out += validation_text(r.validation);
  out +=
      fmt::format("\n{:<5} {:>10} {:>8} {:>13} {:>13} {:>12} {:>14} {:>10}\n", "algo", "link",
                  "devices", "allreduce", "exposed comm", "step time", "samples/s", "efficiency");
  for (const ProjectedPoint& p : r.projected) {
    out += fmt::format("{:<5} {:>10} {:>8} {:>13} {:>13} {:>12} {:>14.1f} {:>9.1f}%\n",
                       r.model.algo, fmt::format("{:g} Gb/s", p.link_gbit_s), p.devices,
                       console_ms(p.allreduce_s), console_ms(p.exposed_comm_s),
                       console_ms(p.step_s), p.samples_per_s, 100 * p.scaling_efficiency);
  }
  out +=
      "(a projection: an alpha-beta model, not a measurement; reports/METRICS.md, "
      "\"Projection\")\n";
  return out;
}

}  // namespace ddpbench::reports
