// torch_version_compat.h — the one place where the libtorch C++ API differs between the releases
// ddpbench builds against (Debian's 1.13 and PyPI's 2.x). Everything else compiles unchanged;
// a new difference gets a small function here, with the releases it separates, not an #if at its
// call site.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/optim/optimizer.h>
#include <torch/version.h>

#include <optional>
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

// Autocast's switches: 1.13 has one pair of calls per device type (set_cpu_enabled,
// set_autocast_cpu_dtype; set_enabled, set_autocast_gpu_dtype for CUDA), 2.x one call taking the
// device type. CPU and CUDA only, the devices ddpbench trains on.
inline bool autocast_enabled(c10::DeviceType device) {
#if TORCH_VERSION_MAJOR >= 2
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled()
                                        : at::autocast::is_enabled();
#endif
}

inline at::ScalarType autocast_dtype(c10::DeviceType device) {
#if TORCH_VERSION_MAJOR >= 2
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                        : at::autocast::get_autocast_gpu_dtype();
#endif
}

inline void set_autocast(c10::DeviceType device, bool enabled, at::ScalarType dtype) {
#if TORCH_VERSION_MAJOR >= 2
  at::autocast::set_autocast_enabled(device, enabled);
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_cpu_enabled(enabled);
    at::autocast::set_autocast_cpu_dtype(dtype);
  } else {
    at::autocast::set_enabled(enabled);
    at::autocast::set_autocast_gpu_dtype(dtype);
  }
#endif
}

// What this release cannot do in mixed precision on `device`, or nothing: 1.13 autocasts the CPU
// to bfloat16 only, and has no CPU kernels for GradScaler's ops (measured:
// ../shared/probes/amp_probe.cpp), so float16 with its scaler needs a CUDA device there.
inline std::optional<std::string> amp_unsupported(c10::DeviceType device, at::ScalarType dtype) {
#if TORCH_VERSION_MAJOR < 2
  if (device == c10::DeviceType::CPU && dtype == at::kHalf) {
    return std::string(
        "libtorch 1.13 has no float16 autocast or GradScaler kernels on the CPU; use --amp bf16, "
        "a CUDA device, or a build against PyTorch 2.x (ci/build.sh --torch python)");
  }
#else
  (void)device;
  (void)dtype;
#endif
  return std::nullopt;
}

}  // namespace ddpbench::scenarios::compat
