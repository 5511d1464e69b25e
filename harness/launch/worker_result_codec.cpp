// worker_result_codec.cpp — see worker_result_codec.h. Undefined tensors (parameters without a
// gradient) travel as 0-element tensors, which no real gradient can be.
#include "launch/worker_result_codec.h"

#include <torch/torch.h>

#include "metrics/phase_times_tensor.h"

namespace ddpbench::launch {
namespace {

c10::IValue tensor_or_empty(const at::Tensor& t) { return t.defined() ? t : at::empty({0}); }
at::Tensor undefined_if_empty(const at::Tensor& t) { return t.numel() == 0 ? at::Tensor() : t; }

}  // namespace

std::string encode_worker_result(const modes::ddp::DdpWorkerResult& r) {
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  d.insert("losses", c10::List<double>(r.losses));
  c10::impl::GenericList steps(c10::AnyType::get());
  for (const auto& step : r.gradients) {
    c10::List<at::Tensor> g;
    for (const auto& t : step) g.push_back(tensor_or_empty(t).toTensor());
    steps.push_back(g);
  }
  d.insert("gradients", steps);
  c10::List<std::string> names;
  c10::List<at::Tensor> tensors;
  for (const auto& [n, t] : r.final_state) {
    names.push_back(n);
    tensors.push_back(t);
  }
  d.insert("state_names", names);
  d.insert("state", tensors);
  d.insert("timings", metrics::phase_times_to_tensor(r.step_timings));
  d.insert("perf_timings", metrics::phase_times_to_tensor(r.perf_timings));
  d.insert("bytes_per_step", r.bytes_per_step);
  d.insert("num_buckets", r.num_buckets);
  d.insert("disagreement_step", r.disagreement_step);
  d.insert("disagreement_rank", r.disagreement_rank);
  d.insert("disagreement_tensor", r.disagreement_tensor);
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(d));
  return {bytes.begin(), bytes.end()};
}

modes::ddp::DdpWorkerResult decode_worker_result(const std::string& bytes) {
  const auto d = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
  modes::ddp::DdpWorkerResult r;
  for (const auto& v : d.at("losses").toListRef()) r.losses.push_back(v.toDouble());
  for (const auto& step : d.at("gradients").toListRef()) {
    std::vector<at::Tensor> g;
    for (const auto& t : step.toListRef()) g.push_back(undefined_if_empty(t.toTensor()));
    r.gradients.push_back(std::move(g));
  }
  const auto& names = d.at("state_names").toListRef();
  const auto& tensors = d.at("state").toListRef();
  for (size_t i = 0; i < names.size(); ++i) {
    r.final_state.emplace_back(names[i].toStringRef(), tensors[i].toTensor());
  }
  r.step_timings = metrics::phase_times_from_tensor(d.at("timings").toTensor());
  r.perf_timings = metrics::phase_times_from_tensor(d.at("perf_timings").toTensor());
  r.bytes_per_step = d.at("bytes_per_step").toInt();
  r.num_buckets = d.at("num_buckets").toInt();
  r.disagreement_step = d.at("disagreement_step").toInt();
  r.disagreement_rank = d.at("disagreement_rank").toInt();
  r.disagreement_tensor = d.at("disagreement_tensor").toStringRef();
  return r;
}

}  // namespace ddpbench::launch
