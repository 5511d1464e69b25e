// outcome_codec.cpp — see outcome_codec.h. Undefined tensors (parameters without a gradient)
// travel as 0-element tensors, which no real gradient can be.
#include "training/outcome_codec.h"

#include <torch/torch.h>

#include "metrics/phase_times_tensor.h"

namespace ddpbench::training {
namespace {

using Dict = c10::impl::GenericDict;

c10::IValue tensor_or_empty(const at::Tensor& t) { return t.defined() ? t : at::empty({0}); }
at::Tensor undefined_if_empty(const at::Tensor& t) { return t.numel() == 0 ? at::Tensor() : t; }

Dict new_dict() { return Dict(c10::StringType::get(), c10::AnyType::get()); }

c10::IValue encode_check(const reports::CheckRecord& c) {
  Dict d = new_dict();
  d.insert("name", c.name);
  d.insert("status", c.status);
  d.insert("max_abs_diff", c.max_abs_diff);
  d.insert("max_rel_diff", c.max_rel_diff);
  d.insert("tensor", c.tensor);
  d.insert("step", c.step);
  d.insert("detail", c.detail);
  return d;
}

reports::CheckRecord decode_check(const Dict& d) {
  return {d.at("name").toStringRef(),      d.at("status").toStringRef(),
          d.at("max_abs_diff").toDouble(), d.at("max_rel_diff").toDouble(),
          d.at("tensor").toStringRef(),    d.at("step").toInt(),
          d.at("detail").toStringRef()};
}

c10::IValue encode_evaluation(const reports::EvaluationRecord& e) {
  Dict d = new_dict();
  d.insert("status", e.status);
  d.insert("skipped_reason", e.skipped_reason);
  d.insert("dataset", e.dataset);
  d.insert("counts", c10::List<int64_t>({e.samples, e.count, e.padded}));
  d.insert("figures", c10::List<double>({e.accuracy, e.mean_loss, e.accuracy_without_padding,
                                         e.mean_loss_without_padding}));
  d.insert("summary", e.summary);
  return d;
}

reports::EvaluationRecord decode_evaluation(const Dict& d) {
  reports::EvaluationRecord e;
  e.status = d.at("status").toStringRef();
  e.skipped_reason = d.at("skipped_reason").toStringRef();
  e.dataset = d.at("dataset").toStringRef();
  const std::vector<int64_t> counts = d.at("counts").toIntVector();
  const std::vector<double> figures = d.at("figures").toDoubleVector();
  e.samples = counts.at(0);
  e.count = counts.at(1);
  e.padded = counts.at(2);
  e.accuracy = figures.at(0);
  e.mean_loss = figures.at(1);
  e.accuracy_without_padding = figures.at(2);
  e.mean_loss_without_padding = figures.at(3);
  e.summary = d.at("summary").toStringRef();
  return e;
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
  c10::List<std::string> diff_names;
  std::vector<double> diff_values;  // step, buffer, error, max_rel, violations per row
  for (const auto& s : o.trace.state_diffs) {
    diff_names.push_back(s.tensor);
    diff_values.insert(diff_values.end(), {static_cast<double>(s.step), s.buffer ? 1.0 : 0.0,
                                           s.error, s.max_rel, static_cast<double>(s.violations)});
  }
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
  for (const auto& c : o.extra_checks) checks.push_back(encode_check(c));
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
  d.insert("evaluation", encode_evaluation(o.evaluation));
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
  const auto& diff_names = d.at("state_diff_names").toListRef();
  const auto diff_values = d.at("state_diffs").toDoubleVector();
  for (size_t i = 0; i < diff_names.size(); ++i) {
    const double* v = &diff_values[5 * i];
    o.trace.state_diffs.push_back({static_cast<int64_t>(v[0]), diff_names[i].toStringRef(),
                                   v[1] != 0.0, v[2], v[3], static_cast<int64_t>(v[4])});
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
    o.extra_checks.push_back(decode_check(c.toGenericDict()));
  }
  const std::vector<int64_t> checkpoint_steps = d.at("checkpoint_steps").toIntVector();
  const auto& checkpoint_files = d.at("checkpoint_files").toListRef();
  for (size_t i = 0; i < checkpoint_steps.size(); ++i) {
    const at::Tensor t = checkpoint_files[i].toTensor().contiguous();
    const char* b = reinterpret_cast<const char*>(t.data_ptr<uint8_t>());
    o.checkpoints.push_back({checkpoint_steps[i], std::vector<char>(b, b + t.numel())});
  }
  o.evaluation = decode_evaluation(d.at("evaluation").toGenericDict());
  return o;
}

}  // namespace ddpbench::training
