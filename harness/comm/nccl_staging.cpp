// nccl_staging.cpp — see nccl_staging.h. NOT RUN HERE: compiled and linked in CI, never run.
#include "comm/nccl_staging.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace ddpbench::comm::nccl {

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

Staging::~Staging() {
  if (done != nullptr) cudaEventDestroy(done);
  if (device != nullptr) cudaFree(device);
  if (host != nullptr) cudaFreeHost(host);
}

NcclState::~NcclState() {
  cudaSetDevice(device);
  // Copies still queued target staging buffers freed below.
  if (stream != nullptr) cudaStreamSynchronize(stream);
  pool.clear();
  if (comm != nullptr) ncclCommDestroy(comm);
  if (stream != nullptr) cudaStreamDestroy(stream);
}

std::unique_ptr<Staging> NcclState::acquire(size_t bytes) {
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
  check_cuda(cudaMallocHost(reinterpret_cast<void**>(&s->host), s->bytes), "cudaMallocHost", rank);
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&s->device), s->bytes), "cudaMalloc", rank);
  check_cuda(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming), "cudaEventCreate", rank);
  return s;
}

void NcclState::release(std::unique_ptr<Staging> s) {
  std::lock_guard<std::mutex> lock(mu);
  pool.push_back(std::move(s));
}

std::unique_ptr<Staging> NcclState::enqueue(
    const void* in, size_t in_bytes, size_t in_offset, size_t buffer_bytes,
    const std::function<ncclResult_t(char* device)>& collective, const char* what) {
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

void NcclState::complete(const Staging& s) {
  check_cuda(cudaSetDevice(device), "cudaSetDevice", rank);
  check_cuda(cudaEventSynchronize(s.done), "cudaEventSynchronize", rank);
  ncclResult_t async = ncclSuccess;
  check_nccl(ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError", rank, comm);
  check_nccl(async, "collective (asynchronous error)", rank, comm);
}

NcclWork::NcclWork(std::shared_ptr<NcclState> state, std::unique_ptr<Staging> staging,
                   at::Tensor tensor, size_t host_offset)
    : state_(std::move(state)),
      staging_(std::move(staging)),
      tensor_(std::move(tensor)),
      host_offset_(host_offset) {}

NcclWork::~NcclWork() {
  if (staging_ == nullptr) return;
  cudaSetDevice(state_->device);
  if (cudaEventSynchronize(staging_->done) == cudaSuccess) state_->release(std::move(staging_));
}

void NcclWork::wait() {
  if (staging_ == nullptr) return;  // already waited
  state_->complete(*staging_);
  std::memcpy(tensor_.data_ptr(), staging_->host + host_offset_, tensor_.nbytes());
  state_->release(std::move(staging_));
}

}  // namespace ddpbench::comm::nccl
