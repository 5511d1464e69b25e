// modes_step_batches_test.cpp — a step's batches collated on several threads are the bytes that
// one thread collating each shard whole gives (data::collate, the definition), for augmented
// images and padded token sequences, with and without micro-batches, and so are the batches
// gathered from the dataset's device form (--data-on-device); and a rank with no samples (Join)
// loads empty batches.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "data/batch_plan.h"
#include "data/device_data.h"
#include "data/image_dataset.h"
#include "data/synthetic_cifar.h"
#include "data/synthetic_text.h"
#include "modes/common/micro_batches.h"
#include "modes/common/step_batches.h"
#include "scenarios/cifar_data.h"

namespace ddpbench::modes {
namespace {

// Asks for rank 0's and rank 1's local batches, or for none (a joined rank); trains nothing.
class TwoRankPath : public GradientPath {
 public:
  explicit TwoRankPath(bool joined = false) : joined_(joined), model_(torch::nn::Linear(1, 1)) {}
  torch::nn::Module& module() override { return *model_; }
  std::string who() const override { return "two ranks"; }
  std::vector<std::vector<int64_t>> step_shards(const data::EpochPlan& epoch,
                                                int64_t step_in_epoch) const override {
    if (joined_) return {};
    return {epoch.local_batch(step_in_epoch, 0), epoch.local_batch(step_in_epoch, 1)};
  }
  at::Tensor forward_loss(const std::vector<data::Batch>&, int64_t) override { return {}; }
  void backward(const at::Tensor&) override {}
  void reduce_gradients() override {}

 private:
  bool joined_;
  torch::nn::Linear model_;
};

// What one thread gives: each shard's micro-batch collated whole.
std::vector<std::vector<data::Batch>> one_by_one(const data::Dataset& dataset,
                                                 const data::GlobalBatchPlan& plan,
                                                 const GradientPath& path, int64_t step,
                                                 int64_t micro_steps) {
  data::PlanCursor cursor(plan);
  data::StepPosition pos;
  const data::EpochPlan& epoch = cursor.seek(step, pos);
  const int64_t pad_to = data::padded_length(dataset, epoch.global_batch(pos.step_in_epoch));
  const auto shards = path.step_shards(epoch, pos.step_in_epoch);
  std::vector<std::vector<data::Batch>> out(static_cast<size_t>(micro_steps));
  for (const auto& shard : shards) {
    const auto pieces = split_micro_batches(shard, micro_steps, path.who(), step);
    for (size_t m = 0; m < pieces.size(); ++m) {
      out[m].push_back(data::collate(dataset, pieces[m], pos.epoch, pad_to));
    }
  }
  return out;
}

void expect_same_batches(const data::Dataset& dataset, int64_t global_batch, int64_t micro_steps) {
  const data::GlobalBatchPlan plan({dataset.size(), 2, true, 3, false}, global_batch);
  const runtime::ExecutionContext context = runtime::ExecutionContext::cpu(at::kFloat);
  const TwoRankPath path;
  const std::unique_ptr<data::DeviceData> on_device = data::materialise(dataset, context.device());
  ASSERT_NE(on_device, nullptr);
  for (const int64_t threads : {0, 1, 3, 8}) {
    // 0: the device form makes the batches.
    StepBatches batches(dataset, plan, context, threads, threads == 0 ? on_device.get() : nullptr);
    for (int64_t step = 0; step < 3; ++step) {
      const auto got = batches.load(path, step, micro_steps);
      const auto want = one_by_one(dataset, plan, path, step, micro_steps);
      ASSERT_EQ(got.size(), want.size());
      for (size_t m = 0; m < want.size(); ++m) {
        ASSERT_EQ(got[m].size(), 2u);
        for (size_t s = 0; s < 2; ++s) {
          EXPECT_TRUE(at::equal(got[m][s].inputs, want[m][s].inputs))
              << threads << " threads, step " << step << " micro " << m << " shard " << s;
          EXPECT_TRUE(at::equal(got[m][s].targets, want[m][s].targets));
        }
      }
    }
  }
}

TEST(StepBatches, AugmentedImagesOnManyThreadsAreTheBytesOfOne) {
  const data::ImageDataset images(std::make_shared<data::SyntheticCifar>(500, 0),
                                  scenarios::cifar_train_transform(0));
  expect_same_batches(images, 128, 1);
  expect_same_batches(images, 96, 2);  // 48 per rank, two micro-batches of 24
}

TEST(StepBatches, SequencesArePaddedToTheGlobalBatchsLongestOnEveryThread) {
  data::SyntheticTextOptions o;
  o.size = 300;
  o.vocab_size = 100;
  o.min_length = 5;
  o.max_length = 60;
  const data::SyntheticText text(o, 1);
  expect_same_batches(text, 80, 1);
  expect_same_batches(text, 80, 2);
}

TEST(StepBatches, AJoinedRankLoadsEmptyBatches) {
  const data::ImageDataset images(std::make_shared<data::SyntheticCifar>(64, 0),
                                  scenarios::cifar_train_transform(0));
  const data::GlobalBatchPlan plan({64, 2, true, 0, false}, 16);
  const runtime::ExecutionContext context = runtime::ExecutionContext::cpu(at::kFloat);
  StepBatches batches(images, plan, context, 4);
  const auto got = batches.load(TwoRankPath(/*joined=*/true), 0, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0].empty());
  EXPECT_TRUE(got[1].empty());
}

}  // namespace
}  // namespace ddpbench::modes
