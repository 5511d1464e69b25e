// cli_runner.cpp — see cli_runner.h.
#include "support/cli_runner.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "support/test_paths.h"

namespace ddpbench::testing {

ProcessResult ddpbench(std::vector<std::string> args, const std::vector<std::string>& env) {
  args.insert(args.begin(), kDdpbenchBinary);
  return run_process(args, env);
}

ProcessResult python(std::vector<std::string> args) {
  args.insert(args.begin(), kPython);
  return run_process(args);
}

std::string oracle(const std::string& script) {
  return std::string(kSourceDir) + "/reference/" + script;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in);
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool process_alive_with(const std::string& marker) {
  return run_process({"pgrep", "-f", marker}).exit_code == 0;
}

void write_cifar_batch(const std::string& dir, int records, int salt) {
  std::filesystem::create_directories(dir);
  std::ofstream f(dir + "/data_batch_1.bin", std::ios::binary);
  for (int r = 0; r < records; ++r) {
    f.put(static_cast<char>(r % 10));
    for (int p = 0; p < 3072; ++p) f.put(static_cast<char>((r * salt + p) % 251));
  }
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

}  // namespace ddpbench::testing
