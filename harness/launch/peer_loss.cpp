// peer_loss.cpp — see peer_loss.h.
#include "launch/peer_loss.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

namespace ddpbench::launch {
namespace {

std::string host_key(int rank) { return fmt::format("ddpbench/host/{}", rank); }
std::string failed_key(int rank) { return fmt::format("ddpbench/failed/{}", rank); }
std::string alive_key(int rank) { return fmt::format("ddpbench/alive/{}", rank); }
// "issued|where": the rank's comm::FlightPosition.
std::string position_key(int rank) { return fmt::format("ddpbench/position/{}", rank); }
constexpr const char* kLostKey = "ddpbench/lost";
// failed_key's value for a rank whose collective failed: a victim, not a cause.
constexpr const char* kCollectiveFailed = "collective";

// The first line of a library's message, without a source location prefix.
std::string first_line(const std::string& what) {
  std::string s = what.substr(0, what.find('\n'));
  if (!s.empty() && s[0] == '[') {
    const size_t close = s.find("] ");
    if (close != std::string::npos) s = s.substr(close + 2);
  }
  return s;
}

// What one look at the store says about every rank.
struct PeerState {
  int64_t beats = 0;
  std::string failed;    // "" none; kCollectiveFailed; else its own reason
  std::string position;  // position_key's value, "" if never published
};

std::vector<PeerState> look(comm::Store& store, int world_size) {
  std::vector<PeerState> peers(static_cast<size_t>(world_size));
  for (int r = 0; r < world_size; ++r) {
    PeerState& p = peers[static_cast<size_t>(r)];
    p.beats = store.add(alive_key(r), 0);
    if (store.check(failed_key(r))) p.failed = store.get(failed_key(r));
    if (store.check(position_key(r))) p.position = store.get(position_key(r));
  }
  return peers;
}

// The peers to blame, from two looks a second apart: those that failed on their own; else those
// whose heartbeat stood still with no mark (dead); else, for a known collective `seq`, those alive
// that stood still short of it (hung). "" when none is to blame yet.
std::string blame(comm::Store& store, const WorldInfo& w, const std::vector<PeerState>& before,
                  const std::vector<PeerState>& after, int64_t seq) {
  std::vector<std::string> own;
  std::vector<std::string> dead;
  std::vector<std::string> hung;
  for (int r = 0; r < w.world_size; ++r) {
    if (r == w.rank) continue;
    const PeerState& a = after[static_cast<size_t>(r)];
    const PeerState& b = before[static_cast<size_t>(r)];
    const std::string host = store.check(host_key(r)) ? store.get(host_key(r)) : "?";
    if (!a.failed.empty()) {
      if (a.failed != kCollectiveFailed) {
        own.push_back(fmt::format("rank {} on {} failed: {}", r, host, a.failed));
      }
      continue;
    }
    if (a.beats == b.beats) {
      dead.push_back(fmt::format(
          "rank {} on {} stopped without a word (killed, or crashed outright)", r, host));
      continue;
    }
    const size_t bar = a.position.find('|');
    if (seq < 0 || bar == std::string::npos || a.position != b.position) continue;
    if (std::strtoll(a.position.c_str(), nullptr, 10) > seq) continue;  // it issued it too
    const std::string where = a.position.substr(bar + 1);
    hung.push_back(
        fmt::format("rank {} on {} hung: it is alive but never issued collective #{} (it "
                    "is at {})",
                    r, host, seq, where.empty() ? "its start, before the step loop" : where));
  }
  const std::vector<std::string>& found = !own.empty() ? own : !dead.empty() ? dead : hung;
  return fmt::format("{}", fmt::join(found, "; "));
}

std::string explain(comm::Store* store, const Heartbeat* heartbeat, const WorldInfo& w,
                    const std::string& headline, int64_t seq, bool linger) {
  const std::string me = fmt::format("rank {} ({})", w.rank, host_name());
  if (store == nullptr) return fmt::format("{}: {}", me, headline);
  try {
    store->set(failed_key(w.rank), kCollectiveFailed);
    // A heartbeat that stands still for a second belongs to a dead process; a rank blocked in a
    // collective or hung in compute keeps beating. Look for up to 5 s, since a peer may die just
    // after we failed.
    std::string found;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (found.empty() && std::chrono::steady_clock::now() < deadline) {
      const std::vector<PeerState> before = look(*store, w.world_size);
      std::this_thread::sleep_for(std::chrono::seconds(1));
      found = blame(*store, w, before, look(*store, w.world_size), seq);
    }
    if (!found.empty()) store->set(kLostKey, found);
    // Rank 0 serves the store: it stays a little longer so that the others (their heartbeat
    // threads read the finding every 250 ms) can still read it. Not under mpirun, which ends
    // every rank as soon as one fails (Note [An MPI job ends by MPI_Abort]): nobody would.
    if (linger && w.rank == 0 && w.launcher != Launcher::kOpenMpi) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    if (found.empty()) return fmt::format("{}: {}", me, headline);
    return fmt::format("{}: {}; {}", me, headline, found);
  } catch (const std::exception&) {
    const std::string recorded = heartbeat ? heartbeat->recorded_loss() : "";
    if (!recorded.empty()) return fmt::format("{}: {}; {}", me, headline, recorded);
    if (!w.agent_store_prefix.empty()) {
      return fmt::format(
          "{}: {}; the rendezvous store is gone too, so torchrun's agent (which serves it) on {} "
          "was lost",
          me, headline, w.master_addr);
    }
    return fmt::format(
        "{}: {}; the rendezvous store is gone too, so rank 0 (which serves it) was lost", me,
        headline);
  }
}

}  // namespace

Heartbeat::Heartbeat(const WorldInfo& w, const std::string& host, int port,
                     std::shared_ptr<const comm::FlightRecorder> recorder,
                     std::chrono::milliseconds timeout)
    : store_(comm::Store::connect(host, port, timeout)), recorder_(std::move(recorder)) {
  if (!w.agent_store_prefix.empty()) store_ = store_->prefixed(w.agent_store_prefix);
  store_->set(host_key(w.rank), host_name());
  thread_ = std::thread([this, rank = w.rank] {
    try {
      std::string published;
      while (!stop_) {
        store_->add(alive_key(rank), 1);
        const comm::FlightPosition at = recorder_->position();
        const std::string position = fmt::format("{}|{}", at.issued, at.where);
        if (position != published) {
          store_->set(position_key(rank), position);
          published = position;
        }
        if (recorded_loss().empty() && store_->check(kLostKey)) {
          const std::string lost = store_->get(kLostKey);
          const std::lock_guard<std::mutex> lock(mutex_);
          recorded_loss_ = lost;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    } catch (const std::exception&) {
      // The store is gone (rank 0 ended): nothing left to beat for.
    }
  });
}

Heartbeat::~Heartbeat() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string Heartbeat::recorded_loss() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return recorded_loss_;
}

void mark_own_failure(comm::Store* store, int rank, const std::string& reason) {
  if (store == nullptr) return;
  // "rank 1: injected crash at step 1": the peers name the rank themselves.
  std::string why = first_line(reason);
  const std::string self = fmt::format("rank {}: ", rank);
  if (why.rfind(self, 0) == 0) why = why.substr(self.size());
  try {
    store->set(failed_key(rank), why);
  } catch (const std::exception&) {
    // The store is gone: the peers will call this rank silent, which is all they can know.
  }
}

std::string explain_collective_failure(comm::Store* store, const Heartbeat* heartbeat,
                                       const WorldInfo& w, const std::string& what, int64_t seq) {
  return explain(store, heartbeat, w, fmt::format("a collective failed ({})", first_line(what)),
                 seq, /*linger=*/true);
}

std::string explain_stalled_collective(comm::Store* store, const Heartbeat* heartbeat,
                                       const WorldInfo& w, const std::string& headline,
                                       int64_t seq) {
  return explain(store, heartbeat, w, headline, seq, /*linger=*/false);
}

}  // namespace ddpbench::launch
