#pragma once
// The device communication thread of a node with GPUs (000 §5.4): one
// thread drives every GPU's two copy streams. It moves copy tasks from the
// mailboxes (heaps by priority) to idle streams, letting a copy that needs a
// new buffer start only in the order the generator planned GPU memory
// (RunState::admit), and FIREs the copies the devices report done.
// An internal header of the runtime.
#include "runtime/run_state.hpp"

namespace tessera::detail {

// Runs until every task of the run has finished (RunState::copies_closed).
void device_communication(RunState& s, platform::Platform& platform, RuntimeObserver* obs);

}  // namespace tessera::detail
