// store_impl.h — internal: the c10d store behind comm::Store, for backends that hand it to c10d
// (gloo's rendezvous). Only comm/ includes this.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "comm/store.h"

namespace ddpbench::comm {

struct Store::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  int port = 0;
};

}  // namespace ddpbench::comm
