// comm_hook.h — what happens to a full bucket, like DDP's register_comm_hook: the default
// allreduce (average by world size), or fp16 / bf16 compression (cast, average, cast back), as
// torch.distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_hook / bf16_...
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <memory>
#include <string>

#include "comm/communicator.h"

namespace ddpbench::modes::ddp {

enum class CommHookKind { kAllreduce, kFp16Compress, kBf16Compress };
// Every hook, default first: --comm-hook's choices (requests/flag_choices.h) are their names.
inline constexpr std::array<CommHookKind, 3> kCommHookKinds = {
    CommHookKind::kAllreduce, CommHookKind::kFp16Compress, CommHookKind::kBf16Compress};

// Throws InputError for an unknown name ("allreduce", "fp16", "bf16").
CommHookKind parse_comm_hook(const std::string& name);
const char* comm_hook_name(CommHookKind kind);

// A launched bucket reduction. finish() waits and leaves the averaged gradients in `bucket`.
class PendingReduction {
 public:
  virtual ~PendingReduction() = default;
  virtual void finish() = 0;
  // Bytes this reduction put on the wire per rank (for bandwidth figures).
  virtual int64_t bytes() const = 0;
};

// Starts reducing `bucket` (a flat gradient buffer) across the communicator's ranks.
std::unique_ptr<PendingReduction> launch_comm_hook(CommHookKind kind, comm::Communicator& comm,
                                                   at::Tensor bucket);
// A reduction that sends nothing (the bucket fault): the bucket keeps this rank's values.
std::unique_ptr<PendingReduction> skipped_reduction();

}  // namespace ddpbench::modes::ddp
