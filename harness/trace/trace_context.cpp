// trace_context.cpp — see trace_context.h.
#include "trace/trace_context.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>

namespace ddpbench::trace {
namespace {

std::string yes_no(bool b) { return b ? "yes" : "no"; }

// The scenario's keys without MODEL.FILE and DATA.FILE: their absolute paths differ between hosts,
// and the files are named by their content's hash in `model` and `dataset`.
std::string without_file_paths(const std::string& yaml) {
  std::string out;
  size_t start = 0;
  while (start < yaml.size()) {
    size_t end = yaml.find('\n', start);
    if (end == std::string::npos) end = yaml.size();
    const std::string line = yaml.substr(start, end - start);
    const size_t key = line.find_first_not_of(' ');
    if (key == std::string::npos || line.compare(key, 5, "FILE:") != 0) out += line + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

Fields experiment_fields(const reports::RunConfig& c) {
  return {
      {"scenario", c.scenario},
      {"scenario_yaml", without_file_paths(c.scenario_yaml)},
      {"model", c.model},
      {"dataset", c.dataset},
      {"loss", c.loss},
      {"optimizer", c.optimizer},
      {"seed", std::to_string(c.seed)},
      {"dtype", c.dtype},
      {"amp", c.amp},
      {"global_batch", std::to_string(c.global_batch)},
      {"local_batch", std::to_string(c.local_batch)},
      {"world_size", std::to_string(c.world_size)},
      {"steps", std::to_string(c.steps)},
      {"first_step", std::to_string(c.first_step)},
      {"sampler", fmt::format("shuffle {}, drop_last {}, seed {}", yes_no(c.sampler.shuffle),
                              yes_no(c.sampler.drop_last), c.sampler.seed)},
      {"accumulation_steps", std::to_string(c.accumulation_steps)},
      {"no_sync", yes_no(c.no_sync)},
      {"sync_bn", yes_no(c.ddp.sync_bn)},
      {"zero_stage", std::to_string(c.zero_stage)},
      {"comparison", c.comparison},
      {"gradient_record", c.gradient_check},
  };
}

Fields environment_fields(const reports::RunContext& x, const reports::RunConfig& c) {
  return {
      {"ddpbench", fmt::format("{} ({})", x.ddpbench_version, x.git_revision)},
      {"libtorch", x.libtorch_version},
      {"compiler", x.compiler},
      {"ddp_engine", c.ddp.impl},
      {"backend", c.ddp.backend},
      {"bucket_cap_bytes", std::to_string(c.ddp.bucket_cap_bytes)},
      {"first_bucket_bytes", std::to_string(c.ddp.first_bucket_bytes)},
      {"comm_hook", c.ddp.comm_hook},
      {"broadcast_buffers", yes_no(c.ddp.broadcast_buffers)},
      {"find_unused_parameters", yes_no(c.ddp.find_unused_parameters)},
      {"static_graph", yes_no(c.ddp.static_graph)},
      {"gradient_as_bucket_view", yes_no(c.ddp.gradient_as_bucket_view)},
      {"gloo", x.gloo_version},
      {"mpi", x.mpi_version},
      {"nccl", x.nccl_version},
      {"device", x.device},
      {"gpu", x.gpu_devices},
      {"gpu_driver", x.gpu_driver},
      {"cuda_runtime", x.cuda_runtime},
      {"cudnn", x.cudnn_version},
      {"numerics", x.numerics},
      {"host", x.host},
      {"cpu", cpu_model()},
      {"cores", std::to_string(x.cores)},
      {"threads", std::to_string(c.threads)},
      {"modes", fmt::format("{}", fmt::join(c.modes, ","))},
      {"inject_fault", c.inject_fault.empty() ? "none" : c.inject_fault},
  };
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return "";
    const size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

}  // namespace ddpbench::trace
