// gradient_record.cpp — see gradient_record.h.
#include "modes/common/gradient_record.h"

#include <ATen/ATen.h>

#include "modes/common/model_state.h"

namespace ddpbench::modes {

const char* grad_record_name(GradRecordKind kind) {
  return kind == GradRecordKind::kFull ? "full" : "fingerprint";
}

GradRecordKind choose_grad_record(int64_t parameter_elements) {
  return parameter_elements <= kFullGradientLimit ? GradRecordKind::kFull
                                                  : GradRecordKind::kFingerprint;
}

at::Tensor fingerprint(const at::Tensor& t) {
  const at::Tensor d = t.detach().to(at::kDouble);
  return at::stack({d.sum(), d.abs().sum(), d.norm(), d.abs().max()}).to(at::kCPU);
}

std::vector<at::Tensor> record_gradients(const std::vector<at::Tensor>& grads,
                                         GradRecordKind kind) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& g : grads) {
    if (!g.defined()) {
      out.emplace_back();
    } else {
      out.push_back(kind == GradRecordKind::kFull ? host_copy(g) : fingerprint(g));
    }
  }
  return out;
}

}  // namespace ddpbench::modes
