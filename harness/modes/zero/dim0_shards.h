// dim0_shards.h — zero stage 3's parameter shards, laid out as FSDP2's fully_shard lays them out:
// every parameter is cut on dim 0 into K chunks of ceil(d0/K) rows (torch.chunk's split, so the
// last chunks may be short or empty), each padded with zero rows to that count; rank r holds
// chunk r and nothing else of the parameter between steps. A 0-dim parameter is one row.
//
// The parameters themselves carry the shards at rest (their data is set to them, as FSDP2's
// parameters are DTensor shards at rest), so an ordinary optimizer over the module's parameters
// steps the shards and keeps its state (momentum, Adam's moments) shard-shaped: 1/K of it.
// Gathering sets their data to the full values again; autograd's identity, hooks and the
// optimizer's state keys all stay with the parameter (Tensor::set_data).
//
// The parameters fall into units (unit_gathers.h: a model's blocks, gathered one by one as the
// forward reaches them); a rank's flat block holds its shards unit after unit, so that each
// unit's all-gather sends one contiguous range of it.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/MemoryFormat.h>

#include <cstdint>
#include <vector>

#include "comm/communicator.h"
#include "modes/zero/hsdp_mesh.h"

namespace ddpbench::modes::zero {

class Dim0Shards {
 public:
  // `parameters`: the model's, in registration order, holding their full values (the same on
  // every rank); afterwards they hold this rank's shards. `unit_of`: each one's unit, numbered
  // from 0 without gaps (empty: one unit).
  Dim0Shards(std::vector<at::Tensor> parameters, comm::Communicator& comm,
             std::vector<int64_t> unit_of = {});

  // Every unit's full parameters are set.
  bool gathered() const { return gathered_units_ == units(); }
  int64_t units() const { return static_cast<int64_t>(unit_parameters_.size()); }
  // Collective: every parameter's full value from the ranks' shards (one all-gather per unit,
  // each of its shards flat), set as its data. With `stale` (the gather fault: one full value
  // per parameter) the other ranks' rows are taken from it instead, as if their all-gather never
  // arrived.
  void gather(const std::vector<at::Tensor>* stale = nullptr);

  // The same, unit by unit, in two halves: the all-gather of `unit`'s shards started, and once
  // it is finished the unit's parameters set to their full values (`stale` as gather's).
  struct PendingGather {
    int64_t unit = -1;
    comm::GatherWork gather;
  };
  PendingGather start_gather(int64_t unit) const;
  void finish_gather(PendingGather& pending, const std::vector<at::Tensor>* stale);
  // The parameters of `unit`, in the parameters' order.
  const std::vector<int64_t>& unit_parameters(int64_t unit) const {
    return unit_parameters_[static_cast<size_t>(unit)];
  }
  // Local: every parameter's data back to its shard; the full values are dropped.
  void release();
  // The same for some of them (a bucket whose gradients are reduced during backward).
  void release(const std::vector<int64_t>& params);
  // Local, while gathered: the shards cut anew from the parameters' current full values (after
  // an observer loaded a state into them), then released.
  void recut();

  // Collective: per parameter, the full tensor from shard-shaped ones (gradients, optimizer
  // state); an undefined entry counts as zeros. One all-gather.
  std::vector<at::Tensor> gather_full(const std::vector<at::Tensor>& shards) const;
  // Local: this rank's padded chunk of a tensor shaped like parameter `index`'s full value.
  at::Tensor chunk_of(int64_t index, const at::Tensor& full) const;
  // Collective: the full gradients `full` (one per parameter, undefined counts as zeros), each
  // divided by `divide.before` and summed over the ranks by one reduce-scatter: this rank's chunk
  // of each, views of one flat tensor, given in `flat` for what follows (hsdp_mesh.h).
  std::vector<at::Tensor> reduce_scatter(const std::vector<at::Tensor>& full,
                                         const DivideFactors& divide, at::Tensor* flat) const;

  // The same for some of the parameters (a bucket reduced during backward), in two halves.
  struct PendingScatter {
    std::vector<int64_t> params;   // in the input's order
    std::vector<int64_t> offsets;  // of each one's chunk in a rank's block
    comm::ScatterWork scatter;     // its block is this rank's chunks, once waited on
  };
  // Collective: the reduce-scatter of `params`' full gradients (`full`: one per parameter,
  // undefined counts as zeros) started, each divided by `divide.before` first; block k of its
  // input holds rank k's chunk of each.
  PendingScatter start_reduce_scatter(const std::vector<int64_t>& params,
                                      const std::vector<at::Tensor>& full,
                                      const DivideFactors& divide) const;
  // Local, once pending.scatter.work was waited on: this rank's chunk of each of pending.params,
  // views of `block` (pending.scatter.block or a copy of it).
  std::vector<at::Tensor> chunks(const PendingScatter& pending, const at::Tensor& block) const;

  // Whether this rank's chunk of parameter `index` holds any of its rows (not only padding).
  bool holds_rows(int64_t index) const;
  // Bytes one gather or reduce-scatter moves per rank (this rank's padded shards).
  int64_t shard_bytes() const;

 private:
  // Per rank: its shards one after the other, flat.
  at::Tensor pack(const std::vector<at::Tensor>& shards) const;
  // The full tensors of `params` from the ranks' gathered blocks, in which parameter i's shard
  // lies at offsets_[i] - `base`.
  std::vector<at::Tensor> unpack(const std::vector<at::Tensor>& blocks,
                                 const std::vector<int64_t>& params, int64_t base) const;

  std::vector<at::Tensor> parameters_;
  comm::Communicator& comm_;
  std::vector<std::vector<int64_t>> full_shapes_;
  // The layout each full tensor is gathered into: the parameter's own (a channels_last weight
  // stays channels_last, MODEL.CHANNELS_LAST); the shards are rows in logical order.
  std::vector<c10::MemoryFormat> formats_;
  std::vector<std::vector<int64_t>> shard_shapes_;
  std::vector<int64_t> rows_;       // d0 (1 for a 0-dim parameter)
  std::vector<int64_t> chunk_;      // ceil(d0 / K)
  std::vector<int64_t> row_numel_;  // elements of one row
  std::vector<int64_t> offsets_;    // of each shard in a rank's flat block
  int64_t block_ = 0;               // elements of a rank's flat block
  std::vector<std::vector<int64_t>> unit_parameters_;
  std::vector<int64_t> unit_begin_;  // of each unit's shards in a rank's flat block
  std::vector<int64_t> unit_end_;
  std::vector<int64_t> every_;      // 0 .. n-1
  at::Tensor flat_;                 // this rank's shards, unit after unit
  std::vector<at::Tensor> shards_;  // views of flat_, what the parameters hold at rest
  int64_t gathered_units_ = 0;      // units whose full parameters are set
};

}  // namespace ddpbench::modes::zero
