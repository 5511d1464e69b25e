// app.h — the ddpbench command line: builds the CLI11 app, dispatches to subcommands and maps
// errors to exit codes (InputError and parse errors -> 2 with one line on stderr).
#pragma once

namespace ddpbench::cli {

int run_app(int argc, char** argv);

}  // namespace ddpbench::cli
