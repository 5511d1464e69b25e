// replica_stream.h — a DataParallel replica's own CUDA stream, as PyTorch's parallel_apply gives
// each replica: while alive it is the thread's current stream on the replica's device, after it
// waited for the work queued on the master's stream (the parameters to copy, the scattered
// inputs); join() makes the master's stream wait for what the replica queued. Device-generic
// (c10's virtual guard and events), so it compiles against any libtorch; on the CPU it does
// nothing.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>

#include <optional>

namespace ddpbench::runtime {

class ReplicaStream {
 public:
  ReplicaStream(at::Device device, at::Device master);
  ReplicaStream(const ReplicaStream&) = delete;
  ReplicaStream& operator=(const ReplicaStream&) = delete;

  // The master's stream waits for everything queued on this one (no host synchronisation).
  void join() const;

 private:
  std::optional<c10::Stream> master_stream_;
  std::optional<c10::Stream> stream_;
  std::optional<c10::StreamGuard> guard_;  // last: restores the previous stream first
};

}  // namespace ddpbench::runtime
