// gradient_record.h — what each mode records about a step's gradients so the comparison can
// check gradients every step, not only final weights (a wrong gradient with a small learning
// rate barely moves the weights). `full` keeps a copy of every gradient; `fingerprint` keeps
// (sum, L1, L2, max |g|) per tensor in float64 for models too large to copy every step.
// This is observation only: it never feeds back into training.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <string>
#include <vector>

namespace ddpbench::modes {

enum class GradRecordKind { kFull, kFingerprint };
// Every kind: --grad-check's choices (requests/flag_choices.h) are "auto" and their names.
inline constexpr std::array<GradRecordKind, 2> kGradRecordKinds = {GradRecordKind::kFull,
                                                                   GradRecordKind::kFingerprint};
const char* grad_record_name(GradRecordKind kind);

// Models with at most this many parameter elements are recorded in full under "auto".
inline constexpr int64_t kFullGradientLimit = 4'000'000;
GradRecordKind choose_grad_record(int64_t parameter_elements);

// One entry per gradient (a mode's, one per parameter in registration order: GradientPath::
// gradients_to_record): the gradient (full) or its [4] fingerprint; an undefined one stays
// undefined.
std::vector<at::Tensor> record_gradients(const std::vector<at::Tensor>& grads, GradRecordKind kind);

at::Tensor fingerprint(const at::Tensor& t);

}  // namespace ddpbench::modes
