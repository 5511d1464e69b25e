// comm_recording_communicator_test.cpp — the recording communicator over real gloo ranks: every
// collective lands in the flight recorder with its fingerprint and state; under
// --debug-collectives a rank whose allreduce has another length stops every rank before anything
// is reduced, naming both fingerprints; the shape and desync faults change exactly one collective
// of one rank, of an asynchronous reduce-scatter too (issued, then done once waited); and the
// fingerprint checks are not counted as the run's collectives.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "comm/flight_recorder.h"
#include "comm/recording_communicator.h"
#include "errors.h"
#include "support/thread_world.h"

namespace ddpbench::comm {
namespace {

// Runs `body` on 2 gloo ranks, each over a recording communicator with its own recorder.
void run_recorded(const RecordingOptions& rank1_options, bool verify,
                  const std::function<void(Communicator&, FlightRecorder&)>& body) {
  testing::run_ranks(2, [&](Communicator& backend) {
    // The world owns `backend`; the wrapper must not delete it.
    struct Borrowed : Communicator {
      explicit Borrowed(Communicator& c) : c_(c) {}
      int rank() const override { return c_.rank(); }
      int world_size() const override { return c_.world_size(); }
      std::string backend() const override { return c_.backend(); }
      std::shared_ptr<Work> allreduce_sum(at::Tensor t) override { return c_.allreduce_sum(t); }
      void broadcast(std::vector<at::Tensor> t, int root) override { c_.broadcast(t, root); }
      std::vector<at::Tensor> allgather(const at::Tensor& t) override { return c_.allgather(t); }
      at::Tensor reduce_scatter_sum(const at::Tensor& t) override {
        return c_.reduce_scatter_sum(t);
      }
      ScatterWork reduce_scatter_sum_async(at::Tensor t) override {
        return c_.reduce_scatter_sum_async(std::move(t));
      }
      void barrier() override { c_.barrier(); }
      int64_t collectives_issued() const override { return c_.collectives_issued(); }
      Communicator& c_;
    };
    auto recorder = std::make_shared<FlightRecorder>(backend.rank(), "");
    RecordingOptions options = backend.rank() == 1 ? rank1_options : RecordingOptions{};
    options.verify_fingerprints = verify;
    auto comm = make_recording_communicator(std::make_unique<Borrowed>(backend), recorder, options);
    body(*comm, *recorder);
  });
}

TEST(RecordingCommunicator, EveryCollectiveIsRecordedWithItsFingerprintAndEndsDone) {
  run_recorded({}, /*verify=*/true, [](Communicator& comm, FlightRecorder& recorder) {
    recorder.set_where(4, "check phase step 4 of 5, backward");
    at::Tensor t = at::ones({6});
    allreduce_sum_blocking(comm, t);
    comm.broadcast({at::zeros({3}, at::kDouble)}, 1);
    comm.barrier();
    EXPECT_EQ(t[0].item<float>(), 2.0f);
    // Three collectives, whatever the fingerprint checks cost underneath.
    EXPECT_EQ(comm.collectives_issued(), 3);
    const FlightLog log = recorder.snapshot();
    ASSERT_EQ(log.issued, 3);
    EXPECT_EQ(describe_fingerprint(log.entries[0]), "allreduce(float32 x 6) at step 4");
    EXPECT_EQ(describe_fingerprint(log.entries[1]), "broadcast(float64 x 3, root 1) at step 4");
    for (const FlightEntry& e : log.entries) EXPECT_EQ(e.state, FlightState::kDone);
  });
}

TEST(RecordingCommunicator, DebugCollectivesStopsBothRanksBeforeAMismatchedAllreduce) {
  std::atomic<int> stopped{0};
  RecordingOptions shape;
  shape.fault = CollectiveFault::kShorten;
  shape.fault_step = 2;
  run_recorded(shape, /*verify=*/true, [&](Communicator& comm, FlightRecorder& recorder) {
    at::Tensor t = at::full({5}, comm.rank() + 1.0f);
    recorder.set_where(1, "step 1");
    allreduce_sum_blocking(comm, t);  // before the fault's step: untouched
    EXPECT_EQ(t[4].item<float>(), 3.0f);
    recorder.set_where(2, "step 2");
    at::Tensor u = at::full({5}, comm.rank() + 1.0f);
    try {
      allreduce_sum_blocking(comm, u);
      ADD_FAILURE() << "rank " << comm.rank() << " reduced a mismatched allreduce";
    } catch (const WorkerFailure& e) {
      ++stopped;
      const std::string m = e.what();
      EXPECT_NE(m.find("collective #1 differs"), std::string::npos) << m;
      EXPECT_NE(m.find("rank 1 issued allreduce(float32 x 4) at step 2"), std::string::npos) << m;
      EXPECT_NE(m.find("rank 0 issued allreduce(float32 x 5) at step 2"), std::string::npos) << m;
    }
    // Nothing was reduced: each rank still holds its own values.
    EXPECT_EQ(u[0].item<float>(), comm.rank() + 1.0f);
    EXPECT_EQ(recorder.snapshot().find(1)->state, FlightState::kFailed);
  });
  EXPECT_EQ(stopped, 2);
}

TEST(RecordingCommunicator, TheDesyncFaultSkipsOneAllreduceOfOneRankAndNothingElse) {
  RecordingOptions desync;
  desync.fault = CollectiveFault::kSkip;
  desync.fault_step = 0;
  run_recorded(desync, /*verify=*/false, [](Communicator& comm, FlightRecorder& recorder) {
    recorder.set_where(0, "step 0");
    at::Tensor a = at::full({3}, 1.0f);
    allreduce_sum_blocking(comm, a);  // rank 1 skips it and keeps its own values
    if (comm.rank() == 1) {
      EXPECT_EQ(a[0].item<float>(), 1.0f);
      at::Tensor b = at::full({3}, 10.0f);
      allreduce_sum_blocking(comm, b);  // pairs with rank 0's first: the desync
      EXPECT_EQ(b[0].item<float>(), 11.0f);
    } else {
      EXPECT_EQ(a[0].item<float>(), 11.0f);
    }
    EXPECT_EQ(recorder.snapshot().issued, 1);  // the skipped one was never issued
  });
}

// A reduce-scatter started during backward (zero stages 2 and 3) stays issued until it is waited
// on; the desync fault on it leaves rank 1 its own block unsummed and sends nothing, so rank 1's
// next collective of the same length pairs with rank 0's reduce-scatter.
TEST(RecordingCommunicator, AnAsynchronousReduceScatterIsRecordedUntilWaitedAndTakesTheFault) {
  RecordingOptions desync;
  desync.fault = CollectiveFault::kSkip;
  desync.fault_step = 0;
  run_recorded(desync, /*verify=*/false, [](Communicator& comm, FlightRecorder& recorder) {
    recorder.set_where(0, "step 0");
    const at::Tensor input = at::arange(4, at::kFloat) + 1;  // blocks [1, 2] and [3, 4]
    ScatterWork pending = comm.reduce_scatter_sum_async(input.clone());
    if (comm.rank() == 1) {
      pending.work->wait();
      EXPECT_TRUE(at::equal(pending.block, at::tensor({3.0f, 4.0f})));  // its own, unsummed
      EXPECT_EQ(recorder.snapshot().issued, 0);  // the skipped one was never issued
      // Pairs with rank 0's reduce-scatter: the desync.
      ScatterWork next = comm.reduce_scatter_sum_async(at::full({4}, 10.0f));
      next.work->wait();
      EXPECT_TRUE(at::equal(next.block, at::tensor({13.0f, 14.0f})));
    } else {
      EXPECT_EQ(recorder.snapshot().find(0)->state, FlightState::kIssued);
      pending.work->wait();
      EXPECT_TRUE(at::equal(pending.block, at::tensor({11.0f, 12.0f})));
      const FlightLog log = recorder.snapshot();
      ASSERT_EQ(log.issued, 1);
      EXPECT_EQ(describe_fingerprint(log.entries[0]), "reduce_scatter(float32 x 4) at step 0");
      EXPECT_EQ(log.entries[0].state, FlightState::kDone);
    }
  });
}

}  // namespace
}  // namespace ddpbench::comm
