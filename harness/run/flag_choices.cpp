// flag_choices.cpp — see flag_choices.h.
#include "run/flag_choices.h"

#include "comm/backend_support.h"

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

}  // namespace ddpbench::run
