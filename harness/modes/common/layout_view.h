// layout_view.h — a parameter-sized slice of a flat buffer (a DDP bucket, a ZeRO bucket or
// shard) viewed with the parameter's own strides, as PyTorch's Reducer builds its bucket views
// (initialize_bucket_views: as_strided for a dense parameter). A gradient or weight that lives in
// such a view keeps the parameter's memory layout — a channels_last convolution weight stays
// channels_last (MODEL.CHANNELS_LAST) — so kernels and reductions over it read memory in the
// order single-device training does, and the flat buffer still holds one dense block per
// parameter, reduced elementwise.
#pragma once

#include <ATen/core/Tensor.h>

namespace ddpbench::modes {

// `slice` (flat, like.numel() elements) as a tensor of like's sizes and, when `like` is dense
// but not contiguous, like's strides.
inline at::Tensor view_in_layout_of(const at::Tensor& slice, const at::Tensor& like) {
  if (like.is_contiguous() || !like.unsafeGetTensorImpl()->is_non_overlapping_and_dense()) {
    return slice.view(like.sizes());
  }
  return slice.as_strided(like.sizes(), like.strides(), slice.storage_offset());
}

}  // namespace ddpbench::modes
