// flight_analysis.cpp — see flight_analysis.h.
#include "launch/flight_analysis.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "name_table.h"

namespace ddpbench::launch {
namespace {

using comm::FlightEntry;
using comm::FlightLog;
using comm::FlightState;

std::string where_of(const FlightEntry& e) {
  const std::string w = comm::where_text(e);
  return w.empty() ? "before the step loop" : w;
}

std::string ranks_phrase(const std::vector<int>& ranks) {
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(ranks, ", "));
}

// The highest sequence number `log` holds as done; -1 for none.
int64_t last_done(const FlightLog& log) {
  int64_t last = -1;
  for (const FlightEntry& e : log.entries) {
    if (e.state == FlightState::kDone) last = std::max(last, e.seq);
  }
  return last;
}

double seconds_since(int64_t then_ns, int64_t now_ns) { return (now_ns - then_ns) / 1e9; }

// How long the ranks in `waiting` have been in collective `seq`: the longest of them.
double longest_wait(const std::vector<const RankFlight*>& waiting, int64_t seq, int64_t now_ns) {
  double longest = 0;
  for (const RankFlight* r : waiting) {
    if (const FlightEntry* e = r->log->find(seq)) {
      longest =
          std::max(longest, seconds_since(e->waited_ns ? e->waited_ns : e->issued_ns, now_ns));
    }
  }
  return longest;
}

// The ranks that hold collective `seq` as not done, split: those still running (in it), and those
// that ended while in it (killed or crashed there: no longer "in" anything).
struct InCollective {
  std::vector<const RankFlight*> waiting;
  std::vector<int> waiting_ranks;
  std::vector<std::string> died;  // "rank 1 (was killed by signal 9 (Killed))"
};

void note_in_collective(InCollective& in, const RankFlight& r, const FlightEntry& e) {
  if (e.state == FlightState::kDone) return;
  if (!r.ended.empty()) {
    in.died.push_back(fmt::format("rank {} ({})", r.rank, r.ended));
    return;
  }
  in.waiting.push_back(&r);
  in.waiting_ranks.push_back(r.rank);
}

// "; rank 1 (was killed by signal 9 (Killed)) ended while in it" for the ranks that died in it.
std::string died_in_it(const InCollective& in) {
  if (in.died.empty()) return "";
  return fmt::format("; {} ended while in it", fmt::join(in.died, ", "));
}

std::string rank_with_end(const RankFlight& r) {
  return r.ended.empty() ? fmt::format("rank {}", r.rank)
                         : fmt::format("rank {} ({})", r.rank, r.ended);
}

// Rule 1: the lowest sequence number two ranks hold with different fingerprints.
std::optional<FlightFinding> first_disagreement(const std::vector<const RankFlight*>& present) {
  std::set<int64_t> seqs;
  for (const RankFlight* r : present) {
    for (const FlightEntry& e : r->log->entries) seqs.insert(e.seq);
  }
  for (int64_t seq : seqs) {
    std::vector<std::pair<int, FlightEntry>> by_rank;
    bool differ = false;
    for (const RankFlight* r : present) {
      const FlightEntry* e = r->log->find(seq);
      if (e == nullptr) continue;
      if (!by_rank.empty() && !comm::same_fingerprint(by_rank.front().second, *e)) differ = true;
      by_rank.emplace_back(r->rank, *e);
    }
    if (!differ) continue;
    return FlightFinding{FlightVerdict::kDisagree, seq,
                         fmt::format("the ranks disagree at collective #{}: {}", seq,
                                     comm::describe_disagreement(by_rank))};
  }
  return std::nullopt;
}

// Rule 1 beyond the rings: ranks that issued as many collectives, the same ones as far as their
// rings reach, yet whose fingerprint chains differ.
std::optional<FlightFinding> older_disagreement(const std::vector<const RankFlight*>& present) {
  const FlightLog& first = *present.front()->log;
  int64_t oldest = first.issued;
  for (const RankFlight* r : present) {
    if (r->log->issued != first.issued) return std::nullopt;
    if (!r->log->entries.empty()) oldest = std::min(oldest, r->log->entries.front().seq);
  }
  for (const RankFlight* r : present) {
    if (r->log->chain == first.chain) continue;
    return FlightFinding{
        FlightVerdict::kDisagree, oldest,
        fmt::format("the ranks' collectives differ before #{}, further back than the {} each "
                    "rank keeps (ranks {} and {} hash their fingerprints differently)",
                    oldest, first.issued - oldest, present.front()->rank, r->rank)};
  }
  return std::nullopt;
}

// Rule 2: the lowest sequence number some rank has not issued while another has.
std::optional<FlightFinding> first_missing(const std::vector<const RankFlight*>& present,
                                           int64_t now_ns) {
  int64_t lowest = present.front()->log->issued;
  int64_t highest = lowest;
  for (const RankFlight* r : present) {
    lowest = std::min(lowest, r->log->issued);
    highest = std::max(highest, r->log->issued);
  }
  if (lowest == highest) return std::nullopt;
  const int64_t seq = lowest;  // the next collective of the rank(s) furthest behind
  std::vector<int> missing;
  std::vector<std::string> missing_named;
  std::vector<std::string> last_done_by;
  InCollective in;
  const FlightEntry* issued = nullptr;
  for (const RankFlight* r : present) {
    if (r->log->issued == seq) {
      missing.push_back(r->rank);
      missing_named.push_back(rank_with_end(*r));
      const int64_t done = last_done(*r->log);
      last_done_by.push_back(done < 0 ? fmt::format("rank {} finished none", r->rank)
                                      : fmt::format("rank {}'s last done: #{}", r->rank, done));
      continue;
    }
    const FlightEntry* e = r->log->find(seq);
    if (e == nullptr) continue;
    if (issued == nullptr) issued = e;
    note_in_collective(in, *r, *e);
  }
  if (issued == nullptr) return std::nullopt;  // out of every ring that issued it
  const std::string waited =
      in.waiting.empty()
          ? (in.died.empty() ? "the others finished it" : "no rank is still in it")
          : fmt::format("{} waiting in it for {:.1f} s", ranks_phrase(in.waiting_ranks),
                        longest_wait(in.waiting, seq, now_ns));
  return FlightFinding{
      FlightVerdict::kNeverIssued, seq,
      fmt::format("{} never issued collective #{}, {} ({}); {}{}; {}",
                  fmt::join(missing_named, ", "), seq, comm::describe_fingerprint(*issued),
                  where_of(*issued), waited, died_in_it(in), fmt::join(last_done_by, ", "))};
}

// Rule 3: every rank issued the same collectives.
FlightFinding same_last(const std::vector<const RankFlight*>& present, int64_t now_ns,
                        const std::string& unrecorded) {
  const int64_t issued = present.front()->log->issued;
  if (issued == 0) {
    return {FlightVerdict::kNothingRecorded, -1,
            unrecorded.empty()
                ? "no rank issued a collective"
                : fmt::format("no rank issued a recorded collective ({})", unrecorded)};
  }
  const int64_t seq = issued - 1;
  InCollective in;
  const FlightEntry* last = nullptr;
  for (const RankFlight* r : present) {
    const FlightEntry* e = r->log->find(seq);
    if (e == nullptr) continue;
    last = e;
    note_in_collective(in, *r, *e);
  }
  if (in.waiting.empty() && !in.died.empty()) {
    return {FlightVerdict::kPending, seq,
            fmt::format("every rank issued collective #{}, {} ({}); {} ended while in it, and "
                        "every other rank finished it",
                        seq, comm::describe_fingerprint(*last), where_of(*last),
                        fmt::join(in.died, ", "))};
  }
  if (in.waiting.empty() && !unrecorded.empty()) {
    return {FlightVerdict::kAllDone, seq,
            fmt::format("every rank's last recorded collective, #{}, {} ({}), is done; where the "
                        "ranks stopped is not known: {}",
                        seq, comm::describe_fingerprint(*last), where_of(*last), unrecorded)};
  }
  if (in.waiting.empty()) {
    return {FlightVerdict::kAllDone, seq,
            fmt::format("every rank's last collective, #{}, {} ({}), is done: the ranks "
                        "stopped outside collectives",
                        seq, comm::describe_fingerprint(*last), where_of(*last))};
  }
  return {FlightVerdict::kPending, seq,
          fmt::format("every rank issued collective #{}, {} ({}); {} still in it after {:.1f} s{}",
                      seq, comm::describe_fingerprint(*last), where_of(*last),
                      ranks_phrase(in.waiting_ranks), longest_wait(in.waiting, seq, now_ns),
                      died_in_it(in))};
}

constexpr NameTable<FlightVerdict, 5> kVerdictNames = {
    {{FlightVerdict::kNothingRecorded, "nothing_recorded"},
     {FlightVerdict::kDisagree, "disagree"},
     {FlightVerdict::kNeverIssued, "never_issued"},
     {FlightVerdict::kPending, "pending"},
     {FlightVerdict::kAllDone, "all_done"}}};

}  // namespace

const char* flight_verdict_name(FlightVerdict v) { return name_in(kVerdictNames, v).data(); }

FlightFinding analyse_flights(const std::vector<RankFlight>& ranks, int64_t now_ns,
                              const std::string& unrecorded) {
  std::vector<const RankFlight*> present;
  for (const RankFlight& r : ranks) {
    if (r.log) present.push_back(&r);
  }
  if (present.empty()) return {FlightVerdict::kNothingRecorded, -1, "no rank left a flight record"};
  if (auto f = first_disagreement(present)) return *f;
  if (auto f = older_disagreement(present)) return *f;
  if (auto f = first_missing(present, now_ns)) return *f;
  return same_last(present, now_ns, unrecorded);
}

std::string flight_json(const std::vector<RankFlight>& ranks, const FlightFinding& finding,
                        int64_t now_ns) {
  nlohmann::ordered_json j = {{"verdict", flight_verdict_name(finding.verdict)},
                              {"sequence", finding.seq},
                              {"finding", finding.summary},
                              {"ranks", nlohmann::ordered_json::array()}};
  for (const RankFlight& r : ranks) {
    nlohmann::ordered_json rank = {{"rank", r.rank},
                                   {"ended", r.ended.empty() ? "still running" : r.ended},
                                   {"recorded", r.log.has_value()}};
    if (r.log) {
      rank["issued"] = r.log->issued;
      rank["last_done"] = last_done(*r.log);
      nlohmann::ordered_json entries = nlohmann::ordered_json::array();
      for (const FlightEntry& e : r.log->entries) {
        entries.push_back(
            {{"seq", e.seq},
             {"op", comm::flight_op_name(e.op)},
             {"dtype", comm::dtype_text(e)},
             {"count", e.count},
             {"root", e.root},
             {"step", e.step},
             {"where", where_of(e)},
             {"state", comm::flight_state_name(e.state)},
             {"issued_s_before_stop", seconds_since(e.issued_ns, now_ns)},
             {"took_s", e.done_ns ? nlohmann::ordered_json((e.done_ns - e.issued_ns) / 1e9)
                                  : nlohmann::ordered_json(nullptr)}});
      }
      rank["collectives"] = std::move(entries);
    }
    j["ranks"].push_back(std::move(rank));
  }
  return j.dump(1);
}

}  // namespace ddpbench::launch
