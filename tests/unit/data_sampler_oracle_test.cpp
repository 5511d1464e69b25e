// data_sampler_oracle_test.cpp — ddpbench's DistributedSampler against real PyTorch: every case of
// reference/sampler_oracle.py's grid (N 1..103, K 1..8, shuffle and drop_last both ways, several
// seeds and epochs, padding longer than the dataset) must match index for index.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "data/distributed_sampler.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace ddpbench::data {
namespace {

TEST(DistributedSamplerOracle, MatchesPythonDistributedSamplerOnTheWholeGrid) {
  const auto r = testing::run_process(
      {testing::kPython, std::string(testing::kSourceDir) + "/reference/sampler_oracle.py"});
  ASSERT_EQ(r.exit_code, 0) << "the oracle needs python3-torch (ci/install-deps.sh): " << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& cases = doc.at("cases");
  ASSERT_GT(cases.size(), 8000u) << "the grid shrank: the test would prove less";
  int64_t compared = 0;
  int64_t with_long_padding = 0;
  for (const auto& c : cases) {
    const SamplerOptions o{c.at("N").get<int64_t>(), c.at("K").get<int64_t>(),
                           c.at("shuffle").get<bool>(), c.at("seed").get<int64_t>(),
                           c.at("drop_last").get<bool>()};
    DistributedSampler s(o);
    s.set_epoch(c.at("epoch").get<int64_t>());
    const std::string where = c.dump().substr(0, 120);
    ASSERT_EQ(s.num_samples(), c.at("num_samples").get<int64_t>()) << where;
    ASSERT_EQ(s.total_size(), c.at("total_size").get<int64_t>()) << where;
    const auto want = c.at("ranks").get<std::vector<std::vector<int64_t>>>();
    ASSERT_EQ(s.all_indices(), want) << where;
    if (!o.drop_last && s.padded_count() > o.dataset_size) ++with_long_padding;
    ++compared;
  }
  EXPECT_GT(with_long_padding, 0) << "grid must include padding longer than the dataset";
  RecordProperty("cases", static_cast<int>(compared));
}

}  // namespace
}  // namespace ddpbench::data
