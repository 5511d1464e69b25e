// image_source.h — raw labelled uint8 images (CHW), before any transform. Sources are either
// generated on demand (synthetic) or loaded whole into memory (CIFAR-10 binary, IDX).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::data {

struct ImageShape {
  int64_t channels = 0;
  int64_t height = 0;
  int64_t width = 0;
  int64_t numel() const { return channels * height * width; }
};

class ImageSource {
 public:
  virtual ~ImageSource() = default;
  virtual int64_t size() const = 0;
  virtual ImageShape shape() const = 0;
  virtual int64_t num_classes() const = 0;
  // Writes image `index` (uint8, CHW, shape().numel() bytes) into `out` and returns its label.
  virtual int64_t read(int64_t index, uint8_t* out) const = 0;
  virtual std::string describe() const = 0;
};

// Images held in memory, as produced by the file loaders.
class InMemoryImages : public ImageSource {
 public:
  InMemoryImages(std::vector<uint8_t> pixels, std::vector<int64_t> labels, ImageShape shape,
                 int64_t num_classes, std::string description);
  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  ImageShape shape() const override { return shape_; }
  int64_t num_classes() const override { return num_classes_; }
  int64_t read(int64_t index, uint8_t* out) const override;
  std::string describe() const override { return description_; }

 private:
  std::vector<uint8_t> pixels_;
  std::vector<int64_t> labels_;
  ImageShape shape_;
  int64_t num_classes_;
  std::string description_;
};

}  // namespace ddpbench::data
