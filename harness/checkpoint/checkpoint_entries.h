// checkpoint_entries.h — how a checkpoint's entries are read for --resume: each entry looked up,
// typed and, for a tensor, checked against what its record holds (dense, on the host, every byte
// its sizes reach stored, finite), and every problem refused in one line (InputError, exit 2)
// naming the file and the fix. The vocabulary of checkpoint.cpp and checkpoint_optimizer.cpp.
#pragma once

#include <ATen/core/Dict.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <string>

#include "checkpoint/checkpoint_file.h"

namespace ddpbench::checkpoint::io {

using Dict = c10::impl::GenericDict;

// What a damaged file's refusal ends with.
inline constexpr const char* kDamaged =
    "the file is truncated or damaged; pass the checkpoint as `ddpbench run --checkpoint-every "
    "N` wrote it";

// A dict from names to anything, as torch.save writes a state_dict.
Dict string_dict();
// "Float [64, 3, 7, 7]", as messages show a tensor's kind.
std::string tensor_kind(const at::Tensor& t);

// Throws InputError: "--resume PATH: WHY".
[[noreturn]] void refuse(const std::string& path, const std::string& why);
// `d`'s entry `key`, refused when missing (then it is no ddpbench checkpoint).
c10::IValue entry(const Dict& d, const char* key, const std::string& path);
int64_t int_entry(const Dict& d, const char* key, const std::string& path);
std::string string_entry(const Dict& d, const char* key, const std::string& path);

// `t` as `what` ("fc.weight", "the optimizer's exp_avg of fc.weight") must be a dense host tensor
// whose record holds every byte its sizes reach, and finite.
void check_stored(const TorchFile& file, const at::Tensor& t, const std::string& what,
                  const std::string& path);

}  // namespace ddpbench::checkpoint::io
