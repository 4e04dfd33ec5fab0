#include "runtime/device_comm.hpp"

#include <algorithm>
#include <utility>

namespace tessera::detail {

void device_communication(RunState& s, platform::Platform& platform, RuntimeObserver* obs) {
  const bool networked = s.networked();
  const DistContext* dist = s.dist;
  std::vector<Task*> ready;
  // Copies to hand to their devices: the stream and the slot queued on it
  // (a deque's elements stay where they are as it grows at the back and
  // shrinks at the front).
  std::vector<std::pair<int, RunState::InFlight*>> to_start;
  std::vector<int> ended;
  ended.reserve(s.copy_depth_total);                         // (RunState::copies_done)
  std::vector<std::pair<int, RunState::InFlight>> finished;  // stream, copy
  for (;;) {
    to_start.clear();
    ended.clear();
    finished.clear();
    {
      platform::Lock lk(*s.copy_mutex);
      for (;;) {
        ended.swap(s.copies_done);
        // A stream's copies leave in the order they were queued, each once
        // it has been reported done: a copy reported at once (cancelled,
        // or failed to start) waits for the older ones still on the device,
        // whose tasks must not finish, nor their buffers be freed, early.
        for (const int k : ended) {
          RunState::CopyStream& st = s.streams[k];
          while (!st.in_flight.empty() && st.in_flight.front().ended) {
            finished.emplace_back(k, std::move(st.in_flight.front()));
            st.in_flight.pop_front();
          }
        }
        // Copies that wait for GPU memory first (RunState::admit), then
        // the mailboxes by priority; a copy that cannot have its buffer
        // yet waits aside and leaves its stream to the next one.
        const auto queue = [&](int k, Task* t, std::size_t reserved) {
          RunState::CopyStream& st = s.streams[k];
          st.in_flight.push_back({});
          st.in_flight.back().task = t;
          st.in_flight.back().reserved = reserved;
          to_start.emplace_back(k, &st.in_flight.back());
        };
        std::size_t reserved = 0;
        for (auto it = s.parked.begin(); it != s.parked.end();) {
          if (s.streams[it->stream].has_room() && s.admit(*it, reserved)) {
            queue(it->stream, it->task, reserved);
            it = s.parked.erase(it);
          } else {
            ++it;
          }
        }
        for (std::size_t k = 0; k < s.streams.size(); ++k) {
          RunState::CopyStream& st = s.streams[k];
          while (st.has_room() && !st.mbox.empty()) {
            std::pop_heap(st.mbox.begin(), st.mbox.end(), RunState::lower_priority);
            Task* t = st.mbox.back().task;
            st.mbox.pop_back();
            if (s.admit(t->desc, reserved)) queue(static_cast<int>(k), t, reserved);
            else s.parked.push_back(s.park(t));
          }
        }
        if (!finished.empty() || !to_start.empty()) break;
        if (s.copies_closed) return;  // every task has finished
        s.copy_cond->wait(*s.copy_mutex);
      }
    }
    for (const auto& [k, slot] : to_start) {
      auto done = [&s, k = k, slot = slot, &platform](std::exception_ptr e) {
        platform::Lock lk(*s.copy_mutex);
        slot->ended = true;
        slot->error = e;
        slot->ended_at = platform.now();
        s.copies_done.push_back(k);
        s.copy_cond->notify_one();
      };
      slot->started = platform.now();
      if (s.cancelled.load(std::memory_order_relaxed)) {
        done(nullptr);
      } else {
        try {
          s.start_copy(slot->task->desc, k % 2, slot->ranges, done);
        } catch (...) {
          done(std::current_exception());
        }
      }
      if (slot->reserved > 0) {  // allocated now, or never: no longer only planned
        platform::Lock lk(*s.copy_mutex);
        s.unreserve(slot->task->desc, slot->reserved);
      }
    }
    for (const auto& [k, f] : finished) {
      RunState::CopyStream& st = s.streams[k];
      // A copy queued behind another began when that one ended.
      const double began = std::max(f.started, st.last_ended);
      const bool moved = f.task->desc.arg[3] != kCopyBufferOnly;  // a buffer-only copy moves nothing
      st.last_ended = std::max(st.last_ended, f.ended_at);
      if (!f.error && moved && f.ended_at > began) st.busy_s += f.ended_at - began;
      if (f.error) {
        // The other nodes wait for this node's messages: a copy that
        // cannot be made ends the run (cancelling would leave them waiting).
        if (networked) s.abort_run(f.error);
        s.fail(f.error);
      } else if (obs && moved && !s.cancelled.load(std::memory_order_relaxed)) {
        const DataId x = static_cast<DataId>(f.task->desc.arg[1]);
        obs->on_copy(k / 2 + 1, k % 2 == 0, x, dist->store->bytes(x), began, f.ended_at);
      }
      try {
        s.finish(f.task, ready);
      } catch (...) {
        if (networked) s.abort_run(std::current_exception());
        s.fail(std::current_exception());
      }
    }
  }
}

}  // namespace tessera::detail
