// projection_json_reporter.cpp — projection.json: the ProjectionReport field for field (names in
// reports/SCHEMA.md, "projection.json"), seconds as seconds, so scripts need no unit parsing.
#include <cmath>
#include <nlohmann/json.hpp>

#include "reports/projection/projection_reporters.h"

namespace ddpbench::reports {
namespace {
using nlohmann::json;

json basis_json(const ProjectionBasis& b) {
  return json{{"source", b.source},
              {"scenario", b.scenario},
              {"backend", b.backend},
              {"device", b.device},
              {"scaling", b.scaling},
              {"reference_world_size", b.reference_world_size},
              {"per_device_batch", b.per_device_batch},
              {"bytes_per_step", b.bytes_per_step},
              {"buckets", b.buckets},
              {"step_s", b.step_s},
              {"compute_s", b.compute_s},
              {"backward_s", b.backward_s},
              {"overlap_fraction", b.overlap_fraction},
              {"overlap_source", b.overlap_source},
              {"overlap_window_s", b.overlap_window_s},
              {"baseline_step_s", b.baseline_step_s},
              {"baseline_source", b.baseline_source}};
}

json validation_json(const ProjectionValidation& v) {
  json held = json::array();
  for (const HeldOutPoint& h : v.held_out) {
    held.push_back(
        json{{"world_size", h.world_size},
             {"measured_step_s", h.measured_step_s},
             {"predicted_step_s", h.predicted_step_s},
             {"step_error", h.step_error},
             {"measured_exposed_comm_s", h.measured_exposed_comm_s},
             {"predicted_exposed_comm_s", h.predicted_exposed_comm_s},
             {"comm_error", std::isnan(h.comm_error) ? json(nullptr) : json(h.comm_error)}});
  }
  // A fit with no bandwidth term has an unbounded bandwidth: null, not a made-up number.
  const json bandwidth =
      v.fitted_beta_s_per_byte > 0 ? json(8 / v.fitted_beta_s_per_byte / 1e9) : json(nullptr);
  return json{{"possible", v.possible},
              {"note", v.note},
              {"fit_world_sizes", v.fit_world_sizes},
              {"fitted_alpha_s", v.fitted_alpha_s},
              {"fitted_beta_s_per_byte", v.fitted_beta_s_per_byte},
              {"fitted_bandwidth_gbit_s", v.possible ? bandwidth : json(nullptr)},
              {"fitted_overlap_fraction", v.fitted_overlap_fraction},
              {"held_out", held},
              {"max_abs_step_error", v.possible ? json(v.max_abs_step_error) : json(nullptr)},
              {"max_abs_comm_error", v.possible ? json(v.max_abs_comm_error) : json(nullptr)}};
}

}  // namespace

std::string projection_json(const ProjectionReport& r) {
  json measured = json::array();
  for (const MeasuredScalingPoint& m : r.measured) {
    measured.push_back(json{{"world_size", m.world_size},
                            {"step_s", m.step_s},
                            {"samples_per_s", m.samples_per_s},
                            {"scaling_efficiency", m.scaling_efficiency},
                            {"exposed_comm_s", m.exposed_comm_s}});
  }
  json projected = json::array();
  for (const ProjectedPoint& p : r.projected) {
    projected.push_back(json{{"link_gbit_s", p.link_gbit_s},
                             {"devices", p.devices},
                             {"allreduce_s", p.allreduce_s},
                             {"exposed_comm_s", p.exposed_comm_s},
                             {"step_s", p.step_s},
                             {"samples_per_s", p.samples_per_s},
                             {"scaling_efficiency", p.scaling_efficiency}});
  }
  const json doc{
      {"schema_version", r.schema_version},
      {"basis", basis_json(r.basis)},
      {"model",
       json{{"algo", r.model.algo}, {"formula", r.model.formula}, {"alpha_s", r.model.alpha_s}}},
      {"validation", validation_json(r.validation)},
      {"measured", measured},
      {"projected", projected}};
  return doc.dump(2) + "\n";
}

}  // namespace ddpbench::reports
