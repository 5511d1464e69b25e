// flag_choices.cpp — see flag_choices.h.
#include "run/flag_choices.h"

#include <stdexcept>
#include <utility>

#include "comm/backend_support.h"
#include "modes/common/fault_table.h"
#include "modes/common/gradient_record.h"
#include "modes/common/mode_kind.h"
#include "modes/ddp/comm_hook.h"
#include "modes/ddp/distributed_model.h"
#include "projection/allreduce_model.h"
#include "scenarios/choice_names.h"

namespace ddpbench::run {

std::vector<std::string> backend_choices() {
  std::vector<std::string> names;
  for (const comm::BackendTraits& t : comm::backend_table()) names.emplace_back(t.name);
  return names;
}

std::string backend_help() {
  return "Collectives: " + comm::backend_help() +
         " (default: " + comm::backend_name(comm::default_backend()) + ")";
}

std::vector<std::string> ddp_impl_choices() {
  std::vector<std::string> names;
  for (const modes::ddp::DdpImpl impl : modes::ddp::kDdpImpls) {
    names.emplace_back(modes::ddp::ddp_impl_name(impl));
  }
  return names;
}

std::vector<std::string> amp_choices() { return scenarios::spellings(scenarios::kAmpNames); }

std::vector<std::string> loss_choices() { return scenarios::spellings(scenarios::kLossNames); }

std::vector<std::string> projection_algo_choices() {
  std::vector<std::string> names;
  for (const projection::AllreduceAlgo algo : projection::kAllreduceAlgos) {
    names.push_back(projection::algo_name(algo));
  }
  return names;
}

std::vector<std::string> comm_hook_choices() {
  std::vector<std::string> names;
  for (const modes::ddp::CommHookKind kind : modes::ddp::kCommHookKinds) {
    names.emplace_back(modes::ddp::comm_hook_name(kind));
  }
  return names;
}

std::vector<std::string> grad_check_choices() {
  std::vector<std::string> names = {"auto"};  // full below kFullGradientLimit, else fingerprint
  for (const modes::GradRecordKind kind : modes::kGradRecordKinds) {
    names.emplace_back(modes::grad_record_name(kind));
  }
  return names;
}

namespace {

constexpr std::pair<ComparisonChoice, const char*> kComparisonNames[] = {
    {ComparisonChoice::kAuto, "auto"},
    {ComparisonChoice::kLockstep, "lockstep"},
    {ComparisonChoice::kFree, "free"},
};

}  // namespace

std::vector<std::string> comparison_choices() {
  std::vector<std::string> names;
  for (const auto& [choice, name] : kComparisonNames) names.emplace_back(name);
  return names;
}

ComparisonChoice comparison_from(const std::string& name) {
  for (const auto& [choice, n] : kComparisonNames) {
    if (name == n) return choice;
  }
  throw std::invalid_argument("--comparison " + name + ": not one of comparison_choices()");
}

const char* comparison_name(ComparisonChoice choice) {
  for (const auto& [c, name] : kComparisonNames) {
    if (c == choice) return name;
  }
  return "?";
}

std::string modes_help() { return modes::modes_help(); }

std::string inject_fault_help() { return modes::fault_usage(); }

}  // namespace ddpbench::run
