// flag_choices.cpp — see flag_choices.h.
#include "requests/flag_choices.h"

#include <utility>

#include "comm/backend_support.h"
#include "modes/common/fault_table.h"
#include "modes/common/gradient_record.h"
#include "modes/common/mode_kind.h"
#include "modes/ddp/comm_hook.h"
#include "modes/ddp/ddp_options.h"
#include "projection/allreduce_model.h"
#include "scenarios/choice_names.h"

namespace ddpbench::requests {

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

std::vector<std::string> amp_choices() { return names_in(scenarios::kAmpNames); }

std::vector<std::string> loss_choices() { return names_in(scenarios::kLossNames); }

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

std::vector<std::string> comparison_choices() { return names_in(kComparisonNames); }

ComparisonChoice comparison_from(const std::string& name) {
  return value_of_choice(kComparisonNames, name, "--comparison");
}

const char* comparison_name(ComparisonChoice choice) {
  return name_in(kComparisonNames, choice).data();
}

std::vector<std::string> device_choices() { return names_in(kDeviceNames); }

DeviceChoice device_from(const std::string& name) {
  return value_of_choice(kDeviceNames, name, "--device");
}

const char* device_name(DeviceChoice choice) { return name_in(kDeviceNames, choice).data(); }

std::string modes_help() { return modes::modes_help(); }

std::string inject_fault_help() { return modes::fault_usage(); }

}  // namespace ddpbench::requests
