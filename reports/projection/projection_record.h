// projection_record.h — the plain record `ddpbench project` produces: step time and scaling
// efficiency projected to device counts and links the machine does not have, from the measured
// compute, backward and overlap of a real run, and how well the same model predicted the run's own
// held-out world sizes. The projection layer (harness/projection/) computes every number; the
// projection reporters only format them. Formulas: reports/METRICS.md, "Projection".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::reports {

inline constexpr int kProjectionSchemaVersion = 1;

// What the projection starts from: one measured DDP point (the largest world size of the input).
struct ProjectionBasis {
  std::string source;  // the report.json read
  std::string scenario;
  std::string backend;  // what the measured ranks communicated over
  std::string device;   // "cpu" or "cuda"
  std::string scaling;  // the input's "weak" or "strong"
  int64_t reference_world_size = 0;
  double per_device_batch = 0;  // samples per device per step, held fixed (weak scaling)
  int64_t bytes_per_step = 0;   // gradient bytes each rank allreduces per step
  int64_t buckets = 0;          // DDP buckets (0: the naive strategy)
  double step_s = 0;            // measured mean step time at the reference
  double compute_s = 0;         // step_s - comm_wait: everything but waiting for gradients
  double backward_s = 0;        // measured backward duration
  double overlap_fraction = 0;  // share of backward that hid communication
  std::string overlap_source;   // how overlap_fraction was obtained, in one sentence
  double overlap_window_s = 0;  // backward_s * overlap_fraction
  double baseline_step_s = 0;   // t(1) of the efficiency t(1) / t(n)
  std::string baseline_source;  // "measured single-device step ..." or "model: ..."
};

// The allreduce model of the projected links.
struct ProjectionModel {
  std::string algo;     // "ring" or "tree"
  std::string formula;  // T(n, S) in words, e.g. "2(n-1) alpha + 2(n-1)/n S/B"
  double alpha_s = 0;   // per-message latency of the projected links (--alpha-us)
};

// One held-out measured world size, predicted from parameters fitted on the others.
struct HeldOutPoint {
  int64_t world_size = 0;
  double measured_step_s = 0;
  double predicted_step_s = 0;
  double step_error = 0;  // (predicted - measured) / measured
  double measured_exposed_comm_s = 0;
  double predicted_exposed_comm_s = 0;
  // (predicted - measured) / measured exposed communication; NaN when none was measured. Shown
  // beside the step error because compute that varies between world sizes can hide a wrong
  // communication model inside a small step-time error.
  double comm_error = 0;
};

// The model checked against the input's own world sizes: alpha, beta (and the overlap fraction,
// with several buckets) of the measured interconnect fitted on `fit_world_sizes`, every other
// measured world size predicted. `possible` is false, with `note` saying why, when the input has
// no world size left to hold out; no error figure is made up then.
struct ProjectionValidation {
  bool possible = false;
  std::string note;
  std::vector<int64_t> fit_world_sizes;
  double fitted_alpha_s = 0;
  double fitted_beta_s_per_byte = 0;  // 1 / bandwidth; 0 = the fit found no bandwidth term
  double fitted_overlap_fraction = 0;
  std::vector<HeldOutPoint> held_out;
  double max_abs_step_error = 0;  // max |step_error| over held_out
  double max_abs_comm_error = 0;  // max |comm_error| over held_out (NaN ones left out)
};

// A measured DDP point of the input, as the chart draws it.
struct MeasuredScalingPoint {
  int64_t world_size = 0;
  double step_s = 0;
  double samples_per_s = 0;
  double scaling_efficiency = -1;  // the input's own figure; -1 = not measured
  double exposed_comm_s = 0;
};

struct ProjectedPoint {
  double link_gbit_s = 0;
  int64_t devices = 0;
  double allreduce_s = 0;         // T(n, S) on the projected link
  double exposed_comm_s = 0;      // max(0, allreduce_s - overlap window)
  double step_s = 0;              // compute + exposed communication
  double samples_per_s = 0;       // per_device_batch * devices / step_s
  double scaling_efficiency = 0;  // baseline_step_s / step_s
};

struct ProjectionReport {
  int schema_version = kProjectionSchemaVersion;
  ProjectionBasis basis;
  ProjectionModel model;
  ProjectionValidation validation;
  std::vector<MeasuredScalingPoint> measured;
  std::vector<ProjectedPoint> projected;  // link by link, devices ascending within a link
};

}  // namespace ddpbench::reports
