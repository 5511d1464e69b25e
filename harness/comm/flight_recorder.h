// flight_recorder.h — every rank's record of the last collectives it issued (op, its own sequence
// number, dtype, element count, root, the step and phase it was issued in, and whether it is
// issued, waited on, done or failed, with times), always on, so that a hung, desynchronised or
// crashed run can say which rank stopped in which collective (Note [The flight recorder]). No
// torch here: the launching parent reads the records of ranks it has stopped, and tests build
// them by hand.
//
// Note [The flight recorder]:
// PyTorch's NCCL flight recorder keeps a ring of each group's last collectives and dumps it when
// its watchdog fires; users report hangs with no trace because it was off, and a rank that is
// killed or stuck in compute never dumps at all. ddpbench's rank therefore writes its ring into a
// file the parent named (mapped shared, so every store is in the page cache the moment it is
// made): the parent reads it after it has stopped the ranks, whatever stopped them (a hang, a
// crash, a signal, SIGKILL), and needs nothing from them. Under another launcher there is no
// parent; the ring then lives in the rank's own memory. One ring per communicator; the sequence
// numbers are the rank's own count of collectives, which matches across ranks exactly when they
// issue the same collectives in the same order (the contract of communicator.h). The entries are
// plain fixed-size records, so a ring is the same bytes in memory and in the file.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddpbench::comm {

enum class FlightOp : uint8_t { kAllreduce, kBroadcast, kAllgather, kReduceScatter, kBarrier };
enum class FlightState : uint8_t { kIssued, kWaiting, kDone, kFailed };

const char* flight_op_name(FlightOp op);
const char* flight_state_name(FlightState state);

struct FlightEntry;
// An entry's dtype ("float32") and its where words ("" when issued outside the step loop), as
// strings (the record keeps them as fixed-size, NUL-padded fields).
std::string dtype_text(const FlightEntry& e);
std::string where_text(const FlightEntry& e);

// One collective as the rank issued it. Fixed size and layout: it is the file's bytes.
struct FlightEntry {
  int64_t seq = -1;       // the rank's own count of collectives before this one
  int64_t step = -1;      // the step loop's step when issued; -1 outside the step loop
  int64_t count = 0;      // elements of this rank's input
  int64_t issued_ns = 0;  // CLOCK_MONOTONIC, comparable between the processes of one host
  int64_t waited_ns = 0;  // when the rank began to wait for it; 0 = not yet
  int64_t done_ns = 0;    // 0 = not (yet) done
  int32_t root = -1;      // broadcast's root; -1 for the others
  FlightOp op = FlightOp::kAllreduce;
  FlightState state = FlightState::kIssued;
  char dtype[10] = {};  // "float32"
  char where[64] = {};  // the rank's own words, e.g. "check phase step 2 of 5, backward"
};

// The same collective on two ranks has the same fingerprint: op, dtype, count, root and the step
// it was issued in (a rank that skipped one issues its next under the skipped one's number, often
// with the same op and count but a later step).
bool same_fingerprint(const FlightEntry& a, const FlightEntry& b);
// "allreduce(float32 x 2,570) at step 2", "broadcast(float32 x 10, root 1)" (no step outside the
// step loop).
std::string describe_fingerprint(const FlightEntry& e);

// The ranks of `by_rank` (rank, the entry it holds) grouped by fingerprint, the smallest group
// first (the likelier odd one out): "rank 1 issued allreduce(float32 x 2,569) at step 2; ranks 0,
// 2 issued allreduce(float32 x 2,570) at step 2".
std::string describe_disagreement(const std::vector<std::pair<int, FlightEntry>>& by_rank);

// What a reader gets back: a rank's entries, oldest first, and how many it issued in all.
struct FlightLog {
  int rank = 0;
  int64_t issued = 0;  // collectives issued in all (the next sequence number)
  // A hash of every fingerprint issued, in order: equal on ranks that issued the same
  // collectives, also those older than the ring.
  uint64_t chain = 0;
  std::vector<FlightEntry> entries;
  // nullptr when `seq` is no longer (or not yet) in the ring.
  const FlightEntry* find(int64_t seq) const;
};

// Where a rank is: the collectives it has issued and its own words for where it is ("check phase
// step 1 of 3, forward"; "" before the step loop). A peer's heartbeat publishes it, so that a rank
// whose collective fails or stalls can tell a peer that never issued it (launch/peer_loss.h).
struct FlightPosition {
  int64_t issued = 0;
  std::string where;
};

class FlightRecorder {
 public:
  static constexpr int kDefaultCapacity = 512;

  // `file` empty: the ring lives in this process's memory. Otherwise the file is created (or
  // truncated) and mapped shared; a file that cannot be made falls back to memory, since the
  // recorder must never stop a run.
  FlightRecorder(int rank, const std::string& file, int capacity = kDefaultCapacity);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // Where the rank is, for the entries it issues from now on.
  void set_where(int64_t step, std::string_view words);
  int64_t current_step() const;

  // Records a new collective as issued; returns its sequence number.
  int64_t issue(FlightOp op, std::string_view dtype, int64_t count, int root = -1);
  void waiting(int64_t seq);
  void done(int64_t seq);
  void failed(int64_t seq);

  FlightLog snapshot() const;
  FlightPosition position() const;

 private:
  FlightEntry* slot(int64_t seq) const;

  mutable std::mutex mutex_;
  int capacity_;
  void* map_ = nullptr;  // the header and the ring, in the file or in memory
  size_t map_bytes_ = 0;
  bool mapped_file_ = false;
  int64_t step_ = -1;
  std::string where_;
};

// Reads the ring a rank wrote into `file`; nullopt when the file is missing or is no ring.
std::optional<FlightLog> read_flight_file(const std::string& file);

// CLOCK_MONOTONIC in nanoseconds: the clock of FlightEntry's times.
int64_t monotonic_ns();

}  // namespace ddpbench::comm
