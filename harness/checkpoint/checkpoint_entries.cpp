// checkpoint_entries.cpp — see checkpoint_entries.h.
#include "checkpoint/checkpoint_entries.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>

#include "errors.h"
#include "quoted_input.h"

namespace ddpbench::checkpoint::io {

Dict string_dict() { return Dict(c10::StringType::get(), c10::AnyType::get()); }

// "Float [64, 3, 7, 7]", as messages show a tensor's kind.
std::string tensor_kind(const at::Tensor& t) {
  return fmt::format("{} [{}]", c10::toString(t.scalar_type()), fmt::join(t.sizes(), ", "));
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw InputError(fmt::format("--resume {}: {}", quoted_input(path), why));
}

c10::IValue entry(const Dict& d, const char* key, const std::string& path) {
  const auto it = d.find(key);
  if (it == d.end()) {
    refuse(path, fmt::format("no \"{}\" entry, so it is no ddpbench checkpoint; pass a file "
                             "written by `ddpbench run --checkpoint-every N`",
                             key));
  }
  return it->value();
}

// `t` as `what` ("fc.weight", "the optimizer's exp_avg of fc.weight") must be a dense host tensor
// whose record holds every byte its sizes reach (the unpickler sized its storage by data.pkl's
// word, not by the record), and finite (training from NaN fails steps later, as a worker crash).
void check_stored(const TorchFile& file, const at::Tensor& t, const std::string& what,
                  const std::string& path) {
  if (t.layout() != at::kStrided || !t.device().is_cpu()) {
    refuse(path, fmt::format("{} is no dense tensor: {}", what, kDamaged));
  }
  const uint64_t item = t.element_size();
  const uint64_t stored = t.storage().nbytes();
  uint64_t extent = 0;  // elements from the storage's start to past the last one reached
  bool overflow = t.storage_offset() < 0;
  if (t.numel() > 0 && !overflow) {
    extent = static_cast<uint64_t>(t.storage_offset()) + 1;
    for (int64_t d = 0; d < t.dim(); ++d) {
      uint64_t reach = 0;
      overflow = overflow || t.stride(d) < 0 ||
                 __builtin_mul_overflow(static_cast<uint64_t>(t.stride(d)),
                                        static_cast<uint64_t>(t.size(d) - 1), &reach) ||
                 __builtin_add_overflow(extent, reach, &extent);
    }
  }
  uint64_t needed = 0;
  overflow = overflow || __builtin_mul_overflow(extent, item, &needed);
  const uint64_t record = file.record_bytes(t);
  if (overflow || needed > stored || record != stored) {
    refuse(path,
           fmt::format("the record of {} holds {} bytes, and its {} x {} bytes need {}: {}", what,
                       record, tensor_kind(t), item,
                       overflow ? std::string("more") : std::to_string(std::max(needed, stored)),
                       kDamaged));
  }
  if (t.is_floating_point() && !at::isfinite(t).all().item<bool>()) {
    refuse(path, fmt::format("{} holds NaN or infinite values: pass a checkpoint saved before the "
                             "training diverged (an earlier checkpoint_<mode>_step<N>.pt)",
                             what));
  }
}

int64_t int_entry(const Dict& d, const char* key, const std::string& path) {
  const c10::IValue v = entry(d, key, path);
  if (!v.isInt()) refuse(path, fmt::format("\"{}\" is not an integer", key));
  return v.toInt();
}

std::string string_entry(const Dict& d, const char* key, const std::string& path) {
  const c10::IValue v = entry(d, key, path);
  if (!v.isString()) refuse(path, fmt::format("\"{}\" is not a string", key));
  return v.toStringRef();
}

}  // namespace ddpbench::checkpoint::io
