// nccl_communicator.cpp — nccl_communicator.h for builds with CUDA + NCCL.
//
// NOT RUN HERE: this path compiles and links in CI, but it has never run — the build and test
// machines have no GPU (cudaGetDeviceCount fails there, and construction throws InputError before
// touching NCCL). Treat it as unverified until it has run on a GPU machine.
//
// The tensors are CPU tensors (CPU libtorch), so each collective copies host -> pinned staging ->
// device, runs NCCL, and copies back. Everything goes on one dedicated stream: stream order is the
// order collectives reach NCCL, the same on every rank that issues them in the same order. Pinned
// host staging (not the tensor's pageable memory) keeps the device->host copy asynchronous; into
// pageable memory cudaMemcpyAsync returns only when the copy is done, i.e. after the allreduce.
#include "comm/nccl_communicator.h"

#include <ATen/ATen.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "errors.h"

namespace ddpbench::comm {
namespace {

constexpr const char* kUniqueIdKey = "nccl/unique_id";

void check_cuda(cudaError_t e, const char* what, int rank) {
  if (e == cudaSuccess) return;
  throw std::runtime_error(
      fmt::format("nccl rank {}: {} failed: {}", rank, what, cudaGetErrorString(e)));
}

void check_nccl(ncclResult_t r, const char* what, int rank, ncclComm_t comm) {
  if (r == ncclSuccess) return;
  throw std::runtime_error(fmt::format("nccl rank {}: {} failed: {} ({})", rank, what,
                                       ncclGetErrorString(r), ncclGetLastError(comm)));
}

void require_contiguous_cpu(const at::Tensor& t, const char* op) {
  if (!t.defined() || !t.device().is_cpu() || !t.is_contiguous()) {
    throw std::invalid_argument(fmt::format("nccl {}: needs a defined, contiguous CPU tensor", op));
  }
}

ncclDataType_t nccl_type(at::ScalarType s) {
  switch (s) {
    case at::kFloat:
      return ncclFloat32;
    case at::kDouble:
      return ncclFloat64;
    case at::kHalf:
      return ncclFloat16;
    case at::kBFloat16:
      return ncclBfloat16;
    case at::kLong:
      return ncclInt64;
    default:
      throw std::invalid_argument(fmt::format(
          "nccl allreduce_sum: dtype {} unsupported (float32, float64, float16, bfloat16, int64)",
          c10::toString(s)));
  }
}

// One collective's buffers: pinned host memory, device memory and the event that marks the
// device->host copy done. Pooled, because cudaMallocHost/cudaMalloc cost far more than a step.
struct Staging {
  size_t bytes = 0;
  char* host = nullptr;
  char* device = nullptr;
  cudaEvent_t done = nullptr;

  ~Staging() {
    if (done != nullptr) cudaEventDestroy(done);
    if (device != nullptr) cudaFree(device);
    if (host != nullptr) cudaFreeHost(host);
  }
};

// What the communicator and its outstanding Works share: a Work may be waited on (and must be
// able to return its staging) after the communicator object is gone.
struct NcclState {
  int rank = 0;
  int world_size = 1;
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  // Serializes issuing (NCCL communicators are not thread-safe, and issue order must equal
  // stream order) and guards the staging pool.
  std::mutex mu;
  std::vector<std::unique_ptr<Staging>> pool;

  ~NcclState() {
    cudaSetDevice(device);
    // Copies still queued target staging buffers freed below.
    if (stream != nullptr) cudaStreamSynchronize(stream);
    pool.clear();
    if (comm != nullptr) ncclCommDestroy(comm);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  // Caller holds mu. Smallest pooled buffer that fits, or a new one.
  std::unique_ptr<Staging> acquire(size_t bytes) {
    auto best = pool.end();
    for (auto it = pool.begin(); it != pool.end(); ++it) {
      if ((*it)->bytes >= bytes && (best == pool.end() || (*it)->bytes < (*best)->bytes)) best = it;
    }
    if (best != pool.end()) {
      std::unique_ptr<Staging> s = std::move(*best);
      pool.erase(best);
      return s;
    }
    auto s = std::make_unique<Staging>();
    s->bytes = std::max<size_t>(bytes, 16);  // never a zero-byte allocation
    check_cuda(cudaMallocHost(reinterpret_cast<void**>(&s->host), s->bytes), "cudaMallocHost",
               rank);
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&s->device), s->bytes), "cudaMalloc", rank);
    check_cuda(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming), "cudaEventCreate", rank);
    return s;
  }

  void release(std::unique_ptr<Staging> s) {
    std::lock_guard<std::mutex> lock(mu);
    pool.push_back(std::move(s));
  }

  // Copies `in_bytes` from `in` (skipped when null) to device offset `in_offset`, runs
  // `collective` on the device buffer, copies `buffer_bytes` back to pinned host memory and
  // records the event. The caller finishes with complete().
  std::unique_ptr<Staging> enqueue(const void* in, size_t in_bytes, size_t in_offset,
                                   size_t buffer_bytes,
                                   const std::function<ncclResult_t(char* device)>& collective,
                                   const char* what) {
    std::lock_guard<std::mutex> lock(mu);
    check_cuda(cudaSetDevice(device), "cudaSetDevice", rank);
    std::unique_ptr<Staging> s = acquire(buffer_bytes);
    if (in != nullptr && in_bytes > 0) {
      std::memcpy(s->host + in_offset, in, in_bytes);
      check_cuda(cudaMemcpyAsync(s->device + in_offset, s->host + in_offset, in_bytes,
                                 cudaMemcpyHostToDevice, stream),
                 "cudaMemcpyAsync H2D", rank);
    }
    check_nccl(collective(s->device), what, rank, comm);
    check_cuda(cudaMemcpyAsync(s->host, s->device, buffer_bytes, cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync D2H", rank);
    check_cuda(cudaEventRecord(s->done, stream), "cudaEventRecord", rank);
    return s;
  }

  // Blocks until `s`'s copies are done and reports errors NCCL raised asynchronously (a peer
  // that died, a network failure), which cudaEventSynchronize alone would not show.
  void complete(const Staging& s) {
    check_cuda(cudaSetDevice(device), "cudaSetDevice", rank);
    check_cuda(cudaEventSynchronize(s.done), "cudaEventSynchronize", rank);
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError", rank, comm);
    check_nccl(async, "collective (asynchronous error)", rank, comm);
  }
};

class NcclWork : public Work {
 public:
  NcclWork(std::shared_ptr<NcclState> state, std::unique_ptr<Staging> staging, at::Tensor tensor)
      : state_(std::move(state)), staging_(std::move(staging)), tensor_(std::move(tensor)) {}

  // Never waited: the copies must finish before the buffers go back to the pool.
  ~NcclWork() override {
    if (staging_ == nullptr) return;
    cudaSetDevice(state_->device);
    if (cudaEventSynchronize(staging_->done) == cudaSuccess) state_->release(std::move(staging_));
  }

  void wait() override {
    if (staging_ == nullptr) return;  // already waited
    state_->complete(*staging_);
    std::memcpy(tensor_.data_ptr(), staging_->host, tensor_.nbytes());
    state_->release(std::move(staging_));
  }

 private:
  std::shared_ptr<NcclState> state_;
  std::unique_ptr<Staging> staging_;
  at::Tensor tensor_;
};

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(const std::shared_ptr<Store>& store, int rank, int world_size)
      : state_(std::make_shared<NcclState>()) {
    if (world_size < 1 || rank < 0 || rank >= world_size) {
      throw std::invalid_argument(
          fmt::format("nccl: rank {} outside a world of {}", rank, world_size));
    }
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
      throw InputError(fmt::format(
          "--backend nccl needs a CUDA device, none found (cudaGetDeviceCount: {}); use "
          "--backend gloo",
          err != cudaSuccess ? cudaGetErrorString(err) : "0 devices"));
    }
    state_->rank = rank;
    state_->world_size = world_size;
    // One device per local rank, as torchrun's LOCAL_RANK -> cuda:LOCAL_RANK convention does;
    // rank % count equals the local rank when ranks are packed node by node.
    state_->device = rank % count;
    check_cuda(cudaSetDevice(state_->device), "cudaSetDevice", rank);

    ncclUniqueId id;
    if (rank == 0) {
      check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId", rank, nullptr);
      store->set(kUniqueIdKey, std::string(reinterpret_cast<const char*>(&id), sizeof(id)));
    } else {
      const std::string bytes = store->get(kUniqueIdKey);
      if (bytes.size() != sizeof(id)) {
        throw std::runtime_error(fmt::format(
            "nccl rank {}: store key {} holds {} bytes, expected {} (another job's store?)", rank,
            kUniqueIdKey, bytes.size(), sizeof(id)));
      }
      std::memcpy(&id, bytes.data(), sizeof(id));
    }
    check_cuda(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking),
               "cudaStreamCreate", rank);
    check_nccl(ncclCommInitRank(&state_->comm, world_size, id, rank), "ncclCommInitRank", rank,
               nullptr);
  }

  int rank() const override { return state_->rank; }
  int world_size() const override { return state_->world_size; }
  std::string backend() const override { return "nccl"; }

  std::shared_ptr<Work> allreduce_sum(at::Tensor tensor) override {
    std::shared_ptr<Work> work = start_allreduce(std::move(tensor));
    ++issued_;  // after: a rejected tensor issued nothing
    return work;
  }

  void broadcast(std::vector<at::Tensor> tensors, int root) override {
    if (root < 0 || root >= state_->world_size) {
      throw std::invalid_argument(
          fmt::format("nccl broadcast: root {} outside [0, {})", root, state_->world_size));
    }
    for (const auto& t : tensors) require_contiguous_cpu(t, "broadcast");
    // Bytes, not elements: a broadcast moves data unchanged, so any dtype works as ncclUint8.
    std::vector<std::unique_ptr<NcclWork>> works;
    works.reserve(tensors.size());
    NcclState& st = *state_;
    for (const auto& t : tensors) {
      ++issued_;
      const size_t bytes = t.nbytes();
      works.push_back(std::make_unique<NcclWork>(
          state_,
          st.enqueue(
              st.rank == root ? t.data_ptr() : nullptr, bytes, 0, bytes,
              [&](char* dev) {
                return ncclBroadcast(dev, dev, bytes, ncclUint8, root, st.comm, st.stream);
              },
              "ncclBroadcast"),
          t));
    }
    for (auto& w : works) w->wait();
  }

  std::vector<at::Tensor> allgather(const at::Tensor& tensor) override {
    require_contiguous_cpu(tensor, "allgather");
    ++issued_;
    NcclState& st = *state_;
    const size_t bytes = tensor.nbytes();
    const int world = st.world_size;
    at::Tensor gathered = at::empty({world, tensor.numel()}, tensor.options());
    // In place: NCCL allows sendbuff == recvbuff + rank * sendcount, so the input is staged
    // straight into this rank's block of the output.
    NcclWork work(state_,
                  st.enqueue(
                      tensor.data_ptr(), bytes, st.rank * bytes, world * bytes,
                      [&](char* dev) {
                        return ncclAllGather(dev + st.rank * bytes, dev, bytes, ncclUint8, st.comm,
                                             st.stream);
                      },
                      "ncclAllGather"),
                  gathered);
    work.wait();
    std::vector<at::Tensor> out;
    out.reserve(static_cast<size_t>(world));
    for (int r = 0; r < world; ++r) out.push_back(gathered[r].view(tensor.sizes()));
    return out;
  }

  void barrier() override {
    // NCCL has no barrier; a 1-element allreduce completes only when every rank has joined.
    // Counted once, as a barrier, not also as the allreduce that implements it.
    ++issued_;
    start_allreduce(at::zeros({1}, at::kFloat))->wait();
  }

  int64_t collectives_issued() const override { return issued_; }

 private:
  std::shared_ptr<NcclWork> start_allreduce(at::Tensor tensor) {
    require_contiguous_cpu(tensor, "allreduce_sum");
    const ncclDataType_t type = nccl_type(tensor.scalar_type());
    const size_t bytes = tensor.nbytes();
    const auto count = static_cast<size_t>(tensor.numel());
    NcclState& st = *state_;
    std::unique_ptr<Staging> s = st.enqueue(
        tensor.data_ptr(), bytes, 0, bytes,
        [&](char* dev) {
          return ncclAllReduce(dev, dev, count, type, ncclSum, st.comm, st.stream);
        },
        "ncclAllReduce");
    return std::make_shared<NcclWork>(state_, std::move(s), std::move(tensor));
  }

  std::shared_ptr<NcclState> state_;
  std::atomic<int64_t> issued_{0};
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(const std::shared_ptr<Store>& store, int rank,
                                                     int world_size) {
  return std::make_unique<NcclCommunicator>(store, rank, world_size);
}

}  // namespace ddpbench::comm
