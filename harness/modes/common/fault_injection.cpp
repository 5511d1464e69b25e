// fault_injection.cpp — see fault_injection.h.
#include "modes/common/fault_injection.h"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <sstream>

#include "errors.h"
#include "quoted_input.h"

namespace ddpbench::modes {
namespace {

constexpr const char* kSyntax =
    "expected KIND:rank=R,step=S[,eps=E][,tensor=NAME] with KIND one of grad, crash, hang, nan, "
    "syncbn, buffers, join, scaler, inf (ddp; scaler and inf with --amp fp16), eval:rank=R (the "
    "evaluation pass of dp and ddp), "
    "dpbuffers:step=S (dp), noscale:step=S (dp, ddp with accumulation), or shard, owner, gather, "
    "state (zero; grad, crash, hang and nan apply to zero too); eps applies to grad, shard and "
    "state, tensor to grad";

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
    case FaultKind::kNoScale:
      return "noscale";
    case FaultKind::kEval:
      return "eval";
    case FaultKind::kJoin:
      return "join";
    case FaultKind::kScaler:
      return "scaler";
    case FaultKind::kInf:
      return "inf";
    case FaultKind::kShard:
      return "shard";
    case FaultKind::kOwner:
      return "owner";
    case FaultKind::kGather:
      return "gather";
    case FaultKind::kState:
      return "state";
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
  else if (kind == "noscale")
    f.kind = FaultKind::kNoScale;
  else if (kind == "eval")
    f.kind = FaultKind::kEval;
  else if (kind == "join")
    f.kind = FaultKind::kJoin;
  else if (kind == "scaler")
    f.kind = FaultKind::kScaler;
  else if (kind == "inf")
    f.kind = FaultKind::kInf;
  else if (kind == "shard")
    f.kind = FaultKind::kShard;
  else if (kind == "owner")
    f.kind = FaultKind::kOwner;
  else if (kind == "gather")
    f.kind = FaultKind::kGather;
  else if (kind == "state")
    f.kind = FaultKind::kState;
  else
    throw InputError(fmt::format("--inject-fault {}: unknown kind {}; {}", quoted_input(text),
                                 quoted_input(kind), kSyntax));
  std::set<std::string> seen;
  std::stringstream fields(colon == std::string::npos ? "" : text.substr(colon + 1));
  std::string field;
  while (std::getline(fields, field, ',')) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos) {
      throw InputError(fmt::format("--inject-fault {}: field {} has no '='; {}", quoted_input(text),
                                   quoted_input(field), kSyntax));
    }
    const std::string key = field.substr(0, eq);
    const std::string value = field.substr(eq + 1);
    if (!seen.insert(key).second) {
      throw InputError(fmt::format("--inject-fault {}: {} is given twice; give each field once",
                                   quoted_input(text), quoted_input(key)));
    }
    try {
      size_t used = 0;
      if (key == "rank") {
        f.rank = std::stoll(value, &used);
      } else if (key == "step") {
        f.step = std::stoll(value, &used);
      } else if (key == "eps") {
        f.eps = std::stod(value, &used);
        // A non-finite perturbation is the nan fault under another name, and 0 is no fault.
        if (!std::isfinite(f.eps) || f.eps == 0) throw std::invalid_argument(value);
      } else if (key == "tensor") {
        f.tensor = value;
        used = value.size();
      } else {
        throw InputError(fmt::format("--inject-fault {}: unknown field {}; {}", quoted_input(text),
                                     quoted_input(key), kSyntax));
      }
      if (used != value.size() || value.empty()) throw std::invalid_argument(value);
    } catch (const std::logic_error&) {
      throw InputError(fmt::format("--inject-fault {}: bad value {} for {}; {}", quoted_input(text),
                                   quoted_input(value), key, kSyntax));
    }
  }
  // A fault at a made-up place proves nothing: say where. dpbuffers has no rank (DP is one
  // process), so it needs only its step.
  // eval happens once, after the check phase: it has no step.
  const bool needs_rank = f.kind != FaultKind::kDpBuffers && f.kind != FaultKind::kNoScale;
  const bool needs_step = f.kind != FaultKind::kEval;
  for (const char* key : {"rank", "step"}) {
    if (std::string(key) == "rank" && !needs_rank) continue;
    if (std::string(key) == "step" && !needs_step) continue;
    if (!seen.count(key)) {
      throw InputError(
          fmt::format("--inject-fault {}: {} is missing; {}", quoted_input(text), key, kSyntax));
    }
  }
  if (!needs_rank && seen.count("rank")) {
    throw InputError(fmt::format(
        "--inject-fault {}: {} has no rank (it is not one rank's fault): drop rank=, keep step=",
        quoted_input(text), fault_name(f.kind)));
  }
  if (!needs_step && seen.count("step")) {
    throw InputError(fmt::format(
        "--inject-fault {}: eval has no step (the evaluation pass runs once, after training): "
        "drop step=, keep rank=",
        quoted_input(text)));
  }
  const bool scales = f.kind == FaultKind::kShard || f.kind == FaultKind::kState;
  if (scales && seen.count("tensor")) {
    throw InputError(fmt::format(
        "--inject-fault {}: {} corrupts the first parameter rank R owns, which the partition "
        "decides; drop tensor=",
        quoted_input(text), fault_name(f.kind)));
  }
  if (f.kind != FaultKind::kGrad && !scales && (seen.count("eps") || seen.count("tensor"))) {
    throw InputError(
        fmt::format("--inject-fault {}: eps= applies to grad, shard and state, tensor= to grad; {}",
                    quoted_input(text), kSyntax));
  }
  if (f.rank < 0 || f.step < 0) {
    throw InputError(fmt::format("--inject-fault {}: rank and step must be >= 0; {}",
                                 quoted_input(text), kSyntax));
  }
  return f;
}

}  // namespace ddpbench::modes
