// fork_server.h — a ddpbench process that stays as it is after start-up (libtorch loaded and
// registered, nothing run) and forks one child per request into the program's entry point, with
// the requester's argv, environment, working directory and stdio: how the test suites start
// ddpbench about a thousand times without paying libtorch's start-up each time.
//
// Why: an exec'd ddpbench spends 0.45 s of CPU before main (Debian's libtorch_cpu registering its
// operators; 0.02 s of it is the dynamic loader), and the Debian suite started ~1,040 of them:
// about a third of the suite's CPU on a 2-core runner (reports/METRICS.md, "Where the suite's
// time goes"). The tests' runner (tests/support/fork_client.h) asks this server first and execs
// the binary when it cannot be reached or refuses; tests of start-up, signals and the exec'd
// path itself run the binary by exec, as users do.
//
// What a forked child shares with an exec'd one: everything run_app sees (argv, the whole
// environment, the working directory, stdin/stdout/stderr, default signal dispositions and an
// empty signal mask, its own process group, /proc/self/exe, ps's command line). What it does
// not: what libraries read from the environment while they load (OpenMP's OMP_*, the loader's
// LD_*, malloc's tunables, libtorch's TORCH_*), which the server's start-up read once; a request
// whose values of those differ from the server's is refused, and the runner execs it. The
// server forks only while it has one thread (as the rank zygote), serves on a Unix socket whose
// name carries the binary's identity (a rebuilt binary gets a new server), and exits after two
// idle minutes (Note [Tests fork ddpbench]).
#pragma once

namespace ddpbench::launch {

// main's first argument that makes this process a fork server: `ddpbench <flag> SOCKET [""...]`,
// where the empty arguments reserve room for the children's command lines.
inline constexpr const char* kForkServerFlag = "--fork-server-for-tests";

// What a child runs: the program's entry point (cli::run_app).
using ForkEntry = int (*)(int argc, char** argv);

// Serves on the socket path argv[2] until idle; returns the exit code of the server itself.
int serve_forks(ForkEntry entry, int argc, char** argv);

}  // namespace ddpbench::launch
