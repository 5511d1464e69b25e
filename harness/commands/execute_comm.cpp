// execute_comm.cpp — see execute_comm.h. The launching parent and every rank resolve the same
// plan first (comm_plan.h), so a bad flag stops each of them before anything starts.
#include "commands/execute_comm.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <thread>

#include "comm/backend_support.h"
#include "comm_sweep/comm_plan.h"
#include "comm_sweep/comm_sweep.h"
#include "errors.h"
#include "launch/environment.h"
#include "launch/worker_group.h"
#include "launch/world_join.h"
#include "metrics/memcpy_bandwidth.h"
#include "output/output_dir.h"
#include "reports/comm/comm_reporters.h"

namespace ddpbench::commands {
namespace {

const char* comm_launcher_name(const std::optional<launch::WorldInfo>& world) {
  return world ? launch::launcher_name(world->launcher) : "spawned by ddpbench";
}

reports::CommReport make_comm_report(const comm_sweep::CommPlan& plan,
                                     std::vector<reports::CommRow> rows,
                                     const metrics::MemcpyBandwidth& memcpy_bw,
                                     const std::string& launcher,
                                     const std::vector<std::string>& argv) {
  reports::CommReport r;
  r.backend = comm::backend_name(plan.backend);
  r.world_size = plan.world_size;
  r.device = plan.device == runtime::DeviceKind::kCuda ? "cuda" : "cpu";
  r.launcher = launcher;
  r.host = launch::host_name();
  r.iters = plan.iters;
  r.warmup = plan.warmup;
  r.rows = std::move(rows);
  r.memcpy_bytes = static_cast<int64_t>(memcpy_bw.bytes);
  r.memcpy_gb_s = memcpy_bw.gb_per_s;
  for (const reports::CommRow& row : r.rows) {
    if (row.collective == "allreduce" && row.bytes >= r.goal_bytes && r.memcpy_gb_s > 0) {
      r.goal_bytes = row.bytes;
      r.busbw_to_memcpy = row.busbw_gb_s / r.memcpy_gb_s;
    }
  }
  const comm::BackendTraits& t = comm::traits(plan.backend);
  const bool has_rs = std::find(plan.collectives.begin(), plan.collectives.end(),
                                comm::Collective::kReduceScatter) != plan.collectives.end();
  if (has_rs && !t.native_reduce_scatter) {
    r.notes.push_back(
        fmt::format("reduce_scatter on {} is emulated: {}", t.name, t.reduce_scatter_note));
  }
  const int64_t cores = std::max<unsigned>(1, std::thread::hardware_concurrency());
  if (plan.world_size > cores && plan.device == runtime::DeviceKind::kCpu) {
    r.notes.push_back(fmt::format("{} ranks share {} cores: the figures are oversubscribed",
                                  plan.world_size, cores));
  }
  r.argv = argv;
  return r;
}

// Prints the table and footer, writes comm.json and comm.csv into `out` together, and returns
// the exit code the footer states.
int finish_comm(const reports::CommReport& report, output::OutputDir& out) {
  out.stage(reports::kCommJsonFile, reports::render_comm_json(report));
  out.stage(reports::kCommCsvFile, reports::render_comm_csv(report));
  out.commit();
  fmt::print("{}", reports::render_comm_table(report));
  fmt::print("# wrote {}/{} and {}/{}\n", out.path(), reports::kCommJsonFile, out.path(),
             reports::kCommCsvFile);
  std::fflush(stdout);
  return reports::total_wrong(report) == 0 ? kExitOk : kExitCheckFailed;
}

c10::Device rank_device(const comm_sweep::CommPlan& plan, const launch::WorldInfo& world) {
  if (plan.device == runtime::DeviceKind::kCpu) return c10::Device(c10::kCPU);
  // One device per rank on this machine, torchrun's cuda:LOCAL_RANK (choose_device refused
  // more local ranks than devices).
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(world.local_rank));
}

int comm_rank(const comm_sweep::CommPlan& plan, const launch::WorldInfo& world,
              const std::vector<std::string>& argv) {
  const bool spawned = world.launcher == launch::Launcher::kDdpbench;
  const bool writes_report = !spawned && world.rank == 0;
  // Rank 0 of an external launch writes the report: prove --out usable, and measure memcpy
  // while its peers wait at the rendezvous, before the sweep loads the cores.
  std::optional<output::OutputDir> out;
  metrics::MemcpyBandwidth memcpy_bw;
  if (writes_report) {
    out.emplace(plan.out, output::OutputPolicy::kOwnFolder, "comm");
    memcpy_bw = metrics::measure_memcpy_bandwidth(static_cast<size_t>(plan.sizes.back()));
  }
  const int64_t cores = std::max<unsigned>(1, std::thread::hardware_concurrency());
  at::set_num_threads(static_cast<int>(std::max<int64_t>(1, cores / plan.world_size)));
  launch::JoinedWorld joined = launch::join_world(world, plan.backend, plan.timeout);
  // The flight recorder names each collective's row; a spawned rank also tells the parent, which
  // names a rank that stops progressing ("step:phase:what", worker_group.h).
  const comm_sweep::CommProgress progress = [&joined, spawned, rank = world.rank](
                                                int64_t index, const std::string& what) {
    joined.recorder->set_where(index, what);
    if (spawned) joined.store->set(launch::progress_key(rank), fmt::format("{}:0:{}", index, what));
  };
  const std::vector<reports::CommRow> rows =
      comm_sweep::run_comm_sweep(*joined.comm, plan, rank_device(plan, world), progress);
  const bool wrong =
      std::any_of(rows.begin(), rows.end(), [](const reports::CommRow& r) { return r.wrong > 0; });
  if (spawned) {
    // The parent decides the exit code; a non-zero exit here would read as a crashed rank.
    if (world.rank == 0) launch::send_result(*joined.store, comm_sweep::encode_comm_rows(rows));
    return kExitOk;
  }
  if (!writes_report) return wrong ? kExitCheckFailed : kExitOk;  // every rank agrees with rank 0
  return finish_comm(make_comm_report(plan, rows, memcpy_bw, comm_launcher_name(world), argv),
                     *out);
}

}  // namespace

int execute_comm(const requests::CommRequest& request, const std::vector<std::string>& argv,
                 launch::RankZygote* zygote) {
  const std::optional<launch::WorldInfo> world = launch::detect_world(launch::process_env());
  const comm_sweep::CommPlan plan = comm_sweep::resolve_comm(request, world);
  if (world) return comm_rank(plan, *world, argv);
  // Measured first, alone: nothing else of this run is using the cores yet.
  const metrics::MemcpyBandwidth memcpy_bw =
      metrics::measure_memcpy_bandwidth(static_cast<size_t>(plan.sizes.back()));
  output::OutputDir out(plan.out, output::OutputPolicy::kOwnFolder, "comm");
  launch::WorkerGroupOptions group;
  group.world_size = plan.world_size;
  group.progress_timeout = plan.timeout;
  group.argv = argv;
  group.zygote = zygote;
  std::vector<reports::CommRow> rows =
      comm_sweep::decode_comm_rows(launch::run_worker_group(group));
  return finish_comm(
      make_comm_report(plan, std::move(rows), memcpy_bw, comm_launcher_name(world), argv), out);
}

}  // namespace ddpbench::commands
