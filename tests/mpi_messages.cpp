// The OpenMPI network's messages of every length, under mpirun on 2 ranks.
//
// MPI counts are int, so a message above 2^31 - 1 bytes (a 16,384-square tile of doubles) goes as one element of a
// derived datatype of its exact length (platform/native/mpi_network.cpp, WireType), and the receiver builds its own
// from the length it probed. Sending 2 GiB here would take 4 GiB per rank; instead the limit is lowered to a few
// hundred bytes (MpiNetwork::set_message_limit), so that messages shorter than, at, one past and far beyond it
// take both paths, with a rest after the whole blocks and without. Each rank sends each length to the other with a
// pattern of its key; each checks that every message arrives once, whole, byte for byte. The second pass sends the
// same lengths with the default limit (all plain). Exit 0 when all hold, 1 with a line per failure.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "platform/native/mpi_network.hpp"

namespace {

using tessera::platform::Message;
using tessera::platform::MpiNetwork;

std::byte pattern(std::uint64_t key, std::size_t i) { return static_cast<std::byte>((key * 131 + i * 7) % 251); }

}  // namespace

int main(int argc, char** argv) {
  MpiNetwork net(&argc, &argv);
  if (net.nodes() != 2) {
    std::fprintf(stderr, "mpi_messages: run under mpirun -np 2 (%d ranks)\n", net.nodes());
    return 2;
  }
  const int me = net.node(), other = 1 - me;
  constexpr std::size_t kLimit = 300;  // bytes on the wire, header (64) included
  // Payload lengths: plain, at the limit, one past it, whole blocks, blocks and a rest, many blocks.
  const std::vector<std::size_t> payloads = {0,
                                             1,
                                             kLimit - Message::kHeader,
                                             kLimit - Message::kHeader + 1,
                                             2 * kLimit - Message::kHeader,
                                             3 * kLimit + 17,
                                             1000003};
  int failures = 0;
  for (const bool lowered : {true, false}) {
    std::mutex mutex;
    std::map<std::uint64_t, std::string> got;  // key -> what was wrong ("" when whole)
    if (lowered) net.set_message_limit(kLimit);
    else net.set_message_limit(2147483647);
    net.start([&](int from, Message&& m) {
      std::string wrong;
      if (from != other) wrong = "from node " + std::to_string(from);
      const std::size_t want = payloads.at(m.key() % payloads.size());
      if (m.bytes() != want) wrong += " length " + std::to_string(m.bytes()) + " not " + std::to_string(want);
      for (std::size_t i = 0; wrong.empty() && i < m.bytes(); ++i)
        if (m.payload()[i] != pattern(m.key(), i)) wrong = "byte " + std::to_string(i) + " differs";
      std::lock_guard lk(mutex);
      if (got.count(m.key())) wrong += " (a second time)";
      got[m.key()] = wrong.empty() ? "" : wrong;
    });
    for (std::size_t x = 0; x < payloads.size(); ++x) {
      const std::uint64_t key = x + payloads.size() * static_cast<std::uint64_t>(me + 1);
      Message m = net.make_message(key, payloads[x]);
      for (std::size_t i = 0; i < payloads[x]; ++i) m.payload()[i] = pattern(key, i);
      net.send(other, std::move(m));
    }
    // Stop once the other rank's messages are here (a timeout of the ctest bounds a lost one): stop() returns once
    // this rank's own sends have completed, which the other rank's receives allow, its thread still running.
    for (;;) {
      {
        std::lock_guard lk(mutex);
        if (got.size() >= payloads.size()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    net.stop();
    // Both ranks' threads stopped before either sends the next pass's messages, so that no thread of this pass
    // receives one of them (MPI_THREAD_SERIALIZED: the barrier only once no thread of the network runs).
    net.barrier();
    // The lowered pass sends the 4 lengths above 300 wire bytes the long way, each way; the default one none more.
    if (const auto [sent, received] = net.derived_messages(); sent != 4 || received != 4) {
      std::fprintf(stderr,
                   "mpi_messages: rank %d, limit %s: %llu sent and %llu received as a derived datatype, not 4\n", me,
                   lowered ? "lowered" : "default", static_cast<unsigned long long>(sent),
                   static_cast<unsigned long long>(received));
      ++failures;
    }
    for (std::size_t x = 0; x < payloads.size(); ++x) {
      const std::uint64_t key = x + payloads.size() * static_cast<std::uint64_t>(other + 1);
      const auto it = got.find(key);
      const std::string what = it == got.end() ? "never arrived" : it->second;
      if (!what.empty()) {
        std::fprintf(stderr, "mpi_messages: rank %d, limit %s: the message of %zu payload bytes: %s\n", me,
                     lowered ? "lowered" : "default", payloads[x], what.c_str());
        ++failures;
      }
    }
  }
  std::vector<double> total{static_cast<double>(failures)};
  net.allreduce_sum(total);
  if (me == 0) std::printf("mpi_messages: %d failures over both ranks\n", static_cast<int>(total[0]));
  return total[0] == 0 ? 0 : 1;
}
