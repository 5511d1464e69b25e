// zip_directory.h — the uncompressed size and CRC-32 of every entry of a zip file (a torch.save
// file is one), read from its central directory without inflating anything. A checkpoint's
// records are bounded by these sizes before libtorch's reader allocates and inflates them (a
// deflated entry can claim a thousand times the file's size), and each record read is checked
// against its CRC-32, which libtorch 1.13's reader does not check.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ddpbench::checkpoint {

struct ZipEntry {
  std::string name;
  uint64_t size = 0;   // uncompressed bytes, as the central directory states them
  uint32_t crc32 = 0;  // of the uncompressed bytes
};

// The CRC-32 (zip's, zlib's) of `n` bytes at `data`.
uint32_t zip_crc32(const void* data, uint64_t n);

// The entries of the zip archive `bytes`, in directory order (zip64 sizes included). Throws
// std::runtime_error naming what is malformed when `bytes` holds no readable zip directory.
std::vector<ZipEntry> zip_entries(const std::vector<char>& bytes);

}  // namespace ddpbench::checkpoint
