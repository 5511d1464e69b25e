// flight_analysis.h — what the launching parent says about a failed group from its ranks' flight
// recorders (Note [The flight recorder]): which collective the ranks stopped in, and who is to
// blame. Read after every rank is stopped, so the rings no longer move: after a failure, and
// after a group that finished (rule 1 then fails it: a backend can reduce mismatched buffers
// without noticing). The rules, first match:
//   1. the ranks disagree: the lowest sequence number that two ranks hold with different
//      fingerprints (op, dtype, count, root, step) — a desync or a shape mismatch; or, with the
//      rings alike, fingerprint chains that differ (a disagreement older than the rings);
//   2. some never issued it: the lowest sequence number one rank has not issued while another has
//      — the hung or dead rank, and the ranks waiting in it, for how long;
//   3. every rank issued the same last collective: it is still pending (a backend stall) or done
//      (the ranks stopped outside collectives; unless collectives the rings do not see were being
//      issued: then that is said instead, since the ranks may well be in one of those).
// A rank that ended (killed, crashed) while a collective was pending is never "in" it: it is
// named as having ended there.
// No torch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/flight_recorder.h"

namespace ddpbench::launch {

struct RankFlight {
  int rank = 0;
  std::optional<comm::FlightLog> log;  // nullopt: the rank left no ring (it never got that far)
  std::string ended;                   // "" when it was still running; else "exited with code 3"
};

enum class FlightVerdict { kNothingRecorded, kDisagree, kNeverIssued, kPending, kAllDone };

struct FlightFinding {
  FlightVerdict verdict = FlightVerdict::kNothingRecorded;
  int64_t seq = -1;     // the collective the finding is about
  std::string summary;  // one line, e.g. "rank 2 never issued allreduce(...) #57 (...); ..."
};

const char* flight_verdict_name(FlightVerdict v);

// `now_ns` (comm::monotonic_ns) dates how long ranks have been waiting. `unrecorded` says who
// issues collectives past the rings ("c10d's Reducer issues its collectives on its process group,
// which the flight recorder does not see"); "" when every collective is recorded.
FlightFinding analyse_flights(const std::vector<RankFlight>& ranks, int64_t now_ns,
                              const std::string& unrecorded = "");

// failure.json's "collectives" object: the finding and every rank's ring, times in seconds before
// `now_ns`.
std::string flight_json(const std::vector<RankFlight>& ranks, const FlightFinding& finding,
                        int64_t now_ns);

}  // namespace ddpbench::launch
