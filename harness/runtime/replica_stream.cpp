// replica_stream.cpp — see replica_stream.h.
#include "runtime/replica_stream.h"

#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace ddpbench::runtime {

ReplicaStream::ReplicaStream(at::Device device, at::Device master) {
  if (!device.is_cuda()) return;
  const c10::impl::VirtualGuardImpl impl(device.type());
  // Read before the guard below changes this thread's current stream (device may equal master).
  master_stream_ = impl.getStream(master);
  stream_ = impl.getStreamFromGlobalPool(device);
  c10::Event ready(device.type());
  ready.record(*master_stream_);
  ready.block(*stream_);
  guard_.emplace(*stream_);
}

void ReplicaStream::join() const {
  if (!stream_) return;
  c10::Event done(stream_->device_type());
  done.record(*stream_);
  done.block(*master_stream_);
}

}  // namespace ddpbench::runtime
