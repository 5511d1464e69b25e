// fault_injection.cpp — see fault_injection.h.
#include "modes/common/fault_injection.h"

#include <fmt/format.h>

#include <sstream>

#include "errors.h"

namespace ddpbench::modes {
namespace {

constexpr const char* kSyntax =
    "expected KIND:rank=R,step=S[,eps=E][,tensor=NAME] with KIND one of grad, crash, hang, nan, "
    "syncbn, buffers (ddp), dpbuffers (dp)";

}  // namespace

const char* fault_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::kGrad:
      return "grad";
    case FaultKind::kCrash:
      return "crash";
    case FaultKind::kHang:
      return "hang";
    case FaultKind::kNan:
      return "nan";
    case FaultKind::kSyncBn:
      return "syncbn";
    case FaultKind::kBuffers:
      return "buffers";
    case FaultKind::kDpBuffers:
      return "dpbuffers";
  }
  return "?";
}

FaultSpec parse_fault(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  FaultSpec f;
  if (kind == "grad")
    f.kind = FaultKind::kGrad;
  else if (kind == "crash")
    f.kind = FaultKind::kCrash;
  else if (kind == "hang")
    f.kind = FaultKind::kHang;
  else if (kind == "nan")
    f.kind = FaultKind::kNan;
  else if (kind == "syncbn")
    f.kind = FaultKind::kSyncBn;
  else if (kind == "buffers")
    f.kind = FaultKind::kBuffers;
  else if (kind == "dpbuffers")
    f.kind = FaultKind::kDpBuffers;
  else
    throw InputError(
        fmt::format("--inject-fault '{}': unknown kind '{}'; {}", text, kind, kSyntax));
  if (colon == std::string::npos) return f;
  std::stringstream fields(text.substr(colon + 1));
  std::string field;
  while (std::getline(fields, field, ',')) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos) {
      throw InputError(
          fmt::format("--inject-fault '{}': field '{}' has no '='; {}", text, field, kSyntax));
    }
    const std::string key = field.substr(0, eq);
    const std::string value = field.substr(eq + 1);
    try {
      size_t used = 0;
      if (key == "rank") {
        f.rank = std::stoll(value, &used);
      } else if (key == "step") {
        f.step = std::stoll(value, &used);
      } else if (key == "eps") {
        f.eps = std::stod(value, &used);
      } else if (key == "tensor") {
        f.tensor = value;
        used = value.size();
      } else {
        throw InputError(
            fmt::format("--inject-fault '{}': unknown field '{}'; {}", text, key, kSyntax));
      }
      if (used != value.size() || value.empty()) throw std::invalid_argument(value);
    } catch (const std::logic_error&) {
      throw InputError(
          fmt::format("--inject-fault '{}': bad value '{}' for {}; {}", text, value, key, kSyntax));
    }
  }
  if (f.rank < 0 || f.step < 0) {
    throw InputError(
        fmt::format("--inject-fault '{}': rank and step must be >= 0; {}", text, kSyntax));
  }
  return f;
}

}  // namespace ddpbench::modes
