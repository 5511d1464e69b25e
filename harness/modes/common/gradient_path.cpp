// gradient_path.cpp — see gradient_path.h. Only the default of eval_forward lives here.
#include "modes/common/gradient_path.h"

#include <stdexcept>

namespace ddpbench::modes {

// A path that does not evaluate (a test's stand-in) says so instead of running something else.
at::Tensor GradientPath::eval_forward(const at::Tensor& /*inputs*/) {
  throw std::logic_error(who() + " has no evaluation forward");
}

}  // namespace ddpbench::modes
