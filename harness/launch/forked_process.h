// forked_process.h — what a process that forks copies of itself instead of exec'ing needs (the
// rank zygote, the test suites' fork server): requests as length-prefixed strings on a socket,
// whether this process may be forked at all, and the bytes ps shows as its command line.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ddpbench::launch {

// Whole writes and reads, retried on EINTR; false when the peer is gone.
bool write_all(int fd, const void* data, size_t size);
bool read_all(int fd, void* data, size_t size);

// Appends `strings` to `wire` as a 32-bit count, then each string as a 32-bit size and its bytes.
void put_strings(std::string& wire, const std::vector<std::string>& strings);
// Reads what put_strings wrote.
bool get_strings(int fd, std::vector<std::string>& strings);

// This process's threads (/proc/self/status); -1 when unknown. Only a process with one thread
// may fork a copy that goes on without exec.
int thread_count();

// The bytes main's argv occupies, which /proc/PID/cmdline (ps, pgrep -f) shows.
struct ArgvArea {
  char* begin = nullptr;
  size_t size = 0;
};
ArgvArea argv_area(int argc, char** argv);

// Writes `argv` over the area, NUL-separated, as far as it fits; returns whether all of it did.
bool set_command_line(const ArgvArea& area, const std::vector<std::string>& argv);

}  // namespace ddpbench::launch
