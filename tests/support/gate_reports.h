// gate_reports.h — the reports the regression gate's unit tests judge
// (unit/compare_regression_gate_test.cpp, unit/compare_gate_repeats_test.cpp): a toy_cnn run of
// single and of ddp on 2 ranks, and the gate's point looked up by its key.
#pragma once

#include <stdexcept>
#include <string>

#include "compare/regression_gate.h"
#include "reports/run/run_record.h"
#include "support/judged_checks.h"

namespace ddpbench::compare::gate_test {

// single at 1000 samples/s and ddp (2 ranks, gloo) at `ddp_rate`, its gradients check of
// `ddp_check_status`; the verdict set as a run sets it.
inline reports::RunReport run(double ddp_rate,
                              reports::CheckStatus ddp_check_status = reports::CheckStatus::kPass) {
  reports::RunReport r;
  r.config.scenario = "toy_cnn";
  r.config.dtype = "float32";
  r.config.global_batch = 16;
  reports::ModeResult single;
  single.mode = reports::Mode::kSingle;
  single.throughput.samples_per_s = 1000;
  reports::ModeResult ddp;
  ddp.mode = reports::Mode::kDdp;
  ddp.world_size = 2;
  ddp.backend = "gloo";
  ddp.throughput.samples_per_s = ddp_rate;
  ddp.checks.push_back(test::judged_check(reports::Stage::kGradients, ddp_check_status));
  r.results = {single, ddp};
  return test::with_verdict(r);
}

// The gate's point `key` ("scenario/mode/world_size"); throws when the gate has none.
inline GatePoint point(const GateResult& g, const std::string& key) {
  for (const auto& p : g.points) {
    if (p.key == key) return p;
  }
  throw std::runtime_error("no point " + key);
}

}  // namespace ddpbench::compare::gate_test
