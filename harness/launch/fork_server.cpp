// fork_server.cpp — see fork_server.h. The wire, on one Unix stream connection per request: the
// requester sends one byte carrying its stdin, stdout and stderr (SCM_RIGHTS), then argv, the
// environment and {working directory} as forked_process.h's length-prefixed strings; the server
// answers the child's pid as a 32-bit integer (-1: refused, exec it yourself), and later the
// child's wait status as a 32-bit integer, then closes.
#include "launch/fork_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "launch/forked_process.h"

extern char** environ;

namespace ddpbench::launch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kIdleLimit = std::chrono::seconds(120);

struct ForkRequest {
  int fds[3] = {-1, -1, -1};  // stdin, stdout, stderr
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd;
};

bool receive_fds(int connection, int (&fds)[3]) {
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 3)];
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(connection, &msg, MSG_CMSG_CLOEXEC) != 1) return false;
  const cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int) * 3)) {
    return false;
  }
  std::memcpy(fds, CMSG_DATA(c), sizeof(int) * 3);
  return true;
}

bool read_request(int connection, ForkRequest& r) {
  std::vector<std::string> cwd;
  if (!receive_fds(connection, r.fds)) return false;
  if (!get_strings(connection, r.argv) || !get_strings(connection, r.env) ||
      !get_strings(connection, cwd) || r.argv.empty() || cwd.size() != 1) {
    return false;
  }
  r.cwd = cwd[0];
  return true;
}

void close_fds(ForkRequest& r) {
  for (int& fd : r.fds) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

// Names whose values a library takes while it loads, before main: the server's start-up read
// them once, so a child may only differ from the server where an exec'd run would read them anew.
bool read_while_loading(const std::string& name) {
  for (const char* prefix : {"LD_", "OMP_", "GOMP_", "KMP_", "MKL_", "OPENBLAS_", "MALLOC_",
                             "GLIBC_TUNABLES", "TORCH_", "PYTORCH_"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::map<std::string, std::string> by_name(const std::vector<std::string>& env) {
  std::map<std::string, std::string> m;
  for (const std::string& e : env) {
    const size_t eq = e.find('=');
    if (eq != std::string::npos) m[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return m;
}

// Whether a child with environment `env` starts as an exec'd ddpbench would, once `env` is
// completed with what the server's own start-up set (start_up_settings): an exec'd ddpbench's
// start-up sets the same where the request leaves it unset.
bool starts_as_exec(std::vector<std::string>& env, const std::map<std::string, std::string>& own,
                    const std::map<std::string, std::string>& start_up) {
  const auto given = by_name(env);
  for (const auto& [name, value] : start_up) {
    if (given.count(name) == 0) env.push_back(name + "=" + value);
  }
  const auto wanted = by_name(env);
  for (const auto* side : {&wanted, &own}) {
    for (const auto& [name, value] : *side) {
      if (!read_while_loading(name)) continue;
      const auto w = wanted.find(name);
      const auto m = own.find(name);
      if (w == wanted.end() || m == own.end() || w->second != m->second) return false;
    }
  }
  return true;
}

// What start-up (before main) set in this process's environment: the variables whose value
// differs from the one exec placed (/proc/self/environ), such as TORCH_FR_BUFFER_SIZE, which
// comm/gloo_communicator.cpp sets under torch 2.x; and LD_PRELOAD, which libstdcxx_first.cpp sets
// by re-running the process, so that exec placed it and only its presence tells.
std::map<std::string, std::string> start_up_settings(
    const std::map<std::string, std::string>& own) {
  std::ifstream in("/proc/self/environ", std::ios::binary);
  std::vector<std::string> initial;
  for (std::string e; std::getline(in, e, '\0');) initial.push_back(e);
  const auto before = by_name(initial);
  std::map<std::string, std::string> set;
  for (const auto& [name, value] : own) {
    const auto b = before.find(name);
    if (b == before.end() || b->second != value || name == "LD_PRELOAD") set[name] = value;
  }
  return set;
}

// In the child: becomes what an exec of argv in the requester's place would have started, and
// runs the entry point. Never returns.
[[noreturn]] void become_requested(ForkRequest& r, ForkEntry entry, const ArgvArea& area) {
  setpgid(0, 0);  // its own group, as nothing it signals may reach the server or its siblings
  for (int i = 0; i < 3; ++i) {
    if (dup2(r.fds[i], i) < 0) _exit(127);
  }
  close_fds(r);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  clearenv();
  for (const std::string& e : r.env) putenv(strdup(e.c_str()));
  if (chdir(r.cwd.c_str()) != 0) {
    std::fprintf(stderr, "fork server: cannot enter %s: %s\n", r.cwd.c_str(), std::strerror(errno));
    _exit(127);
  }
  // argv points into the bytes ps shows, as an exec'd program's does (the rank zygote rewrites
  // them for its ranks); a line too long for the reserved room runs from a copy, ps cut short.
  std::vector<char*> args;
  if (set_command_line(area, r.argv)) {
    char* p = area.begin;
    for (const std::string& a : r.argv) {
      args.push_back(p);
      p += a.size() + 1;
    }
  } else {
    for (std::string& a : r.argv) args.push_back(a.data());
  }
  args.push_back(nullptr);
  std::exit(entry(static_cast<int>(r.argv.size()), args.data()));
}

struct Server {
  int listener = -1;
  int child_exits = -1;                         // signalfd for SIGCHLD
  std::map<pid_t, int> waiting;                 // child -> its requester's connection
  std::map<std::string, std::string> own_env;   // the server's environment, by name
  std::map<std::string, std::string> start_up;  // what its start-up set there (start_up_settings)
  ArgvArea area;
  ForkEntry entry = nullptr;
};

void answer(int connection, int32_t value) { write_all(connection, &value, sizeof value); }

// One request: a child forked, or a refusal. The connection stays open until the child's status.
void serve_one(Server& s, int connection) {
  timeval patience{5, 0};  // a requester that stalls mid-request does not stall the others
  setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  ForkRequest r;
  if (!read_request(connection, r) || !starts_as_exec(r.env, s.own_env, s.start_up)) {
    close_fds(r);
    answer(connection, -1);
    close(connection);
    return;
  }
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    close(s.listener);
    close(s.child_exits);
    close(connection);
    for (const auto& [pid, fd] : s.waiting) close(fd);
    become_requested(r, s.entry, s.area);
  }
  close_fds(r);
  answer(connection, child);
  if (child < 0) {
    close(connection);
    return;
  }
  s.waiting[child] = connection;
}

void reap(Server& s) {
  signalfd_siginfo info;
  while (read(s.child_exits, &info, sizeof info) > 0) {
  }
  int status = 0;
  for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
    const auto it = s.waiting.find(pid);
    if (it == s.waiting.end()) continue;
    answer(it->second, status);
    close(it->second);
    s.waiting.erase(it);
  }
}

int listen_on(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return -1;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  unlink(path.c_str());  // a dead server's socket; the requester holds the lock while starting us
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(fd, 64) != 0) {
    return -1;
  }
  return fd;
}

}  // namespace

int serve_forks(ForkEntry entry, int argc, char** argv) {
  if (argc < 3 || thread_count() != 1) return 1;  // a threaded copy could not go on
  Server s;
  s.entry = entry;
  s.area = argv_area(argc, argv);
  std::vector<std::string> own;
  for (char** e = environ; *e != nullptr; ++e) own.emplace_back(*e);
  s.own_env = by_name(own);
  s.start_up = start_up_settings(s.own_env);
  const std::string path = argv[2];
  signal(SIGPIPE, SIG_IGN);  // a requester that left; its child's status goes nowhere
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  s.child_exits = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  s.listener = listen_on(path);
  if (s.listener < 0 || s.child_exits < 0) return 1;
  Clock::time_point last = Clock::now();
  while (!s.waiting.empty() || Clock::now() - last < kIdleLimit) {
    pollfd fds[2] = {{s.listener, POLLIN, 0}, {s.child_exits, POLLIN, 0}};
    if (poll(fds, 2, 1000) < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) {
      const int connection = accept4(s.listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection >= 0) serve_one(s, connection);
      last = Clock::now();
    }
    if (fds[1].revents & POLLIN) {
      reap(s);
      last = Clock::now();
    }
  }
  unlink(path.c_str());
  return 0;
}

}  // namespace ddpbench::launch
