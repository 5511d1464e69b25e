// local_address.cpp — see local_address.h.
#include "launch/local_address.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ddpbench::launch {

std::optional<std::string> why_not_local(const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(address.c_str(), nullptr, &hints, &found);
  if (rc != 0) return std::string("does not resolve (") + gai_strerror(rc) + ")";
  std::optional<std::string> why = std::string("is not an address of this machine");
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    // Port 0 in the resolved address: binding proves the address is ours without taking a port.
    const bool ours = bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    close(fd);
    if (ours) {
      why.reset();
      break;
    }
  }
  freeaddrinfo(found);
  return why;
}

}  // namespace ddpbench::launch
