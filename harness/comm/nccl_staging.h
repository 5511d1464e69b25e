// nccl_staging.h — the NCCL communicator's shared state and its host-staged collectives
// (nccl_communicator.cpp, which says how device tensors go instead): the NCCL communicator, its
// dedicated stream, and a pool of staging buffers (pinned host memory, device memory and an
// event) through which CPU tensors travel host -> pinned -> device, NCCL, and back, in stream
// order. Included only by builds with CUDA + NCCL.
//
// NOT RUN HERE: compiled and linked in CI, never run (no GPU on the build and test machines).
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/communicator.h"

namespace ddpbench::comm::nccl {

// Throw std::runtime_error naming the rank, the call and CUDA's or NCCL's reason.
void check_cuda(cudaError_t e, const char* what, int rank);
void check_nccl(ncclResult_t r, const char* what, int rank, ncclComm_t comm);

// One collective's buffers: pinned host memory, device memory and the event that marks the
// device->host copy done. Pooled, because cudaMallocHost/cudaMalloc cost far more than a step.
struct Staging {
  size_t bytes = 0;
  char* host = nullptr;
  char* device = nullptr;
  cudaEvent_t done = nullptr;

  Staging() = default;
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  ~Staging();
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

  ~NcclState();

  // Caller holds mu. Smallest pooled buffer that fits, or a new one.
  std::unique_ptr<Staging> acquire(size_t bytes);
  void release(std::unique_ptr<Staging> s);
  // Copies `in_bytes` from `in` (skipped when null) to device offset `in_offset`, runs
  // `collective` on the device buffer, copies `buffer_bytes` back to pinned host memory and
  // records the event. The caller finishes with complete().
  std::unique_ptr<Staging> enqueue(const void* in, size_t in_bytes, size_t in_offset,
                                   size_t buffer_bytes,
                                   const std::function<ncclResult_t(char* device)>& collective,
                                   const char* what);
  // Blocks until `s`'s copies are done and reports errors NCCL raised asynchronously (a peer
  // that died, a network failure), which cudaEventSynchronize alone would not show.
  void complete(const Staging& s);
};

// A host-staged collective: wait() copies the result from the staging buffer into the tensor.
class NcclWork : public Work {
 public:
  // `host_offset`: where in the staging buffer the tensor's bytes are (a reduce-scatter's block).
  NcclWork(std::shared_ptr<NcclState> state, std::unique_ptr<Staging> staging, at::Tensor tensor,
           size_t host_offset = 0);
  // Never waited: the copies must finish before the buffers go back to the pool.
  ~NcclWork() override;
  void wait() override;

 private:
  std::shared_ptr<NcclState> state_;
  std::unique_ptr<Staging> staging_;
  at::Tensor tensor_;
  size_t host_offset_;
};

}  // namespace ddpbench::comm::nccl
