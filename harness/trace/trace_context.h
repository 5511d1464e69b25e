// trace_context.h — the two halves of a trace's header, read from the run's report records:
// the experiment (what was trained: scenario and its keys, model and data by content hash, seed,
// dtype, batch, world size, steps, amp, accumulation, zero stage, comparison), which `ddpbench
// diff` requires equal (so a model or data file moved to another path on another host is the same),
// and the environment (where and how: ddpbench and libtorch builds, DDP engine and its settings,
// backend, device and numerics, host, CPU and GPU models, threads, an injected fault), whose
// differences are the point of a diff.
#pragma once

#include "reports/run/run_record.h"
#include "trace/trace_file.h"

namespace ddpbench::trace {

Fields experiment_fields(const reports::RunConfig& config);
Fields environment_fields(const reports::RunContext& context, const reports::RunConfig& config);

// The CPU model as /proc/cpuinfo names it ("" where it does not).
std::string cpu_model();

}  // namespace ddpbench::trace
