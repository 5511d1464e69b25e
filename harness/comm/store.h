// store.h — the key-value store used for rendezvous, progress heartbeats and results: a thin
// wrapper over c10d's stores so that callers need no c10d headers. Workers a ddpbench parent
// spawns share a file store in the parent's private temporary folder; externally launched ranks
// (torchrun, Slurm, mpirun) use a TCP store that rank 0 serves, as torchrun's rendezvous does.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace ddpbench::comm {

class Store {
 public:
  // Listens on host:port; port 0 picks a free port (see port()).
  static std::shared_ptr<Store> serve(const std::string& host, int port,
                                      std::chrono::milliseconds timeout);
  // A store in a file (c10d::FileStore) that every process of one machine opens by its path: the
  // rendezvous of the workers a ddpbench parent spawns, reachable only through the file system.
  static std::shared_ptr<Store> open_file(const std::string& path,
                                          std::chrono::milliseconds timeout);
  // Connects to a server; retries until `timeout`, and gives up soon after it even when something
  // that is not a store holds the port (store.cpp: Note [a store client that cannot hang]).
  // Throws std::runtime_error on failure.
  static std::shared_ptr<Store> connect(const std::string& host, int port,
                                        std::chrono::milliseconds timeout);

  int port() const;
  // The same store seen through a key prefix (c10d::PrefixStore): a rendezvous of its own, inside
  // this one, for a communicator split off the world's (comm/communicator_split.h).
  std::shared_ptr<Store> prefixed(const std::string& prefix);
  // The largest value set() accepts: PyTorch 2.x's TCPStore server refuses larger payloads
  // ("Invalid payload size"), so the store carries only small messages on every libtorch and
  // bulk data goes elsewhere (collectives, or the worker result file of launch/worker_group.h).
  static constexpr size_t kMaxValueBytes = size_t{8} << 20;
  // Throws std::length_error for a value over kMaxValueBytes.
  void set(const std::string& key, const std::string& value);
  // Blocks until the key exists or the timeout passes (then throws).
  std::string get(const std::string& key);
  bool check(const std::string& key);
  int64_t add(const std::string& key, int64_t delta);

  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  ~Store();
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ddpbench::comm
