// run_setup.cpp — see run_setup.h.
#include "training/run_setup.h"

namespace ddpbench::training {

const char* RunSetup::dtype_name() const {
  return context.dtype == at::kDouble ? "float64" : "float32";
}

data::GlobalBatchPlan make_plan(const RunSetup& setup, const data::Dataset& dataset,
                                int64_t replicas, int64_t global_batch) {
  return data::GlobalBatchPlan(
      {dataset.size(), replicas, setup.spec->shuffle, setup.seed, setup.drop_last}, global_batch);
}

}  // namespace ddpbench::training
