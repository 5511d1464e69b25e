// outcome_codec.cpp — see outcome_codec.h. Undefined tensors (parameters without a gradient)
// travel as 0-element tensors, which no real gradient can be.
#include "training/outcome_codec.h"

#include <torch/torch.h>

#include "metrics/phase_times_tensor.h"
#include "reports/record_fields.h"

namespace ddpbench::training {
namespace {

using Dict = c10::impl::GenericDict;

c10::IValue tensor_or_empty(const at::Tensor& t) { return t.defined() ? t : at::empty({0}); }
at::Tensor undefined_if_empty(const at::Tensor& t) { return t.numel() == 0 ? at::Tensor() : t; }

Dict new_dict() { return Dict(c10::StringType::get(), c10::AnyType::get()); }

// A record's fields (reports/record_fields.h's list) into a dict, by key.
struct DictWriter {
  Dict& out;
  template <typename T>
  void operator()(const char* key, const T& field, const reports::FieldSpec&) {
    if constexpr (std::is_enum_v<T>) {
      out.insert(key, std::string(reports::name_of(field)));
    } else {
      out.insert(key, field);
    }
  }
};

// The same fields back; a record from a rank of this very run, so a missing key is a bug.
struct DictReader {
  const Dict& in;
  template <typename T>
  void operator()(const char* key, T& field, const reports::FieldSpec&) {
    const c10::IValue& v = in.at(key);
    if constexpr (std::is_enum_v<T>) {
      field = reports::parse_name<T>(v.toStringRef()).value();
    } else if constexpr (std::is_same_v<T, std::string>) {
      field = v.toStringRef();
    } else if constexpr (std::is_same_v<T, bool>) {
      field = v.toBool();
    } else if constexpr (std::is_same_v<T, int64_t>) {
      field = v.toInt();
    } else {
      static_assert(std::is_same_v<T, double>, "a check or evaluation field of a new type");
      field = v.toDouble();
    }
  }
};

template <typename Record>
c10::IValue encode_record(const Record& r) {
  Dict d = new_dict();
  DictWriter w{d};
  reports::fields(w, r);
  return d;
}

template <typename Record>
Record decode_record(const Dict& d) {
  Record r;
  DictReader reader{d};
  reports::fields(reader, r);
  return r;
}

// Per step, one tensor per parameter or buffer (an undefined one travels as an empty tensor).
c10::impl::GenericList encode_steps(const std::vector<std::vector<at::Tensor>>& steps) {
  c10::impl::GenericList out(c10::AnyType::get());
  for (const auto& step : steps) {
    c10::List<at::Tensor> list;
    for (const auto& t : step) list.push_back(tensor_or_empty(t).toTensor());
    out.push_back(list);
  }
  return out;
}

std::vector<std::vector<at::Tensor>> decode_steps(const c10::IValue& v) {
  std::vector<std::vector<at::Tensor>> out;
  for (const auto& step : v.toListRef()) {
    std::vector<at::Tensor> list;
    for (const auto& t : step.toListRef()) list.push_back(undefined_if_empty(t.toTensor()));
    out.push_back(std::move(list));
  }
  return out;
}

}  // namespace

std::string encode_outcome(const ModeOutcome& o) {
  Dict d = new_dict();
  d.insert("mode", std::string(modes::mode_name(o.mode)));
  d.insert("world_size", o.world_size);
  d.insert("losses", c10::List<double>(o.trace.losses));
  d.insert("first_step", o.trace.first_step);
  d.insert("gradients", encode_steps(o.trace.gradients));
  d.insert("param_names", c10::List<std::string>(o.trace.param_names));
  d.insert("comparison", o.trace.comparison);
  d.insert("loss_scales", c10::List<double>(o.trace.loss_scales));
  c10::List<bool> skipped;
  for (const bool b : o.trace.skipped) skipped.push_back(b);
  d.insert("skipped", skipped);
  c10::List<std::string> diff_names;
  c10::List<std::string> diff_families;  // the check's name (Note [One row per check])
  // step, error, max_rel, violations, ratio, ref_max_abs
  std::vector<double> diff_values;
  for (const auto& s : o.trace.state_diffs) {
    diff_names.push_back(s.tensor);
    diff_families.push_back(reports::name_str(s.family));
    diff_values.insert(diff_values.end(),
                       {static_cast<double>(s.step), s.error, s.max_rel,
                        static_cast<double>(s.violations), s.ratio, s.ref_max_abs});
  }
  d.insert("state_diff_families", diff_families);
  d.insert("state_diff_names", diff_names);
  d.insert("state_diffs", c10::List<double>(diff_values));
  c10::List<std::string> names;
  c10::List<at::Tensor> tensors;
  for (const auto& [n, t] : o.trace.final_state) {
    names.push_back(n);
    tensors.push_back(t);
  }
  d.insert("state_names", names);
  d.insert("state", tensors);
  d.insert("check_times", metrics::phase_times_to_tensor(o.check_times));
  d.insert("perf_times", metrics::phase_times_to_tensor(o.perf_times));
  d.insert("perf_samples_per_step", o.perf_samples_per_step);
  d.insert("backend", o.backend);
  d.insert("bytes_per_step", o.bytes_per_step);
  d.insert("buckets", o.buckets);
  d.insert("gradient_collectives_per_step", o.gradient_collectives_per_step);
  d.insert("peak_device_memory_bytes", c10::List<int64_t>(o.peak_device_memory_bytes));
  c10::List<std::string> hosts;
  for (const auto& h : o.hosts) hosts.push_back(h);
  d.insert("hosts", hosts);
  c10::impl::GenericList checks(c10::AnyType::get());
  for (const auto& c : o.extra_checks) checks.push_back(encode_record(c));
  d.insert("extra_checks", checks);
  // Checkpoints travel as their files' bytes, one uint8 tensor each.
  std::vector<int64_t> checkpoint_steps;
  c10::List<at::Tensor> checkpoint_files;
  for (const auto& c : o.checkpoints) {
    checkpoint_steps.push_back(c.step);
    checkpoint_files.push_back(at::from_blob(const_cast<char*>(c.bytes.data()),
                                             {static_cast<int64_t>(c.bytes.size())}, at::kByte)
                                   .clone());
  }
  d.insert("checkpoint_steps", c10::List<int64_t>(checkpoint_steps));
  d.insert("checkpoint_files", checkpoint_files);
  d.insert("evaluation", encode_record(o.evaluation));
  d.insert("amp_vs_float32", encode_record(o.amp_vs_float32));
  c10::impl::GenericList memory(c10::AnyType::get());
  for (const auto& m : o.memory) memory.push_back(encode_record(m));
  d.insert("memory", memory);
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(d));
  return {bytes.begin(), bytes.end()};
}

ModeOutcome decode_outcome(const std::string& bytes) {
  const auto d = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
  ModeOutcome o;
  o.mode = modes::parse_mode(d.at("mode").toStringRef()).value();
  o.world_size = d.at("world_size").toInt();
  for (const auto& v : d.at("losses").toListRef()) o.trace.losses.push_back(v.toDouble());
  o.trace.first_step = d.at("first_step").toInt();
  o.trace.gradients = decode_steps(d.at("gradients"));
  for (const auto& n : d.at("param_names").toListRef())
    o.trace.param_names.push_back(n.toStringRef());
  o.trace.comparison = d.at("comparison").toStringRef();
  for (const auto& v : d.at("loss_scales").toListRef()) o.trace.loss_scales.push_back(v.toDouble());
  for (const auto& v : d.at("skipped").toListRef()) o.trace.skipped.push_back(v.toBool());
  const auto& diff_names = d.at("state_diff_names").toListRef();
  const auto& diff_families = d.at("state_diff_families").toListRef();
  const auto diff_values = d.at("state_diffs").toDoubleVector();
  for (size_t i = 0; i < diff_names.size(); ++i) {
    const double* v = &diff_values[6 * i];
    o.trace.state_diffs.push_back(
        {static_cast<int64_t>(v[0]), diff_names[i].toStringRef(),
         reports::parse_name<reports::Stage>(diff_families[i].toStringRef()).value(), v[1], v[2],
         static_cast<int64_t>(v[3]), v[4], v[5]});
  }
  const auto& names = d.at("state_names").toListRef();
  const auto& tensors = d.at("state").toListRef();
  for (size_t i = 0; i < names.size(); ++i) {
    o.trace.final_state.emplace_back(names[i].toStringRef(), tensors[i].toTensor());
  }
  o.check_times = metrics::phase_times_from_tensor(d.at("check_times").toTensor());
  o.perf_times = metrics::phase_times_from_tensor(d.at("perf_times").toTensor());
  o.perf_samples_per_step = d.at("perf_samples_per_step").toDouble();
  o.backend = d.at("backend").toStringRef();
  o.bytes_per_step = d.at("bytes_per_step").toInt();
  o.buckets = d.at("buckets").toInt();
  o.gradient_collectives_per_step = d.at("gradient_collectives_per_step").toInt();
  o.peak_device_memory_bytes = d.at("peak_device_memory_bytes").toIntVector();
  for (const auto& h : d.at("hosts").toListRef()) o.hosts.push_back(h.toStringRef());
  for (const auto& c : d.at("extra_checks").toListRef()) {
    o.extra_checks.push_back(decode_record<reports::CheckRecord>(c.toGenericDict()));
  }
  const std::vector<int64_t> checkpoint_steps = d.at("checkpoint_steps").toIntVector();
  const auto& checkpoint_files = d.at("checkpoint_files").toListRef();
  for (size_t i = 0; i < checkpoint_steps.size(); ++i) {
    const at::Tensor t = checkpoint_files[i].toTensor().contiguous();
    const char* b = reinterpret_cast<const char*>(t.data_ptr<uint8_t>());
    o.checkpoints.push_back({checkpoint_steps[i], std::vector<char>(b, b + t.numel())});
  }
  o.evaluation = decode_record<reports::EvaluationRecord>(d.at("evaluation").toGenericDict());
  o.amp_vs_float32 = decode_record<reports::AmpErrorRecord>(d.at("amp_vs_float32").toGenericDict());
  for (const auto& m : d.at("memory").toListRef()) {
    o.memory.push_back(decode_record<reports::RankMemoryRecord>(m.toGenericDict()));
  }
  return o;
}

}  // namespace ddpbench::training
