// Stands in for mpi_network.cpp when tessera is built without MPI.
#include <cstdlib>

#include "base/error.hpp"
#include "platform/native/mpi_network.hpp"

namespace tessera::platform {

struct MpiNetwork::Impl {};

MpiNetwork::MpiNetwork(int*, char***) { throw NotCompiled("MPI"); }
MpiNetwork::~MpiNetwork() = default;
int MpiNetwork::node() const { return 0; }
int MpiNetwork::nodes() const { return 1; }
void MpiNetwork::start(DeliverFn) { throw NotCompiled("MPI"); }
void MpiNetwork::send(int, Message&&) { throw NotCompiled("MPI"); }
Message MpiNetwork::make_message(std::uint64_t, std::size_t) { throw NotCompiled("MPI"); }
void MpiNetwork::stop() {}
void MpiNetwork::allreduce_sum(std::vector<double>&) { throw NotCompiled("MPI"); }
void MpiNetwork::abort(int code, const std::string&) { std::exit(code); }
void MpiNetwork::set_own_core(bool) {}
void MpiNetwork::set_message_limit(std::size_t) {}
std::pair<std::uint64_t, std::uint64_t> MpiNetwork::derived_messages() const { return {0, 0}; }
int MpiNetwork::cores_per_rank() { return 1; }

}  // namespace tessera::platform
