#pragma once
// OpenMPI backend of the node-to-node network: one process per node, and in
// each a communication thread that alone calls MPI during a run (000 §5.4,
// Fig. 9): it posts an MPI_Isend for every queued message, probes for the
// next incoming one and receives it with MPI_Imrecv, and tests both with
// MPI_Test until they finish. With a core of its own it polls briskly; on a
// machine with as many ranks as cores it backs off to short sleeps when idle,
// so that it does not take a compute thread's core (set_own_core).
//
// No MPI header here: the command line compiles against this whether or not
// MPI was found; without MPI every constructor throws NotCompiled.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "base/error.hpp"
#include "platform/network.hpp"

namespace tessera::platform {

class MpiNetwork final : public NodeNetwork {
 public:
  // Initializes MPI (thread level MPI_THREAD_SERIALIZED: one thread at a
  // time calls MPI, the communication thread during runs and the caller's
  // thread outside them; a thread that ends the job, abort(), waits for the
  // communication thread's call in progress) and finalizes it on destruction.
  MpiNetwork(int* argc, char*** argv);
  ~MpiNetwork() override;
  MpiNetwork(const MpiNetwork&) = delete;
  MpiNetwork& operator=(const MpiNetwork&) = delete;

  int node() const override;
  int nodes() const override;
  void start(DeliverFn deliver) override;
  void send(int dest, Message&& m) override;
  Message make_message(std::uint64_t key, std::size_t bytes) override;
  void stop() override;
  void allreduce_sum(std::vector<double>& v) override;
  // Ends every rank of the job at once (MPI_Abort) with `code`.
  [[noreturn]] void abort(int code, const std::string& why) override;
  // What mpirun (Open MPI) tells a process in its environment, with or
  // without MPI built: the job's ranks (OMPI_COMM_WORLD_SIZE; 0 when unset:
  // not started by mpirun), the job's ranks on this host
  // (OMPI_COMM_WORLD_LOCAL_SIZE) and this one's place among them
  // (OMPI_COMM_WORLD_LOCAL_RANK). The local values are read only where the
  // job's is set (a stale one alone, from a shell or a script, is not a job):
  // 1 and 0 otherwise. A value that is not a count throws InputError naming
  // the variable and the value. The environment is inherited by every process
  // a rank starts, so a one-node run started inside a job of one rank runs
  // without MPI (tessera_main.cpp): a second MPI_Init under that rank's
  // identity would fail.
  static int mpirun_ranks() { return mpirun_count("OMPI_COMM_WORLD_SIZE", 1, 0); }
  static bool launched_by_mpirun() { return mpirun_ranks() > 0; }
  static int local_ranks() { return launched_by_mpirun() ? mpirun_count("OMPI_COMM_WORLD_LOCAL_SIZE", 1, 1) : 1; }
  static int local_rank() { return launched_by_mpirun() ? mpirun_count("OMPI_COMM_WORLD_LOCAL_RANK", 0, 0) : 0; }
  // Whether a native run of a grid of `grid_nodes` nodes is distributed (one MPI process per node): a grid of
  // several nodes, or a job of several ranks (which the grid must then match). One node outside mpirun, or in a
  // job of one rank, runs without MPI.
  static bool distributed(int grid_nodes) { return grid_nodes > 1 || mpirun_ranks() > 1; }
  // How the communication thread waits (before start()). With a core of its
  // own (000 §5.3) it polls briskly; sharing one with compute threads it
  // backs off to sleeps of up to 4 ms when idle (the default).
  void set_own_core(bool own);
  // Messages longer than this many bytes (default, and at most, 2^31 - 1: MPI's int count) go as one element of a
  // derived datatype of exactly their length, whatever it is; shorter ones as that many MPI_BYTEs. Tests lower it to
  // send small messages the long way (before start()).
  void set_message_limit(std::size_t bytes);
  // Messages sent and received so far as a derived datatype (longer than the limit).
  std::pair<std::uint64_t, std::uint64_t> derived_messages() const;
  // Cores this process may use: its CPU affinity when mpirun bound it to
  // fewer than the machine's, else the machine's split evenly between the
  // ranks on it (OMPI_COMM_WORLD_LOCAL_SIZE).
  static int cores_per_rank();

 private:
  // The decimal integer >= `least` in `variable`, or `unset` where it is not set.
  static int mpirun_count(const char* variable, int least, int unset) {
    const char* v = std::getenv(variable);
    if (v == nullptr) return unset;
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || n < least || n > std::numeric_limits<int>::max())
      throw InputError(std::string(variable) + "='" + v +
                       "' (in the environment): not an integer >= " + std::to_string(least) + ", as mpirun sets it");
    return static_cast<int>(n);
  }

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::platform
