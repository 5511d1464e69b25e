// dataset_prefix.h — the first n samples of a dataset: the evaluation pass takes --eval-size
// samples of a held-out split (training/evaluation.h) without copying or reloading it.
#pragma once

#include <memory>

#include "data/dataset.h"

namespace ddpbench::data {

class DatasetPrefix : public Dataset {
 public:
  // Throws InputError unless 0 < n <= base->size(), naming `what` (e.g. "--eval-size").
  DatasetPrefix(std::shared_ptr<const Dataset> base, int64_t n, const char* what);
  int64_t size() const override { return n_; }
  Example get(int64_t index, int64_t epoch) const override { return base_->get(index, epoch); }
  std::string describe() const override;
  std::optional<int64_t> sequence_length(int64_t index) const override {
    return base_->sequence_length(index);
  }
  bool same_every_epoch() const override { return base_->same_every_epoch(); }

 private:
  std::shared_ptr<const Dataset> base_;
  int64_t n_;
};

}  // namespace ddpbench::data
