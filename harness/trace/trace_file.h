// trace_file.h — trace.pt, the file `ddpbench run --trace` writes and `ddpbench diff` reads: the
// environment the run had, the experiment it ran, and every traced mode's entries in computation
// order (modes/common/trace_entry.h). It is a pickle torch.load reads as a dict:
//   format "ddpbench-trace", version, environment {field: text}, experiment {field: text},
//   values (how tensors are kept), modes [{mode, forward, divisor, wire_dtype, step (int64
//   tensor), rank (int64 tensor), phase [str], tensor [str], fingerprint (bool tensor),
//   value [tensor]}], digest.
// Version 2 added each mode's reduction (divisor, wire_dtype) and the rank column (every rank's
// local gradients); a version 1 trace is still read, as rank 0's alone.
// `digest` is SHA-256 over everything else in a fixed order, so an edited entry is refused, not
// diffed; report.json names the file's own hash, so a swapped file is refused too.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "modes/common/trace_entry.h"

namespace ddpbench::trace {

inline constexpr const char* kTraceFileName = "trace.pt";
inline constexpr int64_t kTraceVersion = 2;
inline constexpr int64_t kOldestTraceVersion = 1;

using Fields = std::vector<std::pair<std::string, std::string>>;

struct ModeEntries {
  std::string mode;
  // How far the forward is seen: "module outputs (N probed modules)" or why none are.
  std::string forward;
  std::vector<modes::TraceEntry> entries;
  // The mode's reduction of its ranks' local gradients: their sum divided by `divisor` (ddp,
  // zero: the world size; dp and single: 1), sent in `wire_dtype` ("" = the gradients' own; a
  // compression hook's "float16" or "bfloat16"). 0: unknown (a version 1 trace).
  int64_t divisor = 0;
  std::string wire_dtype;
};

struct TraceFile {
  int64_t version = kTraceVersion;  // of the file read; written files are kTraceVersion
  Fields environment;
  Fields experiment;
  std::string values;  // the full-or-fingerprint rule, in words
  std::vector<ModeEntries> modes;
};

std::vector<char> trace_bytes(const TraceFile& trace);

// Throws InputError naming `path` for a file that is not a whole, unedited trace of a version this
// ddpbench reads. The first form reads the file; the second parses `bytes` already read from it
// (`diff` hashes the same bytes).
TraceFile read_trace(const std::string& path);
TraceFile read_trace(const std::vector<char>& bytes, const std::string& path);

}  // namespace ddpbench::trace
