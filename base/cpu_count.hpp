#pragma once
// How many CPUs this process may run on: its affinity mask (taskset, an MPI
// binding, a container's cpuset), else the machine's hardware threads.
#include <sched.h>

#include <algorithm>
#include <cstddef>
#include <thread>

namespace tessera {

// The count, or 0 when neither the mask nor the hardware threads are known.
inline std::size_t cpus_found() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::thread::hardware_concurrency();
}

// cpus_found(), at least 1: threads to start.
inline std::size_t usable_cpus() { return std::max<std::size_t>(1, cpus_found()); }

}  // namespace tessera
