// data_synthetic_tensors_test.cpp — synthetic data of a declared shape (data/synthetic_tensors.h):
// a sample is the same bytes however often and in whatever order it is asked for, samples
// differ from each other and across seeds, values have the declared shape, dtype and range, and
// a held-out split (a later key range) shares no sample with the training split.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/synthetic_tensors.h"

namespace ddpbench::data {
namespace {

TEST(SyntheticTensors, ASampleIsTheSameBytesWhereverItIsAskedFor) {
  const SyntheticTensorsShape shape{{3, 4, 4}, "float32", 0, 10, {}, 64};
  const SyntheticTensors a(shape, 64, 7);
  const SyntheticTensors b(shape, 64, 7);
  const Example late = a.get(9, 0);
  (void)a.get(3, 0);
  EXPECT_TRUE(torch::equal(b.get(9, 2).input, late.input));  // epoch does not matter
  EXPECT_TRUE(torch::equal(a.get(9, 0).target, late.target));
  EXPECT_FALSE(torch::equal(a.get(8, 0).input, late.input));
  EXPECT_FALSE(torch::equal(SyntheticTensors(shape, 64, 8).get(9, 0).input, late.input));
  EXPECT_EQ(late.input.sizes(), (std::vector<int64_t>{3, 4, 4}));
  EXPECT_EQ(late.input.scalar_type(), at::kFloat);
  EXPECT_EQ(late.target.dim(), 0);
  EXPECT_EQ(late.target.scalar_type(), at::kLong);
  // The held-out split starts past the training split: its sample 0 is training key 64.
  const SyntheticTensors held_out(shape, 16, 7, 64);
  EXPECT_TRUE(
      torch::equal(held_out.get(0, 0).input, SyntheticTensors(shape, 65, 7).get(64, 0).input));
  EXPECT_EQ(held_out.describe(),
            "held-out synthetic inputs [3,4,4] float32 -> 10 classes (seed 7, keys from 64)");
  EXPECT_EQ(a.describe(), "synthetic inputs [3,4,4] float32 -> 10 classes (64 samples, seed 7)");
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_FALSE(torch::equal(held_out.get(0, 0).input, a.get(i, 0).input)) << i;
  }
}

TEST(SyntheticTensors, ValuesHaveTheDeclaredKindAndRange) {
  const SyntheticTensors tokens({{12}, "int64", 5, 3, {}, 100}, 100, 0);
  std::vector<at::Tensor> ids;
  std::vector<at::Tensor> labels;
  for (int64_t i = 0; i < 100; ++i) {
    const Example e = tokens.get(i, 0);
    ids.push_back(e.input);
    labels.push_back(e.target);
  }
  const at::Tensor all_ids = torch::stack(ids);
  const at::Tensor all_labels = torch::stack(labels);
  EXPECT_EQ(all_ids.scalar_type(), at::kLong);
  EXPECT_EQ(all_ids.min().item<int64_t>(), 0);
  EXPECT_EQ(all_ids.max().item<int64_t>(), 4);  // every id below the vocabulary is drawn
  EXPECT_EQ(all_labels.min().item<int64_t>(), 0);
  EXPECT_EQ(all_labels.max().item<int64_t>(), 2);
  const SyntheticTensors regression({{6}, "float32", 0, 0, {2, 3}, 500}, 500, 0);
  std::vector<at::Tensor> targets;
  for (int64_t i = 0; i < 500; ++i) targets.push_back(regression.get(i, 0).target);
  const at::Tensor t = torch::stack(targets);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{500, 2, 3}));
  EXPECT_NEAR(t.mean().item<double>(), 0.0, 0.1);  // standard normal: 3000 draws
  EXPECT_NEAR(t.std().item<double>(), 1.0, 0.1);
  EXPECT_EQ(describe_shape({{6}, "float32", 0, 0, {2, 3}, 500}),
            "inputs [6] float32 -> targets [2,3] float32");
  EXPECT_EQ(describe_shape({{12}, "int64", 5, 3, {}, 100}), "inputs [12] int64 < 5 -> 3 classes");
}

}  // namespace
}  // namespace ddpbench::data
