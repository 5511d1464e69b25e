// backend_support.cpp — see backend_support.h. The table is the only place a backend's
// properties are written down.
#include "comm/backend_support.h"

#include <fmt/format.h>

#include <algorithm>

#include "errors.h"

namespace ddpbench::comm {

const std::vector<BackendTraits>& backend_table() {
  static const std::vector<BackendTraits> table = {
      {Backend::kGloo,
       "gloo",
       "TCP, ranks spawned by ddpbench or any launcher",
       /*host_memory=*/true,
       /*device_memory=*/false,
       /*needs_mpi_launcher=*/false,
       /*one_rank_per_device=*/false,
       /*listens_on_master_addr=*/true,
       {at::kFloat, at::kDouble, at::kHalf, at::kLong},
       // libtorch 1.13's ProcessGroupGloo has none: built from gloo's sends and receives with a
       // reduce-scatter's traffic (comm/gloo_reduce_scatter.h), so it is not an emulation.
       /*native_reduce_scatter=*/true,
       ""},
      // Allreduce through shared memory, the rest through an inner gloo communicator (so it
      // listens on --master-addr too); refuses ranks on different hosts when it starts.
      {Backend::kShm,
       "shm",
       "shared memory, every rank on this host; fastest on one CPU machine",
       true,
       false,
       false,
       false,
       true,
       {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kLong},
       false,
       "emulated as a shared-memory allreduce of which each rank keeps its block"},
      {Backend::kMpi,
       "mpi",
       "OpenMPI, ranks started by mpirun",
       true,
       false,
       true,
       false,
       false,
       {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kLong},
       true,
       ""},
      {Backend::kNccl,
       "nccl",
       "CUDA devices, one rank per GPU",
       false,
       true,
       false,
       true,
       false,
       {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kLong},
       true,
       ""},
  };
  return table;
}

const BackendTraits& traits(Backend backend) {
  for (const BackendTraits& t : backend_table()) {
    if (t.backend == backend) return t;
  }
  throw std::logic_error("backend missing from comm::backend_table()");
}

std::optional<Backend> parse_backend(std::string_view name) {
  for (const BackendTraits& t : backend_table()) {
    if (name == t.name) return t.backend;
  }
  return std::nullopt;
}

std::string backend_names() {
  std::string out;
  for (const BackendTraits& t : backend_table())
    out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

std::string backend_help() {
  std::string out;
  for (const BackendTraits& t : backend_table()) {
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", t.name, t.help);
  }
  return out;
}

Backend require_known_backend(const std::string& name) {
  if (name.empty()) return default_backend();
  if (const auto backend = parse_backend(name)) return *backend;
  throw InputError(
      fmt::format("unknown --backend '{}': known backends are {}", name, backend_names()));
}

void require_usable_backend(Backend backend, const BackendSituation& situation) {
  const BackendTraits& t = traits(backend);
  if (t.needs_mpi_launcher && !situation.under_mpirun) {
    throw InputError(fmt::format(
        "--backend {0} needs ranks started by mpirun (e.g. mpirun -np 4 ddpbench run --backend "
        "{0} ...); use --backend {1} to let ddpbench spawn the workers itself",
        t.name, backend_name(default_backend())));
  }
  if (!t.host_memory && situation.cuda_devices == 0) {
    throw InputError(fmt::format(
        "--backend {} needs a CUDA device and a build with CUDA + NCCL, and this process has "
        "none; use --backend {}",
        t.name, backend_name(default_backend())));
  }
}

bool supports_sum(Backend backend, at::ScalarType dtype) {
  const std::vector<at::ScalarType>& dtypes = traits(backend).sum_dtypes;
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

}  // namespace ddpbench::comm
