// comm_collective_check_test.cpp — `ddpbench comm`'s arithmetic and its #wrong check, in process:
// nccl-tests' bus factors and size/count convention, the check counting exactly the elements a
// broken result gets wrong (a check that cannot fail is worse than none), the sweep over a real
// gloo world with a corrupted element on one rank, the size parser and the rows' transport.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <mutex>

#include "comm/collective_check.h"
#include "comm_sweep/comm_plan.h"
#include "comm_sweep/comm_sweep.h"
#include "errors.h"
#include "support/thread_world.h"

namespace ddpbench::comm {
namespace {

TEST(CommBusFactor, IsNcclTestsFactorPerCollective) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllreduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllreduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllgather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kBroadcast, 8), 1.0);
}

// allgather's size is the whole output, reduce_scatter's the whole input: per-rank count is
// size / element / world, and the reported size is what is moved.
TEST(CommSizes, FollowNcclTestsCountConvention) {
  EXPECT_EQ(count_per_rank(Collective::kAllreduce, 1024, 4, 2), 256);
  EXPECT_EQ(count_per_rank(Collective::kBroadcast, 1024, 4, 2), 256);
  EXPECT_EQ(count_per_rank(Collective::kAllgather, 1024, 4, 2), 128);
  EXPECT_EQ(count_per_rank(Collective::kReduceScatter, 1024, 4, 3), 85);
  EXPECT_EQ(size_of(Collective::kReduceScatter, 85, 4, 3), 1020);
  EXPECT_EQ(count_per_rank(Collective::kAllgather, 4, 4, 2), 0);
  EXPECT_EQ(input_elements(Collective::kReduceScatter, 85, 3), 255);
  EXPECT_EQ(input_elements(Collective::kAllgather, 85, 3), 85);
}

// Every sum of the pattern is an exact float32 integer, and the pattern is unique per rank.
TEST(CommCheck, InputsAreUniquePerRankAndExact) {
  EXPECT_EQ(check_period(2, at::kFloat), int64_t{1} << 22);
  const int64_t period = check_period(3, at::kFloat);
  EXPECT_LE(9 * period, int64_t{1} << 24);
  const at::Tensor a = check_input(Collective::kAllreduce, 0, 3, 1000, at::kFloat);
  const at::Tensor b = check_input(Collective::kAllreduce, 1, 3, 1000, at::kFloat);
  EXPECT_FALSE(a.eq(b).any().item<bool>());
  EXPECT_EQ(std::get<0>(at::_unique(a)).numel(), 1000);
}

// The expected results computed by hand from every rank's input (not by the check's own
// formulas) pass, and each corrupted element is counted once.
TEST(CommCheck, CountsExactlyTheWrongElements) {
  const int world = 3;
  const int64_t count = 5;
  for (Collective c : all_collectives()) {
    for (int rank = 0; rank < world; ++rank) {
      std::vector<at::Tensor> inputs;
      for (int r = 0; r < world; ++r) inputs.push_back(check_input(c, r, world, count, at::kFloat));
      at::Tensor want;
      switch (c) {
        case Collective::kAllreduce:
          want = inputs[0] + inputs[1] + inputs[2];
          break;
        case Collective::kBroadcast:
          want = inputs[0].clone();
          break;
        case Collective::kAllgather:
          want = at::cat(inputs);
          break;
        case Collective::kReduceScatter:
          want = (inputs[0] + inputs[1] + inputs[2]).narrow(0, rank * count, count).clone();
          break;
      }
      EXPECT_EQ(count_wrong(c, {want}, rank, world, count), 0) << collective_name(c);
      at::Tensor broken = want.clone();
      broken[0] += 1;
      broken[broken.numel() - 1] = -1;
      EXPECT_EQ(count_wrong(c, {broken}, rank, world, count), 2) << collective_name(c);
      // A result another rank would hold (or the input itself, never reduced) is wrong too.
      if (c != Collective::kBroadcast && c != Collective::kAllgather) {
        EXPECT_GT(count_wrong(c, {inputs[static_cast<size_t>(rank)].narrow(0, 0, want.numel())},
                              rank, world, count),
                  0)
            << collective_name(c);
      }
      EXPECT_EQ(count_wrong(c, {want.narrow(0, 0, want.numel() - 1)}, rank, world, count),
                want.numel())
          << "a short result is all wrong";
    }
  }
}

comm_sweep::CommPlan small_plan() {
  comm_sweep::CommPlan plan;
  plan.sizes = {8, 4096, 65536};
  plan.collectives = all_collectives();
  plan.iters = 2;
  plan.warmup = 1;
  plan.world_size = 2;
  return plan;
}

// A real gloo world (ranks as threads): every row is exact, and every rank returns the same rows.
TEST(CommSweep, GlooRowsAreExactAndAgreeOnEveryRank) {
  const comm_sweep::CommPlan plan = small_plan();
  std::mutex mu;
  std::vector<std::vector<reports::CommRow>> per_rank(2);
  testing::run_ranks(2, [&](Communicator& comm) {
    auto rows = comm_sweep::run_comm_sweep(comm, plan, c10::Device(c10::kCPU), {});
    std::lock_guard<std::mutex> lock(mu);
    per_rank[static_cast<size_t>(comm.rank())] = std::move(rows);
  });
  ASSERT_EQ(per_rank[0].size(), 12u);  // 4 collectives x 3 sizes (8 B holds one float per rank)
  for (size_t i = 0; i < per_rank[0].size(); ++i) {
    const reports::CommRow& r = per_rank[0][i];
    EXPECT_EQ(r.wrong, 0) << r.collective << " " << r.bytes;
    EXPECT_GT(r.time_us, 0);
    EXPECT_EQ(r.time_us, per_rank[1][i].time_us);
    EXPECT_FALSE(r.emulated) << r.collective;  // gloo's reduce-scatter is its own
  }
}

// shm has no reduce-scatter of its own (an shm allreduce of which each rank keeps its block): its
// rows say so, and only that collective's.
TEST(CommSweep, ShmMarksItsReduceScatterEmulated) {
  comm_sweep::CommPlan plan = small_plan();
  plan.backend = Backend::kShm;
  std::vector<reports::CommRow> rows;
  testing::run_ranks(
      2,
      [&](Communicator& comm) {
        auto mine = comm_sweep::run_comm_sweep(comm, plan, c10::Device(c10::kCPU), {});
        if (comm.rank() == 0) rows = std::move(mine);
      },
      Backend::kShm);
  ASSERT_FALSE(rows.empty());
  for (const reports::CommRow& r : rows) {
    EXPECT_EQ(r.emulated, r.collective == "reduce_scatter") << r.collective;
  }
}

// --inject-fault corrupt:rank=1,collective=reduce_scatter: one element per row of that
// collective, on rank 1 only, is counted — and nothing else.
TEST(CommSweep, ACorruptedElementOnOneRankIsCounted) {
  comm_sweep::CommPlan plan = small_plan();
  plan.fault = comm_sweep::CommFault{1, Collective::kReduceScatter};
  std::vector<reports::CommRow> rows;
  testing::run_ranks(2, [&](Communicator& comm) {
    auto mine = comm_sweep::run_comm_sweep(comm, plan, c10::Device(c10::kCPU), {});
    if (comm.rank() == 0) rows = std::move(mine);
  });
  ASSERT_FALSE(rows.empty());
  for (const reports::CommRow& r : rows) {
    EXPECT_EQ(r.wrong, r.collective == "reduce_scatter" ? 1 : 0) << r.collective << " " << r.bytes;
  }
}

TEST(CommRows, SurviveTheTripToTheParent) {
  reports::CommRow r{"allgather", 4096, 512, "float32", 12.5, 0.3, 0.15, 3, true};
  const auto back = comm_sweep::decode_comm_rows(comm_sweep::encode_comm_rows({r, r}));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].collective, "allgather");
  EXPECT_EQ(back[1].count, 512);
  EXPECT_EQ(back[1].time_us, 12.5);
  EXPECT_EQ(back[1].wrong, 3);
  EXPECT_TRUE(back[1].emulated);
  EXPECT_THROW(comm_sweep::decode_comm_rows("allgather 12 x\n"), WorkerFailure);
}

TEST(CommPlan, ParsesSizesWithBinarySuffixes) {
  EXPECT_EQ(comm_sweep::parse_byte_size("8", "--min-bytes"), 8);
  EXPECT_EQ(comm_sweep::parse_byte_size("64K", "--min-bytes"), 65536);
  EXPECT_EQ(comm_sweep::parse_byte_size("44.7M", "--max-bytes"), 46871347);
  EXPECT_EQ(comm_sweep::parse_byte_size("1G", "--max-bytes"), int64_t{1} << 30);
  for (const char* bad : {"", "x", "1.2.3M", "M", "-8", "0", "0.5", "3G", "8 K", "8KB"}) {
    EXPECT_THROW(comm_sweep::parse_byte_size(bad, "--max-bytes"), InputError) << bad;
  }
}

TEST(CommPlan, SweepsFromMinByFactorUpToMax) {
  requests::CommRequest r;
  r.min_bytes = "8";
  r.max_bytes = "100";
  r.step_factor = 3;
  r.device = requests::DeviceChoice::kCpu;
  const comm_sweep::CommPlan plan = comm_sweep::resolve_comm(r, std::nullopt);
  EXPECT_EQ(plan.sizes, (std::vector<int64_t>{8, 24, 72}));
  r.min_bytes = "1K";
  EXPECT_THROW(comm_sweep::resolve_comm(r, std::nullopt), InputError);  // min above max
  r.min_bytes = "8";
  r.inject_fault = "corrupt:rank=2";  // world of 2
  EXPECT_THROW(comm_sweep::resolve_comm(r, std::nullopt), InputError);
  r.inject_fault = "corrupt:rank=1,collective=allgather";
  EXPECT_EQ(comm_sweep::resolve_comm(r, std::nullopt).fault->collective, Collective::kAllgather);
  r.collectives = {"allreduce", "alltoall"};
  EXPECT_THROW(comm_sweep::resolve_comm(r, std::nullopt), InputError);
}

}  // namespace
}  // namespace ddpbench::comm
