// torch_version_compat.h — the one place where the libtorch C++ API differs between the releases
// ddpbench builds against (Debian's 1.13 and PyPI's 2.x). Everything else compiles unchanged;
// a new difference gets a small function here, with the releases it separates, not an #if at its
// call site.
#pragma once

#include <torch/optim/optimizer.h>

#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace ddpbench::scenarios::compat {

// torch::optim::Optimizer keys its per-parameter state by the parameter's TensorImpl: 1.13 keys by
// that pointer printed to a string, 2.x by the pointer itself. The key type is read off the
// optimizer's state map, so no version number is compared.
using OptimizerStateKey = typename std::remove_reference_t<
    decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

// A template so that only the branch of this release is compiled (if constexpr discards the
// other only in a template).
template <typename Key = OptimizerStateKey>
Key optimizer_state_key(const at::Tensor& parameter) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream s;
    s << parameter.unsafeGetTensorImpl();
    return s.str();
  } else {
    return static_cast<Key>(parameter.unsafeGetTensorImpl());
  }
}

}  // namespace ddpbench::scenarios::compat
