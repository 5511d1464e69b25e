// recording_communicator.h — the communicator every launched rank trains over: the backend's,
// with each collective written into the rank's flight recorder (comm/flight_recorder.h) as it is
// issued, waited on and done. It also holds the two things that act between a rank and its
// backend: --debug-collectives' fingerprint check (Note [Fingerprints before collectives]) and
// the desync and shape faults, which change what one rank issues.
//
// Note [Fingerprints before collectives]:
// PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL wraps the process group and all-gathers a fingerprint
// of each collective before it (ProcessGroupWrapper), so that ranks that disagree raise instead of
// hanging or reducing mismatched buffers. ddpbench does the same with --debug-collectives: before
// each collective the ranks all-gather (op, sequence number, step, count, root, dtype) over the
// same communicator. The check itself is always the same collective (six int64 per rank), so it
// cannot desynchronise; a mismatch ends every rank at once with exit 3, naming the ranks and both
// fingerprints, and nothing has been reduced. It costs one small allgather per collective and
// serialises DDP's bucket overlap (each check waits for the allreduces before it), so it is off by
// default: reports/METRICS.md has its cost. The checks are not counted in collectives_issued().
#pragma once

#include <memory>

#include "comm/communicator.h"
#include "comm/communicator_split.h"
#include "comm/flight_recorder.h"

namespace ddpbench::comm {

// A fault that changes the first allreduce or reduce-scatter this rank issues at or after `step`.
// kSkip: it issues none (the tensor keeps this rank's values; a reduce-scatter returns its own
// block unsummed); kShorten: it reduces a shorter tensor than its peers (an allreduce all but the
// last element, a reduce-scatter one element less per block). `--inject-fault desync|shape`.
enum class CollectiveFault { kNone, kSkip, kShorten };

struct RecordingOptions {
  bool verify_fingerprints = false;  // --debug-collectives
  CollectiveFault fault = CollectiveFault::kNone;
  int64_t fault_step = -1;
  // How split() makes a group's backend communicator (launch::join_world's); none: it cannot.
  // A group's collectives go into the same flight recorder, with the fingerprint check but
  // without the fault.
  Splitter splitter;
};

std::unique_ptr<Communicator> make_recording_communicator(std::unique_ptr<Communicator> backend,
                                                          std::shared_ptr<FlightRecorder> recorder,
                                                          const RecordingOptions& options);

}  // namespace ddpbench::comm
