// cifar10_binary.cpp — see cifar10_binary.h.
#include "data/cifar10_binary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>

#include "errors.h"

namespace ddpbench::data {
namespace fs = std::filesystem;

namespace {

void append_file(const fs::path& path, std::vector<uint8_t>& pixels, std::vector<int64_t>& labels) {
  if (!fs::is_regular_file(path)) {
    throw InputError(
        fmt::format("{} is not a regular file: --data-dir must hold the CIFAR-10 "
                    "binary batches themselves",
                    path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open for reading", path.string()));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.empty() || bytes.size() % kCifar10RecordBytes != 0) {
    throw InputError(fmt::format(
        "{}: size {} bytes is not a whole number of {}-byte CIFAR-10 records (truncated file, or "
        "not the binary version cifar-10-batches-bin?)",
        path.string(), bytes.size(), kCifar10RecordBytes));
  }
  const size_t records = bytes.size() / kCifar10RecordBytes;
  for (size_t r = 0; r < records; ++r) {
    const uint8_t* rec = bytes.data() + r * kCifar10RecordBytes;
    if (rec[0] > 9) {
      throw InputError(fmt::format("{}: record {} has label {}, expected 0..9 (corrupt file?)",
                                   path.string(), r, rec[0]));
    }
    labels.push_back(rec[0]);
    pixels.insert(pixels.end(), rec + 1, rec + kCifar10RecordBytes);
  }
}

}  // namespace

InMemoryImages load_cifar10_binary(const std::string& dir, Cifar10Split split) {
  if (!fs::is_directory(dir)) {
    throw InputError(fmt::format(
        "--data-dir {}: not a directory (point it at the extracted cifar-10-batches-bin folder)",
        dir));
  }
  std::vector<fs::path> files;
  std::vector<std::string> missing;  // a partial download trains on less, and must say so
  if (split == Cifar10Split::kTrain) {
    for (int i = 1; i <= 5; ++i) {
      const fs::path p = fs::path(dir) / fmt::format("data_batch_{}.bin", i);
      if (fs::exists(p)) {
        files.push_back(p);
      } else {
        missing.push_back(p.filename().string());
      }
    }
  } else if (fs::exists(fs::path(dir) / "test_batch.bin")) {
    files.push_back(fs::path(dir) / "test_batch.bin");
  }
  if (files.empty()) {
    throw InputError(fmt::format(
        "--data-dir {}: no {} found (expected the CIFAR-10 binary version, cifar-10-batches-bin)",
        dir, split == Cifar10Split::kTrain ? "data_batch_1..5.bin" : "test_batch.bin"));
  }
  std::vector<uint8_t> pixels;
  std::vector<int64_t> labels;
  for (const auto& f : files) append_file(f, pixels, labels);
  const auto n = labels.size();
  const std::string partial = missing.empty()
                                  ? ""
                                  : fmt::format("; only {} of the 5 training batches: {} missing",
                                                files.size(), fmt::join(missing, ", "));
  return InMemoryImages(
      std::move(pixels), std::move(labels), {3, 32, 32}, 10,
      fmt::format("CIFAR-10 {} ({} samples from {}{})",
                  split == Cifar10Split::kTrain ? "train" : "test", n, dir, partial));
}

}  // namespace ddpbench::data
