// flight_recorder_bench.cpp — what the always-on flight recorder (comm/flight_recorder.h) adds to
// each collective: one issue, one wait and one done, into a ring in memory and into one mapped
// from a file (what a spawned rank uses). A DDP step of cifar_resnet18 issues a few dozen
// collectives, so the cost per step is this figure times that count.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "comm/flight_recorder.h"

namespace ddpbench::comm {
namespace {

void record_collectives(benchmark::State& state, const std::string& file) {
  FlightRecorder recorder(0, file);
  recorder.set_where(3, "check phase step 3 of 5, backward");
  for (auto _ : state) {
    const int64_t seq = recorder.issue(FlightOp::kAllreduce, "float32", 6'553'600);
    recorder.waiting(seq);
    recorder.done(seq);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_FlightRecorderInMemory(benchmark::State& state) { record_collectives(state, ""); }
BENCHMARK(BM_FlightRecorderInMemory);

void BM_FlightRecorderMappedFile(benchmark::State& state) {
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("ddpbench-flight-bench-" + std::to_string(getpid()) + ".bin"))
                               .string();
  record_collectives(state, file);
  std::filesystem::remove(file);
}
BENCHMARK(BM_FlightRecorderMappedFile);

}  // namespace
}  // namespace ddpbench::comm
