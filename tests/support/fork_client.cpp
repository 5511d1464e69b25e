// fork_client.cpp — see fork_client.h. The server's socket is named after the binary's path,
// inode, size and modification time, so a rebuilt binary starts a server of its own; a lock file
// beside it lets one of the tests running in parallel start it while the others wait.
#include "support/fork_client.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <thread>

#include "launch/fork_server.h"
#include "launch/forked_process.h"

extern char** environ;

namespace ddpbench::testing {
namespace {

// Room reserved in the server's command line for its children's (fork_server.h).
constexpr int kCommandLineRoom = 8192;

std::string server_socket(const std::string& binary) {
  struct stat st {};
  if (stat(binary.c_str(), &st) != 0) return "";
  const std::string identity =
      binary + "|" + std::to_string(st.st_ino) + "|" + std::to_string(st.st_size) + "|" +
      std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  char name[96];
  std::snprintf(name, sizeof name, "/tmp/ddpbench-forks-%u-%016zx.sock", getuid(),
                std::hash<std::string>{}(identity));
  return name;
}

int connect_to(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

// Starts the server in a session of its own, stdio on /dev/null, with none of this test's fds
// (ctest waits for the test's output pipes to close, and the server outlives the test); returns its
// pid, a child of this process, or -1. Its argv is built before the fork: a test process may have
// threads, and its forked copy may not allocate.
pid_t start_server(const std::string& binary, const std::string& path) {
  std::vector<std::string> argv = {binary, launch::kForkServerFlag, path};
  argv.resize(argv.size() + kCommandLineRoom);
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t server = fork();
  if (server == 0) {
    setsid();
    const int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    execv(args[0], args.data());
    _exit(127);
  }
  return server;
}

// A server that ended before it listened (it had a thread after start-up, say) will not serve
// this binary: the marker beside its socket sends every later request to exec at once.
std::string exec_marker(const std::string& path) { return path + ".exec"; }

int connect_or_start(const std::string& binary, const std::string& path) {
  int fd = connect_to(path);
  if (fd >= 0) return fd;
  const int lock = open((path + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock < 0 || flock(lock, LOCK_EX) != 0) return -1;
  fd = connect_to(path);
  if (fd < 0 && access(exec_marker(path).c_str(), F_OK) != 0) {
    const pid_t server = start_server(binary, path);
    // Its start-up is libtorch's: seconds on a loaded runner.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (fd < 0 && server > 0 && std::chrono::steady_clock::now() < deadline) {
      if (waitpid(server, nullptr, WNOHANG) == server) {
        close(open(exec_marker(path).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      fd = connect_to(path);
    }
  }
  flock(lock, LOCK_UN);
  close(lock);
  return fd;
}

// This process's environment with `extra` applied as putenv would ("NAME=value" sets NAME).
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const std::string& x : extra) {
    const std::string name = x.substr(0, x.find('='));
    env.erase(std::remove_if(env.begin(), env.end(),
                             [&name](const std::string& e) { return e.rfind(name + "=", 0) == 0; }),
              env.end());
    if (x.find('=') != std::string::npos) env.push_back(x);
  }
  return env;
}

// fork_server.cpp's wire: one byte carrying stdin, stdout and stderr, then argv, env, {cwd}.
bool send_request(int fd, const int (&stdio)[3], const std::vector<std::string>& argv,
                  const std::vector<std::string>& env) {
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 3)] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * 3);
  std::memcpy(CMSG_DATA(c), stdio, sizeof(int) * 3);
  if (sendmsg(fd, &msg, MSG_NOSIGNAL) != 1) return false;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return false;
  std::string wire;
  launch::put_strings(wire, argv);
  launch::put_strings(wire, env);
  launch::put_strings(wire, {cwd});
  return send(fd, wire.data(), wire.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(wire.size());
}

// The child's pid from the server, or -1 where it refused or did not answer.
int forked_pid(int fd, const std::vector<std::string>& argv,
               const std::vector<std::string>& extra_env, int out_write, int err_write) {
  const int stdio[3] = {STDIN_FILENO, out_write, err_write};
  timeval patience{60, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  int32_t pid = -1;
  if (!send_request(fd, stdio, argv, environment_with(extra_env)) ||
      !launch::read_all(fd, &pid, sizeof pid)) {
    return -1;
  }
  timeval forever{0, 0};  // the status comes when the child ends
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof forever);
  return pid;
}

}  // namespace

ProcessResult run_forked(const std::vector<std::string>& argv,
                         const std::vector<std::string>& extra_env, int limit_s) {
  const char* start = std::getenv(kTestStartEnv);
  const std::string path = server_socket(argv.at(0));
  if ((start != nullptr && std::string(start) == "exec") || path.empty()) {
    return run_process(argv, extra_env, limit_s);
  }
  const int fd = connect_or_start(argv[0], path);
  int out_pipe[2];
  int err_pipe[2];
  if (fd < 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
    if (fd >= 0) close(fd);
    return run_process(argv, extra_env, limit_s);
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const int pid = forked_pid(fd, argv, extra_env, out_pipe[1], err_pipe[1]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid <= 0) {
    for (const int f : {fd, out_pipe[0], err_pipe[0]}) close(f);
    return run_process(argv, extra_env, limit_s);
  }
  return wait_for({pid, out_pipe[0], err_pipe[0], fd}, limit_s);
}

}  // namespace ddpbench::testing
