#include "runtime/task_window.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "base/error.hpp"

namespace tessera {

namespace {
// The window's slot count, checked before its index is allocated: list
// numbers are 32-bit (a run's data and devices, not a user's input alone).
std::size_t checked_slots(std::size_t n) {
  if (n >= std::numeric_limits<std::uint32_t>::max())
    throw std::logic_error("task window: " + std::to_string(n) + " data slots exceed its 32-bit list numbers");
  return n;
}
}  // namespace

TaskWindow::TaskWindow(std::size_t n_data, std::size_t capacity, platform::Platform& platform)
    : index_(checked_slots(n_data), 0), capacity_(capacity), free_mutex_(platform.make_mutex()),
      free_cond_(platform.make_condition()), wake_at_(std::clamp<std::size_t>(capacity / 8, 1, 64)) {
  if (capacity < 1) throw InputError("--window 0: the task window needs room for a task (>= 1)");
  if (capacity > std::numeric_limits<std::size_t>::max() / sizeof(Task))
    throw InputError("--window " + std::to_string(capacity) + " is more tasks than memory can hold");
  try {
    slots_.reset(static_cast<Task*>(::operator new (capacity * sizeof(Task), std::align_val_t{alignof(Task)})));
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("out of memory: a task window of " + std::to_string(capacity) + " tasks (--window) needs " +
                      std::to_string(capacity * sizeof(Task) >> 20) + " MiB");
  }
}

TaskWindow::~TaskWindow() { std::destroy_n(slots_.get(), allocated_); }

Task* TaskWindow::acquire_slot() {
  platform::Lock lk(*free_mutex_);
  if (free_.empty() && allocated_ < capacity_) {
    // The next slots of the array, the first of them taken first.
    const std::size_t n = std::min(kSlotChunk, capacity_ - allocated_);
    Task* chunk = slots_.get() + allocated_;
    for (std::size_t k = 0; k < n; ++k) new (chunk + k) Task();
    free_.reserve(allocated_ + n);  // release_slot (on a worker, in FIRE) never reallocates
    for (std::size_t k = n; k-- > 0;) free_.push_back(chunk + k);
    allocated_ += n;
  }
  while (free_.empty() && !cancelled_) {
    generator_waiting_ = true;
    free_cond_->wait(*free_mutex_);
  }
  if (cancelled_) throw WindowCancelled();
  Task* t = free_.back();
  free_.pop_back();
  return t;
}

void TaskWindow::cancel() {
  platform::Lock lk(*free_mutex_);
  cancelled_ = true;
  free_cond_->notify_one();
}

void TaskWindow::release_slot(Task* t) {
  platform::Lock lk(*free_mutex_);
  free_.push_back(t);
  if (generator_waiting_ && free_.size() >= wake_at_) {
    generator_waiting_ = false;
    free_cond_->notify_one();
  }
}

std::size_t TaskWindow::in_flight() const {
  platform::Lock lk(*free_mutex_);
  return allocated_ - free_.size();
}

std::size_t TaskWindow::slots_allocated() const {
  platform::Lock lk(*free_mutex_);
  return allocated_;
}

Task* TaskWindow::append(const TaskDesc& d) {
  // Each access's slot is checked before the task takes a place (a task
  // counted in appended() must finish), and its list number asked for: the
  // index lies anywhere in a table of MBs per node in a simulated cluster,
  // so the misses of a task's lookups overlap instead of following one another.
  for (int a = 0; a < d.n_access; ++a) {
    if (d.access[a].data >= index_.size())
      throw std::logic_error("task window: kernel " + std::to_string(d.kernel) + " accesses slot " +
                             std::to_string(d.access[a].data) + " of " + std::to_string(index_.size()));
    __builtin_prefetch(&index_[d.access[a].data]);
  }
  Task* t = acquire_slot();
  t->desc = d;
  t->seq = next_seq_++;
  // The generator's own reference keeps the task from being released by a
  // concurrent FIRE before all of its entries are linked.
  t->pending.store(1, std::memory_order_relaxed);
  for (int a = 0; a < d.n_access; ++a) {
    t->entry[a].list = &list_for(d.access[a].data);
    __builtin_prefetch(t->entry[a].list, 1);
  }
  for (int a = 0; a < d.n_access; ++a) {
    TaskEntry* e = &t->entry[a];
    e->task = t;
    e->mode = d.access[a].mode;
    e->next = nullptr;
    DataList& list = *e->list;
    std::lock_guard<SpinLock> lk(list.lock);
    const bool w = writes(e->mode);
    e->fired = w ? list.head == nullptr : list.writers == 0;
    if (!e->fired) t->pending.fetch_add(1, std::memory_order_relaxed);
    e->prev = list.tail;
    if (list.tail) list.tail->next = e;
    else list.head = e;
    list.tail = e;
    if (w) ++list.writers;
  }
  return t->pending.fetch_sub(1, std::memory_order_acq_rel) == 1 ? t : nullptr;
}

void TaskWindow::release_entry(TaskEntry* e, std::vector<Task*>& ready) {
  if (e->fired) return;
  e->fired = true;
  if (e->task->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) ready.push_back(e->task);
}

void TaskWindow::fire(Task* t, std::vector<Task*>& ready) {
  prefetch_lists(*t);
  for (int a = 0; a < t->desc.n_access; ++a) {
    TaskEntry* e = &t->entry[a];
    DataList& list = *e->list;
    std::lock_guard<SpinLock> lk(list.lock);
    // Unlink: readers may finish in any order, so e can sit anywhere in the
    // leading group of readers; a writer always finishes at the head.
    if (e->prev) e->prev->next = e->next;
    else list.head = e->next;
    if (e->next) e->next->prev = e->prev;
    else list.tail = e->prev;
    TaskEntry* x = list.head;
    if (writes(e->mode)) {
      --list.writers;
      // A finished write makes the following readers ready, or the next writer.
      if (x && writes(x->mode)) {
        release_entry(x, ready);
      } else {
        for (; x && !writes(x->mode); x = x->next) release_entry(x, ready);
      }
    } else if (x && writes(x->mode)) {
      // The last reader ahead of a writer is gone.
      release_entry(x, ready);
    }
  }
  release_slot(t);
}

DataList& TaskWindow::list_for(DataId slot) {
  std::uint32_t& i = index_[slot];
  if (i == 0) {
    if ((lists_ >> kChunkBits) == chunks_.size())
      chunks_.push_back(std::make_unique<DataList[]>(std::size_t{1} << kChunkBits));
    i = ++lists_;
  }
  return list_at(i);
}

std::vector<const Task*> TaskWindow::list_of(DataId d) const {
  std::vector<const Task*> out;
  const std::uint32_t i = index_.at(d);
  if (i == 0) return out;
  for (const TaskEntry* e = list_at(i).head; e; e = e->next) out.push_back(e->task);
  return out;
}

}  // namespace tessera
