// flag_choices.h — the values the CLI offers for flags whose choices belong to a layer below it
// (the CLI sees only run/'s plain headers): --backend's come from comm/'s backend table, so a new
// backend needs no edit of the CLI.
#pragma once

#include <string>
#include <vector>

namespace ddpbench::run {

// The names --backend accepts, default first.
std::vector<std::string> backend_choices();
// --backend's help text: every backend with when to use it.
std::string backend_help();

}  // namespace ddpbench::run
