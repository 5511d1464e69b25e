// outcome_codec.cpp — see outcome_codec.h. ModeOutcome's fields are listed once (outcome_fields
// below), as reports/run/record_fields.h lists a report record's, and one writer and one reader walk
// the list; a value travels by its type (one to_ivalue/from_ivalue pair per type). Undefined
// tensors (parameters without a gradient) travel as 0-element tensors, which no real gradient can
// be.
#include "training/outcome_codec.h"

#include <torch/torch.h>

#include <type_traits>
#include <utility>

#include "metrics/phase_times_tensor.h"
#include "reports/run/record_fields.h"

namespace ddpbench::training {
namespace {

using Dict = c10::impl::GenericDict;

// What travels of a ModeOutcome: every field but the trace's parameter_travel, which only the
// parent's references measure. The keys are the dict's.
template <typename V, typename O>
void outcome_fields(V& v, O& o) {
  v("mode", o.mode);
  v("world_size", o.world_size);
  v("losses", o.trace.losses);
  v("first_step", o.trace.first_step);
  v("gradients", o.trace.gradients);
  v("param_names", o.trace.param_names);
  v("comparison", o.trace.comparison);
  v("loss_scales", o.trace.loss_scales);
  v("skipped", o.trace.skipped);
  v("state_diffs", o.trace.state_diffs);
  v("state", o.trace.final_state);
  v("check_times", o.check_times);
  v("perf_times", o.perf_times);
  v("rank_timings", o.rank_timings);
  v("perf_samples_per_step", o.perf_samples_per_step);
  v("backend", o.backend);
  v("bytes_per_step", o.bytes_per_step);
  v("buckets", o.buckets);
  v("gradient_collectives_per_step", o.gradient_collectives_per_step);
  v("peak_device_memory_bytes", o.peak_device_memory_bytes);
  v("hosts", o.hosts);
  v("extra_checks", o.extra_checks);
  v("checkpoints", o.checkpoints);
  v("evaluation", o.evaluation);
  v("amp_vs_float32", o.amp_vs_float32);
  v("memory", o.memory);
  v("collectives", o.collectives);
  v("trace_entries", o.trace_entries);
  v("traced_forward", o.traced_forward);
}

template <typename V, typename E>
void trace_entry_fields(V& v, E& e) {
  v("step", e.step);
  v("phase", e.phase);
  v("rank", e.rank);
  v("tensor", e.tensor);
  v("fingerprint", e.fingerprint);
  v("value", e.value);
}

template <typename V, typename D>
void state_diff_fields(V& v, D& d) {
  v("step", d.step);
  v("tensor", d.tensor);
  v("family", d.family);  // the check's name (Note [One row per check])
  v("error", d.error);
  v("max_rel", d.max_rel);
  v("violations", d.violations);
  v("ratio", d.ratio);
  v("ref_max_abs", d.ref_max_abs);
}

template <typename V, typename C>
void checkpoint_fields(V& v, C& c) {
  v("step", c.step);
  v("bytes", c.bytes);  // the checkpoint file's bytes, one uint8 tensor
}

// The field lists above and report records' (reports/run/record_fields.h), by the record's type.
template <typename V, typename R>
void fields_of(V& v, R& r) {
  using T = std::remove_const_t<R>;
  if constexpr (std::is_same_v<T, ModeOutcome>) {
    outcome_fields(v, r);
  } else if constexpr (std::is_same_v<T, compare::StateDiff>) {
    state_diff_fields(v, r);
  } else if constexpr (std::is_same_v<T, SavedCheckpoint>) {
    checkpoint_fields(v, r);
  } else if constexpr (std::is_same_v<T, modes::TraceEntry>) {
    trace_entry_fields(v, r);
  } else {
    static_assert(reports::kIsRecord<T>, "a ModeOutcome field of a new type");
    reports::fields(v, r);
  }
}

template <typename T>
inline constexpr bool kHasFields =
    reports::kIsRecord<T> || std::is_same_v<T, ModeOutcome> ||
    std::is_same_v<T, compare::StateDiff> || std::is_same_v<T, SavedCheckpoint> ||
    std::is_same_v<T, modes::TraceEntry>;

// One overload per type a field has; the generic ones for records, enums and lists.
c10::IValue to_ivalue(int64_t v) { return v; }
c10::IValue to_ivalue(double v) { return v; }
c10::IValue to_ivalue(bool v) { return v; }
c10::IValue to_ivalue(const std::string& v) { return v; }
c10::IValue to_ivalue(const at::Tensor& t) { return t.defined() ? t : at::empty({0}); }
c10::IValue to_ivalue(const std::vector<bool>& v);
c10::IValue to_ivalue(const std::vector<char>& bytes);
c10::IValue to_ivalue(const std::vector<metrics::PhaseTimes>& times) {
  return metrics::phase_times_to_tensor(times);
}
c10::IValue to_ivalue(const std::pair<std::string, at::Tensor>& named);
c10::IValue to_ivalue(modes::TracePhase phase) {
  return std::string(modes::trace_phase_name(phase));
}
template <typename E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
c10::IValue to_ivalue(E value) {
  return std::string(reports::name_of(value));
}
template <typename R, std::enable_if_t<kHasFields<R>, int> = 0>
c10::IValue to_ivalue(const R& record);
template <typename T>
c10::IValue to_ivalue(const std::vector<T>& list);

void from_ivalue(const c10::IValue& v, int64_t& out) { out = v.toInt(); }
void from_ivalue(const c10::IValue& v, double& out) { out = v.toDouble(); }
void from_ivalue(const c10::IValue& v, bool& out) { out = v.toBool(); }
void from_ivalue(const c10::IValue& v, std::string& out) { out = v.toStringRef(); }
void from_ivalue(const c10::IValue& v, at::Tensor& out) {
  const at::Tensor t = v.toTensor();
  out = t.numel() == 0 ? at::Tensor() : t;
}
void from_ivalue(const c10::IValue& v, std::vector<bool>& out);
void from_ivalue(const c10::IValue& v, std::vector<char>& bytes);
void from_ivalue(const c10::IValue& v, std::vector<metrics::PhaseTimes>& times) {
  times = metrics::phase_times_from_tensor(v.toTensor());
}
void from_ivalue(const c10::IValue& v, std::pair<std::string, at::Tensor>& named);
void from_ivalue(const c10::IValue& v, modes::TracePhase& phase) {
  phase = modes::trace_phase_named(v.toStringRef());
}
// A name of this very binary's table, from a rank of this very run: an unknown one is a bug.
template <typename E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
void from_ivalue(const c10::IValue& v, E& out) {
  out = reports::parse_name<E>(v.toStringRef()).value();
}
template <typename R, std::enable_if_t<kHasFields<R>, int> = 0>
void from_ivalue(const c10::IValue& v, R& record);
template <typename T>
void from_ivalue(const c10::IValue& v, std::vector<T>& list);

// A record's fields into a dict, by key (a report record's visitor passes its FieldSpec too).
struct DictWriter {
  Dict& out;
  template <typename T, typename... Spec>
  void operator()(const char* key, const T& field, const Spec&... /*spec*/) {
    out.insert(key, to_ivalue(field));
  }
};

// The same fields back; a record from a rank of this very run, so a missing key is a bug.
struct DictReader {
  const Dict& in;
  template <typename T, typename... Spec>
  void operator()(const char* key, T& field, const Spec&... /*spec*/) {
    from_ivalue(in.at(key), field);
  }
};

template <typename R, std::enable_if_t<kHasFields<R>, int>>
c10::IValue to_ivalue(const R& record) {
  Dict d(c10::StringType::get(), c10::AnyType::get());
  DictWriter writer{d};
  fields_of(writer, record);
  return d;
}

template <typename R, std::enable_if_t<kHasFields<R>, int>>
void from_ivalue(const c10::IValue& v, R& record) {
  const Dict d = v.toGenericDict();
  DictReader reader{d};
  fields_of(reader, record);
}

template <typename T>
c10::IValue to_ivalue(const std::vector<T>& list) {
  c10::impl::GenericList out(c10::AnyType::get());
  for (const T& item : list) out.push_back(to_ivalue(item));
  return out;
}

template <typename T>
void from_ivalue(const c10::IValue& v, std::vector<T>& list) {
  list.clear();
  for (const c10::IValue& item : v.toListRef()) from_ivalue(item, list.emplace_back());
}

c10::IValue to_ivalue(const std::vector<bool>& v) {
  c10::List<bool> out;
  for (const bool b : v) out.push_back(b);
  return out;
}

void from_ivalue(const c10::IValue& v, std::vector<bool>& out) {
  out.clear();
  for (const c10::IValue& b : v.toListRef()) out.push_back(b.toBool());
}

c10::IValue to_ivalue(const std::vector<char>& bytes) {
  return at::from_blob(const_cast<char*>(bytes.data()), {static_cast<int64_t>(bytes.size())},
                       at::kByte)
      .clone();
}

void from_ivalue(const c10::IValue& v, std::vector<char>& bytes) {
  const at::Tensor t = v.toTensor().contiguous();
  const char* b = reinterpret_cast<const char*>(t.data_ptr<uint8_t>());
  bytes.assign(b, b + t.numel());
}

c10::IValue to_ivalue(const std::pair<std::string, at::Tensor>& named) {
  c10::impl::GenericList pair(c10::AnyType::get());
  pair.push_back(named.first);
  pair.push_back(named.second);
  return pair;
}

void from_ivalue(const c10::IValue& v, std::pair<std::string, at::Tensor>& named) {
  const auto& items = v.toListRef();
  named = {items.at(0).toStringRef(), items.at(1).toTensor()};
}

}  // namespace

std::string encode_outcome(const ModeOutcome& o) {
  const std::vector<char> bytes = torch::pickle_save(to_ivalue(o));
  return {bytes.begin(), bytes.end()};
}

ModeOutcome decode_outcome(const std::string& bytes) {
  ModeOutcome o;
  from_ivalue(torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())), o);
  return o;
}

}  // namespace ddpbench::training
