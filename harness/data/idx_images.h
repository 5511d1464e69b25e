// idx_images.h — loader for the IDX format of MNIST / Fashion-MNIST (optionally gzip-compressed,
// as in /usr/share/datasets/fashion-mnist): big-endian magic 0x00000803 + 3 dims for images,
// 0x00000801 + 1 dim for labels.
#pragma once

#include <string>

#include "data/image_source.h"

namespace ddpbench::data {

// Throws InputError naming the file for a missing file, a wrong magic number, truncated or
// trailing data, mismatched counts, or a label outside [0, num_classes).
InMemoryImages load_idx_images(const std::string& images_path, const std::string& labels_path,
                               int64_t num_classes = 10);

}  // namespace ddpbench::data
