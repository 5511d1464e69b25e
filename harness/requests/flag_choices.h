// flag_choices.h — the values the CLI offers for flags whose choices belong to a layer below it
// (the CLI sees only run/'s plain headers): --backend's come from comm/'s backend table, and
// --ddp-impl's, --comm-hook's and --grad-check's from the arrays beside their enums
// (modes/ddp/distributed_model.h, comm_hook.h, modes/common/gradient_record.h), --amp's and
// --loss's from the scenario's tables (scenarios/choice_names.h), `project --algo`'s from the
// projection's, and --inject-fault's from the fault table, so a new value needs no edit of the
// CLI.
#pragma once

#include <string>
#include <vector>

#include "requests/run_request.h"

namespace ddpbench::requests {

// The names --backend accepts, default first.
std::vector<std::string> backend_choices();
// --backend's help text: every backend with when to use it.
std::string backend_help();
// The names --ddp-impl, --comm-hook and --grad-check accept, default first.
std::vector<std::string> ddp_impl_choices();
std::vector<std::string> comm_hook_choices();
std::vector<std::string> grad_check_choices();
// The names --amp and --loss accept (scenarios/choice_names.h's tables), default first.
std::vector<std::string> amp_choices();
std::vector<std::string> loss_choices();
// The algorithms `project --algo` accepts (projection/allreduce_model.h).
std::vector<std::string> projection_algo_choices();
// --comparison's names, default first, and the choice a name (one of them) stands for.
std::vector<std::string> comparison_choices();
ComparisonChoice comparison_from(const std::string& name);
const char* comparison_name(ComparisonChoice choice);
// --device's names (run, scale, comm), default first, the same three questions.
std::vector<std::string> device_choices();
DeviceChoice device_from(const std::string& name);
const char* device_name(DeviceChoice choice);
// --modes' help text: every mode with what it is (reports/run/record_enums.h's rows).
std::string modes_help();
// --inject-fault's help text: every fault kind's syntax, modes and needs, from its row
// (modes/common/fault_table.h).
std::string inject_fault_help();

}  // namespace ddpbench::requests
