// step_batches.cpp — see step_batches.h.
#include "modes/common/step_batches.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <utility>

#include "modes/common/micro_batches.h"
#include "scenarios/memory_format.h"

namespace ddpbench::modes {
namespace {

// A piece of at least this many samples is worth a thread of its own.
constexpr int64_t kMinSamplesPerChunk = 16;

// Samples [begin, end) of micro-batch `micro` of shard `shard`.
struct Chunk {
  size_t shard;
  size_t micro;
  size_t begin;
  size_t end;
};

}  // namespace

StepBatches::StepBatches(const data::Dataset& dataset, const data::GlobalBatchPlan& plan,
                         const runtime::ExecutionContext& context, int64_t threads,
                         const data::DeviceData* on_device, c10::MemoryFormat input_format)
    : dataset_(dataset),
      context_(context),
      cursor_(plan),
      threads_(std::max<int64_t>(1, threads)),
      on_device_(on_device),
      input_format_(input_format) {}

data::Batch StepBatches::placed(data::Batch batch, at::Device device) const {
  batch = context_.place_batch(std::move(batch), device);
  batch.inputs = scenarios::in_memory_format(batch.inputs, input_format_);
  return batch;
}

std::vector<std::vector<data::Batch>> StepBatches::load(const GradientPath& path, int64_t step,
                                                        int64_t micro_steps) {
  data::StepPosition pos;
  const data::EpochPlan& epoch = cursor_.seek(step, pos);
  const std::vector<std::vector<int64_t>> samples = path.step_shards(epoch, pos.step_in_epoch);
  const auto micro_count = static_cast<size_t>(micro_steps);
  if (samples.empty()) return std::vector<std::vector<data::Batch>>(micro_count);
  const int64_t pad_to = data::padded_length(dataset_, epoch.global_batch(pos.step_in_epoch));

  // pieces[shard][micro]: the micro-batches' samples (split here, on the calling thread, so that
  // an accumulation count that does not divide is named once).
  std::vector<std::vector<std::vector<int64_t>>> pieces;
  int64_t total = 0;
  for (const std::vector<int64_t>& shard : samples) {
    pieces.push_back(micro_steps == 1 ? std::vector<std::vector<int64_t>>{shard}
                                      : split_micro_batches(shard, micro_steps, path.who(), step));
    total += static_cast<int64_t>(shard.size());
  }
  if (on_device_) {
    // One gather per micro-batch on the device: collate's bytes (data/device_data.h).
    std::vector<std::vector<data::Batch>> micro(micro_count,
                                                std::vector<data::Batch>(samples.size()));
    for (size_t s = 0; s < pieces.size(); ++s) {
      for (size_t m = 0; m < micro_count; ++m) {
        micro[m][s] = placed(on_device_->batch(pieces[s][m], pos.epoch, pad_to),
                             path.shard_device(static_cast<int64_t>(s), context_));
      }
    }
    return micro;
  }
  // Workers: one per shard at least (DP's replicas load at once, each placing on its device),
  // up to one per thread while chunks keep kMinSamplesPerChunk samples.
  const auto shards = static_cast<int64_t>(samples.size());
  const int64_t workers =
      std::max(shards, std::min(threads_, std::max<int64_t>(1, total / kMinSamplesPerChunk)));
  const auto chunk_size =
      static_cast<size_t>(std::max<int64_t>(kMinSamplesPerChunk, (total + workers - 1) / workers));
  std::vector<Chunk> chunks;
  for (size_t s = 0; s < pieces.size(); ++s) {
    for (size_t m = 0; m < pieces[s].size(); ++m) {
      const size_t n = pieces[s][m].size();
      for (size_t b = 0; b == 0 || b < n; b += chunk_size) {
        chunks.push_back({s, m, b, std::min(n, b + chunk_size)});
      }
    }
  }
  if (!pool_ || pool_->size() != workers) pool_ = std::make_unique<runtime::WorkerPool>(workers);

  // Every sample is independent (keyed randomness, no shared state: every dataset is thread-safe
  // by contract), so the chunks collate on any thread, and stacking them in order gives the
  // bytes one thread would: at::cat of stacked chunks is the stack of all.
  std::vector<data::Batch> collated(chunks.size());
  pool_->run([&](int64_t w) {
    for (size_t c = static_cast<size_t>(w); c < chunks.size(); c += static_cast<size_t>(workers)) {
      const Chunk& k = chunks[c];
      const std::vector<int64_t>& piece = pieces[k.shard][k.micro];
      const std::vector<int64_t> part(piece.begin() + static_cast<std::ptrdiff_t>(k.begin),
                                      piece.begin() + static_cast<std::ptrdiff_t>(k.end));
      collated[c] = data::collate(dataset_, part, pos.epoch, pad_to);
    }
  });

  std::vector<std::vector<data::Batch>> micro(micro_count,
                                              std::vector<data::Batch>(samples.size()));
  pool_->run([&](int64_t w) {
    for (int64_t s = w; s < shards; s += workers) {
      for (size_t m = 0; m < micro_count; ++m) {
        std::vector<at::Tensor> inputs;
        std::vector<at::Tensor> targets;
        for (size_t c = 0; c < chunks.size(); ++c) {
          if (chunks[c].shard != static_cast<size_t>(s) || chunks[c].micro != m) continue;
          inputs.push_back(std::move(collated[c].inputs));
          targets.push_back(std::move(collated[c].targets));
        }
        data::Batch batch = inputs.size() == 1
                                ? data::Batch{std::move(inputs[0]), std::move(targets[0])}
                                : data::Batch{at::cat(inputs), at::cat(targets)};
        micro[m][static_cast<size_t>(s)] = placed(std::move(batch), path.shard_device(s, context_));
      }
    }
  });
  return micro;
}

}  // namespace ddpbench::modes
