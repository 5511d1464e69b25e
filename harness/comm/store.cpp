// store.cpp — see store.h.
#include "comm/store.h"

#include <fmt/format.h>

#include <future>
#include <stdexcept>
#include <thread>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
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

std::shared_ptr<Store> make(const std::string& host, int port, bool server,
                            std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<uint16_t>(port);
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
