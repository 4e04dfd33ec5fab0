#pragma once
// Independent units of work spread over the machine's hardware threads, for
// the host-side passes over a whole matrix that no task graph schedules:
// zeroing a new matrix's tiles and filling a generated one. On an
// N = 32,768 matrix (8.6 GB) each pass took seconds on one thread, several
// times a GPU's factorization of it.
#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace tessera {

// Calls body(u) once for every u in [0, units): unit u on worker u % w of
// w = min(hardware threads, units, max_workers) workers, the calling thread
// being worker 0; returns when every unit is done. The bodies must touch
// disjoint data and must not throw. max_workers caps the threads where a
// unit is too small to repay one (0 or 1: the caller alone).
template <class Body>
void parallel_units(std::size_t units, std::size_t max_workers, const Body& body) {
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t w = std::max<std::size_t>(1, std::min({hw, units, max_workers}));
  const auto run = [&](std::size_t first) {
    for (std::size_t u = first; u < units; u += w) body(u);
  };
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < w; ++t) pool.emplace_back(run, t);
  run(0);
}

}  // namespace tessera
