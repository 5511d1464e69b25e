// nccl_communicator.cpp — nccl_communicator.h for builds with CUDA + NCCL.
//
// NOT RUN HERE: this path compiles and links in CI, but it has never run — the build and test
// machines have no GPU (cudaGetDeviceCount fails there, and construction throws InputError before
// touching NCCL). Treat it as unverified until it has run on a GPU machine.
//
// Device tensors (a CUDA libtorch, DDPBENCH_TORCH_CUDA) go to NCCL as they are, on the
// communicator's own stream: an event recorded on the caller's current (compute) stream orders
// the collective after the kernels that produced the tensor, and wait() makes the compute stream
// wait for the collective's event — no host staging and no host synchronisation, as c10d's
// ProcessGroupNCCL does it. The caching allocator is told the tensor is in use on the NCCL stream
// (recordStream), so its memory is not handed out again before the collective finished.
//
// CPU tensors (every tensor of a CPU libtorch; small host-side records otherwise) are staged
// (nccl_staging.h): host -> pinned staging -> device, NCCL, and back. Everything goes on one dedicated stream:
// stream order is the order collectives reach NCCL, the same on every rank that issues them in
// the same order. Pinned host staging (not the tensor's pageable memory) keeps the device->host
// copy asynchronous; into pageable memory cudaMemcpyAsync returns only when the copy is done.
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

#include "comm/backend_support.h"
#include "comm/nccl_staging.h"
#include "comm/reduce_scatter_blocks.h"
#include "errors.h"

#if DDPBENCH_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace ddpbench::comm {
namespace {

using namespace nccl;  // NOLINT(google-build-using-namespace): the staging's vocabulary

constexpr const char* kUniqueIdKey = "nccl/unique_id";

// True for a CUDA tensor (sent as it is), false for a CPU tensor (staged).
bool check_tensor(const at::Tensor& t, const char* op) {
  if (!t.defined() || !t.is_contiguous() || !(t.device().is_cpu() || t.device().is_cuda())) {
    throw std::invalid_argument(
        fmt::format("nccl {}: needs a defined, contiguous CPU or CUDA tensor", op));
  }
  return t.device().is_cuda();
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

#if DDPBENCH_TORCH_CUDA
// A collective on device tensors: `done` is recorded on the NCCL stream after it.
class NcclDeviceWork : public Work {
 public:
  NcclDeviceWork(std::shared_ptr<NcclState> state, cudaEvent_t done)
      : state_(std::move(state)), done_(done) {}
  ~NcclDeviceWork() override {
    cudaSetDevice(state_->device);
    cudaEventDestroy(done_);
  }

  // The caller's current stream waits for the collective; the host does not. Errors NCCL found
  // asynchronously so far (a dead peer) are reported here.
  void wait() override {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(state_->device));
    check_cuda(cudaStreamWaitEvent(c10::cuda::getCurrentCUDAStream().stream(), done_, 0),
               "cudaStreamWaitEvent", state_->rank);
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(state_->comm, &async), "ncclCommGetAsyncError", state_->rank,
               state_->comm);
    check_nccl(async, "collective (asynchronous error)", state_->rank, state_->comm);
  }

 private:
  std::shared_ptr<NcclState> state_;
  cudaEvent_t done_;
};

// Runs `collective` on the NCCL stream after the work queued so far on the current stream, and
// keeps `tensors`' memory reserved for the NCCL stream until it is done.
std::shared_ptr<NcclDeviceWork> enqueue_on_device(const std::shared_ptr<NcclState>& state,
                                                  const std::vector<at::Tensor>& tensors,
                                                  const std::function<ncclResult_t()>& collective,
                                                  const char* what) {
  NcclState& st = *state;
  std::lock_guard<std::mutex> lock(st.mu);
  const auto device = static_cast<c10::DeviceIndex>(st.device);
  for (const auto& t : tensors) {
    if (t.device().index() != device) {
      throw std::invalid_argument(fmt::format("nccl {}: tensor on {}, communicator on cuda:{}",
                                              what, t.device().str(), st.device));
    }
  }
  c10::cuda::CUDAGuard guard(device);
  cudaEvent_t ready = nullptr;
  cudaEvent_t done = nullptr;
  check_cuda(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreate", st.rank);
  check_cuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate", st.rank);
  check_cuda(cudaEventRecord(ready, c10::cuda::getCurrentCUDAStream(device).stream()),
             "cudaEventRecord", st.rank);
  check_cuda(cudaStreamWaitEvent(st.stream, ready, 0), "cudaStreamWaitEvent", st.rank);
  cudaEventDestroy(ready);  // destroyed after its pending wait completes, per the CUDA API
  const c10::cuda::CUDAStream nccl_stream = c10::cuda::getStreamFromExternal(st.stream, device);
  for (const auto& t : tensors) {
    c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), nccl_stream);
  }
  check_nccl(collective(), what, st.rank, st.comm);
  check_cuda(cudaEventRecord(done, st.stream), "cudaEventRecord", st.rank);
  return std::make_shared<NcclDeviceWork>(state, done);
}
#endif

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(const std::shared_ptr<Store>& store, int rank, int world_size, int cuda_device)
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
    // The process's current device: the execution context chose it (cuda:LOCAL_RANK mod count,
    // torchrun's convention) and made it current before any communicator exists.
    if (cuda_device >= 0) {
      state_->device = cuda_device;
    } else {
      check_cuda(cudaGetDevice(&state_->device), "cudaGetDevice", rank);
    }
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
  std::string backend() const override { return backend_name(Backend::kNccl); }

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
    for (const auto& t : tensors) {
#if DDPBENCH_TORCH_CUDA
      if (check_tensor(t, "broadcast")) {
        ++issued_;
        enqueue_on_device(
            state_, {t},
            [&] {
              return ncclBroadcast(t.data_ptr(), t.data_ptr(), t.nbytes(), ncclUint8, root,
                                   state_->comm, state_->stream);
            },
            "ncclBroadcast")
            ->wait();
        continue;
      }
#else
      check_tensor(t, "broadcast");
#endif
    }
    // CPU tensors: staged. Bytes, not elements: a broadcast moves data unchanged, so any dtype
    // works as ncclUint8.
    std::vector<std::unique_ptr<NcclWork>> works;
    works.reserve(tensors.size());
    NcclState& st = *state_;
    for (const auto& t : tensors) {
      if (t.device().is_cuda()) continue;  // sent above
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
    const bool on_device = check_tensor(tensor, "allgather");
    ++issued_;
    NcclState& st = *state_;
    const size_t bytes = tensor.nbytes();
    const int world = st.world_size;
    at::Tensor gathered = at::empty({world, tensor.numel()}, tensor.options());
#if DDPBENCH_TORCH_CUDA
    if (on_device) {
      enqueue_on_device(
          state_, {tensor, gathered},
          [&] {
            return ncclAllGather(tensor.data_ptr(), gathered.data_ptr(), bytes, ncclUint8, st.comm,
                                 st.stream);
          },
          "ncclAllGather")
          ->wait();
      std::vector<at::Tensor> out;
      for (int r = 0; r < world; ++r) out.push_back(gathered[r].view(tensor.sizes()));
      return out;
    }
#else
    (void)on_device;
#endif
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

  at::Tensor reduce_scatter_sum(const at::Tensor& input) override {
    const bool on_device = check_tensor(input, "reduce_scatter_sum");
    const ncclDataType_t type = nccl_type(input.scalar_type());
    NcclState& st = *state_;
    const int world = st.world_size;
    const auto block = static_cast<size_t>(reduce_scatter_block(input, world, "nccl"));
    at::Tensor out = at::empty({static_cast<int64_t>(block)}, input.options());
    ++issued_;
#if DDPBENCH_TORCH_CUDA
    if (on_device) {
      enqueue_on_device(
          state_, {input, out},
          [&] {
            return ncclReduceScatter(input.data_ptr(), out.data_ptr(), block, type, ncclSum,
                                     st.comm, st.stream);
          },
          "ncclReduceScatter")
          ->wait();
      return out;
    }
#else
    (void)on_device;
#endif
    // In place: NCCL allows recvbuff == sendbuff + rank * recvcount, so this rank's block of the
    // staged input receives the result, and is what comes back.
    const size_t block_bytes = block * input.element_size();
    NcclWork work(state_,
                  st.enqueue(
                      input.data_ptr(), input.nbytes(), 0, input.nbytes(),
                      [&](char* dev) {
                        return ncclReduceScatter(dev, dev + st.rank * block_bytes, block, type,
                                                 ncclSum, st.comm, st.stream);
                      },
                      "ncclReduceScatter"),
                  out, st.rank * block_bytes);
    work.wait();
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
  std::shared_ptr<Work> start_allreduce(at::Tensor tensor) {
    const bool on_device = check_tensor(tensor, "allreduce_sum");
    const ncclDataType_t type = nccl_type(tensor.scalar_type());
    const size_t bytes = tensor.nbytes();
    const auto count = static_cast<size_t>(tensor.numel());
    NcclState& st = *state_;
#if DDPBENCH_TORCH_CUDA
    if (on_device) {
      return enqueue_on_device(
          state_, {tensor},
          [&] {
            return ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), count, type, ncclSum,
                                 st.comm, st.stream);
          },
          "ncclAllReduce");
    }
#else
    (void)on_device;
#endif
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
                                                     int world_size, int cuda_device) {
  return std::make_unique<NcclCommunicator>(store, rank, world_size, cuda_device);
}

}  // namespace ddpbench::comm
