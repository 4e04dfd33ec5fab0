#pragma once
// Test-and-test-and-set lock for critical sections of a few dozen
// instructions that never block (see platform/platform.hpp for why this is
// safe under the simulated backend too).
#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TESSERA_CPU_RELAX() _mm_pause()
#else
#define TESSERA_CPU_RELAX() ((void)0)
#endif

namespace tessera {

class SpinLock {
 public:
  void lock() {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      // A holder preempted on an oversubscribed machine would make us spin a
      // whole time slice; after a short spin give the core away.
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 64) TESSERA_CPU_RELAX();
        else std::this_thread::yield();
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace tessera
