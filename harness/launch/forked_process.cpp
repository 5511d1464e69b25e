// forked_process.cpp — see forked_process.h.
#include "launch/forked_process.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace ddpbench::launch {

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void put_strings(std::string& wire, const std::vector<std::string>& strings) {
  const auto put_size = [&wire](uint32_t n) { wire.append(reinterpret_cast<const char*>(&n), 4); };
  put_size(static_cast<uint32_t>(strings.size()));
  for (const std::string& s : strings) {
    put_size(static_cast<uint32_t>(s.size()));
    wire += s;
  }
}

bool get_strings(int fd, std::vector<std::string>& strings) {
  uint32_t count = 0;
  if (!read_all(fd, &count, 4)) return false;
  strings.resize(count);
  for (std::string& s : strings) {
    uint32_t size = 0;
    if (!read_all(fd, &size, 4)) return false;
    s.resize(size);
    if (size > 0 && !read_all(fd, s.data(), size)) return false;
  }
  return true;
}

int thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return -1;
}

ArgvArea argv_area(int argc, char** argv) {
  ArgvArea area;
  if (argc < 1 || argv == nullptr || argv[0] == nullptr) return area;
  area.begin = argv[0];
  char* end = argv[0] + std::strlen(argv[0]) + 1;
  for (int i = 1; i < argc && argv[i] == end; ++i) end = argv[i] + std::strlen(argv[i]) + 1;
  area.size = static_cast<size_t>(end - area.begin);
  return area;
}

bool set_command_line(const ArgvArea& area, const std::vector<std::string>& argv) {
  if (area.size == 0) return false;
  std::string line;
  for (const std::string& a : argv) line.append(a).push_back('\0');
  const size_t n = std::min(line.size(), area.size - 1);
  std::memcpy(area.begin, line.data(), n);
  std::memset(area.begin + n, 0, area.size - n);
  return line.size() <= area.size;
}

}  // namespace ddpbench::launch
