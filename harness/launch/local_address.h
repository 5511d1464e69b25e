// local_address.h — whether an address (name or literal) names this machine: the spawned
// workers' rendezvous and gloo listen on --master-addr, so it must resolve and be bindable here.
#pragma once

#include <optional>
#include <string>

namespace ddpbench::launch {

// nullopt when `address` resolves to an address this machine can listen on; otherwise why not
// ("does not resolve (...)", "is the wildcard address ...", "is not an address of this machine").
std::optional<std::string> why_not_local(const std::string& address);

}  // namespace ddpbench::launch
