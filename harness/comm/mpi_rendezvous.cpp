// mpi_rendezvous.cpp — see mpi_rendezvous.h.
#include "comm/mpi_rendezvous.h"

#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "comm/mpi_communicator.h"

namespace ddpbench::comm {

std::shared_ptr<Store> mpi_rendezvous_store(int rank, std::chrono::milliseconds timeout) {
  ensure_mpi_initialized();
  std::array<char, 512> address{};
  std::shared_ptr<Store> store;
  if (rank == 0) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    store = Store::serve(host, 0, timeout);
    const std::string text = fmt::format("{}:{}", host, store->port());
    std::strncpy(address.data(), text.c_str(), address.size() - 1);
  }
  MPI_Bcast(address.data(), static_cast<int>(address.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) return store;
  const std::string text(address.data());
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("malformed rendezvous address " + text);
  return Store::connect(text.substr(0, colon), std::stoi(text.substr(colon + 1)), timeout);
}

}  // namespace ddpbench::comm
