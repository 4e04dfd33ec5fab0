#pragma once
// Starting a thread of the native backend. std::thread throws std::system_error (EAGAIN) where there is no room for
// the thread's stack (an address-space limit) or a limit on processes or threads is reached; that is the command
// line's out of memory (exit 4), named here with the thread and what to look at, wherever the thread is started
// (a node's runtime threads, an emulated GPU's copy engines, the network's communication thread).
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "base/error.hpp"

namespace tessera::platform {

// `context` follows the name in the message: " (3 of this node's threads run already)", or empty.
template <class F>
std::thread start_thread(const std::string& name, const std::string& context, F&& body) {
  try {
    return std::thread(std::forward<F>(body));
  } catch (const std::system_error& e) {
    throw OutOfMemory("cannot start the thread '" + name + "'" + context + ": " + e.what() +
                      " (an address-space limit, ulimit -v, or a limit on processes, ulimit -u)");
  } catch (const std::bad_alloc&) {  // the thread's shared state (and the copy of `body`)
    throw OutOfMemory("cannot start the thread '" + name + "'" + context +
                      ": no memory for its state (an address-space limit, ulimit -v)");
  }
}

}  // namespace tessera::platform
