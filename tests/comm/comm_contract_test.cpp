// comm_contract_test.cpp — the contract every Communicator meets, one parameterised suite over
// every backend in the build x dtypes x sizes (nccl-tests' grid, gloo's input style):
//   allreduce_sum (alone, and two in flight waited newest first), broadcast from every root,
//   allgather, reduce_scatter_sum (and its refusal of a size that does not split), and
//   collectives_issued() counting exactly what was issued.
// Each rank's input differs per rank and per element, and results are compared exactly: a
// misplaced, dropped or doubled element cannot pass.
//   gloo: three ranks as threads of this process.
//   mpi:  every process of `mpirun -np 3` is a rank; ctest runs this binary that way as
//         comm_contract_mpi. Outside mpirun these cases skip and say so.
//   nccl: one rank per CUDA device (at most three; NCCL refuses two ranks on one device); skips
//         with the reason where there is no device or no CUDA build.
// Cases a backend cannot do by design (gloo has no bfloat16 sum, comm/backend_support.h) skip
// with that reason.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "comm/backend_support.h"
#include "comm/mpi_communicator.h"
#include "runtime/device_probe.h"
#include "support/collective_inputs.h"
#include "support/thread_world.h"

namespace ddpbench::comm {
// Names the backend in gtest's parameter printout ("nccl", not a 4-byte object).
void PrintTo(Backend backend, std::ostream* os) { *os << backend_name(backend); }

namespace {

using Case = std::tuple<Backend, at::ScalarType, int64_t>;

// Every row of the backend table, so a new backend joins the suite without an edit here.
std::vector<Backend> all_backends() {
  std::vector<Backend> out;
  for (const BackendTraits& t : backend_table()) out.push_back(t.backend);
  return out;
}

// Rank `rank`'s input number `salt`, as int64 values exact in `dtype`. Where the dtype holds every
// sum exactly, element j is j * world + rank (unique per rank and element; salt 1 negates it).
// float16 and bfloat16 hold too few exact integers for that at these sizes: they get keyed
// pseudo-random small integers, so a misplaced element passes only if its value happens to
// coincide (1 in limit / world).
at::Tensor contract_values(int64_t n, int rank, int world, at::ScalarType dtype, int64_t salt) {
  const int64_t limit = testing::exact_integer_limit(dtype);
  if (testing::exact_length(world, limit / 2, n) >= n) {
    const at::Tensor v = testing::rank_input(n, rank, world, at::kLong);
    return salt == 0 ? v : -v - 1;
  }
  const at::Tensor j = at::arange(n, at::kLong);
  return (j * 7919 + rank * 104729 + salt * 1299709) % 65521 % (limit / world);
}

at::Tensor contract_input(int64_t n, int rank, int world, at::ScalarType dtype, int64_t salt) {
  return contract_values(n, rank, world, dtype, salt).to(dtype);
}

at::Tensor contract_sum(int64_t n, int world, at::ScalarType dtype, int64_t salt) {
  at::Tensor sum = at::zeros({n}, at::kLong);
  for (int r = 0; r < world; ++r) sum += contract_values(n, r, world, dtype, salt);
  return sum;
}

// "#wrong k of n, first at [i]: got g, want w" (nccl-tests' #wrong column), or "" when equal.
std::string wrong_elements(const at::Tensor& got, const at::Tensor& want) {
  const at::Tensor g = got.to(at::kDouble).flatten();
  const at::Tensor w = want.to(at::kDouble).flatten();
  if (g.numel() != w.numel()) {
    return "size " + std::to_string(g.numel()) + " != " + std::to_string(w.numel());
  }
  const at::Tensor wrong = g.ne(w);
  const int64_t n_wrong = wrong.sum().item<int64_t>();
  if (n_wrong == 0) return "";
  const int64_t i = wrong.nonzero()[0][0].item<int64_t>();
  return "#wrong " + std::to_string(n_wrong) + " of " + std::to_string(w.numel()) + ", first at [" +
         std::to_string(i) + "]: got " + std::to_string(g[i].item<double>()) + ", want " +
         std::to_string(w[i].item<double>());
}

// One rank's share of the contract. Only EXPECTs: a rank that returned early would leave its
// peers waiting in a collective.
void check_contract(Communicator& comm, at::ScalarType dtype, int64_t n) {
  const int rank = comm.rank();
  const int world = comm.world_size();
  const std::string who = "rank " + std::to_string(rank) + ": ";
  const int64_t issued_before = comm.collectives_issued();
  int64_t issued = 0;

  at::Tensor x = contract_input(n, rank, world, dtype, 0);
  comm.allreduce_sum(x)->wait();
  ++issued;
  EXPECT_EQ(wrong_elements(x, contract_sum(n, world, dtype, 0)), "") << who << "allreduce_sum";

  at::Tensor a = contract_input(n, rank, world, dtype, 0);
  at::Tensor b = contract_input(n, rank, world, dtype, 1);
  auto wa = comm.allreduce_sum(a);
  auto wb = comm.allreduce_sum(b);
  issued += 2;
  wb->wait();
  wa->wait();
  EXPECT_EQ(wrong_elements(a, contract_sum(n, world, dtype, 0)), "") << who << "first in flight";
  EXPECT_EQ(wrong_elements(b, contract_sum(n, world, dtype, 1)), "") << who << "second in flight";

  for (int root = 0; root < world; ++root) {
    std::vector<at::Tensor> ts = {at::full({n}, -7, dtype), at::full({n}, -7, dtype)};
    if (rank == root) {
      ts[0].copy_(contract_input(n, root, world, dtype, 0));
      ts[1].copy_(contract_input(n, root, world, dtype, 1));
    }
    comm.broadcast(ts, root);
    issued += 2;
    EXPECT_EQ(wrong_elements(ts[0], contract_input(n, root, world, dtype, 0)), "")
        << who << "broadcast from root " << root << ", tensor 0";
    EXPECT_EQ(wrong_elements(ts[1], contract_input(n, root, world, dtype, 1)), "")
        << who << "broadcast from root " << root << ", tensor 1";
  }

  const std::vector<at::Tensor> all = comm.allgather(contract_input(n, rank, world, dtype, 0));
  ++issued;
  EXPECT_EQ(static_cast<int>(all.size()), world) << who << "allgather returns one per rank";
  for (int q = 0; q < std::min<int>(world, static_cast<int>(all.size())); ++q) {
    EXPECT_EQ(wrong_elements(all[static_cast<size_t>(q)], contract_input(n, q, world, dtype, 0)),
              "")
        << who << "allgather block " << q;
  }
  // reduce_scatter_sum: world blocks of n; this rank keeps the sum of block `rank`. A size that
  // does not split is refused on every rank before anything is sent (and is not counted).
  const at::Tensor scattered =
      comm.reduce_scatter_sum(contract_input(world * n, rank, world, dtype, 1));
  ++issued;
  EXPECT_EQ(scattered.scalar_type(), dtype) << who << "reduce_scatter_sum dtype";
  EXPECT_EQ(
      wrong_elements(scattered, contract_sum(world * n, world, dtype, 1).narrow(0, rank * n, n)),
      "")
      << who << "reduce_scatter_sum block " << rank;
  // Its asynchronous form: the same block once waited, whatever the backend does to the input.
  ScatterWork pending =
      comm.reduce_scatter_sum_async(contract_input(world * n, rank, world, dtype, 1));
  ++issued;
  pending.work->wait();
  EXPECT_EQ(wrong_elements(pending.block,
                           contract_sum(world * n, world, dtype, 1).narrow(0, rank * n, n)),
            "")
      << who << "reduce_scatter_sum_async block " << rank;
  if (world > 1) {
    EXPECT_THROW(comm.reduce_scatter_sum(contract_input(world * n + 1, rank, world, dtype, 0)),
                 std::invalid_argument)
        << who << "reduce_scatter_sum of a size that does not split";
  }
  EXPECT_EQ(comm.collectives_issued() - issued_before, issued) << who << "collectives_issued";
}

// The per-process MPI communicator under mpirun (one per process, for every case).
Communicator& mpi_world() {
  static std::unique_ptr<Communicator> comm = make_mpi_communicator();
  return *comm;
}

class CommContract : public ::testing::TestWithParam<Case> {};

TEST_P(CommContract, AllreduceBroadcastAllgatherReduceScatter) {
  const auto& [backend, dtype, n] = GetParam();
  const BackendTraits& t = traits(backend);
  if (!supports_sum(backend, dtype)) {
    GTEST_SKIP() << t.name << " has no " << c10::toString(dtype) << " sum (comm/backend_support.h)";
  }
  if (t.needs_mpi_launcher) {
    if (!mpi_launched()) {
      GTEST_SKIP() << "not under mpirun; ctest runs these cases as comm_contract_mpi "
                      "(mpirun -np 3 ddpbench_comm_contract_tests --gtest_filter='*mpi*')";
    }
    check_contract(mpi_world(), dtype, n);
  } else if (t.device_memory) {
    const runtime::GpuInfo gpus = runtime::probe_gpus();
    if (gpus.usable_devices == 0) GTEST_SKIP() << t.name << " needs a CUDA device: " << gpus.status;
    testing::run_ranks(
        std::min(3, gpus.usable_devices),
        [&](Communicator& comm) { check_contract(comm, dtype, n); }, backend);
  } else {
    testing::run_ranks(
        3, [&](Communicator& comm) { check_contract(comm, dtype, n); }, backend);
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto& [backend, dtype, n] = info.param;
  return std::string(backend_name(backend)) + "_" + c10::toString(dtype) + "_" + std::to_string(n);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, CommContract,
    ::testing::Combine(::testing::ValuesIn(all_backends()),
                       ::testing::Values(at::kFloat, at::kDouble, at::kHalf, at::kBFloat16,
                                         at::kLong),
                       // One element, an odd size, and one past the small-message algorithms.
                       ::testing::Values(int64_t{1}, int64_t{4099}, (int64_t{1} << 18) + 3)),
    case_name);

}  // namespace
}  // namespace ddpbench::comm
