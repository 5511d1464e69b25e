// image_source.cpp — see image_source.h.
#include "data/image_source.h"

#include <fmt/format.h>

#include <cstring>

#include "errors.h"

namespace ddpbench::data {

InMemoryImages::InMemoryImages(std::vector<uint8_t> pixels, std::vector<int64_t> labels,
                               ImageShape shape, int64_t num_classes, std::string description)
    : pixels_(std::move(pixels)),
      labels_(std::move(labels)),
      shape_(shape),
      num_classes_(num_classes),
      description_(std::move(description)) {
  if (static_cast<int64_t>(pixels_.size()) != size() * shape_.numel()) {
    throw InputError(fmt::format("{}: {} pixel bytes do not hold {} images of {} bytes",
                                 description_, pixels_.size(), size(), shape_.numel()));
  }
}

int64_t InMemoryImages::read(int64_t index, uint8_t* out) const {
  const auto offset = static_cast<size_t>(index * shape_.numel());
  std::memcpy(out, pixels_.data() + offset, static_cast<size_t>(shape_.numel()));
  return labels_[static_cast<size_t>(index)];
}

}  // namespace ddpbench::data
