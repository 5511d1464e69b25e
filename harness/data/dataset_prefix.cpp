// dataset_prefix.cpp — see dataset_prefix.h.
#include "data/dataset_prefix.h"

#include <fmt/format.h>

#include "errors.h"

namespace ddpbench::data {

DatasetPrefix::DatasetPrefix(std::shared_ptr<const Dataset> base, int64_t n, const char* what)
    : base_(std::move(base)), n_(n) {
  if (n_ <= 0 || n_ > base_->size()) {
    throw InputError(fmt::format("{} {} is outside 1..{}: {} holds {} samples", what, n,
                                 base_->size(), base_->describe(), base_->size()));
  }
}

std::string DatasetPrefix::describe() const {
  if (n_ == base_->size()) return base_->describe();
  return fmt::format("first {} of {}", n_, base_->describe());
}

}  // namespace ddpbench::data
