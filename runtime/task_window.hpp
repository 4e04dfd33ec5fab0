#pragma once
// The 2-D task window of 000 §5.1-5.2: one task list per datum, APPEND from
// the generator, FIRE from the workers, and a fixed capacity.
//
// A list keeps its unfinished tasks in serial order. APPEND of a reader is
// ready when no writer is in the list; APPEND of a writer is ready when the
// list is empty, so write-after-read and write-after-write are ordered rather
// than renamed (algorithms that would serialize on a WAR rename explicitly,
// e.g. the QR panel's copied reflectors). FIRE of a finished writer releases
// the readers that follow it up to the next writer, or that writer itself;
// FIRE of the last reader ahead of a writer releases the writer.
//
// Capacity bounds the number of generated-but-unfinished tasks: append()
// blocks while the window is full, so memory is bounded for any matrix size.
// Progress is guaranteed because the oldest unfinished task always has all of
// its predecessors finished.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/error.hpp"
#include "base/spinlock.hpp"
#include "base/task.hpp"
#include "platform/platform.hpp"

namespace tessera {

struct Task;
struct TaskEntry;

// One datum's list: its unfinished tasks' entries in serial order. 32 bytes,
// two to a cache line (64-byte alignment made a simulated 100-node
// cluster's lists 4.6 GB; the false sharing it avoided did not show in
// bench_task_window, see experiments/README.md).
struct DataList {
  SpinLock lock;
  TaskEntry* head = nullptr;
  TaskEntry* tail = nullptr;
  int writers = 0;
};

// One instance of a task in one datum's list.
struct TaskEntry {
  Task* task = nullptr;
  TaskEntry* prev = nullptr;
  TaskEntry* next = nullptr;
  DataList* list = nullptr;  // the list it is in (APPEND finds it, FIRE follows it)
  AccessMode mode = AccessMode::Read;
  bool fired = false;  // this access's input is available
};

struct Task {
  TaskDesc desc;
  std::uint64_t seq = 0;        // position in serial order
  std::atomic<int> pending{0};  // unavailable inputs (+1 while being appended)
  TaskEntry entry[kMaxAccesses];
};

// What append() throws once the window is cancelled.
class WindowCancelled : public Error {
 public:
  WindowCancelled() : Error("task generation cancelled: the run cannot go on", 5) {}
};

class TaskWindow {
 public:
  TaskWindow(std::size_t n_data, std::size_t capacity, platform::Platform& platform);
  ~TaskWindow();
  TaskWindow(const TaskWindow&) = delete;
  TaskWindow& operator=(const TaskWindow&) = delete;

  // APPEND (generator thread only). Returns the task if it is ready at once,
  // nullptr otherwise. On a full window it blocks until FIRE has freed
  // capacity / 8 slots (at least 1, at most 64).
  Task* append(const TaskDesc& d);

  // Ends generation of a run that cannot go on (a thread of it could not
  // start): a generator waiting for a free slot, or asking for one later,
  // gets WindowCancelled from append(). Thread-safe.
  void cancel();

  // FIRE for a finished task: appends the tasks it made ready to `ready` and
  // frees its slot. Thread-safe.
  void fire(Task* t, std::vector<Task*>& ready);

  std::size_t capacity() const { return capacity_; }
  // Task slots made so far (constructed, so their memory touched): 256 at a
  // time as the window first needs them, up to the capacity.
  std::size_t slots_allocated() const;
  std::size_t n_data() const { return index_.size(); }
  // Lists created: one per slot a task has used so far.
  std::size_t lists() const { return lists_; }
  std::uint64_t appended() const { return next_seq_; }
  // Number of unfinished tasks in the window (approximate while running).
  std::size_t in_flight() const;

  // Tasks of datum d's list in serial order, for tests and debugging
  // (not thread-safe against concurrent APPEND or FIRE).
  std::vector<const Task*> list_of(DataId d) const;

 private:
  // A list exists only for the slots this node's tasks use: index_[slot] is
  // its number + 1 (0: none yet), and the lists lie in chunks in the order
  // APPEND first used them. A slot is a datum on one of the node's devices,
  // and a node of a simulated 10x10 grid uses 4-7% of them (the data its
  // tasks touch, on the devices they run on): a list per slot made the 100
  // nodes' windows 2.3 GB of a 3.9 GiB simulation, lists never used in pages
  // that were touched anyway (zeroed). APPEND (the generator alone) looks the
  // index up and creates a list, so neither the index nor the chunk table
  // needs a lock; FIRE follows each entry's list.
  static constexpr std::size_t kChunkBits = 12;  // 4096 lists, 128 KiB a chunk
  DataList& list_for(DataId slot);
  // The list numbered i (>= 1).
  DataList& list_at(std::uint32_t i) const {
    const std::uint32_t k = i - 1;
    return chunks_[k >> kChunkBits][k & ((1u << kChunkBits) - 1)];
  }
  // FIRE asks for all of a task's lists before walking the first (APPEND
  // does the same for their numbers), so the cache misses overlap.
  static void prefetch_lists(const Task& t) {
    for (int a = 0; a < t.desc.n_access; ++a) __builtin_prefetch(t.entry[a].list, 1);
  }
  // The slots are one array, allocated up front but constructed (so
  // touched) 256 at a time, when the free list runs dry below the capacity:
  // a window of 16,384 tasks is 4.3 MB, and constructing it whole took most
  // of a small run's start-up on the development VM (a one-task Cholesky ran
  // in 17 ms, 4 ms without), while a run with few tasks in flight never
  // touches most of it. (Separately allocated chunks of 256 made a simulated
  // 10x10 cluster 9% slower: one array per window keeps its layout.)
  static constexpr std::size_t kSlotChunk = 256;
  struct FreeStorage {
    void operator()(Task* p) const { ::operator delete (p, std::align_val_t{alignof(Task)}); }
  };
  Task* acquire_slot();
  void release_slot(Task* t);
  static void release_entry(TaskEntry* e, std::vector<Task*>& ready);

  std::vector<std::uint32_t> index_;
  std::vector<std::unique_ptr<DataList[]>> chunks_;
  std::uint32_t lists_ = 0;  // lists created
  std::size_t capacity_;
  std::unique_ptr<Task, FreeStorage> slots_;  // capacity_ slots, the first allocated_ constructed
  std::size_t allocated_ = 0;
  std::vector<Task*> free_;
  std::unique_ptr<platform::Mutex> free_mutex_;
  std::unique_ptr<platform::Condition> free_cond_;
  bool generator_waiting_ = false;
  bool cancelled_ = false;  // (under free_mutex_)
  // A generator blocked on a full window wakes when this many slots are free
  // (capacity / 8, 1 to 64), not at every FIRE: woken for each slot, it
  // appended one task and blocked again, two context switches per task,
  // which in a simulation were 43% of the wall time (bench_sim_speed 0.61-0.63 M
  // simulated tasks per wall second, 1.08-1.11 M with 64). It can not deadlock:
  // a task depends only on tasks generated before it, so the window of the
  // node whose generator is furthest behind drains completely.
  std::size_t wake_at_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace tessera
