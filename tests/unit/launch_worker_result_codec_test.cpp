// launch_worker_result_codec_test.cpp — rank 0's results survive the trip through the store:
// every field, including parameters without gradients.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "launch/worker_result_codec.h"

namespace ddpbench::launch {
namespace {

TEST(WorkerResultCodec, RoundTripsEveryField) {
  modes::ddp::DdpWorkerResult r;
  r.losses = {2.5, 2.0};
  r.gradients = {{at::ones({2, 2}), at::Tensor()}, {at::full({2, 2}, 3.0), at::zeros({1})}};
  r.final_state = {{"w", at::arange(4).to(at::kDouble)}, {"n", at::tensor(int64_t{7})}};
  r.step_timings = {{0.1, 0.2, 0.3, 0.4, 0.5, 1.5}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.9}};
  r.perf_timings = {{0.0, 0.0, 0.0, 0.7, 0.0, 2.0}};
  r.bytes_per_step = 1234;
  r.num_buckets = 3;
  r.disagreement_step = 1;
  r.disagreement_rank = 2;
  r.disagreement_tensor = "w";

  const auto back = decode_worker_result(encode_worker_result(r));
  EXPECT_EQ(back.losses, r.losses);
  ASSERT_EQ(back.gradients.size(), 2u);
  EXPECT_TRUE(at::equal(back.gradients[1][0], r.gradients[1][0]));
  EXPECT_FALSE(back.gradients[0][1].defined()) << "a missing gradient must stay missing";
  ASSERT_EQ(back.final_state.size(), 2u);
  EXPECT_EQ(back.final_state[1].first, "n");
  EXPECT_EQ(back.final_state[1].second.scalar_type(), at::kLong);
  EXPECT_DOUBLE_EQ(back.step_timings[0].comm_wait, 0.4);
  EXPECT_DOUBLE_EQ(back.step_timings[1].total, 0.9);
  ASSERT_EQ(back.perf_timings.size(), 1u);
  EXPECT_DOUBLE_EQ(back.perf_timings[0].comm_wait, 0.7);
  EXPECT_EQ(back.bytes_per_step, 1234);
  EXPECT_EQ(back.num_buckets, 3);
  EXPECT_EQ(back.disagreement_step, 1);
  EXPECT_EQ(back.disagreement_rank, 2);
  EXPECT_EQ(back.disagreement_tensor, "w");
}

}  // namespace
}  // namespace ddpbench::launch
