// communicator.h — the collectives ddpbench's DDP, SyncBN and `ddpbench comm` need, behind one
// small interface with one implementation per backend (gloo over c10d, OpenMPI, NCCL, and shm:
// shared memory between the ranks of one host, comm/shm_communicator.h). Ranks must
// issue collectives in the same order; async allreduces complete in launch order.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/collective_counts.h"

namespace ddpbench::comm {

// A pending asynchronous collective. wait() returns when the result is in the tensor for whoever
// reads it next: for a CPU tensor the host blocks; for a CUDA tensor NCCL orders the caller's
// current stream after the collective instead (stream semantics, as c10d's Work::wait). It
// rethrows the backend's error (e.g. a timeout) as std::runtime_error. Every backend accepts CPU
// and CUDA tensors (gloo and mpi stage device tensors through the host).
class Work {
 public:
  virtual ~Work() = default;
  virtual void wait() = 0;
};

// A Work already done: a collective that finished when it was issued, or sent nothing.
class CompletedWork : public Work {
 public:
  void wait() override {}
};

// A reduce-scatter under way: `block` holds this rank's block of the sum once work->wait()
// returned.
struct ScatterWork {
  std::shared_ptr<Work> work;
  at::Tensor block;

  // After wait(): the block with storage of its own, a copy where it is a view of the input (gloo
  // sums in place), so that what is kept of a reduction does not keep its whole input alive.
  at::Tensor owned_block() const {
    const auto bytes = static_cast<size_t>(block.numel()) * block.element_size();
    return block.storage().nbytes() > bytes ? block.clone() : block;
  }
};

// An all-gather under way: `blocks` hold every rank's tensor, in rank order, once work->wait()
// returned.
struct GatherWork {
  std::shared_ptr<Work> work;
  std::vector<at::Tensor> blocks;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string backend() const = 0;

  // In-place elementwise sum across ranks, asynchronous. The tensor must stay alive and
  // untouched until wait() returns. float32, float64, float16 and bfloat16 are supported.
  virtual std::shared_ptr<Work> allreduce_sum(at::Tensor tensor) = 0;
  // In-place broadcast of every tensor from `root`, blocking.
  virtual void broadcast(std::vector<at::Tensor> tensors, int root) = 0;
  // Gathers one tensor per rank (same shape and dtype on every rank), blocking; result in rank
  // order.
  virtual std::vector<at::Tensor> allgather(const at::Tensor& tensor) = 0;
  // allgather, asynchronous, for gathers that overlap compute (zero stage 3's prefetch of the
  // next unit's parameters during the forward): `tensor` must stay alive and untouched until
  // work->wait() returns. The default is the blocking one, done when it returns.
  virtual GatherWork allgather_async(at::Tensor tensor);
  // Elementwise sum across ranks of `input`, a contiguous tensor of world_size() equal blocks,
  // of which this rank keeps block rank(): returns a new 1-D tensor of numel / world_size
  // elements (same dtype and device), blocking. Throws std::invalid_argument when numel is not a
  // multiple of the world size. Same dtypes as allreduce_sum. Whether the backend has a native
  // reduce-scatter or emulates it is BackendTraits::native_reduce_scatter.
  virtual at::Tensor reduce_scatter_sum(const at::Tensor& input) = 0;
  // reduce_scatter_sum, asynchronous, for reductions that overlap backward (zero stage 2's
  // buckets): `input` must stay alive and untouched until work->wait() returns, and what it holds
  // afterwards is unspecified (a backend may sum in place and hand back a view of it). The default
  // is the blocking one, done when it returns.
  virtual ScatterWork reduce_scatter_sum_async(at::Tensor input);
  virtual void barrier() = 0;
  // Counts collectives issued so far (tests use it, e.g. "SyncBN eval sends nothing").
  virtual int64_t collectives_issued() const = 0;
  // What this rank issued so far by kind, with bytes, over this communicator and the groups split
  // off it (comm/collective_counts.h); only a launched rank's counts (others: all zeros).
  virtual CollectiveCounts collective_counts() const { return {}; }
  // Collectives that code driving the backend's library directly (c10d's Reducer,
  // c10d_process_group.h) issued past this communicator, told to it so that collective_counts()
  // holds them too: `collectives` of kind `op`, `bytes` in all. Only a recording communicator
  // counts them.
  virtual void count_issued_past(FlightOp /*op*/, int64_t /*collectives*/, int64_t /*bytes*/) {}
  // The backend's own communicator under a recording one (comm/recording_communicator.h), for
  // code that drives the backend's library directly (c10d_process_group.h).
  virtual Communicator& underlying() { return *this; }
  // Collective (every rank calls it, in the same order): the ranks that pass the same `color`
  // form a communicator of their own, ranked in this communicator's order, as MPI_Comm_split,
  // ncclCommSplit and c10d's new_group do (HSDP's shard and replica groups,
  // modes/zero/hsdp_mesh.h). Only a launched rank's communicator can (launch::join_world gives
  // it a rendezvous to split); a bare backend's throws std::logic_error.
  virtual std::unique_ptr<Communicator> split(int color);
};

inline GatherWork Communicator::allgather_async(at::Tensor tensor) {
  return {std::make_shared<CompletedWork>(), allgather(tensor)};
}

inline ScatterWork Communicator::reduce_scatter_sum_async(at::Tensor input) {
  return {std::make_shared<CompletedWork>(), reduce_scatter_sum(input)};
}

inline std::unique_ptr<Communicator> Communicator::split(int /*color*/) {
  throw std::logic_error("this communicator cannot split: only launch::join_world's can");
}

// allreduce_sum + wait. A tensor that is not contiguous (a channels_last gradient under the naive
// DDP engine, MODEL.CHANNELS_LAST) is reduced as a contiguous copy and copied back: mpi and nccl
// take contiguous tensors only, and every rank then sends its values in one order.
inline void allreduce_sum_blocking(Communicator& comm, at::Tensor tensor) {
  if (tensor.is_contiguous()) {
    comm.allreduce_sum(std::move(tensor))->wait();
    return;
  }
  at::Tensor staged = tensor.contiguous();
  comm.allreduce_sum(staged)->wait();
  tensor.copy_(staged);
}

}  // namespace ddpbench::comm
