// checkpoint.cpp — see checkpoint.h.
#include "checkpoint/checkpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "checkpoint/checkpoint_entries.h"
#include "checkpoint/checkpoint_file.h"
#include "checkpoint/checkpoint_optimizer.h"
#include "errors.h"
#include "modes/common/model_state.h"
#include "quoted_input.h"
#include "scenarios/optim/grad_scaler.h"

namespace ddpbench::checkpoint {
namespace {

using namespace io;  // NOLINT(google-build-using-namespace): this file's vocabulary

// What a checkpoint of `module` trained by `spec`'s optimizer can hold (checkpoint_file.h): its
// tensors, and per parameter at most two moments and a step (Adam) or one buffer (SGD). Every
// element counts 8 bytes, float64's: a float64 checkpoint offered to a float32 run is refused
// for its --dtype, not for its size.
RecordBounds record_bounds(const torch::nn::Module& module, const scenarios::OptimizerSpec& spec) {
  constexpr uint64_t kElementBytes = 8;
  constexpr uint64_t kPickleBase = 1 << 20, kPicklePerTensor = 1 << 10;
  RecordBounds b;
  b.largest_tensor = kElementBytes;  // Adam's step
  uint64_t params = 0, tensors = 0, param_bytes = 0, model_bytes = 0;
  for (const auto& p : module.parameters()) {
    ++params;
    param_bytes += kElementBytes * p.numel();
  }
  for (const auto& t : module.parameters()) {
    ++tensors;
    model_bytes += kElementBytes * t.numel();
    b.largest_tensor = std::max<uint64_t>(b.largest_tensor, kElementBytes * t.numel());
  }
  for (const auto& t : module.buffers()) {
    ++tensors;
    model_bytes += kElementBytes * t.numel();
    b.largest_tensor = std::max<uint64_t>(b.largest_tensor, kElementBytes * t.numel());
  }
  const uint64_t moments = spec.kind != scenarios::OptimizerKind::kSgd ? 2 : 1;
  b.all_tensors = model_bytes + moments * param_bytes + kElementBytes * params;
  b.pickle = kPickleBase + kPicklePerTensor * (tensors + 3 * params);
  return b;
}

// The model's state_dict entries by name, without "module." when every key has it.
std::map<std::string, at::Tensor> model_entries(const Dict& model, const std::string& path) {
  std::map<std::string, at::Tensor> out;
  bool all_prefixed = model.size() > 0;
  for (const auto& e : model) {
    if (!e.key().isString() || !e.value().isTensor()) {
      refuse(path, "\"model\" is not a dict of name -> tensor");
    }
    all_prefixed = all_prefixed && e.key().toStringRef().rfind(kDdpKeyPrefix, 0) == 0;
  }
  const size_t strip = all_prefixed ? std::string(kDdpKeyPrefix).size() : 0;
  for (const auto& e : model)
    out.emplace(e.key().toStringRef().substr(strip), e.value().toTensor());
  return out;
}

// Takes `name` from `entries` into `into`, checked against the model's tensor: its shape, and its
// dtype, which for a floating tensor is the run's (`run_float`, what the meta says and the run
// checked: the model is cast to it only when it is placed, after this).
void take(std::map<std::string, at::Tensor>& entries, const std::string& name,
          const at::Tensor& like, at::ScalarType run_float, const TorchFile& file,
          const std::string& path, std::vector<at::Tensor>& into) {
  const auto it = entries.find(name);
  if (it == entries.end()) {
    refuse(path, fmt::format("the model has {} and the checkpoint does not: pass a checkpoint of "
                             "this run's scenario",
                             quoted_input(name)));
  }
  const at::Tensor& t = it->second;
  const at::ScalarType want = like.is_floating_point() ? run_float : like.scalar_type();
  if (t.sizes() != like.sizes() || t.scalar_type() != want) {
    refuse(path, fmt::format("{} is {} in the checkpoint and {} in the model: pass a checkpoint "
                             "of this run's scenario",
                             name, tensor_kind(t), tensor_kind(like.to(want))));
  }
  check_stored(file, t, name, path);
  into.push_back(t);
  entries.erase(it);
}

// DDP's buckets as text, "9,8,7;6,5": buckets launch order, parameter indices in bucket order.
// Text rather than lists: Python writes a one-element list with APPEND and a one-item dict with
// SETITEM, which libtorch 1.13's unpickler lacks, so a checkpoint a user loads and saves again
// (torch.save) would no longer resume. Which indices the model has is the engine's to check
// (bucket_assignment.h: check_bucket_layout).
std::string bucket_text(const std::vector<std::vector<int64_t>>& buckets) {
  std::vector<std::string> parts;
  for (const std::vector<int64_t>& b : buckets)
    parts.push_back(fmt::format("{}", fmt::join(b, ",")));
  return fmt::format("{}", fmt::join(parts, ";"));
}

std::vector<std::vector<int64_t>> bucket_entry(const Dict& d, const char* key,
                                               const std::string& path) {
  const std::string text = string_entry(d, key, path);
  const std::string wrong = fmt::format(
      "\"{}\" is not DDP buckets (\"9,8,7;6,5\": parameter indices): {}", key, kDamaged);
  std::vector<std::vector<int64_t>> out(1);
  int64_t value = -1;
  for (const char c : text) {
    if (c >= '0' && c <= '9') {
      if (value > (int64_t{1} << 40)) refuse(path, wrong);
      value = (value < 0 ? 0 : value * 10) + (c - '0');
    } else if ((c == ',' || c == ';') && value >= 0) {
      out.back().push_back(value);
      value = -1;
      if (c == ';') out.emplace_back();
    } else {
      refuse(path, wrong);
    }
  }
  if (value < 0) refuse(path, wrong);
  out.back().push_back(value);
  return out;
}

// The checkpoint's top-level dicts and what it says about its run.
struct TopLevel {
  Dict top = string_dict(), model = string_dict(), optimizer = string_dict();
};

TopLevel top_level(const c10::IValue& value, const std::string& path) {
  if (!value.isGenericDict()) refuse(path, "holds no dict, so it is no ddpbench checkpoint");
  TopLevel t;
  t.top = value.toGenericDict();
  const c10::IValue& model = entry(t.top, "model", path);
  const c10::IValue& optimizer = entry(t.top, "optimizer", path);
  const c10::IValue& run = entry(t.top, "ddpbench", path);
  if (!model.isGenericDict() || !optimizer.isGenericDict() || !run.isGenericDict()) {
    refuse(path, "\"model\", \"optimizer\" and \"ddpbench\" must be dicts");
  }
  t.model = model.toGenericDict();
  t.optimizer = optimizer.toGenericDict();
  return t;
}

CheckpointMeta read_meta(const c10::IValue& value, const std::string& path) {
  const TopLevel t = top_level(value, path);
  const Dict r = entry(t.top, "ddpbench", path).toGenericDict();
  CheckpointMeta m;
  m.scenario = string_entry(r, "scenario", path);
  m.mode = string_entry(r, "mode", path);
  m.seed = int_entry(r, "seed", path);
  m.world_size = int_entry(r, "world_size", path);
  m.global_batch = int_entry(r, "global_batch", path);
  m.dtype = string_entry(r, "dtype", path);
  if (r.contains("model")) m.model = string_entry(r, "model", path);
  if (r.contains("amp")) m.amp = string_entry(r, "amp", path);
  if (r.contains("ddp_buckets")) {
    m.ddp_buckets = bucket_entry(r, "ddp_buckets", path);
    m.ddp_bucket_cap_bytes = int_entry(r, "ddp_bucket_cap_bytes", path);
  }
  m.step = int_entry(t.top, "step", path);
  m.epoch = int_entry(t.top, "epoch", path);
  if (m.step < 1 || m.epoch < 0) {
    refuse(path, fmt::format("it says step {} of epoch {}, and a checkpoint is saved after step "
                             "1 at the earliest, in epoch 0 or later: {}",
                             m.step, m.epoch, kDamaged));
  }
  return m;
}

// torch.amp.GradScaler.state_dict(), as PyTorch's AMP recipe saves it beside the model.
Dict scaler_state_dict(const scenarios::GradScaler& scaler) {
  const scenarios::GradScalerOptions& o = scaler.options();
  Dict d = string_dict();
  d.insert("scale", scaler.current_scale());
  d.insert("growth_factor", o.growth_factor);
  d.insert("backoff_factor", o.backoff_factor);
  d.insert("growth_interval", o.growth_interval);
  d.insert("_growth_tracker", scaler.growth_tracker());
  return d;
}

// An fp16 checkpoint's "scaler": the scale (finite, positive) and the growth tracker (>= 0).
modes::TrainingState::GradScalerState read_scaler(const Dict& top, const std::string& path) {
  if (!top.contains("scaler")) {
    refuse(path, fmt::format("it says --amp fp16 but holds no \"scaler\" entry: {}", kDamaged));
  }
  const c10::IValue v = entry(top, "scaler", path);
  if (!v.isGenericDict()) refuse(path, "\"scaler\" must be a dict (GradScaler.state_dict())");
  const Dict d = v.toGenericDict();
  const c10::IValue scale = entry(d, "scale", path);
  modes::TrainingState::GradScalerState s;
  s.scale = scale.isDouble() ? scale.toDouble() : -1.0;
  s.growth_tracker = int_entry(d, "_growth_tracker", path);
  if (!std::isfinite(s.scale) || s.scale <= 0 || s.growth_tracker < 0) {
    refuse(path,
           fmt::format("its GradScaler state (scale {}, growth tracker {}) is no scaler's: {}",
                       scale.isDouble() ? fmt::format("{}", scale.toDouble()) : "not a float",
                       s.growth_tracker, kDamaged));
  }
  return s;
}

}  // namespace

std::vector<char> checkpoint_bytes(const torch::nn::Module& module,
                                   torch::optim::Optimizer& optimizer,
                                   const scenarios::OptimizerSpec& spec, const CheckpointMeta& meta,
                                   const std::string& prefix, const scenarios::GradScaler* scaler) {
  const modes::TrainingState s = modes::capture_training_state(module, optimizer);
  c10::Dict<std::string, at::Tensor> model;
  const auto params = module.named_parameters();
  const auto buffers = module.named_buffers();
  for (size_t i = 0; i < params.size(); ++i)
    model.insert(prefix + params[i].key(), s.parameters[i]);
  for (size_t i = 0; i < buffers.size(); ++i) model.insert(prefix + buffers[i].key(), s.buffers[i]);
  Dict run = string_dict();
  run.insert("format", int64_t{1});
  run.insert("scenario", meta.scenario);
  run.insert("mode", meta.mode);
  run.insert("seed", meta.seed);
  run.insert("world_size", meta.world_size);
  run.insert("global_batch", meta.global_batch);
  run.insert("dtype", meta.dtype);
  run.insert("model", meta.model);
  run.insert("amp", meta.amp);
  if (!meta.ddp_buckets.empty()) {
    run.insert("ddp_buckets", bucket_text(meta.ddp_buckets));
    run.insert("ddp_bucket_cap_bytes", meta.ddp_bucket_cap_bytes);
  }
  Dict out = string_dict();
  out.insert("model", model);
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.key());
  out.insert("optimizer", optimizer_state_dict(s, spec, names, meta.step));
  out.insert("epoch", meta.epoch);
  out.insert("step", meta.step);
  out.insert("ddpbench", run);
  if (scaler != nullptr) out.insert("scaler", scaler_state_dict(*scaler));
  return modes::pickle_for_torch_load(c10::IValue(out));
}

Checkpoint parse_checkpoint(const std::vector<char>& bytes, const std::string& path,
                            const torch::nn::Module& module,
                            const scenarios::OptimizerSpec& optimizer_spec,
                            const std::function<void(const CheckpointMeta&)>& check_meta) {
  // Twice: first without the tensors, so that the file's run is checked before its records are
  // bounded by this run's model (another scenario's checkpoint is refused as that).
  const RecordBounds bounds = record_bounds(module, optimizer_spec);
  Checkpoint c;
  c.meta = read_meta(read_torch_file(bytes, path, bounds, /*with_tensors=*/false).value, path);
  if (check_meta) check_meta(c.meta);
  const TorchFile file = read_torch_file(bytes, path, bounds, /*with_tensors=*/true);
  const TopLevel t = top_level(file.value, path);

  std::map<std::string, at::Tensor> entries = model_entries(t.model, path);
  std::vector<std::string> names;  // the parameters', for messages
  const at::ScalarType run_float = c.meta.dtype == "float64" ? at::kDouble : at::kFloat;
  for (const auto& p : module.named_parameters()) {
    take(entries, p.key(), p.value(), run_float, file, path, c.state.parameters);
    names.push_back(p.key());
  }
  for (const auto& b : module.named_buffers()) {
    take(entries, b.key(), b.value(), run_float, file, path, c.state.buffers);
  }
  if (!entries.empty()) {
    refuse(path, fmt::format("the checkpoint has {}, which the model does not: pass a checkpoint "
                             "of this run's scenario",
                             quoted_input(entries.begin()->first)));
  }
  read_optimizer_state(t.optimizer, optimizer_spec, names, c.meta.step, file, path, c.state);
  if (c.meta.amp == "fp16") c.state.grad_scaler = read_scaler(t.top, path);
  return c;
}

}  // namespace ddpbench::checkpoint
