// ddp_options.h — what a DDP run asks of its engine: which engine (--ddp-impl) and the options
// PyTorch's DistributedDataParallel takes (buckets, comm hook, buffers, unused parameters, static
// graph, gradient_as_bucket_view), plus --resume's buckets and the bucket fault.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "modes/ddp/reducer.h"

namespace ddpbench::modes::ddp {

enum class DdpImpl { kBucketed, kNaive, kC10d };
// Every engine, default first: --ddp-impl's choices (requests/flag_choices.h) are their names.
inline constexpr std::array<DdpImpl, 3> kDdpImpls = {DdpImpl::kBucketed, DdpImpl::kNaive,
                                                     DdpImpl::kC10d};

// "bucketed", "naive", "c10d".
const char* ddp_impl_name(DdpImpl impl);
// The engine named `name` (one of ddp_impl_name's); throws InputError for another.
DdpImpl parse_ddp_impl(const std::string& name);

struct DdpOptions {
  DdpImpl impl = DdpImpl::kBucketed;
  ReducerOptions reducer;
  bool broadcast_buffers = true;
  // c10d only (resolve_run refuses them with the other engines).
  bool static_graph = false;
  bool gradient_as_bucket_view = false;
  // --resume: the gradient buckets the checkpoint recorded (CheckpointMeta::ddp_buckets), which the
  // engine starts from instead of its first-iteration buckets; empty: the engine's own.
  std::vector<std::vector<int64_t>> resume_buckets;
  // The run injects the bucket fault (skip_last_reduction may be set): c10d's engine then reduces
  // through a comm hook that can skip its last bucket (C10dEngineOptions::bucket_fault).
  bool bucket_fault = false;
};

}  // namespace ddpbench::modes::ddp
