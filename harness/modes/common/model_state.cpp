// model_state.cpp — see model_state.h.
#include "modes/common/model_state.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/nn/module.h>
#include <torch/utils.h>

namespace ddpbench::modes {

at::Tensor host_copy(const at::Tensor& t) {
  // to(kCPU) already copies from a device; on the CPU it would alias, so clone.
  return t.device().is_cpu() ? t.detach().clone() : t.detach().to(at::kCPU);
}

NamedTensors capture_state(const torch::nn::Module& module) {
  NamedTensors out;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) {
    out.emplace_back(p.key(), host_copy(p.value()));
  }
  for (const auto& b : module.named_buffers(/*recurse=*/true)) {
    out.emplace_back(b.key(), host_copy(b.value()));
  }
  return out;
}

std::vector<char> pickle_for_torch_load(const c10::IValue& value) {
  // As torch::jit::pickle_save does it (the same Pickler and zip writer in 1.13 and 2.x), with
  // tag_aggregates off.
  std::vector<char> pickle;
  torch::jit::Pickler pickler(
      [&pickle](const char* bytes, size_t size) {
        pickle.insert(pickle.end(), bytes, bytes + size);
      },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
      /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> archive;
  caffe2::serialize::PyTorchStreamWriter writer([&archive](const void* bytes, size_t size) {
    const char* b = static_cast<const char*>(bytes);
    archive.insert(archive.end(), b, b + size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(),
                                     writer);
  writer.writeEndOfFile();
  return archive;
}

std::vector<char> pickle_state(const NamedTensors& state) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, tensor] : state) dict.insert(name, tensor);
  return pickle_for_torch_load(c10::IValue(dict));
}

}  // namespace ddpbench::modes
