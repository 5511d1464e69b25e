// comm_plan.cpp — see comm_plan.h.
#include "comm_sweep/comm_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "comm/mpi_communicator.h"
#include "errors.h"
#include "quoted_input.h"
#include "run/device_choice.h"
#include "run/shared_checks.h"
#include "runtime/device_probe.h"

namespace ddpbench::comm_sweep {
namespace {

// Sizes above this are refused: MPI counts are int, and a CPU host would take minutes per row.
constexpr int64_t kMaxCommBytes = int64_t{1} << 31;

std::vector<comm::Collective> resolve_collectives(const std::vector<std::string>& names) {
  if (names.empty()) return comm::all_collectives();
  std::vector<comm::Collective> out;
  for (const std::string& name : names) {
    const auto c = comm::parse_collective(name);
    if (!c) {
      throw InputError(fmt::format("--collectives: unknown collective {}; known: {}",
                                   quoted_input(name), comm::collective_names()));
    }
    if (std::find(out.begin(), out.end(), *c) != out.end()) {
      throw InputError(fmt::format("--collectives names {} twice; list each once", name));
    }
    out.push_back(*c);
  }
  return out;
}

// corrupt:rank=R[,collective=C]
CommFault parse_comm_fault(const std::string& text, int world_size) {
  const std::string syntax = "expected corrupt:rank=R[,collective=C], e.g. corrupt:rank=1";
  const std::string prefix = "corrupt:";
  if (text.rfind(prefix, 0) != 0) {
    throw InputError(
        fmt::format("--inject-fault {}: `comm` knows one fault; {}", quoted_input(text), syntax));
  }
  CommFault fault;
  bool have_rank = false;
  std::set<std::string> seen;
  size_t at = prefix.size();
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    // Which of two rank= would win is an accident of the parser: refuse, as run's faults do.
    if (eq != std::string::npos && !seen.insert(key).second) {
      throw InputError(fmt::format("--inject-fault {}: {} is given twice; give each field once",
                                   quoted_input(text), quoted_input(key)));
    }
    if (key == "rank" && !value.empty() &&
        value.find_first_not_of("0123456789") == std::string::npos && value.size() < 9) {
      fault.rank = std::atoi(value.c_str());
      have_rank = true;
    } else if (key == "collective" && comm::parse_collective(value)) {
      fault.collective = *comm::parse_collective(value);
    } else {
      throw InputError(fmt::format("--inject-fault {}: bad item {}; {} (collectives: {})",
                                   quoted_input(text), quoted_input(item), syntax,
                                   comm::collective_names()));
    }
    at = comma + 1;
  }
  if (!have_rank)
    throw InputError(fmt::format("--inject-fault {}: {}", quoted_input(text), syntax));
  if (fault.rank >= world_size) {
    throw InputError(
        fmt::format("--inject-fault {}: rank {} outside a world of {} ranks; pick a "
                    "rank below {}",
                    quoted_input(text), fault.rank, world_size, world_size));
  }
  return fault;
}

// allgather and reduce_scatter split a size into one block per rank: below one element per rank
// a size has nothing to measure, and is skipped (comm_sweep.cpp). A collective that every size
// skips would print a table without its rows and still say OK.
void check_every_collective_measures(const CommPlan& plan, const requests::CommRequest& r,
                                     int64_t element) {
  for (const comm::Collective c : plan.collectives) {
    if (comm::count_per_rank(c, plan.sizes.back(), element, plan.world_size) > 0) continue;
    const int64_t smallest = comm::size_of(c, 1, element, plan.world_size);
    throw InputError(fmt::format(
        "--min-bytes {} to --max-bytes {} give {} nothing to measure at {} ranks: it needs at "
        "least {} B (one {} element per rank); pass --min-bytes {} or more, and a --max-bytes at "
        "least that",
        r.min_bytes, r.max_bytes, comm::collective_name(c), plan.world_size, smallest, r.dtype,
        smallest));
  }
}

}  // namespace

int64_t parse_byte_size(const std::string& text, const char* flag) {
  const auto refuse = [&] {
    return InputError(fmt::format(
        "{} {}: expected a size in bytes, e.g. 8, 64K, 44.7M or 1G (K, M, G = 1024, 1024^2, "
        "1024^3)",
        flag, quoted_input(text)));
  };
  if (text.empty() || text.find_first_not_of("0123456789.KMG") != std::string::npos) throw refuse();
  std::string number = text;
  double unit = 1;
  switch (number.back()) {
    case 'K':
      unit = 1024.0;
      break;
    case 'M':
      unit = 1024.0 * 1024;
      break;
    case 'G':
      unit = 1024.0 * 1024 * 1024;
      break;
    default:
      break;
  }
  if (unit != 1) number.pop_back();
  if (number.empty() || number.find_first_not_of("0123456789.") != std::string::npos ||
      std::count(number.begin(), number.end(), '.') > 1 || number == ".") {
    throw refuse();
  }
  const double bytes = std::floor(std::strtod(number.c_str(), nullptr) * unit);
  if (bytes < 1) {
    throw InputError(
        fmt::format("{} {} is less than one byte; pass at least 1", flag, quoted_input(text)));
  }
  if (bytes > static_cast<double>(kMaxCommBytes)) {
    throw InputError(
        fmt::format("{} {} is above the largest size `comm` measures, 2G; pass at "
                    "most 2G",
                    flag, quoted_input(text)));
  }
  return static_cast<int64_t>(bytes);
}

CommPlan resolve_comm(const requests::CommRequest& r,
                      const std::optional<launch::WorldInfo>& world) {
  CommPlan plan;
  plan.collectives = resolve_collectives(r.collectives);
  const int64_t min_bytes = parse_byte_size(r.min_bytes, "--min-bytes");
  const int64_t max_bytes = parse_byte_size(r.max_bytes, "--max-bytes");
  if (min_bytes > max_bytes) {
    throw InputError(fmt::format(
        "--min-bytes {} ({} B) is above --max-bytes {} ({} B); pass a min at most the max",
        r.min_bytes, min_bytes, r.max_bytes, max_bytes));
  }
  if (r.step_factor < 2) {
    throw InputError(fmt::format("--step-factor {}: must be an integer >= 2", r.step_factor));
  }
  for (int64_t s = min_bytes; s <= max_bytes; s *= r.step_factor) {
    plan.sizes.push_back(s);
    if (s > max_bytes / r.step_factor) break;  // the next size would pass max (or overflow)
  }
  if (r.dtype == "float32") {
    plan.dtype = at::kFloat;
  } else if (r.dtype == "float64") {
    plan.dtype = at::kDouble;
  } else {
    throw InputError(
        fmt::format("--dtype {}: `comm` checks float32 or float64", quoted_input(r.dtype)));
  }
  const int64_t element = static_cast<int64_t>(c10::elementSize(plan.dtype));
  if (max_bytes < element) {
    throw InputError(fmt::format("--max-bytes {} holds no {} element ({} B); pass at least {}",
                                 r.max_bytes, r.dtype, element, element));
  }
  plan.iters = r.iters;
  plan.warmup = r.warmup;
  if (plan.iters < 1 || plan.warmup < 0) {
    throw InputError("--iters must be >= 1 and --warmup >= 0");
  }
  plan.backend = comm::require_known_backend(r.backend);
  if (world) {
    if (r.world_size_given && r.world_size != world->world_size) {
      throw InputError(fmt::format(
          "--gpus {} contradicts the launcher's world of {} ranks ({}): under an external "
          "launcher the world size comes from it; drop --gpus or start {} ranks",
          r.world_size, world->world_size, launch::launcher_name(world->launcher), r.world_size));
    }
    plan.world_size = world->world_size;
  } else {
    plan.world_size = static_cast<int>(r.world_size);
    if (comm::traits(plan.backend).needs_mpi_launcher) {
      throw InputError(fmt::format(
          "--backend {0} needs ranks started by mpirun (e.g. mpirun -np 2 ddpbench comm "
          "--backend {0}); use --backend {1} to let ddpbench spawn the ranks itself",
          comm::backend_name(plan.backend), comm::backend_name(comm::default_backend())));
    }
  }
  if (plan.world_size < 1) throw InputError("--gpus must be >= 1");
  if (!world) run::check_rank_count(plan.world_size, run::machine_cores(), r.oversubscribe);
  check_every_collective_measures(plan, r, element);
  const runtime::GpuInfo gpus = runtime::probe_gpus();
  run::DeviceQuestion q;
  q.device = r.device;
  q.backend = plan.backend;
  q.world_size = plan.world_size;
  q.ddp = true;
  q.self_launched = !world.has_value();
  q.usable_devices = gpus.usable_devices;
  q.no_device_reason = gpus.status;
  plan.device = run::choose_device(q);
  if (!comm::traits(plan.backend).host_memory && plan.device == runtime::DeviceKind::kCpu &&
      gpus.usable_devices == 0) {
    comm::require_usable_backend(plan.backend, {gpus.usable_devices, comm::mpi_launched()});
  }
  plan.out = r.out;
  plan.timeout = run::checked_timeout(r.timeout);
  if (!r.inject_fault.empty()) plan.fault = parse_comm_fault(r.inject_fault, plan.world_size);
  return plan;
}

}  // namespace ddpbench::comm_sweep
