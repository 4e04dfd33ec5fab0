#include "runtime/device_comm.hpp"

#include <algorithm>
#include <utility>

namespace tessera::detail {

void device_communication(RunState& s, platform::Platform& platform, RuntimeObserver* obs) {
  const bool networked = s.networked();
  const DistContext* dist = s.dist;
  std::vector<Task*> ready;
  // Copies to hand to their devices: the stream and the slot queued on it
  // (a deque's elements stay where they are as it grows at the back).
  std::vector<std::pair<int, RunState::InFlight*>> to_start;
  std::vector<RunState::CopyEnd> ended;
  for (;;) {
    to_start.clear();
    ended.clear();
    {
      platform::Lock lk(*s.copy_mutex);
      for (;;) {
        ended.swap(s.copies_done);
        // Copies that wait for GPU memory first (RunState::admit), then
        // the mailboxes by priority; a copy that cannot have its buffer
        // yet waits aside and leaves its stream to the next one.
        const auto queue = [&](int k, Task* t) {
          RunState::CopyStream& st = s.streams[k];
          st.in_flight.push_back({t, platform.now(), {}});
          to_start.emplace_back(k, &st.in_flight.back());
        };
        for (auto it = s.parked.begin(); it != s.parked.end();) {
          const int k = RunState::stream_of((*it)->desc);
          if (s.streams[k].has_room() && s.admit((*it)->desc)) {
            queue(k, *it);
            it = s.parked.erase(it);
          } else {
            ++it;
          }
        }
        for (std::size_t k = 0; k < s.streams.size(); ++k) {
          RunState::CopyStream& st = s.streams[k];
          while (st.has_room() && !st.mbox.empty()) {
            std::pop_heap(st.mbox.begin(), st.mbox.end(), RunState::lower_priority);
            Task* t = st.mbox.back();
            st.mbox.pop_back();
            if (s.admit(t->desc)) queue(static_cast<int>(k), t);
            else s.parked.push_back(t);
          }
        }
        if (!ended.empty() || !to_start.empty()) break;
        if (s.copies_closed) return;  // every task has finished
        s.copy_cond->wait(*s.copy_mutex);
      }
    }
    for (const auto& [k, slot] : to_start) {
      auto done = [&s, k = k, &platform](std::exception_ptr e) {
        platform::Lock lk(*s.copy_mutex);
        s.copies_done.push_back({k, e, platform.now()});
        s.copy_cond->notify_one();
      };
      if (s.cancelled.load(std::memory_order_relaxed)) {
        done(nullptr);
        continue;
      }
      try {
        s.start_copy(slot->task->desc, k % 2, slot->ranges, done);
      } catch (...) {
        done(std::current_exception());
      }
    }
    for (const RunState::CopyEnd& e : ended) {
      // The stream's oldest copy: a stream ends its copies in order. Only
      // this thread adds to or takes from in_flight, so no lock is needed.
      RunState::CopyStream& st = s.streams[e.stream];
      const RunState::InFlight f = std::move(st.in_flight.front());
      st.in_flight.pop_front();
      // A copy queued behind another began when that one ended.
      const double began = std::max(f.queued, st.last_ended);
      st.last_ended = e.ended;
      if (e.error) {
        // The other nodes wait for this node's messages: a copy that
        // cannot be made ends the run (cancelling would leave them waiting).
        if (networked) s.abort_run(e.error);
        s.fail(e.error);
      } else if (obs && !s.cancelled.load(std::memory_order_relaxed)) {
        const DataId x = static_cast<DataId>(f.task->desc.arg[1]);
        obs->on_copy(e.stream / 2 + 1, e.stream % 2 == 0, x, dist->store->bytes(x), began, e.ended);
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
