// step_batches.h — a step's batches for a mode: the samples its path asks for, collated on several
// threads and placed on the shards' devices. The data path is common to every mode by design.
#pragma once

#include <c10/core/MemoryFormat.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "data/batch_plan.h"
#include "data/dataset.h"
#include "data/device_data.h"
#include "modes/common/gradient_path.h"
#include "runtime/execution_context.h"
#include "runtime/worker_pool.h"

namespace ddpbench::modes {

class StepBatches {
 public:
  // `threads`: how many threads collate (the process's intra-op count: idle while a step loads).
  // `on_device`: the dataset's device form, which then makes every batch (null: the host
  // collates); not owned. `input_format`: the memory format image inputs take once placed
  // (MODEL.CHANNELS_LAST, scenarios/memory_format.h).
  StepBatches(const data::Dataset& dataset, const data::GlobalBatchPlan& plan,
              const runtime::ExecutionContext& context, int64_t threads,
              const data::DeviceData* on_device = nullptr,
              c10::MemoryFormat input_format = c10::MemoryFormat::Contiguous);

  // Result [micro-step][shard]: each of `path`'s shards of run-global `step` cut into
  // `micro_steps` micro-batches (one, without accumulation), on the shard's device. Sequences are
  // padded to the longest of the step's global batch, whatever the mode loads, so every mode sees
  // the same padded samples (data/dataset.h: padded_length). A rank out of batches (Join) gets
  // empty batches.
  std::vector<std::vector<data::Batch>> load(const GradientPath& path, int64_t step,
                                             int64_t micro_steps);

 private:
  const data::Dataset& dataset_;
  const runtime::ExecutionContext& context_;
  data::PlanCursor cursor_;
  int64_t threads_;
  std::unique_ptr<runtime::WorkerPool> pool_;  // made at the first step, for its worker count
  // --data-on-device: the dataset on the context's device (null: collated on the host).
  const data::DeviceData* on_device_;
  c10::MemoryFormat input_format_;
  // `batch` on `device` in the input format.
  data::Batch placed(data::Batch batch, at::Device device) const;
};

}  // namespace ddpbench::modes
