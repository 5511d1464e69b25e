// launch_flight_analysis_test.cpp — the flight recorder keeps what a rank issued (in its file,
// whatever later happens to the rank), and the parent's analysis names the right collective and
// rank for each way a group stops: a rank that never issued one (hang, crash), ranks that disagree
// (desync, shape; also older than the rings), a collective every rank is stuck in, and a group
// that stopped outside collectives. A group whose ranks issued the same collectives is never
// called a disagreement (a correct run must not fail). A rank that was killed in a collective is
// not "in" it, and a group whose collectives the rings do not all see (c10d's Reducer) is not
// said to have stopped outside collectives.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "comm/flight_recorder.h"
#include "launch/flight_analysis.h"

namespace ddpbench::launch {
namespace {

using comm::FlightOp;
using comm::FlightRecorder;

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()) + ".bin"))
      .string();
}

// A rank that issued `counts` allreduces (float32) at step 0 and finished all but the last
// `pending` of them.
RankFlight rank_with(int rank, const std::vector<int64_t>& counts, int pending = 0,
                     int capacity = FlightRecorder::kDefaultCapacity) {
  FlightRecorder r(rank, "", capacity);
  r.set_where(0, "check phase step 0 of 5, backward");
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t seq = r.issue(FlightOp::kAllreduce, "float32", counts[i]);
    if (i + pending < counts.size()) r.done(seq);
  }
  return RankFlight{rank, r.snapshot(), ""};
}

TEST(FlightRecorder, ItsFileHoldsTheLastEntriesWithTheirStatesAfterTheRecorderIsGone) {
  const std::string file = temp_file("flight");
  {
    FlightRecorder r(3, file, 4);
    for (int i = 0; i < 10; ++i) {
      r.set_where(i, "step " + std::to_string(i));
      const int64_t seq = r.issue(i % 2 ? FlightOp::kBroadcast : FlightOp::kAllreduce, "float64",
                                  100 + i, i % 2 ? 0 : -1);
      EXPECT_EQ(seq, i);
      if (i < 8) r.done(seq);
      if (i == 8) r.waiting(seq);
    }
  }
  const auto log = comm::read_flight_file(file);
  std::filesystem::remove(file);
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->rank, 3);
  EXPECT_EQ(log->issued, 10);
  ASSERT_EQ(log->entries.size(), 4u);  // the ring keeps the last 4
  EXPECT_EQ(log->entries.front().seq, 6);
  EXPECT_EQ(log->find(8)->state, comm::FlightState::kWaiting);
  EXPECT_EQ(log->find(9)->state, comm::FlightState::kIssued);
  EXPECT_EQ(log->find(7)->state, comm::FlightState::kDone);
  EXPECT_EQ(comm::describe_fingerprint(*log->find(7)),
            "broadcast(float64 x 107, root 0) at step 7");
  EXPECT_EQ(log->find(5), nullptr);
  EXPECT_FALSE(comm::read_flight_file(file).has_value());  // gone: no ring, no guess
}

TEST(FlightAnalysis, ARankThatNeverIssuedTheNextCollectiveIsNamedWithThoseWaitingInIt) {
  std::vector<RankFlight> ranks = {rank_with(0, {10, 20, 30, 40}, 1), rank_with(1, {10, 20, 30}),
                                   rank_with(2, {10, 20, 30, 40}, 1)};
  ranks[1].ended = "exited with code 3";
  const FlightFinding f = analyse_flights(ranks, comm::monotonic_ns());
  EXPECT_EQ(f.verdict, FlightVerdict::kNeverIssued);
  EXPECT_EQ(f.seq, 3);
  EXPECT_NE(f.summary.find("rank 1 (exited with code 3) never issued collective #3, "
                           "allreduce(float32 x 40) at step 0 (check phase step 0 of 5, backward)"),
            std::string::npos)
      << f.summary;
  EXPECT_NE(f.summary.find("ranks 0, 2 waiting in it for"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("rank 1's last done: #2"), std::string::npos) << f.summary;
}

TEST(FlightAnalysis, TheFirstCollectiveWhoseFingerprintsDifferIsNamedWithBothFingerprints) {
  const std::vector<RankFlight> ranks = {rank_with(0, {10, 20, 30, 40}), rank_with(1, {10, 20, 29}),
                                         rank_with(2, {10, 20, 30, 40})};
  const FlightFinding f = analyse_flights(ranks, comm::monotonic_ns());
  EXPECT_EQ(f.verdict, FlightVerdict::kDisagree);
  EXPECT_EQ(f.seq, 2);
  EXPECT_EQ(f.summary,
            "the ranks disagree at collective #2: rank 1 issued allreduce(float32 x 29) at step 0; "
            "ranks 0, 2 issued allreduce(float32 x 30) at step 0");
}

TEST(FlightAnalysis, RanksThatAgreeWithinTheirRingsButNotBeforeAreStillCaught) {
  // Capacity 2: the differing first collective has left every ring; the chains remember it.
  const std::vector<RankFlight> ranks = {rank_with(0, {10, 20, 30}, 0, 2),
                                         rank_with(1, {11, 20, 30}, 0, 2)};
  const FlightFinding f = analyse_flights(ranks, comm::monotonic_ns());
  EXPECT_EQ(f.verdict, FlightVerdict::kDisagree);
  EXPECT_EQ(f.seq, 1);
  EXPECT_NE(f.summary.find("differ before #1"), std::string::npos) << f.summary;
}

TEST(FlightAnalysis, RanksThatIssuedTheSameCollectivesAreNeverADisagreement) {
  const std::vector<RankFlight> done = {rank_with(0, {10, 20, 30}), rank_with(1, {10, 20, 30})};
  const FlightFinding f = analyse_flights(done, comm::monotonic_ns());
  EXPECT_EQ(f.verdict, FlightVerdict::kAllDone);
  EXPECT_NE(f.summary.find("stopped outside collectives"), std::string::npos) << f.summary;

  const std::vector<RankFlight> stuck = {rank_with(0, {10, 20, 30}, 1),
                                         rank_with(1, {10, 20, 30}, 1)};
  const FlightFinding g = analyse_flights(stuck, comm::monotonic_ns());
  EXPECT_EQ(g.verdict, FlightVerdict::kPending);
  EXPECT_EQ(g.seq, 2);
  EXPECT_NE(g.summary.find("ranks 0, 1 still in it"), std::string::npos) << g.summary;
}

TEST(FlightAnalysis, ARankKilledInACollectiveIsNamedAsEndedThereNotAsStillInIt) {
  // Every rank issued #2; rank 1 was killed in it, rank 0 still waits.
  std::vector<RankFlight> ranks = {rank_with(0, {10, 20, 30}, 1), rank_with(1, {10, 20, 30}, 1)};
  ranks[1].ended = "was killed by signal 9 (Killed)";
  const FlightFinding f = analyse_flights(ranks, comm::monotonic_ns());
  EXPECT_EQ(f.verdict, FlightVerdict::kPending);
  EXPECT_NE(f.summary.find("; rank 0 still in it after"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("; rank 1 (was killed by signal 9 (Killed)) ended while in it"),
            std::string::npos)
      << f.summary;
  EXPECT_EQ(f.summary.find("ranks 0, 1"), std::string::npos) << f.summary;

  // The others finished it: nobody is still in it.
  ranks[0] = rank_with(0, {10, 20, 30});
  const FlightFinding g = analyse_flights(ranks, comm::monotonic_ns());
  EXPECT_NE(g.summary.find("rank 1 (was killed by signal 9 (Killed)) ended while in it, and every "
                           "other rank finished it"),
            std::string::npos)
      << g.summary;
  EXPECT_EQ(g.summary.find("still in"), std::string::npos) << g.summary;

  // Rank 2 never issued #3; rank 1 died in it, only rank 0 waits there.
  std::vector<RankFlight> three = {rank_with(0, {10, 20, 30, 40}, 1),
                                   rank_with(1, {10, 20, 30, 40}, 1), rank_with(2, {10, 20, 30})};
  three[1].ended = "was killed by signal 9 (Killed)";
  const FlightFinding h = analyse_flights(three, comm::monotonic_ns());
  EXPECT_EQ(h.verdict, FlightVerdict::kNeverIssued);
  EXPECT_NE(h.summary.find("rank 2 never issued collective #3"), std::string::npos) << h.summary;
  EXPECT_NE(h.summary.find("; rank 0 waiting in it for"), std::string::npos) << h.summary;
  EXPECT_NE(h.summary.find("; rank 1 (was killed by signal 9 (Killed)) ended while in it"),
            std::string::npos)
      << h.summary;
}

TEST(FlightAnalysis, CollectivesTheRingsDoNotSeeAreSaidInsteadOfStoppedOutsideCollectives) {
  const std::string c10d =
      "c10d's Reducer issues its collectives on its process group, which the flight recorder "
      "does not see";
  const std::vector<RankFlight> done = {rank_with(0, {10, 20, 30}), rank_with(1, {10, 20, 30})};
  const FlightFinding f = analyse_flights(done, comm::monotonic_ns(), c10d);
  EXPECT_EQ(f.verdict, FlightVerdict::kAllDone);
  EXPECT_EQ(f.summary.find("stopped outside collectives"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("every rank's last recorded collective, #2, allreduce(float32 x 30)"),
            std::string::npos)
      << f.summary;
  EXPECT_NE(f.summary.find(c10d), std::string::npos) << f.summary;
  const std::vector<RankFlight> none = {rank_with(0, {}), rank_with(1, {})};
  EXPECT_NE(analyse_flights(none, 0, c10d).summary.find(c10d), std::string::npos);
}

TEST(FlightAnalysis, RanksWithoutARingAreLeftOutAndFailureJsonListsEveryRank) {
  std::vector<RankFlight> ranks = {rank_with(0, {10, 20}, 1), RankFlight{1, std::nullopt, ""}};
  EXPECT_EQ(analyse_flights({ranks[1]}, 0).verdict, FlightVerdict::kNothingRecorded);
  const FlightFinding f = analyse_flights(ranks, comm::monotonic_ns());
  EXPECT_EQ(f.verdict, FlightVerdict::kPending);
  const nlohmann::json j = nlohmann::json::parse(flight_json(ranks, f, comm::monotonic_ns()));
  EXPECT_EQ(j.at("verdict"), "pending");
  ASSERT_EQ(j.at("ranks").size(), 2u);
  EXPECT_EQ(j.at("ranks")[0].at("collectives").size(), 2u);
  EXPECT_EQ(j.at("ranks")[0].at("collectives")[1].at("state"), "issued");
  EXPECT_TRUE(j.at("ranks")[0].at("collectives")[1].at("took_s").is_null());
  EXPECT_FALSE(j.at("ranks")[1].at("recorded").get<bool>());
}

}  // namespace
}  // namespace ddpbench::launch
