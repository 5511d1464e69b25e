// mpi_communicator.cpp — see mpi_communicator.h. One communication thread per communicator runs
// queued operations in FIFO order with blocking MPI calls: ranks that issue collectives in the
// same order therefore execute them in the same order (MPI matches collectives by order on a
// communicator), and the caller keeps computing while an allreduce is in flight. The thread is a
// WatchedQueue (comm/watched_queue.h): an MPI call past the timeout ends the job.
#include "comm/mpi_communicator.h"

#include <ATen/ATen.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "comm/backend_support.h"
#include "comm/reduce_scatter_blocks.h"
#include "comm/watched_queue.h"
#include "errors.h"

namespace ddpbench::comm {
namespace {

// MPI counts are `int`: larger tensors are reduced or broadcast in chunks of this many elements.
constexpr int64_t kMaxCount = INT_MAX;

bool launcher_env_set() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return true;
  }
  return false;
}

// Read during static initialization, before anything can call MPI_Init: OpenMPI's singleton init
// (MPI_Init without mpirun) sets PMIX_RANK in this process, so a later read would say "launched".
const bool kLaunchedByMpi = launcher_env_set();

// abort_mpi_job_at_exit's code; -1: finalize.
std::atomic<int> abort_code_at_exit{-1};

void finalize_mpi_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // Per Note [An MPI job ends by MPI_Abort]: a failed rank never waits in the collective
  // MPI_Finalize.
  if (const int code = abort_code_at_exit.load(); code >= 0) abort_mpi_job(code);
  MPI_Finalize();
}

// Elementwise sum for 16-bit floats carried as MPI_UINT16_T (MPI has no half types): widen to
// float, add, round back — one rounding per pairwise add, as c10::Half/BFloat16 operator+ does.
template <typename T>
void sum_16bit(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float s =
        static_cast<float>(T(a[i], T::from_bits())) + static_cast<float>(T(b[i], T::from_bits()));
    b[i] = T(s).x;
  }
}

void require_contiguous_cpu(const at::Tensor& t, const char* op) {
  if (!t.defined() || !t.device().is_cpu() || !t.is_contiguous()) {
    throw std::invalid_argument(fmt::format(
        "mpi {}: needs a defined, contiguous CPU tensor (got {})", op,
        t.defined()
            ? fmt::format("{} {}contiguous", t.device().str(), t.is_contiguous() ? "" : "non-")
            : std::string("undefined")));
  }
}

class MpiWork : public Work {
 public:
  explicit MpiWork(std::shared_future<void> done) : done_(std::move(done)) {}
  void wait() override { done_.get(); }

 private:
  std::shared_future<void> done_;
};

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(const MpiOptions& options) {
    ensure_mpi_initialized();
    // MPI_Comm_dup and MPI_Comm_split are collective over MPI_COMM_WORLD: every rank constructs
    // at the same point.
    if (options.color < 0) {
      MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    } else {
      int world_rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
      MPI_Comm_split(MPI_COMM_WORLD, options.color, world_rank, &comm_);
    }
    // Errors come back as codes, so a failed collective reaches Work::wait as an exception
    // instead of aborting the job from inside the communication thread.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &world_size_);
    char host[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(host, &len);
    host_.assign(host, static_cast<size_t>(len));
    MPI_Op_create(&sum_16bit<c10::Half>, /*commute=*/1, &half_sum_);
    MPI_Op_create(&sum_16bit<c10::BFloat16>, /*commute=*/1, &bfloat16_sum_);
    thread_ = std::make_unique<WatchedQueue>(
        options.timeout, [this, on_stall = options.on_stall](const std::string& call,
                                                             std::chrono::milliseconds waited) {
          if (on_stall) on_stall(call, waited);
          std::fprintf(stderr,
                       "ddpbench: worker failure: mpi rank %d on %s: %s not done after %.1f s "
                       "(--timeout): a peer hung or was lost, and an MPI collective cannot be "
                       "cancelled, so the job is aborted\n",
                       rank_, host_.c_str(), call.c_str(), waited.count() / 1e3);
          abort_mpi_job(kExitWorkerFailed);
        });
  }

  ~MpiCommunicator() override {
    thread_.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;  // MPI_Finalize already released everything
    MPI_Op_free(&half_sum_);
    MPI_Op_free(&bfloat16_sum_);
    MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string backend() const override { return backend_name(Backend::kMpi); }

  std::shared_ptr<Work> allreduce_sum(at::Tensor tensor) override {
    require_contiguous_cpu(tensor, "allreduce_sum");
    const auto [type, op] = reduce_type(tensor.scalar_type());
    ++issued_;
    // The lambda owns a reference to the tensor, so its storage outlives the operation even if
    // the caller drops the Work without waiting.
    return std::make_shared<MpiWork>(
        thread_->submit("MPI_Allreduce", [this, tensor, type = type, op = op] {
          auto* base = static_cast<char*>(tensor.data_ptr());
          const int64_t n = tensor.numel();
          const int64_t elem = static_cast<int64_t>(tensor.element_size());
          for (int64_t off = 0; off < n; off += kMaxCount) {
            const int count = static_cast<int>(std::min(kMaxCount, n - off));
            check(MPI_Allreduce(MPI_IN_PLACE, base + off * elem, count, type, op, comm_),
                  "MPI_Allreduce");
          }
        }));
  }

  void broadcast(std::vector<at::Tensor> tensors, int root) override {
    if (root < 0 || root >= world_size_) {
      throw std::invalid_argument(
          fmt::format("mpi broadcast: root {} outside [0, {})", root, world_size_));
    }
    for (const auto& t : tensors) require_contiguous_cpu(t, "broadcast");
    issued_ += static_cast<int64_t>(tensors.size());
    // Queued, not called here: an allreduce issued earlier must reach MPI first on every rank.
    run_blocking("MPI_Bcast", [this, &tensors, root] {
      for (const auto& t : tensors) {
        auto* base = static_cast<char*>(t.data_ptr());
        const int64_t bytes = static_cast<int64_t>(t.nbytes());
        for (int64_t off = 0; off < bytes; off += kMaxCount) {
          const int count = static_cast<int>(std::min(kMaxCount, bytes - off));
          check(MPI_Bcast(base + off, count, MPI_BYTE, root, comm_), "MPI_Bcast");
        }
      }
    });
  }

  std::vector<at::Tensor> allgather(const at::Tensor& tensor) override {
    require_contiguous_cpu(tensor, "allgather");
    const int64_t bytes = static_cast<int64_t>(tensor.nbytes());
    if (bytes > kMaxCount) {
      throw std::invalid_argument(fmt::format(
          "mpi allgather: {} bytes per rank exceeds MPI's int count ({})", bytes, kMaxCount));
    }
    ++issued_;
    // One [world, numel] buffer: MPI_Allgather writes rank r's bytes at block r, which is the
    // rank order the interface promises.
    at::Tensor gathered = at::empty({world_size_, tensor.numel()}, tensor.options());
    run_blocking("MPI_Allgather", [this, &tensor, &gathered, bytes] {
      const int count = static_cast<int>(bytes);
      check(MPI_Allgather(tensor.data_ptr(), count, MPI_BYTE, gathered.data_ptr(), count, MPI_BYTE,
                          comm_),
            "MPI_Allgather");
    });
    std::vector<at::Tensor> out;
    out.reserve(static_cast<size_t>(world_size_));
    for (int r = 0; r < world_size_; ++r) out.push_back(gathered[r].view(tensor.sizes()));
    return out;
  }

  at::Tensor reduce_scatter_sum(const at::Tensor& input) override {
    require_contiguous_cpu(input, "reduce_scatter_sum");
    const auto [type, op] = reduce_type(input.scalar_type());
    const int64_t block = reduce_scatter_block(input, world_size_, "mpi");
    if (block > kMaxCount) {
      throw std::invalid_argument(
          fmt::format("mpi reduce_scatter_sum: {} elements per rank exceeds MPI's int count ({})",
                      block, kMaxCount));
    }
    ++issued_;
    at::Tensor out = at::empty({block}, input.options());
    run_blocking("MPI_Reduce_scatter_block", [this, &input, &out, block, type = type, op = op] {
      check(MPI_Reduce_scatter_block(input.data_ptr(), out.data_ptr(), static_cast<int>(block),
                                     type, op, comm_),
            "MPI_Reduce_scatter_block");
    });
    return out;
  }

  void barrier() override {
    ++issued_;
    run_blocking("MPI_Barrier", [this] { check(MPI_Barrier(comm_), "MPI_Barrier"); });
  }

  int64_t collectives_issued() const override { return issued_; }

 private:
  struct ReduceType {
    MPI_Datatype type;
    MPI_Op op;
  };

  ReduceType reduce_type(at::ScalarType s) const {
    switch (s) {
      case at::kFloat:
        return {MPI_FLOAT, MPI_SUM};
      case at::kDouble:
        return {MPI_DOUBLE, MPI_SUM};
      case at::kLong:
        return {MPI_INT64_T, MPI_SUM};
      case at::kHalf:
        return {MPI_UINT16_T, half_sum_};
      case at::kBFloat16:
        return {MPI_UINT16_T, bfloat16_sum_};
      default:
        throw std::invalid_argument(fmt::format(
            "mpi allreduce_sum: dtype {} unsupported (float32, float64, float16, bfloat16, int64)",
            c10::toString(s)));
    }
  }

  // Queues `op` behind every outstanding operation and waits for it; `op` may capture locals by
  // reference because this frame outlives it.
  void run_blocking(const char* call, std::function<void()> op) {
    thread_->submit(call, std::move(op)).get();
  }

  void check(int rc, const char* what) const {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw std::runtime_error(fmt::format("mpi rank {} on {}: {} failed: {}", rank_, host_, what,
                                         std::string(msg, static_cast<size_t>(len))));
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int world_size_ = 1;
  std::string host_;
  MPI_Op half_sum_ = MPI_OP_NULL;
  MPI_Op bfloat16_sum_ = MPI_OP_NULL;
  std::atomic<int64_t> issued_{0};
  std::unique_ptr<WatchedQueue> thread_;  // reset first in the destructor: it uses comm_ and ops
};

}  // namespace

bool mpi_launched() { return kLaunchedByMpi; }

void abort_mpi_job(int exit_code) {
  std::fflush(nullptr);
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

void abort_mpi_job_at_exit(int exit_code) { abort_code_at_exit.store(exit_code); }

void ensure_mpi_initialized() {
  // A mutex rather than std::call_once: a failed check must fail again on the next call, and a
  // second MPI_Init_thread is an error, so the MPI_Initialized query decides, not a flag.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) throw std::runtime_error("mpi: MPI was already finalized in this process");
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    std::atexit(&finalize_mpi_at_exit);
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    throw std::runtime_error(fmt::format(
        "mpi: MPI_THREAD_MULTIPLE required, the MPI library granted level {}; use an MPI built "
        "with thread support or --backend gloo",
        provided));
  }
}

std::unique_ptr<Communicator> make_mpi_communicator() {
  return make_mpi_communicator(MpiOptions{});
}

std::unique_ptr<Communicator> make_mpi_communicator(int color) {
  MpiOptions options;
  options.color = color;
  return make_mpi_communicator(options);
}

std::unique_ptr<Communicator> make_mpi_communicator(const MpiOptions& options) {
  return std::make_unique<MpiCommunicator>(options);
}

}  // namespace ddpbench::comm
