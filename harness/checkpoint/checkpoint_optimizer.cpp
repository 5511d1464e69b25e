// checkpoint_optimizer.cpp — see checkpoint_optimizer.h.
#include "checkpoint/checkpoint_optimizer.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>

#include "checkpoint/checkpoint_entries.h"
#include "quoted_input.h"
#include "scenarios/optim/lr_schedule.h"
#include "scenarios/optim/optimizer_state.h"
#include "scenarios/optim/parameter_groups.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::checkpoint {
namespace {

using namespace io;  // NOLINT(google-build-using-namespace): this file's vocabulary

// The optimizer's name in messages.
std::string optimizer_label(const scenarios::OptimizerSpec& spec) {
  if (spec.kind == scenarios::OptimizerKind::kAdam) return "Adam";
  if (spec.kind == scenarios::OptimizerKind::kAdamW) return "AdamW";
  return spec.momentum != 0 ? "SGD with momentum" : "SGD without momentum";
}

// Refuses the state of a parameter that `spec`'s optimizer would not have kept: a name it does
// not keep, one of Adam's three missing, or an Adam step that is not a count from 1 to the
// checkpoint's steps (libtorch's Adam reads it back as an integer).
void check_optimizer_entry(const std::map<std::string, at::Tensor>& state,
                           const scenarios::OptimizerSpec& spec, const std::string& param,
                           int64_t steps, const std::string& path) {
  const std::vector<std::string> kept = scenarios::kept_state_names(spec);
  const std::string fix = fmt::format(
      "pass a checkpoint of a run with this run's optimizer ({}; the scenario's OPTIM.NAME and "
      "OPTIM.MOMENTUM)",
      optimizer_label(spec));
  for (const auto& [name, t] : state) {
    if (std::find(kept.begin(), kept.end(), name) == kept.end()) {
      refuse(path, fmt::format("the optimizer state of {} has {}, which {} does not keep ({}): {}",
                               param, quoted_input(name), optimizer_label(spec),
                               kept.empty() ? "it keeps none"
                                            : fmt::format("it keeps {}", fmt::join(kept, ", ")),
                               fix));
    }
  }
  for (const std::string& name : kept) {
    if (state.count(name) == 0) {
      refuse(path, fmt::format("the optimizer state of {} lacks {}, which {} keeps for every "
                               "parameter it has stepped: {}",
                               param, name, optimizer_label(spec), fix));
    }
  }
  const auto step = state.find("step");
  if (step == state.end()) return;
  const at::Tensor& t = step->second;
  const bool real = at::isFloatingType(t.scalar_type()) ||
                    at::isIntegralType(t.scalar_type(), /*includeBool=*/false);
  const double v = real && t.numel() == 1 ? t.item<double>() : 0;
  if (!real || t.numel() != 1 || !(v >= 1 && v <= static_cast<double>(steps)) ||
      v != static_cast<double>(static_cast<int64_t>(v))) {
    refuse(path, fmt::format("Adam's step of {} is {}, and after the checkpoint's {} steps it is "
                             "one whole number from 1 to {}: {}",
                             param, real && t.numel() == 1 ? fmt::format("{}", v) : tensor_kind(t),
                             steps, steps, kDamaged));
  }
}

// One entry of state_dict()["param_groups"]: the hyper-parameters torch.optim's class keeps, and
// the indices of the group's parameters.
Dict param_group(const scenarios::OptimizerSpec& spec, double weight_decay, double lr,
                 const scenarios::ScheduledStep& next, const std::vector<int64_t>& members) {
  Dict group = string_dict();
  // The next step's rate (the group's own), and OneCycle's momentum where it cycles one.
  group.insert("lr", lr);
  if (spec.kind != scenarios::OptimizerKind::kSgd) {
    group.insert("betas",
                 c10::ivalue::Tuple::create({next.momentum.value_or(spec.beta1), spec.beta2}));
    group.insert("eps", spec.eps);
    group.insert("weight_decay", weight_decay);
    group.insert("amsgrad", false);
  } else {
    group.insert("momentum", next.momentum.value_or(spec.momentum));
    group.insert("dampening", spec.dampening);
    group.insert("weight_decay", weight_decay);
    group.insert("nesterov", spec.nesterov);
  }
  group.insert("maximize", false);
  group.insert("foreach", c10::IValue());
  group.insert("differentiable", false);
  // A list of Any, not c10::List<int64_t>: the pickler writes a typed int list through
  // torch.jit._pickle.build_intlist, a global PyTorch >= 2.6's default torch.load
  // (weights_only=True) refuses; a plain list it reads.
  c10::impl::GenericList params(c10::AnyType::get());
  for (int64_t i : members) params.push_back(i);
  group.insert("params", params);
  return group;
}

}  // namespace

Dict optimizer_state_dict(const modes::TrainingState& s, const scenarios::OptimizerSpec& spec,
                          const std::vector<std::string>& names, int64_t next_step) {
  Dict state(c10::IntType::get(), c10::AnyType::get());
  for (size_t i = 0; i < s.optimizer_state.size(); ++i) {
    if (s.optimizer_state[i].empty()) continue;
    Dict entry = string_dict();
    for (const auto& [name, tensor] : s.optimizer_state[i]) entry.insert(name, tensor);
    state.insert(static_cast<int64_t>(i), entry);
  }
  // PyTorch's param_groups: nanoGPT's two groups under OPTIM.NO_DECAY (the decayed parameters,
  // then the others with weight decay 0; an empty group left out, as make_optimizer does), each
  // group's lr its rate of the next step (its share, OPTIM.NO_DECAY_LR_SCALE, of the scheduled
  // rate), as a group holds it after the scheduler's step().
  const scenarios::ScheduledStep next =
      scenarios::scheduled_step(spec.schedule, spec.lr, next_step);
  c10::impl::GenericList groups(c10::AnyType::get());
  for (const scenarios::ParameterGroupIndices& g :
       scenarios::parameter_group_indices(spec.no_decay, names, s.parameters)) {
    const std::vector<int64_t> members(g.members.begin(), g.members.end());
    const double lr =
        scenarios::group_lr(spec.schedule, spec.lr, scenarios::group_lr_scale(spec, g), next_step);
    groups.push_back(param_group(spec, scenarios::group_weight_decay(spec, g), lr, next, members));
  }
  Dict out = string_dict();
  out.insert("state", state);
  out.insert("param_groups", groups);
  return out;
}

void read_optimizer_state(const Dict& optimizer, const scenarios::OptimizerSpec& spec,
                          const std::vector<std::string>& names, int64_t steps,
                          const TorchFile& file, const std::string& path, modes::TrainingState& s) {
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
    const std::string& param_name = names[static_cast<size_t>(i)];
    for (const auto& field : e.value().toGenericDict()) {
      if (!field.key().isString() || !field.value().isTensor()) {
        refuse(path, fmt::format("the optimizer state of {} is not name -> tensor", param_name));
      }
      const std::string& name = field.key().toStringRef();
      const at::Tensor t = field.value().toTensor();
      if (name != "step" &&
          (t.sizes() != param.sizes() || t.scalar_type() != param.scalar_type())) {
        refuse(path, fmt::format("the optimizer's {} of {} is {}, the parameter {}", name,
                                 param_name, tensor_kind(t), tensor_kind(param)));
      }
      check_stored(file, t, fmt::format("the optimizer's {} of {}", name, param_name), path);
      s.optimizer_state[static_cast<size_t>(i)].emplace(name, t);
    }
    check_optimizer_entry(s.optimizer_state[static_cast<size_t>(i)], spec, param_name, steps, path);
  }
}

}  // namespace ddpbench::checkpoint
