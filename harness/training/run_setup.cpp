// run_setup.cpp — see run_setup.h.
#include "training/run_setup.h"

namespace ddpbench::training {

const char* RunSetup::dtype_name() const {
  return context.dtype == at::kDouble ? "float64" : "float32";
}

std::shared_ptr<const modes::TrainingState> RunSetup::start_state() const {
  if (!resume) return nullptr;
  return {resume, &resume->state};  // shares the checkpoint's ownership
}

data::GlobalBatchPlan make_plan(const RunSetup& setup, const data::Dataset& dataset,
                                int64_t replicas, int64_t global_batch) {
  return data::GlobalBatchPlan(
      {dataset.size(), replicas, setup.spec->shuffle, setup.seed, setup.drop_last}, global_batch);
}

}  // namespace ddpbench::training
