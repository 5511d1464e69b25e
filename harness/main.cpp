// main.cpp — the ddpbench executable: everything happens in cli::run_app, but for the test
// suites' fork server (launch/fork_server.h), which forks its children into run_app.
#include <cstring>

#include "cli/app.h"
#include "launch/fork_server.h"

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], ddpbench::launch::kForkServerFlag) == 0) {
    return ddpbench::launch::serve_forks(&ddpbench::cli::run_app, argc, argv);
  }
  return ddpbench::cli::run_app(argc, argv);
}
