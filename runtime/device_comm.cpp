#include "runtime/device_comm.hpp"

#include <algorithm>
#include <utility>

namespace tessera::detail {

void device_communication(RunState& s, platform::Platform& platform, RuntimeObserver* obs) {
  const bool networked = s.networked();
  const DistContext* dist = s.dist;
  std::vector<Task*> ready;
  std::vector<int> to_start;
  std::vector<std::pair<int, std::exception_ptr>> ended;
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
        for (auto it = s.parked.begin(); it != s.parked.end();) {
          const int k = RunState::stream_of((*it)->desc);
          if (!s.streams[k].current && s.admit((*it)->desc)) {
            s.streams[k].current = *it;
            to_start.push_back(k);
            it = s.parked.erase(it);
          } else {
            ++it;
          }
        }
        for (std::size_t k = 0; k < s.streams.size(); ++k) {
          RunState::CopyStream& st = s.streams[k];
          while (!st.current && !st.mbox.empty()) {
            std::pop_heap(st.mbox.begin(), st.mbox.end(), RunState::lower_priority);
            Task* t = st.mbox.back();
            st.mbox.pop_back();
            if (s.admit(t->desc)) {
              st.current = t;
              to_start.push_back(static_cast<int>(k));
            } else {
              s.parked.push_back(t);
            }
          }
        }
        if (!ended.empty() || !to_start.empty()) break;
        if (s.copies_closed) return;  // every task has finished
        s.copy_cond->wait(*s.copy_mutex);
      }
    }
    for (const int k : to_start) {
      RunState::CopyStream& st = s.streams[k];
      st.started = platform.now();
      auto done = [&s, k, &platform](std::exception_ptr e) {
        platform::Lock lk(*s.copy_mutex);
        s.streams[k].ended = platform.now();
        s.copies_done.emplace_back(k, e);
        s.copy_cond->notify_one();
      };
      if (s.cancelled.load(std::memory_order_relaxed)) {
        done(nullptr);
        continue;
      }
      try {
        s.start_copy(st.current->desc, k % 2, st.ranges, done);
      } catch (...) {
        done(std::current_exception());
      }
    }
    for (auto& [k, error] : ended) {
      RunState::CopyStream& st = s.streams[k];
      Task* t = std::exchange(st.current, nullptr);
      if (error) {
        // The other nodes wait for this node's messages: a copy that
        // cannot be made ends the run (cancelling would leave them waiting).
        if (networked) s.abort_run(error);
        s.fail(error);
      } else if (obs && !s.cancelled.load(std::memory_order_relaxed)) {
        const DataId x = static_cast<DataId>(t->desc.arg[1]);
        obs->on_copy(k / 2 + 1, k % 2 == 0, x, dist->store->bytes(x), st.started, st.ended);
      }
      try {
        s.finish(t, ready);
      } catch (...) {
        if (networked) s.abort_run(std::current_exception());
        s.fail(std::current_exception());
      }
    }
  }
}

}  // namespace tessera::detail
