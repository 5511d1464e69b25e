// tensor_measure.h — how `ddpbench diff` sizes one tensor's difference between two traces: bit
// for bit, then its largest absolute, relative and ulp difference and the normalized error of
// Note [Classing a difference] (trace_diff.h), which a kernel's or the optimizer's first
// difference is held to; and what the trace can say of where such a difference came from.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <unordered_map>

#include "modes/common/trace_entry.h"
#include "reports/diff/diff_record.h"

namespace ddpbench::trace {

bool same_bytes(const at::Tensor& a, const at::Tensor& b);

// Fills `d`'s sizes and its class by the tolerance rule: identical when the bytes are, else
// rounding when the normalized error is within `limit` (level: the phase's rounding level;
// `allowance` (full updates): what each element may differ by before it counts, the rounding of
// p + update), diverged beyond it or when the dtype or shape differs.
void measure(const modes::TraceEntry& a, const modes::TraceEntry& b, double level, double limit,
             at::ScalarType run, const at::Tensor& allowance, reports::TensorDifference& d);

// An update's per-element allowance (Note [Parameters judged by what moved them]'s twin): 2 ulps
// of the parameter both traces hold whole; undefined for anything else. `in_a` and `in_b` index
// the traces' entries by key_of.
at::Tensor update_allowance(const modes::TraceEntry& e,
                            const std::unordered_map<std::string, const modes::TraceEntry*>& in_a,
                            const std::unordered_map<std::string, const modes::TraceEntry*>& in_b);

// "<step>|<phase>|<rank>|<tensor>": an entry's place in its trace.
std::string key_of(const modes::TraceEntry& e);

// Where a difference appeared first in its mode: the operation whose inputs were identical.
std::string origin_cause(const modes::TraceEntry& e, const std::string& mode,
                         const std::string& world);

}  // namespace ddpbench::trace
