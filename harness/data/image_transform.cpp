// image_transform.cpp — see image_transform.h. Written as one pass over the pixels instead of
// tensor ops: per-sample ATen dispatch would cost more than the arithmetic for 32x32 images.
#include "data/image_transform.h"

#include <ATen/ATen.h>

#include "data/keyed_rng.h"

namespace ddpbench::data {

AugmentDraw draw_augmentation(const ImageTransformOptions& options, int64_t epoch, int64_t index) {
  KeyedRng rng(static_cast<uint64_t>(options.seed), RngStream::kAugment,
               {static_cast<uint64_t>(epoch), static_cast<uint64_t>(index)});
  AugmentDraw d;
  if (options.crop_padding > 0) {
    const auto span = static_cast<uint64_t>(2 * options.crop_padding + 1);
    d.offset_y = static_cast<int64_t>(rng.uniform_int(span));
    d.offset_x = static_cast<int64_t>(rng.uniform_int(span));
  } else {
    rng.next_u64();
    rng.next_u64();
  }
  d.flip = options.random_flip && (rng.next_u64() >> 63) != 0;
  return d;
}

at::Tensor transform_image(const uint8_t* chw, ImageShape shape,
                           const ImageTransformOptions& options, int64_t epoch, int64_t index) {
  const AugmentDraw d = draw_augmentation(options, epoch, index);
  at::Tensor out = at::empty({shape.channels, shape.height, shape.width}, at::kFloat);
  float* o = out.data_ptr<float>();
  const int64_t pad = options.crop_padding;
  const bool normalize = !options.mean.empty();
  for (int64_t c = 0; c < shape.channels; ++c) {
    const float mean = normalize ? options.mean[static_cast<size_t>(c)] : 0.0F;
    const float stddev = normalize ? options.stddev[static_cast<size_t>(c)] : 1.0F;
    const uint8_t* plane = chw + c * shape.height * shape.width;
    for (int64_t y = 0; y < shape.height; ++y) {
      // Row y of the crop is row (y + offset_y - pad) of the original; outside is the zero fill.
      const int64_t sy = y + d.offset_y - pad;
      for (int64_t x = 0; x < shape.width; ++x) {
        // The flip mirrors the cropped image: column x reads cropped column W-1-x.
        const int64_t cx = d.flip ? shape.width - 1 - x : x;
        const int64_t sx = cx + d.offset_x - pad;
        const bool inside = sy >= 0 && sy < shape.height && sx >= 0 && sx < shape.width;
        const float v = inside ? static_cast<float>(plane[sy * shape.width + sx]) / 255.0F : 0.0F;
        *o++ = (v - mean) / stddev;
      }
    }
  }
  return out;
}

}  // namespace ddpbench::data
