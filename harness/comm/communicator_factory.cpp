// communicator_factory.cpp — see communicator_factory.h.
#include "comm/communicator_factory.h"

#include "comm/backend_support.h"
#include "comm/gloo_communicator.h"
#include "comm/host_staging.h"
#include "comm/mpi_communicator.h"
#include "comm/nccl_communicator.h"
#include "comm/shm_communicator.h"

namespace ddpbench::comm {

std::unique_ptr<Communicator> make_communicator(const CommunicatorRequest& r) {
  // A device-memory backend checks for its device itself (it owns the CUDA calls); the rest is
  // decided here.
  if (traits(r.backend).host_memory) require_usable_backend(r.backend, {0, mpi_launched()});
  switch (r.backend) {
    case Backend::kGloo:
      return make_gloo_communicator(r.store,
                                    {r.rank, r.world_size, r.interface_address, r.timeout});
    case Backend::kShm: {
      ShmOptions o;
      o.rank = r.rank;
      o.world_size = r.world_size;
      o.interface_address = r.interface_address;
      o.timeout = r.timeout;
      o.segment_prefix = r.shm_prefix;
      return with_host_staging(make_shm_communicator(r.store, o));
    }
    case Backend::kMpi: {
      MpiOptions o;
      o.color = r.mpi_color;
      o.timeout = r.timeout;
      o.on_stall = r.mpi_on_stall;
      return with_host_staging(make_mpi_communicator(o));
    }
    case Backend::kNccl:
      return make_nccl_communicator(r.store, r.rank, r.world_size, r.cuda_device);
  }
  throw std::logic_error("make_communicator: a backend without a communicator");
}

}  // namespace ddpbench::comm
