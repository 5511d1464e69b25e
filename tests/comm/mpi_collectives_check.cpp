// mpi_collectives_check.cpp — the MPI communicator's own checks beyond the contract every backend
// meets (comm_contract_test.cpp): rejections, delayed peers, bitwise agreement, barrier, lifetimes.
// Run by ctest as
// `mpirun --allow-run-as-root --oversubscribe -np 3 ddpbench_mpi_collectives_check`. A plain main
// (not gtest) because every rank is its own process and all must take part in each collective.
// Inputs are unique per rank and element (j * stride + rank, as gloo's tests build them), so
// misplaced or dropped data cannot sum to the closed form. Every rank runs the same sequence of
// collectives whatever its checks find; the failure count is summed at the end so all ranks
// agree on the exit code. Exit 0 when all checks pass, 1 otherwise.
#include <ATen/ATen.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "comm/mpi_communicator.h"
#include "support/collective_inputs.h"

namespace {

using ddpbench::comm::Communicator;
using ddpbench::comm::Work;
using ddpbench::testing::exact_length;
using ddpbench::testing::expected_sum;
using ddpbench::testing::rank_input;

class Checker {
 public:
  explicit Checker(int rank) : rank_(rank) {}

  void expect(bool ok, const std::string& what) {
    ++checks_;
    if (ok) return;
    ++failures_;
    std::fprintf(stderr, "rank %d: FAILED %s\n", rank_, what.c_str());
  }

  // Exact comparison: every input below is chosen so that the sums are exactly representable in
  // the tensor's dtype, whatever order MPI adds in. Prints #wrong and the first mismatch.
  void expect_equal(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
    if (got.sizes() != want.sizes() || got.scalar_type() != want.scalar_type()) {
      expect(false, what + ": shape or dtype differs");
      return;
    }
    const at::ScalarType common =
        at::isIntegralType(want.scalar_type(), /*includeBool=*/true) ? at::kLong : at::kDouble;
    const at::Tensor g = got.to(common).flatten();
    const at::Tensor w = want.to(common).flatten();
    const at::Tensor wrong = g.ne(w);
    const int64_t n_wrong = wrong.sum().item<int64_t>();
    if (n_wrong == 0) {
      expect(true, what);
      return;
    }
    const int64_t first = wrong.nonzero()[0][0].item<int64_t>();
    expect(false, what + ": #wrong " + std::to_string(n_wrong) + " of " +
                      std::to_string(w.numel()) + ", first at [" + std::to_string(first) +
                      "]: got " + std::to_string(g[first].item<double>()) + ", want " +
                      std::to_string(w[first].item<double>()));
  }

  int rank() const { return rank_; }
  int64_t checks() const { return checks_; }
  int64_t failures() const { return failures_; }

 private:
  int rank_;
  int64_t checks_ = 0;
  int64_t failures_ = 0;
};

// Counts what the communicator should report, next to each call that issues a collective.
struct Tally {
  int64_t issued = 0;
};

void check_allreduce_dtypes(Communicator& comm, Checker& c, Tally& t) {
  const int rank = comm.rank();
  const int world = comm.world_size();
  struct Case {
    at::ScalarType dtype;
    int64_t n;
    int64_t offset;
  };
  const std::vector<Case> cases = {
      // ~1M elements: past OpenMPI's small-message algorithms, and not a multiple of anything.
      // float32 holds integers exactly up to 2^24.
      {at::kFloat, exact_length(world, int64_t{1} << 24, (int64_t{1} << 20) + 3), 0},
      {at::kDouble, (int64_t{1} << 20) + 3, 0},
      // float16 holds integers exactly up to 2048, bfloat16 up to 256.
      {at::kHalf, exact_length(world, 2048, 257), 0},
      {at::kBFloat16, exact_length(world, 256, 257), 0},
      // Beyond 2^32, so a 32-bit reduction would be caught.
      {at::kLong, 4099, int64_t{1} << 40},
  };
  for (const Case& k : cases) {
    at::Tensor x = rank_input(k.n, rank, world, k.dtype, k.offset);
    comm.allreduce_sum(x)->wait();
    ++t.issued;
    c.expect_equal(
        x, expected_sum(k.n, world, k.dtype, k.offset),
        std::string("allreduce_sum ") + c10::toString(k.dtype) + " n=" + std::to_string(k.n));
  }
  c.expect(comm.collectives_issued() == t.issued, "collectives_issued after dtype allreduces");
}

void check_rejections(Communicator& comm, Checker& c, Tally& t) {
  auto throws_invalid = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const std::invalid_argument&) {
      return true;
    } catch (...) {
      return false;
    }
    return false;
  };
  at::Tensor non_contiguous = at::zeros({4, 3}, at::kFloat).t();
  c.expect(throws_invalid([&] { comm.allreduce_sum(non_contiguous); }),
           "allreduce_sum rejects a non-contiguous tensor with std::invalid_argument");
  c.expect(throws_invalid([&] { comm.allreduce_sum(at::zeros({3}, at::kInt)); }),
           "allreduce_sum rejects int32 with std::invalid_argument");
  c.expect(throws_invalid([&] { comm.broadcast({at::zeros({2})}, comm.world_size()); }),
           "broadcast rejects a root outside the world");
  c.expect(comm.collectives_issued() == t.issued, "rejected calls are not counted as issued");
}

void check_async_in_flight(Communicator& comm, Checker& c, Tally& t) {
  const int rank = comm.rank();
  const int world = comm.world_size();
  const std::vector<at::ScalarType> dtypes = {at::kFloat, at::kDouble, at::kLong,  at::kFloat,
                                              at::kHalf,  at::kDouble, at::kFloat, at::kBFloat16};
  std::vector<at::Tensor> xs;
  std::vector<std::shared_ptr<Work>> works;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    const bool narrow = dtypes[i] == at::kHalf || dtypes[i] == at::kBFloat16;
    const int64_t n =
        narrow ? exact_length(world, 256, 64) : 1000 * static_cast<int64_t>(i + 1) + 7;
    // Distinct offsets per launch: a result delivered to the wrong tensor cannot match.
    const int64_t offset = narrow ? 0 : 100000 * static_cast<int64_t>(i);
    xs.push_back(rank_input(n, rank, world, dtypes[i], offset));
    works.push_back(comm.allreduce_sum(xs.back()));
    ++t.issued;
  }
  // Compute while the collectives run, then wait newest first: completion must not depend on
  // waiting in launch order.
  const double busy = at::mm(at::ones({256, 256}), at::ones({256, 256})).sum().item<double>();
  c.expect(busy == 256.0 * 256 * 256, "compute alongside in-flight allreduces");
  for (size_t i = works.size(); i-- > 0;) {
    works[i]->wait();
    works[i]->wait();  // a second wait is harmless
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    const bool narrow = dtypes[i] == at::kHalf || dtypes[i] == at::kBFloat16;
    const int64_t offset = narrow ? 0 : 100000 * static_cast<int64_t>(i);
    c.expect_equal(xs[i], expected_sum(xs[i].numel(), world, dtypes[i], offset),
                   "async allreduce #" + std::to_string(i) + " of " + std::to_string(xs.size()) +
                       " in flight");
  }
}

// allreduce_sum must return at once even when a peer has not joined yet; a blocking
// implementation would hold rank 0 for the whole delay.
void check_returns_before_peers(Communicator& comm, Checker& c, Tally& t) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kPeerDelay = std::chrono::milliseconds(600);
  at::Tensor x = rank_input(17, comm.rank(), comm.world_size(), at::kFloat);
  if (comm.rank() != 0) std::this_thread::sleep_for(kPeerDelay);
  const auto start = Clock::now();
  std::shared_ptr<Work> w = comm.allreduce_sum(x);
  const auto issue_time = Clock::now() - start;
  ++t.issued;
  w->wait();
  if (comm.rank() == 0 && comm.world_size() > 1) {
    c.expect(issue_time < kPeerDelay / 3,
             "allreduce_sum returned before peers joined (took " +
                 std::to_string(
                     std::chrono::duration_cast<std::chrono::milliseconds>(issue_time).count()) +
                 " ms)");
  }
  c.expect_equal(x, expected_sum(17, comm.world_size(), at::kFloat), "delayed-peer allreduce");
}

// Every rank must end with the same bits: DDP replicas stay identical only if the averaged
// gradients are bitwise equal everywhere. Non-integer values make the rounding order matter.
void check_bitwise_agreement(Communicator& comm, Checker& c, Tally& t) {
  at::Tensor x = at::sin(at::arange(100003, at::kFloat) * 0.37 + comm.rank()) * 1e3;
  comm.allreduce_sum(x)->wait();
  ++t.issued;
  std::vector<at::Tensor> all = comm.allgather(x);
  ++t.issued;
  bool same = true;
  for (const auto& y : all) same = same && at::equal(y, x);
  c.expect(same, "float32 allreduce result is bitwise identical on every rank");
}

void check_broadcast(Communicator& comm, Checker& c, Tally& t) {
  const int rank = comm.rank();
  const int root = comm.world_size() - 1;  // non-zero whenever there are peers
  auto value = [](int64_t n, int64_t seed, at::ScalarType dtype) {
    return (at::arange(n, at::kLong) * 7 + seed).to(dtype);
  };
  std::vector<at::Tensor> ts = {at::full({3, 5}, -1.0, at::kFloat), at::full({9}, -1, at::kLong),
                                at::full({4, 2}, -1.0, at::kHalf),
                                at::full({1}, -1.0, at::kDouble)};
  if (rank == root) {
    for (auto& x : ts) x.copy_(value(x.numel(), 1000 + root, x.scalar_type()).view(x.sizes()));
  }
  comm.broadcast(ts, root);
  t.issued += static_cast<int64_t>(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    c.expect_equal(ts[i],
                   value(ts[i].numel(), 1000 + root, ts[i].scalar_type()).view(ts[i].sizes()),
                   "broadcast from root " + std::to_string(root) + ", tensor " + std::to_string(i));
  }
}

void check_allgather(Communicator& comm, Checker& c, Tally& t) {
  const int world = comm.world_size();
  for (at::ScalarType dtype : {at::kFloat, at::kLong, at::kDouble}) {
    at::Tensor mine = (at::arange(6, at::kLong) + 100 * comm.rank()).to(dtype).view({2, 3});
    std::vector<at::Tensor> all = comm.allgather(mine);
    ++t.issued;
    c.expect(static_cast<int>(all.size()) == world, "allgather returns one tensor per rank");
    for (int r = 0; r < static_cast<int>(all.size()); ++r) {
      c.expect_equal(all[r], (at::arange(6, at::kLong) + 100 * r).to(dtype).view({2, 3}),
                     std::string("allgather ") + c10::toString(dtype) + " block " +
                         std::to_string(r) + " holds rank " + std::to_string(r) + "'s tensor");
    }
  }
}

// Single host (as under ctest): rank 0 writes a marker file, sleeping first so that a barrier
// that does not wait would be seen, then enters the barrier; after it every rank must see the file.
void check_barrier(Communicator& comm, Checker& c, Tally& t) {
  at::Tensor pid = at::full({1}, static_cast<int64_t>(::getpid()), at::kLong);
  comm.broadcast({pid}, 0);
  ++t.issued;
  const std::string marker =
      "/tmp/ddpbench_mpi_barrier_" + std::to_string(pid.item<int64_t>()) + ".marker";
  if (comm.rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::ofstream(marker) << "rank 0 reached the barrier\n";
  }
  comm.barrier();
  ++t.issued;
  c.expect(std::ifstream(marker).good(), "barrier: rank 0 had arrived when it returned");
  comm.barrier();  // nobody is still looking for the file
  ++t.issued;
  if (comm.rank() == 0) std::remove(marker.c_str());
}

// A communicator's destructor runs what was queued: the Work completes after it is gone.
// A second communicator (its own MPI_Comm_dup and thread) works alongside the first.
void check_lifetimes(Communicator& comm, Checker& c, Tally& t) {
  const int rank = comm.rank();
  const int world = comm.world_size();
  at::Tensor a = rank_input(513, rank, world, at::kDouble);
  at::Tensor b = rank_input(257, rank, world, at::kFloat, 77);
  std::shared_ptr<Work> wa;
  {
    std::unique_ptr<Communicator> second = ddpbench::comm::make_mpi_communicator();
    c.expect(second->rank() == rank && second->world_size() == world,
             "second communicator sees the same rank and world");
    wa = comm.allreduce_sum(a);
    ++t.issued;
    std::shared_ptr<Work> wb = second->allreduce_sum(b);
    c.expect(second->collectives_issued() == 1, "second communicator counts its own collectives");
    // Dropped here without waiting on wb.
  }
  wa->wait();
  c.expect_equal(a, expected_sum(513, world, at::kDouble), "allreduce on first communicator");
  c.expect_equal(b, expected_sum(257, world, at::kFloat, 77),
                 "allreduce drained by the second communicator's destructor");
}

int run() {
  ddpbench::comm::ensure_mpi_initialized();
  std::unique_ptr<Communicator> comm = ddpbench::comm::make_mpi_communicator();
  Checker c(comm->rank());
  Tally t;
  c.expect(ddpbench::comm::mpi_launched(), "mpi_launched() (this check must run under mpirun)");
  ddpbench::comm::ensure_mpi_initialized();  // a second call is a no-op
  c.expect(comm->backend() == "mpi", "backend() is \"mpi\"");
  c.expect(comm->collectives_issued() == 0, "nothing issued at construction");

  check_allreduce_dtypes(*comm, c, t);
  check_rejections(*comm, c, t);
  check_async_in_flight(*comm, c, t);
  check_returns_before_peers(*comm, c, t);
  check_bitwise_agreement(*comm, c, t);
  check_broadcast(*comm, c, t);
  check_allgather(*comm, c, t);
  check_barrier(*comm, c, t);
  check_lifetimes(*comm, c, t);
  c.expect(comm->collectives_issued() == t.issued,
           "collectives_issued() == " + std::to_string(t.issued) + " (got " +
               std::to_string(comm->collectives_issued()) + ")");

  // Summed over ranks so that every rank returns the same code.
  at::Tensor totals = at::tensor({c.checks(), c.failures()}, at::kLong);
  comm->allreduce_sum(totals)->wait();
  const int64_t checks = totals[0].item<int64_t>();
  const int64_t failures = totals[1].item<int64_t>();
  if (comm->rank() == 0) {
    if (failures == 0) {
      std::printf("mpi collectives: %lld checks passed (%d ranks)\n",
                  static_cast<long long>(checks), comm->world_size());
    } else {
      std::printf("mpi collectives: FAILED %lld of %lld checks (%d ranks); see rank messages\n",
                  static_cast<long long>(failures), static_cast<long long>(checks),
                  comm->world_size());
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    int rank = -1;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "mpi collectives: rank %d: error: %s\n", rank, e.what());
    // Peers may be blocked in a collective this rank will never join: end the whole job.
    if (initialized) MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
