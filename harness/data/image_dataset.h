// image_dataset.h — an image classification dataset: an ImageSource plus the keyed transform.
#pragma once

#include <memory>

#include "data/dataset.h"
#include "data/image_source.h"
#include "data/image_transform.h"

namespace ddpbench::data {

class ImageDataset : public Dataset {
 public:
  ImageDataset(std::shared_ptr<const ImageSource> source, ImageTransformOptions transform);
  int64_t size() const override { return source_->size(); }
  Example get(int64_t index, int64_t epoch) const override;
  std::string describe() const override;
  const ImageSource& source() const { return *source_; }
  const ImageTransformOptions& transform() const { return transform_; }

 private:
  std::shared_ptr<const ImageSource> source_;
  ImageTransformOptions transform_;
};

}  // namespace ddpbench::data
