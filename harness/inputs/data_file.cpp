// data_file.cpp — see data_file.h.
#include "inputs/data_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "checkpoint/checkpoint_file.h"
#include "data/tensor_dataset.h"
#include "errors.h"
#include "input_file.h"
#include "quoted_input.h"
#include "scenarios/content_hash.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::inputs {
namespace {

constexpr const char* kHowToSave =
    "save it with torch.save({\"inputs\": x, \"targets\": y}, FILE), x and y with one row per "
    "sample";

[[noreturn]] void refuse(const std::string& file, const std::string& why) {
  throw InputError(fmt::format("--data {}: {}; {}", quoted_input(file), why, kHowToSave));
}

// The tensor under `key`, its record holding every byte its storage claims.
at::Tensor tensor_entry(const checkpoint::TorchFile& f, const c10::impl::GenericDict& d,
                        const std::string& key, const std::string& file) {
  const auto it = d.find(key);
  if (it == d.end() || !it->value().isTensor()) {
    refuse(file, fmt::format("it has no tensor under \"{}\"", key));
  }
  const at::Tensor t = it->value().toTensor();
  if (f.record_bytes(t) < t.storage().nbytes()) {
    refuse(file, fmt::format("its \"{}\" record holds {} bytes, fewer than the tensor's {}: the "
                             "file is damaged",
                             key, f.record_bytes(t), t.storage().nbytes()));
  }
  if (t.dim() < 1 || t.size(0) < 1) {
    refuse(file, fmt::format("\"{}\" has shape {}, and needs one row per sample (at least one)",
                             key, t.sizes()));
  }
  if (t.is_floating_point() && !t.isfinite().all().item<bool>()) {
    refuse(file, fmt::format("\"{}\" holds NaN or infinity", key));
  }
  return t.contiguous().clone();
}

}  // namespace

scenarios::ScenarioSpec with_data_file(scenarios::ScenarioSpec spec, const std::string& file) {
  const auto bytes = read_input_file<std::vector<char>>(file, "--data", kHowToSave);
  // No record can hold more than the file does (torch.save stores them uncompressed).
  const auto size = static_cast<uint64_t>(bytes.size());
  checkpoint::TorchFileRole role;
  role.flag = "--data";
  role.fix = kHowToSave;
  role.one_tensor = "this file";
  role.all_tensors = "this file";
  const checkpoint::TorchFile f =
      checkpoint::read_torch_file(bytes, file, {size, size, size}, true, role);
  if (!f.value.isGenericDict()) refuse(file, "it holds no dict");
  const c10::impl::GenericDict d = f.value.toGenericDict();
  for (const auto& entry : d) {
    if (!entry.key().isString() ||
        (entry.key().toStringRef() != "inputs" && entry.key().toStringRef() != "targets")) {
      refuse(file, "its dict has keys besides \"inputs\" and \"targets\"");
    }
  }
  at::Tensor inputs = tensor_entry(f, d, "inputs", file);
  at::Tensor targets = tensor_entry(f, d, "targets", file);
  if (inputs.size(0) != targets.size(0)) {
    refuse(file, fmt::format("\"inputs\" has {} rows and \"targets\" {}", inputs.size(0),
                             targets.size(0)));
  }
  if (!inputs.is_floating_point() && inputs.scalar_type() != at::kLong) {
    refuse(file, fmt::format("\"inputs\" is {}: pass floating inputs, or int64 token ids",
                             c10::toString(inputs.scalar_type())));
  }
  const bool classes = scenarios::loss_takes_class_labels(spec.loss);
  // Class labels: one per sample [N], or one per position [N, T] (a language model's next
  // tokens, which gpt_tiny's logits [B, vocab, T] score); the first-sample probe then checks that
  // the model's output fits them.
  if (classes && (targets.scalar_type() != at::kLong || targets.dim() < 1 ||
                  targets.min().item<int64_t>() < 0)) {
    refuse(file, fmt::format("\"targets\" is {} of shape {}, and {}'s loss {} takes int64 class "
                             "indices >= 0, one per sample (or one per position)",
                             c10::toString(targets.scalar_type()), targets.sizes(), spec.name,
                             scenarios::loss_name(spec.loss)));
  }
  if (!classes && !targets.is_floating_point()) {
    refuse(file, fmt::format("\"targets\" is {}, and {}'s loss {} takes floating targets",
                             c10::toString(targets.scalar_type()), spec.name,
                             scenarios::loss_name(spec.loss)));
  }
  std::vector<int64_t> input_shape(inputs.sizes().begin() + 1, inputs.sizes().end());
  std::vector<int64_t> target_shape(targets.sizes().begin() + 1, targets.sizes().end());
  // The hash, not the path: the same tensors on two machines are the same data to the gate.
  const std::string description =
      fmt::format("--data tensors sha256:{} ({} samples, inputs [{}] {}, targets [{}] {})",
                  scenarios::sha256_hex(std::string(bytes.begin(), bytes.end())), inputs.size(0),
                  fmt::join(input_shape, ","), c10::toString(inputs.scalar_type()),
                  fmt::join(target_shape, ","), c10::toString(targets.scalar_type()));
  auto dataset = std::make_shared<const data::TensorDataset>(inputs, targets, description);
  spec.dataset_name = description;
  spec.data_file = file;
  spec.reads_data_dir = false;
  spec.unavailable_reason = {};  // the scenario's own data (a package it needs) is not used
  spec.build_dataset = [dataset](const scenarios::BuildRequest&) { return dataset; };
  spec.build_eval_dataset = [](const scenarios::BuildRequest&) {
    return scenarios::EvalSet{nullptr, "--data has no held-out split"};
  };
  return spec;
}

}  // namespace ddpbench::inputs
