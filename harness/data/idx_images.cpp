// idx_images.cpp — see idx_images.h. zlib's gzread also reads uncompressed files transparently.
#include "data/idx_images.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "errors.h"

namespace ddpbench::data {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;

// An IDX file larger than this is not a dataset ddpbench holds in memory (Fashion-MNIST's
// training images are 47 MB).
constexpr size_t kMaxPayloadBytes = size_t{1} << 31;

using GzFile = std::unique_ptr<gzFile_s, int (*)(gzFile)>;

GzFile open_gz(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw InputError(fmt::format("{}: file not found", path));
  }
  if (!std::filesystem::is_regular_file(path)) {
    throw InputError(
        fmt::format("{} is not a regular file: --data-dir must hold the IDX files "
                    "themselves",
                    path));
  }
  GzFile f(gzopen(path.c_str(), "rb"), gzclose);
  if (!f) throw InputError(fmt::format("{}: cannot open for reading", path));
  return f;
}

// Appends up to `want` decompressed bytes to `out`; fewer only at the end of the stream.
void read_up_to(gzFile f, size_t want, std::vector<uint8_t>& out, const std::string& path) {
  uint8_t buf[1 << 16];
  while (want > 0) {
    const int n = gzread(f, buf, static_cast<unsigned>(std::min(sizeof(buf), want)));
    if (n < 0) {
      int errnum = 0;
      throw InputError(fmt::format("{}: corrupt gzip stream ({})", path, gzerror(f, &errnum)));
    }
    if (n == 0) return;
    out.insert(out.end(), buf, buf + n);
    want -= static_cast<size_t>(n);
  }
}

uint32_t be32(const std::vector<uint8_t>& b, size_t off) {
  return (uint32_t{b[off]} << 24) | (uint32_t{b[off + 1]} << 16) | (uint32_t{b[off + 2]} << 8) |
         uint32_t{b[off + 3]};
}

struct IdxFile {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> payload;
};

// Reads the header, checks magic and sizes, then decompresses exactly the payload the header
// promises plus one byte: a small .gz that inflates to gigabytes of trailing zeros is refused
// after that byte, not after holding them all in memory (it took 2.2 GB, or ended in bad_alloc).
IdxFile read_idx(const std::string& path, uint32_t magic, size_t ndims) {
  GzFile f = open_gz(path);
  const size_t header = 4 + 4 * ndims;
  std::vector<uint8_t> head;
  read_up_to(f.get(), header, head, path);
  if (head.size() < header) {
    throw InputError(
        fmt::format("{}: {} bytes is shorter than the IDX header (truncated?)", path, head.size()));
  }
  if (be32(head, 0) != magic) {
    throw InputError(
        fmt::format("{}: magic number 0x{:08x}, expected 0x{:08x} (not an IDX {} file)", path,
                    be32(head, 0), magic, magic == kImagesMagic ? "images" : "labels"));
  }
  IdxFile idx;
  size_t payload = 1;
  for (size_t i = 0; i < ndims; ++i) {
    idx.dims.push_back(be32(head, 4 + 4 * i));
    // Sizes from a file are not trusted: 4194304 x 2097152 x 2097152 wraps to 0 in 64 bits.
    if (__builtin_mul_overflow(payload, size_t{idx.dims.back()}, &payload)) {
      throw InputError(
          fmt::format("{}: the header's sizes multiply past 2^64 bytes (corrupt "
                      "header?)",
                      path));
    }
  }
  if (payload > kMaxPayloadBytes) {
    throw InputError(fmt::format(
        "{}: the header promises {} bytes, more than the {} ddpbench loads (corrupt header?)", path,
        payload, kMaxPayloadBytes));
  }
  read_up_to(f.get(), payload + 1, idx.payload, path);
  if (idx.payload.size() < payload) {
    throw InputError(fmt::format("{}: payload is {} bytes but the header promises {} (truncated)",
                                 path, idx.payload.size(), payload));
  }
  if (idx.payload.size() > payload) {
    throw InputError(fmt::format(
        "{}: the data runs past the {} bytes the header promises (trailing data)", path, payload));
  }
  return idx;
}

}  // namespace

InMemoryImages load_idx_images(const std::string& images_path, const std::string& labels_path,
                               int64_t num_classes) {
  IdxFile img = read_idx(images_path, kImagesMagic, 3);
  const IdxFile lab = read_idx(labels_path, kLabelsMagic, 1);
  const std::vector<uint32_t>& idims = img.dims;
  const std::vector<uint32_t>& ldims = lab.dims;
  if (idims[0] != ldims[0]) {
    throw InputError(fmt::format("{} holds {} images but {} holds {} labels", images_path, idims[0],
                                 labels_path, ldims[0]));
  }
  std::vector<int64_t> labels;
  labels.reserve(ldims[0]);
  for (size_t i = 0; i < ldims[0]; ++i) {
    const uint8_t l = lab.payload[i];
    if (l >= num_classes) {
      throw InputError(fmt::format("{}: label {} at index {} is outside 0..{}", labels_path, l, i,
                                   num_classes - 1));
    }
    labels.push_back(l);
  }
  std::vector<uint8_t> pixels = std::move(img.payload);
  const ImageShape shape{1, idims[1], idims[2]};
  return InMemoryImages(
      std::move(pixels), std::move(labels), shape, num_classes,
      fmt::format("IDX {} ({} samples, 1x{}x{})", images_path, idims[0], idims[1], idims[2]));
}

}  // namespace ddpbench::data
