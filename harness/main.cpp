// main.cpp — the ddpbench executable: everything happens in cli::run_app.
#include "cli/app.h"

int main(int argc, char** argv) { return ddpbench::cli::run_app(argc, argv); }
