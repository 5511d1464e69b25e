// zip_directory.cpp — see zip_directory.h. The layout is PKWARE's APPNOTE: the end-of-central-
// directory record (and, for zip64, its locator and the zip64 record) at the file's end, then one
// central directory header per entry. It finds the end record as miniz (libtorch's reader) does,
// searching backwards from the end, so both read the same directory.
#include "checkpoint/zip_directory.h"

#include <zlib.h>

#include <algorithm>
#include <stdexcept>

namespace ddpbench::checkpoint {
namespace {

constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr size_t kEndSize = 22;
constexpr size_t kZip64LocatorSize = 20;
constexpr size_t kZip64EndSize = 56;
constexpr size_t kCentralSize = 46;
constexpr size_t kMaxComment = 0xffff;
constexpr uint16_t kZip64ExtraId = 0x0001;

[[noreturn]] void malformed_zip(const std::string& what) {
  throw std::runtime_error("not a zip archive: " + what);
}

// Little-endian fields at `at`, checked against the end of `bytes`.
class ZipReader {
 public:
  explicit ZipReader(const std::vector<char>& bytes) : bytes_(bytes) {}

  uint64_t le(uint64_t at, size_t width) const {
    if (at > bytes_.size() || width > bytes_.size() - at)
      malformed_zip("a field past the file's end");
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) {
      v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes_[at + i])) << (8 * i);
    }
    return v;
  }
  uint32_t u16(uint64_t at) const { return static_cast<uint32_t>(le(at, 2)); }
  uint32_t u32(uint64_t at) const { return static_cast<uint32_t>(le(at, 4)); }
  uint64_t u64(uint64_t at) const { return le(at, 8); }
  std::string text(uint64_t at, size_t n) const {
    le(at, 0);
    if (n > bytes_.size() - at) malformed_zip("a name past the file's end");
    return {bytes_.data() + at, n};
  }
  size_t size() const { return bytes_.size(); }

 private:
  const std::vector<char>& bytes_;
};

struct ZipDirectory {
  uint64_t entries = 0;
  uint64_t offset = 0;
};

ZipDirectory find_directory(const ZipReader& r) {
  if (r.size() < kEndSize) malformed_zip("shorter than its end record");
  const uint64_t lowest = r.size() - kEndSize - std::min(r.size() - kEndSize, kMaxComment);
  for (uint64_t at = r.size() - kEndSize + 1; at-- > lowest;) {
    if (r.u32(at) != kEndSignature) continue;
    ZipDirectory d{r.u16(at + 10), r.u32(at + 16)};
    if (d.entries == 0xffff || d.offset == 0xffffffff) {
      if (at < kZip64LocatorSize || r.u32(at - kZip64LocatorSize) != kZip64LocatorSignature) {
        malformed_zip("a zip64 archive without its locator");
      }
      const uint64_t end64 = r.u64(at - kZip64LocatorSize + 8);
      if (r.u32(end64) != kZip64EndSignature) malformed_zip("no zip64 end record");
      r.le(end64, kZip64EndSize);
      d = {r.u64(end64 + 32), r.u64(end64 + 48)};
    }
    return d;
  }
  malformed_zip("no end-of-central-directory record");
}

// The zip64 extended information field replaces each 32-bit field that reads 0xffffffff, in the
// order uncompressed size, compressed size, offset.
uint64_t zip64_size(const ZipReader& r, uint64_t extra, uint64_t extra_end) {
  while (extra + 4 <= extra_end) {
    const uint32_t id = r.u16(extra), length = r.u16(extra + 2);
    if (extra + 4 + length > extra_end) break;
    if (id == kZip64ExtraId && length >= 8) return r.u64(extra + 4);
    extra += 4 + length;
  }
  malformed_zip("an entry's zip64 size is missing");
}

}  // namespace

uint32_t zip_crc32(const void* data, uint64_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* bytes = static_cast<const Bytef*>(data);
  // zlib's length is a uInt: a record past 4 GiB goes in pieces.
  constexpr uint64_t kPiece = uint64_t{1} << 30;
  for (uint64_t done = 0; done < n; done += kPiece) {
    crc = crc32(crc, bytes + done, static_cast<uInt>(std::min(kPiece, n - done)));
  }
  return static_cast<uint32_t>(crc);
}

std::vector<ZipEntry> zip_entries(const std::vector<char>& bytes) {
  const ZipReader r(bytes);
  const ZipDirectory d = find_directory(r);
  // Each entry takes at least kCentralSize bytes of the file: a count past that is a lie, and
  // reserving it would allocate what the file does not hold.
  if (d.entries > r.size() / kCentralSize) malformed_zip("more entries than the file can hold");
  std::vector<ZipEntry> out;
  out.reserve(d.entries);
  uint64_t at = d.offset;
  for (uint64_t i = 0; i < d.entries; ++i) {
    if (r.u32(at) != kCentralSignature) malformed_zip("a damaged central directory");
    const uint32_t size32 = r.u32(at + 24);
    const uint32_t name_length = r.u16(at + 28), extra_length = r.u16(at + 30),
                   comment_length = r.u16(at + 32);
    const uint64_t name_at = at + kCentralSize, extra_at = name_at + name_length;
    ZipEntry e;
    e.name = r.text(name_at, name_length);
    e.size = size32 == 0xffffffff ? zip64_size(r, extra_at, extra_at + extra_length) : size32;
    e.crc32 = r.u32(at + 16);
    out.push_back(std::move(e));
    at = extra_at + extra_length + comment_length;
  }
  return out;
}

}  // namespace ddpbench::checkpoint
