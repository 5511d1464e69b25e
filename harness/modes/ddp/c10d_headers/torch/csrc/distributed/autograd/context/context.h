// context.h — stands in for the header of this path that Debian's libtorch-dev 1.13 leaves out
// and c10d's reducer.hpp includes (only where the installed libtorch lacks it: see
// harness/CMakeLists.txt). reducer.hpp needs only two names from it: the GradCallback type of
// DistAutogradContext and ContextPtr, a shared_ptr, whose layout does not depend on the pointee.
// ddpbench never uses distributed autograd; the Reducer's own object code, compiled against the
// real header, is what runs.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>

namespace torch::distributed::autograd {

class DistAutogradContext {
 public:
  using GradCallback = std::function<bool(at::Tensor&)>;
};
using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace torch::distributed::autograd
