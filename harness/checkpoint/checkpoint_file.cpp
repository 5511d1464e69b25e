// checkpoint_file.cpp — see checkpoint_file.h. The reading is torch::jit::readArchiveAndTensors'
// (what torch::pickle_load calls) with two changes: each record's size is checked before libtorch
// allocates it, and every storage stays on the host (a file naming "cuda:0" would otherwise have
// its storage copied to the device at its claimed size before anything could check it).
#include "checkpoint/checkpoint_file.h"

#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "checkpoint/zip_directory.h"
#include "errors.h"
#include "quoted_input.h"

namespace ddpbench::checkpoint {
namespace {

// Records besides data.pkl and data/*: "version", ".data/version", "byteorder" and the like, a
// few bytes each.
constexpr uint64_t kSmallRecord = 4096;
[[noreturn]] void refuse_file(const std::string& path, const std::string& why,
                              const TorchFileRole& role) {
  throw InputError(fmt::format("{} {}: {}", role.flag, quoted_input(path), why));
}

[[noreturn]] void unreadable(const std::string& path, const std::string& what,
                             const TorchFileRole& role) {
  refuse_file(path,
              fmt::format("cannot read it as a torch.load file ({}); {}",
                          what.substr(0, what.find('\n')), role.fix),
              role);
}

// A record's name inside the archive's folder, as PyTorchStreamReader looks it up.
std::string record_name(const std::string& entry) {
  const size_t slash = entry.find('/');
  return slash == std::string::npos ? entry : entry.substr(slash + 1);
}

// What the central directory says of a record.
struct RecordFacts {
  uint64_t size = 0;
  uint32_t crc32 = 0;
};

// Each entry's size against what its kind of record can hold; the facts by record name.
std::map<std::string, RecordFacts> bounded_sizes(const std::vector<char>& bytes,
                                                 const std::string& path, const RecordBounds& b,
                                                 bool with_tensors, const TorchFileRole& role) {
  std::vector<ZipEntry> entries;
  try {
    entries = zip_entries(bytes);
  } catch (const std::exception& e) {
    unreadable(path, e.what(), role);
  }
  std::map<std::string, RecordFacts> sizes;
  for (const ZipEntry& e : entries) {
    const std::string name = record_name(e.name);
    const bool tensor = name.rfind("data/", 0) == 0;
    const uint64_t limit = name == "data.pkl" ? b.pickle : tensor ? b.largest_tensor : kSmallRecord;
    if (e.size > limit && (with_tensors || !tensor)) {
      refuse_file(path,
                  fmt::format("its record {} holds {} bytes, more than {} can ({} bytes): {}",
                              quoted_input(e.name), e.size,
                              tensor ? role.one_tensor : "such a record", limit, role.fix),
                  role);
    }
    RecordFacts& facts = sizes[name];
    if (e.size >= facts.size) facts = {e.size, e.crc32};
  }
  return sizes;
}

// A record's bytes against the CRC-32 the archive stored for them: 200 bytes overwritten inside a
// tensor record were read as weights, and the run resumed from them and passed.
void require_intact(const std::map<std::string, RecordFacts>& facts, const std::string& name,
                    const void* data, uint64_t size, const std::string& path,
                    const TorchFileRole& role) {
  const auto it = facts.find(name);
  if (it == facts.end() || zip_crc32(data, size) == it->second.crc32) return;
  refuse_file(path,
              fmt::format("its record {} fails its CRC-32 check: its bytes are not those that were "
                          "written, the file is damaged; {}",
                          quoted_input(name), role.fix),
              role);
}

}  // namespace

uint64_t TorchFile::record_bytes(const at::Tensor& t) const {
  const auto it = records.find(t.storage().data());
  return it == records.end() ? 0 : it->second;
}

TorchFile read_torch_file(const std::vector<char>& bytes, const std::string& path,
                          const RecordBounds& bounds, bool with_tensors,
                          const TorchFileRole& role) {
  const std::map<std::string, RecordFacts> sizes =
      bounded_sizes(bytes, path, bounds, with_tensors, role);
  TorchFile out;
  try {
    caffe2::serialize::PyTorchStreamReader reader(
        std::make_shared<caffe2::serialize::MemoryReadAdapter>(bytes.data(), bytes.size()));
    auto [pickle, pickle_size] = reader.getRecord("data.pkl");
    const char* pickle_bytes = static_cast<const char*>(pickle.get());
    require_intact(sizes, "data.pkl", pickle_bytes, pickle_size, path, role);
    size_t read = 0;
    const auto next = [&](char* buffer, size_t n) -> size_t {
      n = std::min(pickle_size - read, n);
      if (n > 0) std::memcpy(buffer, pickle_bytes + read, n);
      read += n;
      return n;
    };
    // The unpickler reads a record for every storage it meets, the same one again when data.pkl
    // names it twice: the total bounds those re-reads too.
    uint64_t total = 0;
    const auto record = [&](const std::string& key) {
      if (!with_tensors) return at::DataPtr();  // storages without data, never read
      const std::string name = "data/" + key;
      const auto size = sizes.find(name);
      total += size == sizes.end() ? 0 : size->second.size;
      if (total > bounds.all_tensors) {
        refuse_file(path,
                    fmt::format("its tensor records add up to more than {} hold ({} bytes): {}",
                                role.all_tensors, bounds.all_tensors, role.fix),
                    role);
      }
      auto [data, data_size] = reader.getRecord(name);
      require_intact(sizes, name, data.get(), data_size, path, role);
      out.records[data.get()] = data_size;
      return std::move(data);
    };
    torch::jit::Unpickler unpickler(next, nullptr, nullptr, record, at::Device(at::kCPU));
    unpickler.set_version(reader.version());
    out.value = unpickler.parse_ivalue();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    unreadable(path, e.what(), role);
  }
  return out;
}

}  // namespace ddpbench::checkpoint
