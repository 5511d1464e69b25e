// modes_step_loop_test.cpp — the one step loop every mode runs, driven by a recording gradient
// path: it loads exactly the shards the path asks for, calls the path's phases in order, keeps
// progress observers out of the timed phases, records what a checked step needs (and nothing on
// perf steps), and stops on a non-finite loss naming who and when.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <memory>
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
  void set_gradient_sync(bool sync) override { syncs.push_back(sync); }
  double finish_checked_step(int64_t, double local_loss, int64_t samples) override {
    checked_samples.push_back(samples);
    return local_loss + 1000;  // marks the recorded loss as this hook's
  }

  std::vector<std::string> calls;
  std::vector<std::vector<int64_t>> shard_rows;
  std::vector<int64_t> checked_samples;
  std::vector<bool> syncs;
  int64_t nan_at = -1;

 private:
  torch::nn::Linear model_;
};

struct Fixture {
  scenarios::ScenarioSpec spec;
  data::TensorDataset dataset{at::arange(24, at::kFloat).view({12, 2}) / 24, at::ones({12, 1}),
                              "12 pairs"};
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

// Gradient accumulation: each shard is cut into equal micro-batches (rank 0's 4 samples into
// 2 + 2), every micro-step runs forward, backward and reduce with its loss scaled by 1/A, the sync
// switch is off for all but the last micro-step (on for all with no_sync off), and the recorded
// loss and gradients are those of the whole step's batch.
TEST(StepLoop, AccumulationRunsMicroStepsWithScaledLossesAndOneSync) {
  Fixture f;
  const data::GlobalBatchPlan plan{{12, 2, false, 0, false}, 8};  // 4 samples per rank and step
  const TrainInputs inputs{f.spec, f.dataset, plan, f.context};
  struct Run {
    std::unique_ptr<RecordingPath> path;
    TrainResult result;
  };
  auto run = [&](int64_t micro_steps, bool no_sync, int64_t unscaled_step) {
    torch::manual_seed(5);  // the same initial weights for every run
    Run r{std::make_unique<RecordingPath>(), {}};
    TrainOptions options;
    options.steps = 1;
    options.micro_steps = micro_steps;
    options.no_sync = no_sync;
    options.unscaled_step = unscaled_step;
    r.result = train(*r.path, inputs, options);
    return r;
  };
  const Run whole = run(1, true, -1);
  const TrainResult& big = whole.result;
  EXPECT_EQ(whole.path->syncs, (std::vector<bool>{true}));

  for (const bool no_sync : {true, false}) {
    const Run accumulated = run(2, no_sync, -1);
    const TrainResult& r = accumulated.result;
    const RecordingPath* path = accumulated.path.get();
    EXPECT_EQ(path->calls, (std::vector<std::string>{"forward", "backward", "reduce", "forward",
                                                     "backward", "reduce"}));
    EXPECT_EQ(path->shard_rows, (std::vector<std::vector<int64_t>>{{2, 2}, {2, 2}}));
    EXPECT_EQ(path->syncs,
              no_sync ? (std::vector<bool>{false, true}) : (std::vector<bool>{true, true}));
    EXPECT_EQ(path->checked_samples, (std::vector<int64_t>{8}));
    ASSERT_EQ(r.gradients.size(), 1u);
    // The accumulated gradient and the mean loss are the whole batch's (to rounding).
    EXPECT_NEAR(r.losses[0], big.losses[0], 1e-5);
    for (size_t i = 0; i < r.gradients[0].size(); ++i) {
      EXPECT_TRUE(at::allclose(r.gradients[0][i], big.gradients[0][i], 1e-5, 1e-6)) << i;
    }
  }
  const TrainResult bad = run(2, true, 0).result;
  EXPECT_TRUE(at::allclose(bad.gradients[0][0], 2 * big.gradients[0][0], 1e-5, 1e-6))
      << "the noscale fault doubles a 2-micro-step gradient";
}

TEST(StepLoop, AccumulationRefusesUnequalMicroBatches) {
  Fixture f;
  RecordingPath path;
  TrainOptions options;
  options.micro_steps = 3;  // 2 samples per rank do not split into 3
  EXPECT_THROW(train(path, f.inputs(), options), WorkerFailure);
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
