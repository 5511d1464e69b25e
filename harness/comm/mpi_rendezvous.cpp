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

MpiRendezvous mpi_rendezvous_store(int rank, std::chrono::milliseconds timeout) {
  ensure_mpi_initialized();
  std::array<char, 512> address{};
  MpiRendezvous r;
  std::string failure;
  if (rank == 0) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    try {
      r.store = Store::serve(host, 0, timeout);
      const std::string text = fmt::format("{}:{}", host, r.store->port());
      std::strncpy(address.data(), text.c_str(), address.size() - 1);
    } catch (const std::exception& e) {
      failure = fmt::format("rank 0 could not serve the rendezvous store on {}: {}", host,
                            std::string(e.what()).substr(0, std::string(e.what()).find('\n')));
    }
  }
  MPI_Bcast(address.data(), static_cast<int>(address.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
  const std::string text(address.data());
  if (!failure.empty()) throw std::runtime_error(failure);
  if (text.empty()) throw std::runtime_error("rank 0 could not serve the rendezvous store");
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("malformed rendezvous address " + text);
  r.host = text.substr(0, colon);
  r.port = std::stoi(text.substr(colon + 1));
  if (rank != 0) r.store = Store::connect(r.host, r.port, timeout);
  return r;
}

}  // namespace ddpbench::comm
