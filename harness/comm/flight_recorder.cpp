// flight_recorder.cpp — see flight_recorder.h.
#include "comm/flight_recorder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>

#include "name_table.h"

namespace ddpbench::comm {
namespace {

constexpr char kMagic[8] = {'D', 'D', 'P', 'B', 'F', 'L', 'T', '1'};

// The file (or memory) is this header, then `capacity` entries; entry seq sits at seq % capacity.
struct RingHeader {
  char magic[8];
  int32_t rank;
  int32_t capacity;
  int64_t issued;
  uint64_t chain;
};

// FNV-1a over the fingerprint's fields (same_fingerprint's), continuing `chain`.
uint64_t chained(uint64_t chain, const FlightEntry& e) {
  const auto mix = [&chain](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) chain = (chain ^ b[i]) * 0x100000001b3ULL;
  };
  mix(&e.op, sizeof e.op);
  mix(&e.count, sizeof e.count);
  mix(&e.root, sizeof e.root);
  mix(&e.step, sizeof e.step);
  mix(e.dtype, strnlen(e.dtype, sizeof e.dtype));
  return chain;
}

size_t ring_bytes(int capacity) {
  return sizeof(RingHeader) + sizeof(FlightEntry) * static_cast<size_t>(capacity);
}

RingHeader* header_of(void* map) { return static_cast<RingHeader*>(map); }
FlightEntry* entries_of(void* map) {
  return reinterpret_cast<FlightEntry*>(static_cast<char*>(map) + sizeof(RingHeader));
}

void copy_text(char* to, size_t size, std::string_view text) {
  const size_t n = std::min(size - 1, text.size());
  std::memcpy(to, text.data(), n);
  std::memset(to + n, 0, size - n);
}

// The entries of a ring whose header says `issued`, oldest first.
FlightLog log_of(const RingHeader& h, const FlightEntry* ring) {
  FlightLog log;
  log.rank = h.rank;
  log.issued = h.issued;
  log.chain = h.chain;
  const int64_t first = std::max<int64_t>(0, h.issued - h.capacity);
  for (int64_t seq = first; seq < h.issued; ++seq) {
    const FlightEntry& e = ring[seq % h.capacity];
    if (e.seq == seq) log.entries.push_back(e);
  }
  return log;
}

constexpr NameTable<FlightOp, 5> kOpNames = {{{FlightOp::kAllreduce, "allreduce"},
                                              {FlightOp::kBroadcast, "broadcast"},
                                              {FlightOp::kAllgather, "allgather"},
                                              {FlightOp::kReduceScatter, "reduce_scatter"},
                                              {FlightOp::kBarrier, "barrier"}}};
constexpr NameTable<FlightState, 4> kStateNames = {{{FlightState::kIssued, "issued"},
                                                    {FlightState::kWaiting, "waiting"},
                                                    {FlightState::kDone, "done"},
                                                    {FlightState::kFailed, "failed"}}};

}  // namespace

const char* flight_op_name(FlightOp op) { return name_in(kOpNames, op).data(); }

const char* flight_state_name(FlightState state) { return name_in(kStateNames, state).data(); }

std::string dtype_text(const FlightEntry& e) {
  return std::string(e.dtype, strnlen(e.dtype, sizeof e.dtype));
}

std::string where_text(const FlightEntry& e) {
  return std::string(e.where, strnlen(e.where, sizeof e.where));
}

bool same_fingerprint(const FlightEntry& a, const FlightEntry& b) {
  return a.op == b.op && a.count == b.count && a.root == b.root && a.step == b.step &&
         std::strncmp(a.dtype, b.dtype, sizeof a.dtype) == 0;
}

std::string describe_fingerprint(const FlightEntry& e) {
  const std::string dtype = dtype_text(e);
  std::string count = std::to_string(e.count);
  for (int i = static_cast<int>(count.size()) - 3; i > 0; i -= 3) count.insert(i, ",");
  std::string what = e.op == FlightOp::kBarrier ? "barrier"
                     : e.root >= 0 ? fmt::format("{}({} x {}, root {})", flight_op_name(e.op),
                                                 dtype, count, e.root)
                                   : fmt::format("{}({} x {})", flight_op_name(e.op), dtype, count);
  return e.step >= 0 ? fmt::format("{} at step {}", what, e.step) : what;
}

std::string describe_disagreement(const std::vector<std::pair<int, FlightEntry>>& by_rank) {
  std::vector<std::pair<FlightEntry, std::vector<int>>> groups;
  for (const auto& [rank, e] : by_rank) {
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& x) { return same_fingerprint(x.first, e); });
    if (g == groups.end()) {
      groups.push_back({e, {rank}});
    } else {
      g->second.push_back(rank);
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  std::vector<std::string> parts;
  for (const auto& [e, ranks] : groups) {
    parts.push_back(fmt::format("{} {} issued {}", ranks.size() == 1 ? "rank" : "ranks",
                                fmt::join(ranks, ", "), describe_fingerprint(e)));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

const FlightEntry* FlightLog::find(int64_t seq) const {
  for (const FlightEntry& e : entries) {
    if (e.seq == seq) return &e;
  }
  return nullptr;
}

FlightRecorder::FlightRecorder(int rank, const std::string& file, int capacity)
    : capacity_(std::max(1, capacity)), map_bytes_(ring_bytes(std::max(1, capacity))) {
  if (!file.empty()) {
    const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0 && ::ftruncate(fd, static_cast<off_t>(map_bytes_)) == 0) {
      void* p = ::mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) {
        map_ = p;
        mapped_file_ = true;
      }
    }
    if (fd >= 0) ::close(fd);
  }
  if (map_ == nullptr) map_ = std::calloc(1, map_bytes_);
  RingHeader* h = header_of(map_);
  h->rank = rank;
  h->capacity = capacity_;
  h->issued = 0;
  h->chain = 0xcbf29ce484222325ULL;  // FNV-1a's offset basis
  FlightEntry* ring = entries_of(map_);
  for (int i = 0; i < capacity_; ++i) ring[i] = FlightEntry{};
  // The magic last: a reader never takes a half-made ring for a ring.
  std::memcpy(h->magic, kMagic, sizeof kMagic);
}

FlightRecorder::~FlightRecorder() {
  if (mapped_file_) {
    ::munmap(map_, map_bytes_);
  } else {
    std::free(map_);
  }
}

void FlightRecorder::set_where(int64_t step, std::string_view words) {
  const std::lock_guard<std::mutex> lock(mutex_);
  step_ = step;
  where_ = words;
}

int64_t FlightRecorder::current_step() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return step_;
}

int64_t FlightRecorder::issue(FlightOp op, std::string_view dtype, int64_t count, int root) {
  const std::lock_guard<std::mutex> lock(mutex_);
  RingHeader* h = header_of(map_);
  const int64_t seq = h->issued;
  FlightEntry e;
  e.seq = seq;
  e.step = step_;
  e.count = count;
  e.issued_ns = monotonic_ns();
  e.root = root;
  e.op = op;
  e.state = FlightState::kIssued;
  copy_text(e.dtype, sizeof e.dtype, dtype);
  copy_text(e.where, sizeof e.where, where_);
  *slot(seq) = e;
  h->chain = chained(h->chain, e);
  h->issued = seq + 1;
  return seq;
}

FlightEntry* FlightRecorder::slot(int64_t seq) const { return &entries_of(map_)[seq % capacity_]; }

void FlightRecorder::waiting(int64_t seq) {
  const std::lock_guard<std::mutex> lock(mutex_);
  FlightEntry* e = slot(seq);
  if (e->seq != seq || e->state != FlightState::kIssued) return;
  e->waited_ns = monotonic_ns();
  e->state = FlightState::kWaiting;
}

void FlightRecorder::done(int64_t seq) {
  const std::lock_guard<std::mutex> lock(mutex_);
  FlightEntry* e = slot(seq);
  if (e->seq != seq) return;
  e->done_ns = monotonic_ns();
  e->state = FlightState::kDone;
}

void FlightRecorder::failed(int64_t seq) {
  const std::lock_guard<std::mutex> lock(mutex_);
  FlightEntry* e = slot(seq);
  if (e->seq == seq) e->state = FlightState::kFailed;
}

FlightLog FlightRecorder::snapshot() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return log_of(*header_of(map_), entries_of(map_));
}

FlightPosition FlightRecorder::position() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return {header_of(map_)->issued, where_};
}

std::optional<FlightLog> read_flight_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(RingHeader)) return std::nullopt;
  RingHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.capacity <= 0 || h.issued < 0 ||
      bytes.size() != ring_bytes(h.capacity)) {
    return std::nullopt;
  }
  std::vector<FlightEntry> ring(static_cast<size_t>(h.capacity));
  std::memcpy(ring.data(), bytes.data() + sizeof h, sizeof(FlightEntry) * ring.size());
  return log_of(h, ring.data());
}

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

}  // namespace ddpbench::comm
