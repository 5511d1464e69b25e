// launch_peer_loss_test.cpp — what a rank started by another launcher (torchrun, Slurm, mpirun)
// says about its peers when its collective fails or stalls (launch/peer_loss.h), from the store
// they share: a peer that failed for a reason of its own is named with that reason, not as one
// that "stopped without a word"; a peer that is alive (its heartbeat beats) but never issued the
// collective is named hung, with where it is. (That a peer waiting in the same collective is not
// blamed, mpi_failures_e2e_test.cpp's world of 3 shows.)
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "comm/flight_recorder.h"
#include "comm/store.h"
#include "launch/environment.h"
#include "launch/peer_loss.h"

namespace ddpbench::launch {
namespace {

using std::chrono::seconds;

WorldInfo rank_of_two(int rank, int port) {
  WorldInfo w;
  w.launcher = Launcher::kTorchrun;
  w.rank = rank;
  w.world_size = 2;
  w.master_addr = "127.0.0.1";
  w.master_port = port;
  return w;
}

// Rank 0's recorder, having issued `issued` allreduces, now at check phase step 1's forward.
std::shared_ptr<comm::FlightRecorder> recorder_at(int issued) {
  auto r = std::make_shared<comm::FlightRecorder>(0, "");
  for (int i = 0; i < issued; ++i) r->done(r->issue(comm::FlightOp::kAllreduce, "float32", 8));
  r->set_where(1, "check phase step 1 of 3, forward");
  return r;
}

TEST(PeerLoss, APeerThatFailedOnItsOwnIsNamedWithItsReason) {
  auto store = comm::Store::serve("127.0.0.1", 0, seconds(10));
  const int port = store->port();
  Heartbeat peer(rank_of_two(0, port), "127.0.0.1", port, recorder_at(2), seconds(10));
  mark_own_failure(store.get(), 0, "rank 0: injected crash at step 1");
  const std::string said = explain_collective_failure(store.get(), nullptr, rank_of_two(1, port),
                                                      "Connection closed by peer", 2);
  EXPECT_NE(said.find("a collective failed (Connection closed by peer); rank 0 on " + host_name() +
                      " failed: injected crash at step 1"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find("without a word"), std::string::npos) << said;
}

TEST(PeerLoss, APeerAliveButShortOfTheCollectiveIsNamedHung) {
  auto store = comm::Store::serve("127.0.0.1", 0, seconds(10));
  const int port = store->port();
  Heartbeat peer(rank_of_two(0, port), "127.0.0.1", port, recorder_at(2), seconds(10));
  const std::string hung = explain_stalled_collective(store.get(), nullptr, rank_of_two(1, port),
                                                      "collective #2 not done", 2);
  EXPECT_NE(hung.find("collective #2 not done; rank 0 on " + host_name() +
                      " hung: it is alive but never issued collective #2 (it is at check phase "
                      "step 1 of 3, forward)"),
            std::string::npos)
      << hung;
}

}  // namespace
}  // namespace ddpbench::launch
