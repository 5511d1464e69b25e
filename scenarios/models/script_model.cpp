// script_model.cpp — see script_model.h.
#include "scenarios/models/script_model.h"

#include <fmt/format.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <sstream>
#include <unordered_map>

#include "errors.h"

namespace ddpbench::scenarios::models {
namespace {

constexpr const char* kHowToScript =
    "make it with torch.jit.script(model).save(FILE) or reference/script_model.py";

// An nn module that only holds one jit submodule's tensors under their Python names; the root's
// forward runs the jit module, so the mirrors have none.
class ScriptTensorsImpl : public torch::nn::Module {};

// The first line of a libtorch error (the rest is its C++ stack).
std::string libtorch_error_line(const std::string& what) { return what.substr(0, what.find('\n')); }

torch::jit::Module load_script(const std::string& bytes, const std::string& file) {
  std::istringstream in(bytes);
  try {
    return torch::jit::load(in);
  } catch (const c10::Error& e) {
    const std::string why = libtorch_error_line(e.what_without_backtrace());
    if (why.find("version") != std::string::npos) {
      throw InputError(fmt::format(
          "--model {}: {} (saved by a newer PyTorch than the linked libtorch {}); save it with "
          "that release or an older one",
          file, why, TORCH_VERSION));
    }
    throw InputError(fmt::format(
        "--model {} is not a TorchScript file ({}); a state dict or a pickled nn.Module cannot be "
        "trained from C++: {}",
        file, why, kHowToScript));
  }
}

// Registers `from`'s own parameters and buffers on `into`, then mirrors its children.
void mirror_tensors(const torch::jit::Module& from, torch::nn::Module& into, ScriptModelFacts& facts) {
  for (const auto& p : from.named_parameters(/*recurse=*/false)) {
    into.register_parameter(p.name, p.value, p.value.requires_grad());
    (p.value.requires_grad() ? facts.parameters : facts.frozen_parameters) += 1;
  }
  for (const auto& b : from.named_buffers(/*recurse=*/false)) {
    into.register_buffer(b.name, b.value);
  }
  for (const auto& child : from.named_children()) {
    auto tensors = std::make_shared<ScriptTensorsImpl>();
    mirror_tensors(child.value, *tensors, facts);
    into.register_module(child.name, tensors);
  }
}

void require_trainable(const torch::jit::Module& script, const torch::nn::Module& mirrored,
                       const ScriptModelFacts& facts, const std::string& file) {
  if (facts.parameters == 0) {
    throw InputError(fmt::format(
        "--model {} has no parameter that requires grad ({} frozen): a torch.jit.freeze'd or "
        "optimize_for_inference module cannot train; save the scripted module before freezing "
        "it, with requires_grad on the parameters to train",
        file, facts.frozen_parameters));
  }
  std::unordered_map<const void*, std::string> seen;
  for (const auto& t : mirrored.named_parameters(/*recurse=*/true)) {
    const auto [it, fresh] = seen.emplace(t.value().unsafeGetTensorImpl(), t.key());
    if (!fresh) {
      throw InputError(fmt::format(
          "--model {} shares one tensor as {} and {} (tied weights): ddpbench cannot train shared "
          "parameters yet; untie them in the model before scripting it",
          file, it->second, t.key()));
    }
  }
  const c10::FunctionSchema& schema = script.get_method("forward").function().getSchema();
  const bool one_tensor_in = schema.arguments().size() == 2 &&
      schema.arguments()[1].type()->kind() == c10::TypeKind::TensorType;
  const bool one_tensor_out = schema.returns().size() == 1 &&
      schema.returns()[0].type()->kind() == c10::TypeKind::TensorType;
  if (!one_tensor_in || !one_tensor_out) {
    std::ostringstream signature;
    signature << schema;
    throw InputError(fmt::format(
        "--model {}: forward is {}, but ddpbench feeds one input tensor and takes one output "
        "tensor for the loss; wrap the model in a module whose forward(x: Tensor) -> Tensor "
        "returns the logits, and script that",
        file, signature.str()));
  }
}

}  // namespace

ScriptModelImpl::ScriptModelImpl(std::shared_ptr<const std::string> bytes, std::string file,
                                 bool optimize_graph)
    : bytes_(std::move(bytes)), file_(std::move(file)), optimize_graph_(optimize_graph) {
  script_ = std::make_shared<torch::jit::Module>(load_script(*bytes_, file_));
  mirror_tensors(*script_, *this, facts_);
  for (const auto& module : script_->modules()) {
    const auto name = module.type()->name();
    if (name && name->qualifiedName().find("BatchNorm") != std::string::npos) {
      ++facts_.batch_norm_layers;
    }
  }
  require_trainable(*script_, *this, facts_, file_);
  script_->train(is_training());
}

ScriptModelImpl::~ScriptModelImpl() = default;

at::Tensor ScriptModelImpl::forward(const at::Tensor& input) {
  const torch::jit::GraphOptimizerEnabledGuard optimize(optimize_graph_);
  return script_->forward({input}).toTensor();
}

void ScriptModelImpl::train(bool on) {
  torch::nn::Module::train(on);
  script_->train(on);
}

std::shared_ptr<torch::nn::Module> ScriptModelImpl::clone(
    const c10::optional<at::Device>& device) const {
  torch::NoGradGuard no_grad;
  auto copy = std::make_shared<ScriptModelImpl>(bytes_, file_, optimize_graph_);
  const auto copy_tensors = [&](const torch::OrderedDict<std::string, at::Tensor>& from,
                                const torch::OrderedDict<std::string, at::Tensor>& into) {
    for (const auto& t : from) {
      at::Tensor target = into[t.key()];
      target.set_data(device && t.value().device() != *device ? t.value().to(*device)
                                                              : t.value().clone());
    }
  };
  copy_tensors(named_parameters(true), copy->named_parameters(true));
  copy_tensors(named_buffers(true), copy->named_buffers(true));
  copy->train(is_training());
  return copy;
}

}  // namespace ddpbench::scenarios::models
