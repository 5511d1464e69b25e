// comm_shm_communicator_test.cpp — what the contract suite cannot reach in the shm backend: sums
// longer than one chunk (both areas of every segment reused many times, several allreduces in
// flight), every rank holding the same bits, a rank that never contributes named within the
// timeout, and nothing left in /dev/shm.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "comm/shm_communicator.h"
#include "comm/store.h"
#include "runtime/worker_pool.h"

namespace ddpbench::comm {
namespace {

// Ranks as threads, each with its own store client and a communicator with `options`.
void run_shm_ranks(int world, const ShmOptions& base,
                   const std::function<void(Communicator&)>& body) {
  auto server = Store::serve("127.0.0.1", 0, std::chrono::seconds(30));
  runtime::WorkerPool(world).run([&](int64_t r) {
    ShmOptions o = base;
    o.rank = static_cast<int>(r);
    o.world_size = world;
    auto comm = make_shm_communicator(
        Store::connect("127.0.0.1", server->port(), std::chrono::seconds(30)), o);
    body(*comm);
  });
}

int ddpbench_segments() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    n += e.path().filename().string().rfind("ddpbench-", 0) == 0 ? 1 : 0;
  }
  return n;
}

TEST(ShmCommunicator, SumsLongerThanAChunkExactlyOnEveryRank) {
  const int before = ddpbench_segments();
  ShmOptions o;
  o.chunk_bytes = 4096;  // 512 doubles: 10007 elements take 20 chunks, each area 10 times
  constexpr int kWorld = 3;
  constexpr int64_t kN = 10007;
  std::vector<at::Tensor> results(kWorld);
  run_shm_ranks(kWorld, o, [&](Communicator& comm) {
    const int r = comm.rank();
    // Unique per rank and element, exact in float64: a misplaced element cannot pass.
    at::Tensor a = at::arange(kN, at::kDouble) * kWorld + r;
    at::Tensor b = -(at::arange(kN, at::kDouble) * kWorld + r);
    auto wa = comm.allreduce_sum(a);
    auto wb = comm.allreduce_sum(b);  // in flight together, completed in launch order
    wb->wait();
    wa->wait();
    const at::Tensor j = at::arange(kN, at::kDouble);
    const at::Tensor want = j * kWorld * kWorld + kWorld * (kWorld - 1) / 2;
    EXPECT_TRUE(at::equal(a, want))
        << "rank " << r << ": " << a.ne(want).sum().item<int64_t>() << " wrong";
    EXPECT_TRUE(at::equal(b, -want)) << "rank " << r;
    results[static_cast<size_t>(r)] = at::rand({kN}, at::kFloat) * 1e-3 + r;
    comm.allreduce_sum(results[static_cast<size_t>(r)])->wait();
  });
  // Rounded sums of inexact floats: still the same bits everywhere (one rank sums each element).
  for (int r = 1; r < kWorld; ++r) EXPECT_TRUE(at::equal(results[0], results[r])) << "rank " << r;
  EXPECT_EQ(ddpbench_segments(), before) << "segments left in /dev/shm";
}

TEST(ShmCommunicator, ARankThatNeverContributesIsNamedWithinTheTimeout) {
  ShmOptions o;
  o.timeout = std::chrono::milliseconds(500);
  std::string error;
  std::mutex mu;
  run_shm_ranks(2, o, [&](Communicator& comm) {
    if (comm.rank() == 1) return;  // joins, then never allreduces
    at::Tensor t = at::ones({16});
    try {
      comm.allreduce_sum(t)->wait();
    } catch (const std::runtime_error& e) {
      std::lock_guard<std::mutex> lock(mu);
      error = e.what();
    }
  });
  EXPECT_NE(error.find("rank 1 did not contribute its chunk"), std::string::npos) << error;
}

}  // namespace
}  // namespace ddpbench::comm
