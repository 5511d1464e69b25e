// local_address.cpp — see local_address.h.
#include "launch/local_address.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ddpbench::launch {

namespace {

// 0.0.0.0 and :: mean "every interface" to bind, so they bind fine, but gloo must name one
// interface and fails in every worker ("Unable to find interface for: [0.0.0.0]"). The bytes
// getaddrinfo resolved are judged, not the text, so every spelling is caught: "0", "0x0",
// "::0", "0:0::0", and the IPv4-mapped ::ffff:0.0.0.0 (also ::ffff:0:0), which slipped past a
// check of :: alone and failed in gloo.
bool wildcard(const addrinfo* a) {
  if (a->ai_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr.s_addr == htonl(INADDR_ANY);
  }
  if (a->ai_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
    if (IN6_IS_ADDR_UNSPECIFIED(&v6)) return true;
    // ::ffff:a.b.c.d carries an IPv4 address in its last 4 bytes.
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 0 && v6.s6_addr[13] == 0 &&
           v6.s6_addr[14] == 0 && v6.s6_addr[15] == 0;
  }
  return false;
}

}  // namespace

std::optional<std::string> why_not_local(const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(address.c_str(), nullptr, &hints, &found);
  if (rc != 0) return std::string("does not resolve (") + gai_strerror(rc) + ")";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (wildcard(a)) {
      freeaddrinfo(found);
      return std::string("is the wildcard address (every interface), not one address");
    }
  }
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
