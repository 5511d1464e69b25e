// peer_loss.cpp — see peer_loss.h.
#include "launch/peer_loss.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <thread>
#include <vector>

namespace ddpbench::launch {
namespace {

std::string host_key(int rank) { return fmt::format("ddpbench/host/{}", rank); }
std::string failed_key(int rank) { return fmt::format("ddpbench/failed/{}", rank); }
std::string alive_key(int rank) { return fmt::format("ddpbench/alive/{}", rank); }
constexpr const char* kLostKey = "ddpbench/lost";

std::string lost_text(const std::string& me, const std::string& failed, const std::string& lost) {
  return fmt::format("{}: {}; {} stopped without a word (killed, or crashed outright)", me, failed,
                     lost);
}

// The first line of a library's message, without a source location prefix.
std::string first_line(const std::string& what) {
  std::string s = what.substr(0, what.find('\n'));
  if (!s.empty() && s[0] == '[') {
    const size_t close = s.find("] ");
    if (close != std::string::npos) s = s.substr(close + 2);
  }
  return s;
}

}  // namespace

Heartbeat::Heartbeat(const WorldInfo& w, std::chrono::milliseconds timeout)
    : store_(comm::Store::connect(w.master_addr, w.master_port, timeout)) {
  store_->set(host_key(w.rank), host_name());
  thread_ = std::thread([this, rank = w.rank] {
    try {
      while (!stop_) {
        store_->add(alive_key(rank), 1);
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

std::string explain_collective_failure(comm::Store* store, const Heartbeat* heartbeat,
                                       const WorldInfo& w, const std::string& what) {
  const std::string me = fmt::format("rank {} ({})", w.rank, host_name());
  const std::string failed = fmt::format("a collective failed ({})", first_line(what));
  if (store == nullptr) return fmt::format("{}: {}", me, failed);
  try {
    store->set(failed_key(w.rank), "1");
    const auto beats = [&] {
      std::vector<int64_t> b;
      for (int r = 0; r < w.world_size; ++r) b.push_back(store->add(alive_key(r), 0));
      return b;
    };
    // A heartbeat that stands still for a second belongs to a dead process; a rank blocked in a
    // collective keeps beating. Look for up to 5 s, since a peer may die just after we failed.
    std::vector<std::string> dead;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (dead.empty() && std::chrono::steady_clock::now() < deadline) {
      const std::vector<int64_t> before = beats();
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const std::vector<int64_t> after = beats();
      for (int r = 0; r < w.world_size; ++r) {
        if (r == w.rank || after[r] != before[r] || store->check(failed_key(r))) continue;
        const std::string host = store->check(host_key(r)) ? store->get(host_key(r)) : "?";
        dead.push_back(fmt::format("rank {} on {}", r, host));
      }
    }
    if (!dead.empty()) store->set(kLostKey, fmt::format("{}", fmt::join(dead, ", ")));
    // Rank 0 serves the store: it stays a little longer so that the others (their heartbeat
    // threads read the finding every 250 ms) can still read it.
    if (w.rank == 0) std::this_thread::sleep_for(std::chrono::seconds(2));
    if (dead.empty()) return fmt::format("{}: {}", me, failed);
    return lost_text(me, failed, fmt::format("{}", fmt::join(dead, ", ")));
  } catch (const std::exception&) {
    const std::string recorded = heartbeat ? heartbeat->recorded_loss() : "";
    if (!recorded.empty()) return lost_text(me, failed, recorded);
    return fmt::format(
        "{}: {}; the rendezvous store at {}:{} is gone too, so rank 0 (which serves it) was lost",
        me, failed, w.master_addr, w.master_port);
  }
}

}  // namespace ddpbench::launch
