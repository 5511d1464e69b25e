// dim0_shards.cpp — see dim0_shards.h.
#include "modes/zero/dim0_shards.h"

#include <torch/torch.h>

#include <algorithm>

namespace ddpbench::modes::zero {
namespace {

std::vector<int64_t> shape_of(const at::Tensor& t) { return t.sizes().vec(); }

}  // namespace

Dim0Shards::Dim0Shards(std::vector<at::Tensor> parameters, comm::Communicator& comm,
                       std::vector<int64_t> unit_of)
    : parameters_(std::move(parameters)), comm_(comm) {
  const int64_t world = comm_.world_size();
  const size_t n = parameters_.size();
  if (unit_of.empty()) unit_of.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const auto unit = static_cast<size_t>(unit_of[i]);
    if (unit >= unit_parameters_.size()) unit_parameters_.resize(unit + 1);
    unit_parameters_[unit].push_back(static_cast<int64_t>(i));
    every_.push_back(static_cast<int64_t>(i));
  }
  offsets_.resize(n);
  for (const at::Tensor& p : parameters_) {
    std::vector<int64_t> full = shape_of(p);
    const int64_t rows = full.empty() ? 1 : full.front();
    const int64_t chunk = (rows + world - 1) / world;
    std::vector<int64_t> shard = full.empty() ? std::vector<int64_t>{1} : full;
    shard.front() = chunk;
    row_numel_.push_back(p.numel() / rows);
    full_shapes_.push_back(std::move(full));
    formats_.push_back(p.dim() == 4 && !p.is_contiguous() &&
                               p.is_contiguous(c10::MemoryFormat::ChannelsLast)
                           ? c10::MemoryFormat::ChannelsLast
                           : c10::MemoryFormat::Contiguous);
    shard_shapes_.push_back(std::move(shard));
    rows_.push_back(rows);
    chunk_.push_back(chunk);
  }
  // Unit after unit, each unit's parameters in their order.
  for (const std::vector<int64_t>& unit : unit_parameters_) {
    unit_begin_.push_back(block_);
    for (const int64_t i : unit) {
      const auto k = static_cast<size_t>(i);
      offsets_[k] = block_;
      block_ += chunk_[k] * row_numel_[k];
    }
    unit_end_.push_back(block_);
  }
  gathered_units_ = units();
  torch::NoGradGuard no_grad;
  // The shards are views of one flat block, as a rank's block of the gather lays them out, so
  // that the optimizer's in-place step leaves them ready to send (ZeroRedundancyOptimizer's
  // parameters_as_bucket_view).
  flat_ = at::zeros({block_}, parameters_.front().options());
  for (size_t i = 0; i < n; ++i) {
    shards_.push_back(
        flat_.narrow(0, offsets_[i], chunk_[i] * row_numel_[i]).view(shard_shapes_[i]));
    shards_.back().copy_(chunk_of(static_cast<int64_t>(i), parameters_[i]));
  }
  release();
}

bool Dim0Shards::holds_rows(int64_t index) const {
  return comm_.rank() * chunk_[static_cast<size_t>(index)] < rows_[static_cast<size_t>(index)];
}

int64_t Dim0Shards::shard_bytes() const {
  return block_ * static_cast<int64_t>(parameters_.front().element_size());
}

at::Tensor Dim0Shards::chunk_of(int64_t index, const at::Tensor& full) const {
  const auto i = static_cast<size_t>(index);
  const int64_t first = comm_.rank() * chunk_[i];
  const int64_t n = std::clamp<int64_t>(rows_[i] - first, 0, chunk_[i]);
  at::Tensor shard = at::zeros(shard_shapes_[i], full.options());
  if (n > 0) {
    shard.view({chunk_[i], -1})
        .narrow(0, 0, n)
        .copy_(full.reshape({rows_[i], -1}).narrow(0, first, n));
  }
  return shard;
}

at::Tensor Dim0Shards::pack(const std::vector<at::Tensor>& shards) const {
  at::Tensor flat = at::zeros({block_}, parameters_.front().options());
  for (size_t i = 0; i < shards.size(); ++i) {
    if (!shards[i].defined()) continue;
    flat.narrow(0, offsets_[i], shards[i].numel()).copy_(shards[i].reshape(-1));
  }
  return flat;
}

std::vector<at::Tensor> Dim0Shards::gather_full(const std::vector<at::Tensor>& shards) const {
  return unpack(comm_.allgather(pack(shards)), every_, 0);
}

std::vector<at::Tensor> Dim0Shards::unpack(const std::vector<at::Tensor>& blocks,
                                           const std::vector<int64_t>& params, int64_t base) const {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> out;
  std::vector<at::Tensor> pieces(blocks.size());
  for (const int64_t index : params) {
    const auto i = static_cast<size_t>(index);
    const int64_t elements = chunk_[i] * row_numel_[i];
    // Rank k's chunk is rows [k*chunk, (k+1)*chunk) of the padded whole: concatenated (the one
    // copy each value takes out of the gathered blocks), then unpadded.
    for (size_t k = 0; k < blocks.size(); ++k) {
      pieces[k] =
          blocks[k].narrow(0, offsets_[i] - base, elements).view({chunk_[i], row_numel_[i]});
    }
    out.push_back(
        at::cat(pieces, 0).narrow(0, 0, rows_[i]).reshape(full_shapes_[i]).contiguous(formats_[i]));
  }
  return out;
}

void Dim0Shards::gather(const std::vector<at::Tensor>* stale) {
  if (gathered()) return;
  std::vector<PendingGather> pending;
  for (int64_t u = 0; u < units(); ++u) pending.push_back(start_gather(u));
  for (PendingGather& p : pending) finish_gather(p, stale);
}

Dim0Shards::PendingGather Dim0Shards::start_gather(int64_t unit) const {
  const auto u = static_cast<size_t>(unit);
  const int64_t elements = unit_end_[u] - unit_begin_[u];
  // A unit with no parameters (a root whose parameters all lie in blocks): nothing to send, on
  // every rank alike.
  if (elements == 0) return {unit, {std::make_shared<comm::CompletedWork>(), {}}};
  // The unit's shards as they lie: a contiguous range of the flat block.
  return {unit, comm_.allgather_async(flat_.narrow(0, unit_begin_[u], elements))};
}

void Dim0Shards::finish_gather(PendingGather& pending, const std::vector<at::Tensor>* stale) {
  pending.gather.work->wait();
  const std::vector<int64_t>& params = unit_parameters(pending.unit);
  std::vector<at::Tensor> full =
      unpack(pending.gather.blocks, params, unit_begin_[static_cast<size_t>(pending.unit)]);
  pending = {};
  torch::NoGradGuard no_grad;
  for (size_t j = 0; j < params.size(); ++j) {
    const auto i = static_cast<size_t>(params[j]);
    if (stale != nullptr) {
      // Only this rank's own rows are fresh: the others' all-gather "never arrived".
      at::Tensor kept = (*stale)[i].clone();
      const int64_t first = comm_.rank() * chunk_[i];
      const int64_t n = std::clamp<int64_t>(rows_[i] - first, 0, chunk_[i]);
      if (n > 0) {
        kept.reshape({rows_[i], -1})
            .narrow(0, first, n)
            .copy_(full[j].reshape({rows_[i], -1}).narrow(0, first, n));
      }
      full[j] = kept;
    }
    parameters_[i].set_data(full[j]);
  }
  ++gathered_units_;
}

void Dim0Shards::release() {
  for (size_t i = 0; i < parameters_.size(); ++i) parameters_[i].set_data(shards_[i]);
  gathered_units_ = 0;
}

void Dim0Shards::release(const std::vector<int64_t>& params) {
  for (const int64_t i : params) {
    parameters_[static_cast<size_t>(i)].set_data(shards_[static_cast<size_t>(i)]);
  }
  gathered_units_ = 0;
}

void Dim0Shards::recut() {
  if (!gathered()) return;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    shards_[i].copy_(chunk_of(static_cast<int64_t>(i), parameters_[i]));
  }
  release();
}

std::vector<at::Tensor> Dim0Shards::reduce_scatter(const std::vector<at::Tensor>& full,
                                                   const DivideFactors& divide,
                                                   at::Tensor* flat) const {
  std::vector<int64_t> every(parameters_.size());
  for (size_t i = 0; i < every.size(); ++i) every[i] = static_cast<int64_t>(i);
  PendingScatter pending = start_reduce_scatter(every, full, divide);
  pending.scatter.work->wait();
  *flat = pending.scatter.owned_block();
  return chunks(pending, *flat);
}

Dim0Shards::PendingScatter Dim0Shards::start_reduce_scatter(const std::vector<int64_t>& params,
                                                            const std::vector<at::Tensor>& full,
                                                            const DivideFactors& divide) const {
  torch::NoGradGuard no_grad;
  const int64_t world = comm_.world_size();
  PendingScatter pending;
  pending.params = params;
  int64_t block = 0;
  for (const int64_t i : params) {
    pending.offsets.push_back(block);
    block += chunk_[static_cast<size_t>(i)] * row_numel_[static_cast<size_t>(i)];
  }
  // Row block k of the input: every parameter's rows of rank k's chunk, at its offset.
  at::Tensor input = at::zeros({world, block}, parameters_.front().options());
  for (size_t j = 0; j < params.size(); ++j) {
    const auto i = static_cast<size_t>(params[j]);
    if (!full[i].defined()) continue;
    const at::Tensor rows = full[i].reshape({rows_[i], -1});
    const int64_t row_numel = rows.size(1);
    for (int64_t k = 0; k < world; ++k) {
      const int64_t first = k * chunk_[i];
      const int64_t n = std::clamp<int64_t>(rows_[i] - first, 0, chunk_[i]);
      if (n == 0) continue;
      input[k]
          .narrow(0, pending.offsets[j], n * row_numel)
          .copy_(rows.narrow(0, first, n).reshape(-1));
    }
  }
  divide.apply_before(input);
  pending.scatter = comm_.reduce_scatter_sum_async(input.view(-1));
  return pending;
}

std::vector<at::Tensor> Dim0Shards::chunks(const PendingScatter& pending,
                                           const at::Tensor& block) const {
  std::vector<at::Tensor> out;
  for (size_t j = 0; j < pending.params.size(); ++j) {
    const auto i = static_cast<size_t>(pending.params[j]);
    out.push_back(
        block.narrow(0, pending.offsets[j], chunk_[i] * row_numel_[i]).view(shard_shapes_[i]));
  }
  return out;
}

}  // namespace ddpbench::modes::zero
