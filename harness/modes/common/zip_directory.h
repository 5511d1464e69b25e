// zip_directory.h — the uncompressed size of every entry of a zip file (a torch.save file is
// one), read from its central directory without inflating anything. A checkpoint's records are
// bounded by these sizes before libtorch's reader allocates and inflates them: a deflated entry
// can claim a thousand times the file's size.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ddpbench::modes {

struct ZipEntry {
  std::string name;
  uint64_t size = 0;  // uncompressed bytes, as the central directory states them
};

// The entries of the zip archive `bytes`, in directory order (zip64 sizes included). Throws
// std::runtime_error naming what is malformed when `bytes` holds no readable zip directory.
std::vector<ZipEntry> zip_entries(const std::vector<char>& bytes);

}  // namespace ddpbench::modes
