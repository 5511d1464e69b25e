// plain_yaml.h — reads a scenario file as plain YAML: one document of mappings and scalars. What a
// scenario file never needs is refused before any node is built, each with the file and line:
// anchors and aliases (ten levels of ten aliases, a 939-byte "billion laughs", made the key walk
// visit 10^10 nodes while memory grew without end), tags (`!foo` was silently dropped), a second
// document (silently ignored), and files far larger than any scenario.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace ddpbench::scenarios {

// Far above a complete scenario file (`ddpbench list --yaml` writes about 3 KB).
inline constexpr size_t kMaxScenarioFileBytes = size_t{1} << 20;

// The document of `path`, which exists and is a regular file; `flag` ("--config") starts each
// error line. Throws InputError for unreadable, oversized or non-plain files and syntax errors.
YAML::Node load_plain_yaml(const std::string& path, const std::string& flag);

}  // namespace ddpbench::scenarios
