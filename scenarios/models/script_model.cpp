// script_model.cpp — see script_model.h.
#include "scenarios/models/script_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

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
void mirror_tensors(const torch::jit::Module& from, torch::nn::Module& into,
                    ScriptModelFacts& facts) {
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

// ATen's random operations (native_functions.yaml's nondeterministic_seeded ones a model's
// forward may call), by graph kind.
bool is_random_op(const std::string& kind) {
  static const std::unordered_set<std::string> kRandom = {"aten::dropout",
                                                          "aten::dropout_",
                                                          "aten::feature_dropout",
                                                          "aten::feature_dropout_",
                                                          "aten::alpha_dropout",
                                                          "aten::alpha_dropout_",
                                                          "aten::feature_alpha_dropout",
                                                          "aten::feature_alpha_dropout_",
                                                          "aten::native_dropout",
                                                          "aten::bernoulli",
                                                          "aten::bernoulli_",
                                                          "aten::multinomial",
                                                          "aten::normal",
                                                          "aten::normal_",
                                                          "aten::uniform_",
                                                          "aten::exponential_",
                                                          "aten::geometric_",
                                                          "aten::cauchy_",
                                                          "aten::log_normal_",
                                                          "aten::random_",
                                                          "aten::rrelu",
                                                          "aten::rrelu_",
                                                          "aten::rrelu_with_noise",
                                                          "aten::poisson"};
  return kRandom.count(kind) > 0 || kind.rfind("aten::rand", 0) == 0;  // rand, randn, randint, ...
}

void collect_random_ops(const torch::jit::Block& block, std::vector<std::string>& found) {
  for (const torch::jit::Node* node : block.nodes()) {
    const std::string kind = node->kind().toQualString();
    if (is_random_op(kind) && std::find(found.begin(), found.end(), kind) == found.end()) {
      found.push_back(kind);
    }
    for (const torch::jit::Block* inner : node->blocks()) collect_random_ops(*inner, found);
  }
}

// forward's graph with every method and function call inlined: what one forward runs. Both
// analyses below read it: inlining costs about as much as loading the file.
std::shared_ptr<torch::jit::Graph> inlined_forward(const torch::jit::Module& script) {
  std::shared_ptr<torch::jit::Graph> graph = script.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  return graph;
}

std::vector<std::string> random_ops_of(const torch::jit::Graph& forward) {
  std::vector<std::string> found;
  collect_random_ops(*forward.block(), found);
  return found;
}

// The attribute path of `v` from forward's self ("stem.norm.mean" as {"stem", "norm", "mean"}),
// through the views an in-place op may write through (a slice of a buffer is the buffer); empty
// when `v` is no attribute of the module.
std::vector<std::string> attribute_path(const torch::jit::Value* v) {
  static const std::unordered_set<std::string> kViews = {
      "aten::select",     "aten::slice",     "aten::view",     "aten::reshape", "aten::narrow",
      "aten::squeeze",    "aten::unsqueeze", "aten::expand",   "aten::flatten", "aten::t",
      "aten::transpose",  "aten::permute",   "aten::diagonal", "aten::view_as", "aten::index",
      "aten::as_strided", "aten::detach",    "aten::unflatten"};
  while (kViews.count(v->node()->kind().toQualString()) > 0) v = v->node()->input(0);
  std::vector<std::string> path;
  while (v->node()->kind() == c10::prim::GetAttr) {
    path.push_back(v->node()->s(c10::attr::name));
    v = v->node()->input(0);
  }
  if (v->node()->kind() != c10::prim::Param) return {};
  std::reverse(path.begin(), path.end());
  return path;
}

// Every attribute an in-place operation (aten::add_, copy_, index_put_, ...) of forward writes.
void collect_written_attributes(const torch::jit::Block& block, std::set<std::string>& found) {
  for (const torch::jit::Node* node : block.nodes()) {
    const std::string kind = node->kind().toQualString();
    const bool in_place = kind.rfind("aten::", 0) == 0 && kind.back() == '_' &&
                          kind.rfind("aten::__", 0) != 0 && !node->inputs().empty();
    if (in_place) {
      const std::vector<std::string> path = attribute_path(node->input(0));
      if (!path.empty()) found.insert(fmt::format("{}", fmt::join(path, ".")));
    }
    for (const torch::jit::Block* inner : node->blocks()) collect_written_attributes(*inner, found);
  }
}

// The buffers `forward` (script's, inlined) updates in place, BatchNorm's left out.
std::vector<std::string> mutated_buffers_of(const torch::jit::Graph& forward,
                                            const torch::jit::Module& script) {
  std::set<std::string> written;
  collect_written_attributes(*forward.block(), written);
  std::unordered_set<std::string> batch_norm;  // the modules' paths ("" is the root)
  for (const auto& m : script.named_modules()) {
    const auto name = m.value.type()->name();
    if (name && name->qualifiedName().find("BatchNorm") != std::string::npos) {
      batch_norm.insert(m.name);
    }
  }
  std::vector<std::string> out;
  for (const auto& b : script.named_buffers(/*recurse=*/true)) {
    if (written.count(b.name) == 0) continue;
    const size_t dot = b.name.rfind('.');
    if (batch_norm.count(dot == std::string::npos ? "" : b.name.substr(0, dot)) > 0) continue;
    out.push_back(b.name);
  }
  return out;
}

// A scripted forward's nodes were generated from the Python file and line they were compiled from
// (the file's debug records); a traced one's from no file (torch.jit.trace records operations, not
// source). Measured on files saved by 1.13 and 2.11: scripted, ".../torch/nn/modules/container.py";
// traced, "".
bool forward_is_traced(const torch::jit::Module& script) {
  const std::shared_ptr<torch::jit::Graph> graph = script.get_method("forward").graph();
  for (const torch::jit::Node* node : graph->nodes()) {
    const auto origin = node->sourceRange().findSourceRangeThatGenerated();
    if (!origin || !origin->source()) continue;
    const auto file = origin->source()->filename();
    if (file && !file->empty()) return false;
  }
  return true;
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
                                 bool optimize_graph, const ScriptModelFacts* known)
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
  if (known != nullptr) {
    facts_.random_ops = known->random_ops;
    facts_.mutated_buffers = known->mutated_buffers;
  } else {
    const std::shared_ptr<torch::jit::Graph> forward = inlined_forward(*script_);
    facts_.random_ops = random_ops_of(*forward);
    facts_.mutated_buffers = mutated_buffers_of(*forward, *script_);
  }
  facts_.traced = known != nullptr ? known->traced : forward_is_traced(*script_);
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
  auto copy = std::make_shared<ScriptModelImpl>(bytes_, file_, optimize_graph_, &facts_);
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

std::string describe_script_model(const ScriptModelFacts& facts, bool optimize_graph) {
  std::string s = facts.traced ? "traced (torch.jit.trace: data-dependent branches follow the "
                                 "example input's)"
                               : "scripted";
  s += fmt::format(", {} trained parameter(s)", facts.parameters);
  if (facts.frozen_parameters > 0) s += fmt::format(", {} frozen", facts.frozen_parameters);
  if (facts.batch_norm_layers > 0) {
    s += fmt::format(", {} BatchNorm layer(s)", facts.batch_norm_layers);
  }
  if (!facts.mutated_buffers.empty()) {
    s += fmt::format(", buffers updated in forward ({})", fmt::join(facts.mutated_buffers, ", "));
  }
  if (!facts.random_ops.empty()) {
    s += fmt::format(", random draws ({})", fmt::join(facts.random_ops, ", "));
  }
  s += optimize_graph ? ", graph executor optimisation on (may fuse operations)"
                      : ", graph executor optimisation off (op by op, as Python eager)";
  return s;
}

const ScriptModelFacts* script_model_facts(const torch::nn::Module& model) {
  const auto* script = dynamic_cast<const ScriptModelImpl*>(&model);
  return script != nullptr ? &script->facts() : nullptr;
}

}  // namespace ddpbench::scenarios::models
