// modes_step_loop_test.cpp — the one step loop every mode runs, driven by a recording gradient
// path: it loads exactly the shards the path asks for, calls the path's phases in order, keeps
// progress observers out of the timed phases, records what a checked step needs (and nothing on
// perf steps), and stops on a non-finite loss naming who and when.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <thread>

#include "data/tensor_dataset.h"
#include "errors.h"
#include "modes/common/step_loop.h"

namespace ddpbench::modes {
namespace {

// Two shards per step (rank 0's and rank 1's slice); the loss is the model's MSE on both.
class RecordingPath : public GradientPath {
 public:
  RecordingPath() : model_(torch::nn::Linear(2, 1)) {}
  torch::nn::Module& module() override { return *model_; }
  std::string who() const override { return "recorder"; }
  std::vector<std::vector<int64_t>> step_shards(const data::EpochPlan& epoch,
                                                int64_t step_in_epoch) const override {
    return {epoch.local_batch(step_in_epoch, 0), epoch.local_batch(step_in_epoch, 1)};
  }
  at::Tensor forward_loss(const std::vector<data::Batch>& shards, int64_t step) override {
    calls.push_back("forward");
    shard_rows.push_back({shards.at(0).inputs.size(0), shards.at(1).inputs.size(0)});
    const at::Tensor x = at::cat({shards[0].inputs, shards[1].inputs});
    const at::Tensor y = at::cat({shards[0].targets, shards[1].targets});
    at::Tensor loss = torch::mse_loss(model_->forward(x), y);
    return step == nan_at ? loss * std::nan("") : loss;
  }
  void backward(const at::Tensor& loss) override {
    calls.push_back("backward");
    loss.backward();
  }
  void reduce_gradients() override { calls.push_back("reduce"); }
  double finish_checked_step(int64_t, double local_loss, int64_t samples) override {
    checked_samples.push_back(samples);
    return local_loss + 1000;  // marks the recorded loss as this hook's
  }

  std::vector<std::string> calls;
  std::vector<std::vector<int64_t>> shard_rows;
  std::vector<int64_t> checked_samples;
  int64_t nan_at = -1;

 private:
  torch::nn::Linear model_;
};

struct Fixture {
  scenarios::ScenarioSpec spec;
  data::TensorDataset dataset{at::arange(24, at::kFloat).view({12, 2}) / 24,
                              at::ones({12, 1}), "12 pairs"};
  // 12 samples, 2 replicas, global batch 4: 3 steps per epoch of 2 + 2 samples.
  data::GlobalBatchPlan plan{{12, 2, false, 0, false}, 4};
  runtime::ExecutionContext context = runtime::ExecutionContext::cpu(at::kFloat);
  TrainInputs inputs() const { return {spec, dataset, plan, context}; }
};

TEST(StepLoop, CheckedStepsRecordWhatTheComparisonNeeds) {
  Fixture f;
  RecordingPath path;
  TrainOptions options;
  options.steps = 4;  // crosses into the second epoch
  const TrainResult r = train(path, f.inputs(), options);
  ASSERT_EQ(path.calls.size(), 12u);
  for (size_t s = 0; s < 4; ++s) {
    EXPECT_EQ(path.calls[3 * s], "forward");
    EXPECT_EQ(path.calls[3 * s + 1], "backward");
    EXPECT_EQ(path.calls[3 * s + 2], "reduce");
    EXPECT_EQ(path.shard_rows[s], (std::vector<int64_t>{2, 2}));
  }
  EXPECT_EQ(path.checked_samples, (std::vector<int64_t>{4, 4, 4, 4}));
  ASSERT_EQ(r.losses.size(), 4u);
  EXPECT_GT(r.losses[0], 1000) << "the recorded loss is the one finish_checked_step returned";
  ASSERT_EQ(r.gradients.size(), 4u);
  EXPECT_EQ(r.gradients[0].size(), 2u) << "one record per parameter";
  EXPECT_EQ(r.step_times.size(), 4u);
  EXPECT_EQ(r.final_state.size(), 2u);
}

TEST(StepLoop, PerfStepsRecordOnlyTimes) {
  Fixture f;
  RecordingPath path;
  TrainOptions options;
  options.steps = 3;
  options.checking = false;
  const TrainResult r = train(path, f.inputs(), options);
  EXPECT_TRUE(r.losses.empty());
  EXPECT_TRUE(r.gradients.empty());
  EXPECT_TRUE(r.final_state.empty());
  EXPECT_TRUE(path.checked_samples.empty());
  EXPECT_EQ(r.step_times.size(), 3u);
}

// Observers sleep 300 ms before every phase; a trivial step's timed phases stay far below 250 ms,
// so one sleep inside a timed phase fails, and the total is the sum of the phases.
TEST(StepLoop, ProgressObserversAreOutsideTheTimedPhases) {
  Fixture f;
  RecordingPath path;
  TrainOptions options;
  options.steps = 2;
  std::vector<StepPhase> seen;
  options.on_phase = [&seen](int64_t, StepPhase phase) {
    seen.push_back(phase);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  };
  const TrainResult r = train(path, f.inputs(), options);
  EXPECT_EQ(seen.size(), 12u) << "data, forward, backward, comm wait, optimizer, done per step";
  for (const auto& t : r.step_times) {
    EXPECT_LT(t.total, 0.25) << "an observer's sleep was timed";
    EXPECT_DOUBLE_EQ(t.total, t.data + t.forward + t.backward + t.comm_wait + t.optimizer);
  }
}

TEST(StepLoop, NonFiniteLossStopsNamingWhoAndStep) {
  Fixture f;
  RecordingPath path;
  path.nan_at = 2;
  TrainOptions options;
  options.steps = 4;
  try {
    train(path, f.inputs(), options);
    FAIL() << "expected WorkerFailure";
  } catch (const WorkerFailure& e) {
    EXPECT_NE(std::string(e.what()).find("recorder: non-finite loss"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("at step 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(path.checked_samples.size(), 2u) << "the failing step records nothing";
}

}  // namespace
}  // namespace ddpbench::modes
