// content_hash.h — SHA-256 of a file's bytes, as `sha256sum` prints it: how a report names the
// model file a run trained (`--model`), so that the gate can refuse to compare runs of different
// files and a user can check which file a report means.
#pragma once

#include <string>
#include <string_view>

namespace ddpbench::scenarios {

// 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace ddpbench::scenarios
