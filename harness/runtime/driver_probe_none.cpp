// driver_probe_none.cpp — driver_probe.h for builds without the CUDA toolkit + NCCL.
#include "runtime/driver_probe.h"

namespace ddpbench::runtime {

DriverView probe_driver() {
  DriverView view;
  view.status = "built without CUDA/NCCL";
  return view;
}

}  // namespace ddpbench::runtime
