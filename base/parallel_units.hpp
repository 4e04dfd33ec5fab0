#pragma once
// Independent units of work spread over the threads this process may run on,
// for the host-side passes over a whole matrix that no task graph schedules:
// zeroing a new matrix's tiles and filling a generated one. On an
// N = 32,768 matrix (8.6 GB) each pass took seconds on one thread, several
// times a GPU's factorization of it.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/cpu_count.hpp"

namespace tessera {

// Calls body(u) once for every u in [0, units): unit u on worker u % w of
// w = min(usable_cpus(), units, max_workers) workers, the calling thread being
// worker 0; returns when every unit is done. The bodies must touch disjoint
// data and must not throw. max_workers caps the threads where a unit is too
// small to repay one (0 or 1: the caller alone). A worker whose thread cannot
// be started (a process at its thread limit) runs on the caller's.
template <class Body>
void parallel_units(std::size_t units, std::size_t max_workers, const Body& body) {
  const std::size_t w = std::max<std::size_t>(1, std::min({usable_cpus(), units, max_workers}));
  const auto run = [&](std::size_t first) {
    for (std::size_t u = first; u < units; u += w) body(u);
  };
  std::vector<std::jthread> pool;
  std::size_t t = 1;
  try {
    for (; t < w; ++t) pool.emplace_back(run, t);
  } catch (const std::system_error&) {
    for (; t < w; ++t) run(t);
  }
  run(0);
}

// Zeroes the byte ranges (pointer, length) in pieces of at most `piece`
// bytes, a worker per four pieces of the whole at most.
inline void parallel_zero(const std::vector<std::pair<std::byte*, std::size_t>>& ranges,
                          std::size_t piece = std::size_t{1} << 24) {
  std::vector<std::pair<std::byte*, std::size_t>> pieces;
  std::size_t total = 0;
  for (const auto& [at, bytes] : ranges) {
    total += bytes;
    for (std::size_t off = 0; off < bytes; off += piece) pieces.emplace_back(at + off, std::min(piece, bytes - off));
  }
  parallel_units(pieces.size(), total / (4 * piece),
                 [&](std::size_t u) { std::memset(pieces[u].first, 0, pieces[u].second); });
}

}  // namespace tessera
