// idx_images.cpp — see idx_images.h. zlib's gzread also reads uncompressed files transparently.
#include "data/idx_images.h"

#include <fmt/format.h>
#include <zlib.h>

#include <filesystem>
#include <memory>

#include "errors.h"

namespace ddpbench::data {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;

std::vector<uint8_t> read_all(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw InputError(fmt::format("{}: file not found", path));
  }
  if (!std::filesystem::is_regular_file(path)) {
    throw InputError(
        fmt::format("{} is not a regular file: --data-dir must hold the IDX files "
                    "themselves",
                    path));
  }
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  if (!f) throw InputError(fmt::format("{}: cannot open for reading", path));
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  while (true) {
    const int n = gzread(f.get(), buf, sizeof(buf));
    if (n < 0) {
      int errnum = 0;
      throw InputError(
          fmt::format("{}: corrupt gzip stream ({})", path, gzerror(f.get(), &errnum)));
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  return out;
}

uint32_t be32(const std::vector<uint8_t>& b, size_t off) {
  return (uint32_t{b[off]} << 24) | (uint32_t{b[off + 1]} << 16) | (uint32_t{b[off + 2]} << 8) |
         uint32_t{b[off + 3]};
}

// Checks magic and payload size; returns the dims.
std::vector<uint32_t> parse_header(const std::vector<uint8_t>& bytes, uint32_t magic, size_t ndims,
                                   const std::string& path) {
  const size_t header = 4 + 4 * ndims;
  if (bytes.size() < header) {
    throw InputError(fmt::format("{}: {} bytes is shorter than the IDX header (truncated?)", path,
                                 bytes.size()));
  }
  if (be32(bytes, 0) != magic) {
    throw InputError(
        fmt::format("{}: magic number 0x{:08x}, expected 0x{:08x} (not an IDX {} file)", path,
                    be32(bytes, 0), magic, magic == kImagesMagic ? "images" : "labels"));
  }
  std::vector<uint32_t> dims;
  size_t payload = 1;
  for (size_t i = 0; i < ndims; ++i) {
    dims.push_back(be32(bytes, 4 + 4 * i));
    // Sizes from a file are not trusted: 4194304 x 2097152 x 2097152 wraps to 0 in 64 bits.
    if (__builtin_mul_overflow(payload, size_t{dims.back()}, &payload)) {
      throw InputError(
          fmt::format("{}: the header's sizes multiply past 2^64 bytes (corrupt "
                      "header?)",
                      path));
    }
  }
  if (bytes.size() - header != payload) {
    throw InputError(fmt::format("{}: payload is {} bytes but the header promises {} ({})", path,
                                 bytes.size() - header, payload,
                                 bytes.size() - header < payload ? "truncated" : "trailing data"));
  }
  return dims;
}

}  // namespace

InMemoryImages load_idx_images(const std::string& images_path, const std::string& labels_path,
                               int64_t num_classes) {
  const std::vector<uint8_t> img = read_all(images_path);
  const std::vector<uint8_t> lab = read_all(labels_path);
  const auto idims = parse_header(img, kImagesMagic, 3, images_path);
  const auto ldims = parse_header(lab, kLabelsMagic, 1, labels_path);
  if (idims[0] != ldims[0]) {
    throw InputError(fmt::format("{} holds {} images but {} holds {} labels", images_path, idims[0],
                                 labels_path, ldims[0]));
  }
  std::vector<int64_t> labels;
  labels.reserve(ldims[0]);
  for (size_t i = 0; i < ldims[0]; ++i) {
    const uint8_t l = lab[8 + i];
    if (l >= num_classes) {
      throw InputError(fmt::format("{}: label {} at index {} is outside 0..{}", labels_path, l, i,
                                   num_classes - 1));
    }
    labels.push_back(l);
  }
  std::vector<uint8_t> pixels(img.begin() + 16, img.end());
  const ImageShape shape{1, idims[1], idims[2]};
  return InMemoryImages(
      std::move(pixels), std::move(labels), shape, num_classes,
      fmt::format("IDX {} ({} samples, 1x{}x{})", images_path, idims[0], idims[1], idims[2]));
}

}  // namespace ddpbench::data
