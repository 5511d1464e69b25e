// checkpoint.cpp — see checkpoint.h.
#include "modes/common/checkpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <map>

#include "errors.h"
#include "modes/common/model_state.h"
#include "quoted_input.h"

namespace ddpbench::modes {
namespace {

using Dict = c10::impl::GenericDict;

Dict string_dict() { return Dict(c10::StringType::get(), c10::AnyType::get()); }

// "Float [64, 3, 7, 7]", as messages show a tensor's kind.
std::string tensor_kind(const at::Tensor& t) {
  return fmt::format("{} [{}]", c10::toString(t.scalar_type()), fmt::join(t.sizes(), ", "));
}

// TrainingState's optimizer part as PyTorch's optimizer.state_dict() lays it out: "state" maps
// each parameter's index to its state by PyTorch's names (SGD: momentum_buffer; Adam: step,
// exp_avg, exp_avg_sq), a parameter without state (before its first step) has no entry, and one
// param group holds the hyper-parameters and the indices. The one place that knows
// TrainingState's optimizer layout on the way out (read_optimizer_state on the way in).
Dict optimizer_state_dict(const TrainingState& s, const scenarios::OptimizerSpec& spec) {
  Dict state(c10::IntType::get(), c10::AnyType::get());
  for (size_t i = 0; i < s.optimizer_state.size(); ++i) {
    if (s.optimizer_state[i].empty()) continue;
    Dict entry = string_dict();
    for (const auto& [name, tensor] : s.optimizer_state[i]) entry.insert(name, tensor);
    state.insert(static_cast<int64_t>(i), entry);
  }
  Dict group = string_dict();
  group.insert("lr", spec.lr);
  if (spec.kind == scenarios::OptimizerKind::kAdam) {
    group.insert("betas", c10::ivalue::Tuple::create({spec.beta1, spec.beta2}));
    group.insert("eps", spec.eps);
    group.insert("weight_decay", spec.weight_decay);
    group.insert("amsgrad", false);
  } else {
    group.insert("momentum", spec.momentum);
    group.insert("dampening", spec.dampening);
    group.insert("weight_decay", spec.weight_decay);
    group.insert("nesterov", spec.nesterov);
  }
  group.insert("maximize", false);
  group.insert("foreach", c10::IValue());
  group.insert("differentiable", false);
  // A list of Any, not c10::List<int64_t>: the pickler writes a typed int list through
  // torch.jit._pickle.build_intlist, a global PyTorch >= 2.6's default torch.load
  // (weights_only=True) refuses; a plain list it reads.
  c10::impl::GenericList params(c10::AnyType::get());
  for (size_t i = 0; i < s.parameters.size(); ++i) params.push_back(static_cast<int64_t>(i));
  group.insert("params", params);
  c10::impl::GenericList groups(c10::AnyType::get());
  groups.push_back(group);
  Dict out = string_dict();
  out.insert("state", state);
  out.insert("param_groups", groups);
  return out;
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw InputError(fmt::format("--resume {}: {}", quoted_input(path), why));
}

c10::IValue entry(const Dict& d, const char* key, const std::string& path) {
  const auto it = d.find(key);
  if (it == d.end()) {
    refuse(path, fmt::format("no \"{}\" entry, so it is no ddpbench checkpoint; pass a file "
                             "written by `ddpbench run --checkpoint-every N`",
                             key));
  }
  return it->value();
}

// The inverse of optimizer_state_dict: fills s.optimizer_state (one map per parameter, empty
// where the file has no entry), each state tensor but Adam's scalar step checked against its
// parameter's shape and dtype.
void read_optimizer_state(const Dict& optimizer, const std::string& path, TrainingState& s) {
  const c10::IValue& state = entry(optimizer, "state", path);
  if (!state.isGenericDict()) refuse(path, "\"optimizer\"[\"state\"] is not a dict");
  const Dict per_param = state.toGenericDict();
  s.optimizer_state.assign(s.parameters.size(), {});
  for (const auto& e : per_param) {
    const int64_t i = e.key().isInt() ? e.key().toInt() : -1;
    if (i < 0 || i >= static_cast<int64_t>(s.parameters.size()) || !e.value().isGenericDict()) {
      refuse(path, fmt::format("the optimizer state has an entry that is no parameter of {}",
                               s.parameters.size()));
    }
    const at::Tensor& param = s.parameters[static_cast<size_t>(i)];
    for (const auto& field : e.value().toGenericDict()) {
      if (!field.key().isString() || !field.value().isTensor()) {
        refuse(path, fmt::format("the optimizer state of parameter {} is not name -> tensor", i));
      }
      const std::string& name = field.key().toStringRef();
      const at::Tensor t = field.value().toTensor();
      if (name != "step" &&
          (t.sizes() != param.sizes() || t.scalar_type() != param.scalar_type())) {
        refuse(path, fmt::format("the optimizer's {} of parameter {} is {}, the parameter {}", name,
                                 i, tensor_kind(t), tensor_kind(param)));
      }
      s.optimizer_state[static_cast<size_t>(i)].emplace(name, t);
    }
  }
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

// Takes `name` from `entries` into `into`, checked against the model's tensor.
void take(std::map<std::string, at::Tensor>& entries, const std::string& name,
          const at::Tensor& like, const std::string& path, std::vector<at::Tensor>& into) {
  const auto it = entries.find(name);
  if (it == entries.end()) {
    refuse(path, fmt::format("the model has {} and the checkpoint does not: pass a checkpoint of "
                             "this run's scenario",
                             quoted_input(name)));
  }
  const at::Tensor& t = it->second;
  if (t.sizes() != like.sizes() || t.scalar_type() != like.scalar_type()) {
    refuse(path, fmt::format("{} is {} in the checkpoint and {} in the model: pass a checkpoint "
                             "of this run's scenario",
                             name, tensor_kind(t), tensor_kind(like)));
  }
  into.push_back(t);
  entries.erase(it);
}

int64_t int_entry(const Dict& d, const char* key, const std::string& path) {
  const c10::IValue v = entry(d, key, path);
  if (!v.isInt()) refuse(path, fmt::format("\"{}\" is not an integer", key));
  return v.toInt();
}

std::string string_entry(const Dict& d, const char* key, const std::string& path) {
  const c10::IValue v = entry(d, key, path);
  if (!v.isString()) refuse(path, fmt::format("\"{}\" is not a string", key));
  return v.toStringRef();
}

}  // namespace

std::vector<char> checkpoint_bytes(const torch::nn::Module& module,
                                   torch::optim::Optimizer& optimizer,
                                   const scenarios::OptimizerSpec& spec, const CheckpointMeta& meta,
                                   const std::string& prefix) {
  const TrainingState s = capture_training_state(module, optimizer);
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
  Dict out = string_dict();
  out.insert("model", model);
  out.insert("optimizer", optimizer_state_dict(s, spec));
  out.insert("epoch", meta.epoch);
  out.insert("step", meta.step);
  out.insert("ddpbench", run);
  return pickle_for_torch_load(c10::IValue(out));
}

Checkpoint parse_checkpoint(const std::vector<char>& bytes, const std::string& path,
                            const torch::nn::Module& module,
                            const std::function<void(const CheckpointMeta&)>& check_meta) {
  c10::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    refuse(path, fmt::format("cannot read it as a torch.load file ({}); pass a checkpoint "
                             "written by `ddpbench run --checkpoint-every N`",
                             what.substr(0, what.find('\n'))));
  }
  if (!value.isGenericDict()) refuse(path, "holds no dict, so it is no ddpbench checkpoint");
  const Dict top = value.toGenericDict();
  const c10::IValue& model = entry(top, "model", path);
  const c10::IValue& optimizer = entry(top, "optimizer", path);
  const c10::IValue& run = entry(top, "ddpbench", path);
  if (!model.isGenericDict() || !optimizer.isGenericDict() || !run.isGenericDict()) {
    refuse(path, "\"model\", \"optimizer\" and \"ddpbench\" must be dicts");
  }
  Checkpoint c;
  const Dict r = run.toGenericDict();
  c.meta.scenario = string_entry(r, "scenario", path);
  c.meta.mode = string_entry(r, "mode", path);
  c.meta.seed = int_entry(r, "seed", path);
  c.meta.world_size = int_entry(r, "world_size", path);
  c.meta.global_batch = int_entry(r, "global_batch", path);
  c.meta.dtype = string_entry(r, "dtype", path);
  c.meta.step = int_entry(top, "step", path);
  c.meta.epoch = int_entry(top, "epoch", path);
  if (check_meta) check_meta(c.meta);

  std::map<std::string, at::Tensor> entries = model_entries(model.toGenericDict(), path);
  for (const auto& p : module.named_parameters()) {
    take(entries, p.key(), p.value(), path, c.state.parameters);
  }
  for (const auto& b : module.named_buffers()) {
    take(entries, b.key(), b.value(), path, c.state.buffers);
  }
  if (!entries.empty()) {
    refuse(path, fmt::format("the checkpoint has {}, which the model does not: pass a checkpoint "
                             "of this run's scenario",
                             quoted_input(entries.begin()->first)));
  }
  read_optimizer_state(optimizer.toGenericDict(), path, c.state);
  return c;
}

}  // namespace ddpbench::modes
