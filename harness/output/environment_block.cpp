// environment_block.cpp — see environment_block.h.
#include "output/environment_block.h"

#include <fmt/format.h>
#include <gloo/config.h>
#include <mpi.h>
#include <torch/version.h>

#include <chrono>
#include <ctime>
#include <thread>

#include "ddpbench_git_revision.h"
#include "ddpbench_version.h"
#include "launch/environment.h"

namespace ddpbench::output {

reports::RunContext collect_context(const std::vector<std::string>& argv,
                                    const runtime::ExecutionContext& context) {
  const runtime::GpuInfo& gpus = context.gpus();
  reports::RunContext c;
  c.ddpbench_version = DDPBENCH_VERSION;
  c.git_revision = DDPBENCH_GIT_REVISION;
  c.host = launch::host_name();
  c.cores = static_cast<int64_t>(std::thread::hardware_concurrency());
#if defined(__clang__)
  c.compiler = fmt::format("clang {}", __clang_version__);
#elif defined(__GNUC__)
  c.compiler = fmt::format("g++ {}", __VERSION__);
#else
  c.compiler = "unknown";
#endif
  c.libtorch_version = TORCH_VERSION;
  c.gloo_version =
      fmt::format("{}.{}.{}", GLOO_VERSION_MAJOR, GLOO_VERSION_MINOR, GLOO_VERSION_PATCH);
#if defined(OMPI_MAJOR_VERSION)
  c.mpi_version = fmt::format("Open MPI {}.{}.{}", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                              OMPI_RELEASE_VERSION);
#else
  c.mpi_version = fmt::format("MPI {}.{}", MPI_VERSION, MPI_SUBVERSION);
#endif
  c.nccl_version = gpus.nccl_version;
  c.gpu_status = gpus.status;
  c.device = context.on_cuda() ? "cuda" : "cpu";
  c.gpu_devices = runtime::describe_devices(gpus);
  c.gpu_driver = gpus.driver_version;
  c.cuda_runtime = gpus.cuda_runtime_version;
  c.cudnn_version = gpus.cudnn_version;
  c.numerics = context.on_cuda() ? fmt::format(
                                       "TF32 {}; check phase: deterministic algorithms, cuDNN "
                                       "deterministic; perf phase: cudnn.benchmark",
                                       context.numerics().allow_tf32 ? "on" : "off")
                                 : "CPU kernels (deterministic; TF32 does not apply)";
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  c.started_at = buf;
  c.argv = argv;
  return c;
}

}  // namespace ddpbench::output
