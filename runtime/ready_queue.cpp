#include "runtime/ready_queue.hpp"

#include <algorithm>

namespace tessera {
namespace {
// Max-heap order: higher priority first, then earlier in serial order.
struct Later {
  template <class Item>
  bool operator()(const Item& a, const Item& b) const {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.seq > b.seq;
  }
};
}  // namespace

ReadyQueue::ReadyQueue(platform::Platform& platform, ReadyPolicy policy, std::uint64_t seed)
    : policy_(policy), rng_(seed), mutex_(platform.make_mutex()), cond_(platform.make_condition()) {}

void ReadyQueue::push_locked(Task* t) {
  items_.push_back({t->desc.priority, t->seq, t});
  if (policy_ == ReadyPolicy::Priority) std::push_heap(items_.begin(), items_.end(), Later{});
}

Task* ReadyQueue::pop_locked() {
  Task* t = nullptr;
  switch (policy_) {
    case ReadyPolicy::Priority:
      std::pop_heap(items_.begin(), items_.end(), Later{});
      t = items_.back().task;
      items_.pop_back();
      break;
    case ReadyPolicy::Fifo:
      t = items_[fifo_head_++].task;
      if (fifo_head_ == items_.size()) {
        items_.clear();
        fifo_head_ = 0;
      }
      break;
    case ReadyPolicy::Random: {
      std::uniform_int_distribution<std::size_t> pick(0, items_.size() - 1);
      std::swap(items_[pick(rng_)], items_.back());
      t = items_.back().task;
      items_.pop_back();
      break;
    }
  }
  return t;
}

void ReadyQueue::push(Task* t) {
  platform::Lock lk(*mutex_);
  push_locked(t);
  if (sleepers_ > 0) cond_->notify_one();
}

void ReadyQueue::push(const std::vector<Task*>& ts) {
  if (ts.empty()) return;
  platform::Lock lk(*mutex_);
  for (Task* t : ts) push_locked(t);
  // One sleeper per task at most: waking them all made the rest find the
  // queue empty and sleep again (in a simulation, two context switches and
  // a semaphore each per FIRE that readied two tasks or more).
  for (std::size_t k = std::min<std::size_t>(ts.size(), static_cast<std::size_t>(sleepers_)); k > 0; --k)
    cond_->notify_one();
}

Task* ReadyQueue::pop() {
  platform::Lock lk(*mutex_);
  while (items_.size() == fifo_head_ && !closed_) {
    ++sleepers_;
    cond_->wait(*mutex_);
    --sleepers_;
  }
  if (items_.size() == fifo_head_) return nullptr;
  return pop_locked();
}

Task* ReadyQueue::try_pop() {
  platform::Lock lk(*mutex_);
  return items_.size() == fifo_head_ ? nullptr : pop_locked();
}

void ReadyQueue::close() {
  platform::Lock lk(*mutex_);
  closed_ = true;
  cond_->notify_all();
}

}  // namespace tessera
