// store.cpp — see store.h.
#include "comm/store.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/version.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <stdexcept>
#include <thread>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "comm/store_impl.h"

namespace ddpbench::comm {
namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// Note [a store client that cannot hang]: PyTorch 2.x's TCPStore client pings the server inside
// its constructor with a blocking read that has no deadline, so a port where something else
// listens and never answers (another program, a proxy that accepts any connection) would hold the
// rank forever, past --timeout (1.13 fails there after the timeout instead). The constructor runs
// on a thread of its own; past the deadline the caller gets an error and the thread is left blocked
// in its read, to end with the process, which exits on this error.
c10::intrusive_ptr<c10d::TCPStore> construct_within(const std::string& host,
                                                    const c10d::TCPStoreOptions& opts,
                                                    std::chrono::milliseconds deadline) {
  auto result = std::make_shared<std::promise<c10::intrusive_ptr<c10d::TCPStore>>>();
  std::future<c10::intrusive_ptr<c10d::TCPStore>> done = result->get_future();
  std::thread([host, opts, result] {
    try {
      result->set_value(c10::make_intrusive<c10d::TCPStore>(host, opts));
    } catch (...) {
      result->set_exception(std::current_exception());
    }
  }).detach();
  if (done.wait_for(deadline) != std::future_status::ready) {
    throw std::runtime_error(
        "connected, but no c10d store answered (is another program listening there?)");
  }
  return done.get();
}

#if TORCH_VERSION_MAJOR >= 2
// Note [the store listens where MASTER_ADDR says]: c10d's server binds the port on every
// interface. PyTorch 2.x can take over a socket the caller bound (masterListenFd), so rank 0
// listens on MASTER_ADDR only, as its users were told; 1.13 has no such option and its server
// still listens on every interface (docs/launching.md, "What listens on the network").
int listen_on(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    throw std::runtime_error(fmt::format("cannot resolve {} ({})", host, gai_strerror(rc)));
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      freeaddrinfo(found);
      return fd;
    }
    why = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  throw std::runtime_error(fmt::format("cannot listen on {}:{} ({})", host, port, why));
}

// The port `fd` is bound to (port 0 asks the kernel for one; c10d checks the fd against it).
int bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error(fmt::format("getsockname failed ({})", std::strerror(errno)));
  }
  return ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}
#endif

std::shared_ptr<Store> make(const std::string& host, int port, bool server,
                            std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<uint16_t>(port);
#if TORCH_VERSION_MAJOR >= 2
  if (server) {
    opts.masterListenFd = listen_on(host, port);
    opts.port = static_cast<uint16_t>(bound_port(*opts.masterListenFd));
  }
#endif
  opts.isServer = server;
  opts.waitWorkers = false;
  opts.timeout = timeout;
  // A client's own connect retries until `timeout`; the grace lets its error, which says more,
  // arrive first when it can.
  auto tcp = server ? c10::make_intrusive<c10d::TCPStore>(host, opts)
                    : construct_within(host, opts, timeout + std::chrono::seconds(2));
  auto impl = std::make_unique<Store::Impl>();
  impl->port = tcp->getPort();
  impl->store = tcp;
  return std::make_shared<Store>(std::move(impl));
}

}  // namespace

std::shared_ptr<Store> Store::open_file(const std::string& path,
                                        std::chrono::milliseconds timeout) {
  // numWorkers -1: never counts its users down to deleting the file; the folder holding it goes
  // with the parent's temporary folder.
  auto file = c10::make_intrusive<c10d::FileStore>(path, -1);
  file->setTimeout(timeout);
  // c10d creates the file at the first write, and a read before it waits up to the timeout for
  // the file to appear: a launcher whose workers all died before writing (gloo refusing its
  // address, say) would sit out the whole --timeout in its first check(). Every opener writes
  // once, so the file exists from here on.
  file->add("ddpbench/openers", 1);
  auto impl = std::make_unique<Store::Impl>();
  impl->store = file;
  return std::make_shared<Store>(std::move(impl));
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

std::shared_ptr<Store> Store::serve(const std::string& host, int port,
                                    std::chrono::milliseconds timeout) {
  return make(host, port, true, timeout);
}

std::shared_ptr<Store> Store::connect(const std::string& host, int port,
                                      std::chrono::milliseconds timeout) {
  return make(host, port, false, timeout);
}

int Store::port() const { return impl_->port; }

std::shared_ptr<Store> Store::prefixed(const std::string& prefix) {
  auto impl = std::make_unique<Store::Impl>();
  impl->store = c10::make_intrusive<c10d::PrefixStore>(prefix, impl_->store);
  return std::make_shared<Store>(std::move(impl));
}

void Store::set(const std::string& key, const std::string& value) {
  if (value.size() > kMaxValueBytes) {
    throw std::length_error(fmt::format(
        "store value '{}' of {} bytes is over the {}-byte limit of PyTorch 2.x's TCPStore: send "
        "bulk data through a collective or a file",
        key, value.size(), kMaxValueBytes));
  }
  impl_->store->set(key, bytes_of(value));
}

std::string Store::get(const std::string& key) {
  const std::vector<uint8_t> v = impl_->store->get(key);
  return {v.begin(), v.end()};
}

bool Store::check(const std::string& key) { return impl_->store->check({key}); }

int64_t Store::add(const std::string& key, int64_t delta) { return impl_->store->add(key, delta); }

}  // namespace ddpbench::comm
