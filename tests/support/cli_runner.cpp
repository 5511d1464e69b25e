// cli_runner.cpp — see cli_runner.h.
#include "support/cli_runner.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "support/fork_client.h"
#include "support/test_paths.h"

namespace ddpbench::testing {

ProcessResult ddpbench(std::vector<std::string> args, const std::vector<std::string>& env) {
  args.insert(args.begin(), kDdpbenchBinary);
  return run_forked(args, env);
}

ProcessResult python(std::vector<std::string> args) {
  args.insert(args.begin(), kPython);
  return run_process(args);
}

std::string oracle(const std::string& script) {
  return std::string(kSourceDir) + "/reference/" + script;
}

std::vector<std::string> short_checked_run(const std::string& scenario, int gpus,
                                           int per_rank_batch, int steps, const std::string& out) {
  return {"run",
          "--scenario",
          scenario,
          "--gpus",
          std::to_string(gpus),
          "--batch-size",
          std::to_string(per_rank_batch * gpus),
          "--steps",
          std::to_string(steps),
          "--check-only",
          "--quiet",
          "--out",
          out};
}

ProcessResult torch_oracle_check(const std::string& dir, const std::string& mode,
                                 const std::string& oracle_flag, const std::string& tol) {
  std::vector<std::string> args = {oracle("torch_ddp_oracle.py"),
                                   "--batches",
                                   dir + "/batches.pt",
                                   "--check",
                                   dir + "/state_" + mode + ".pt",
                                   "--atol",
                                   tol,
                                   "--rtol",
                                   tol};
  if (!oracle_flag.empty()) args.push_back(oracle_flag);
  return python(args);
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in);
}

namespace {

// Binds `fd` to 127.0.0.1 on a port the kernel picks; returns the port (-1 on failure).
int bind_loopback_any_port(int fd) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return -1;
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

}  // namespace

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const int port = bind_loopback_any_port(fd);
  close(fd);
  return port;
}

SilentListener::SilentListener() : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
  port_ = bind_loopback_any_port(fd_);
  if (port_ < 0 || listen(fd_, 16) != 0) throw std::runtime_error("cannot listen on 127.0.0.1");
}

SilentListener::~SilentListener() { close(fd_); }

bool process_alive_with(const std::string& marker) {
  return run_process({"pgrep", "-f", marker}).exit_code == 0;
}

int shm_segments_of(int pid) {
  const std::string prefix = "ddpbench-shm-" + std::to_string(pid) + "-";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    n += e.path().filename().string().rfind(prefix, 0) == 0 ? 1 : 0;
  }
  return n;
}

std::vector<std::string> folder_names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void write_cifar_batch(const std::string& dir, int records, int salt) {
  std::filesystem::create_directories(dir);
  std::ofstream f(dir + "/data_batch_1.bin", std::ios::binary);
  for (int r = 0; r < records; ++r) {
    f.put(static_cast<char>(r % 10));
    for (int p = 0; p < 3072; ++p) f.put(static_cast<char>((r * salt + p) % 251));
  }
}

const nlohmann::json& result_of(const nlohmann::json& report, const std::string& mode) {
  for (const auto& r : report.at("results")) {
    if (r.at("mode") == mode) return r;
  }
  throw std::runtime_error("report has no result for mode " + mode);
}

nlohmann::json find_check(const nlohmann::json& report, const std::string& mode,
                          const std::string& name) {
  for (const auto& r : report.at("results")) {
    if (r.at("mode") != mode) continue;
    for (const auto& c : r.at("checks")) {
      if (c.at("name") == name) return c;
    }
  }
  throw std::runtime_error("report has no check " + name + " for mode " + mode);
}

bool cpu_fp16_supported() {
  return ddpbench({"--version"}).out.find("libtorch 1.") == std::string::npos;
}

}  // namespace ddpbench::testing
