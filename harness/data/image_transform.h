// image_transform.h — per-sample augmentation keyed by (seed, epoch, sample index), the torchvision
// pipeline RandomCrop(size, padding) -> RandomHorizontalFlip -> ToTensor -> Normalize, applied to
// one uint8 CHW image. Keyed randomness (Note [Keyed randomness] in docs/ARCHITECTURE.md) makes a
// sample's augmentation the same in every mode and on every rank.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "data/image_source.h"

namespace ddpbench::data {

struct ImageTransformOptions {
  int64_t crop_padding = 0;  // RandomCrop(H, padding=p) with zero fill; 0 disables the crop
  bool random_flip = false;  // RandomHorizontalFlip(p=0.5)
  std::vector<float> mean;   // Normalize; empty = no normalisation (just /255)
  std::vector<float> stddev;
  int64_t seed = 0;  // scenario seed: keys the augmentation stream
};

// The random choices for one sample, exposed so tests can check them independently.
struct AugmentDraw {
  int64_t offset_y = 0;  // top-left of the crop window inside the padded image
  int64_t offset_x = 0;
  bool flip = false;
};

AugmentDraw draw_augmentation(const ImageTransformOptions& options, int64_t epoch, int64_t index);

// Returns float32 [C, H, W].
at::Tensor transform_image(const uint8_t* chw, ImageShape shape,
                           const ImageTransformOptions& options, int64_t epoch, int64_t index);

}  // namespace ddpbench::data
