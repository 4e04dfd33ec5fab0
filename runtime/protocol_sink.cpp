#include "runtime/protocol_sink.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessera::detail {

ProtocolSink::ProtocolSink(RunState& s, std::size_t n_data, int gpus, bool honour_release, Broadcast broadcast,
                           const std::function<void(TaskSink&)>* regenerate)
    : s_(s), d_(*s.dist), n_(n_data), G_(gpus), honour_release_(honour_release), broadcast_(broadcast), lists_(1),
      regenerate_(regenerate) {
  const std::size_t followed_data = s_.followed.count();
  st_.resize(followed_data);
  have_.assign(followed_data * static_cast<std::size_t>(G_ + 1), kNone);
  stamp_.assign(followed_data * static_cast<std::size_t>(G_), 0);
  for (std::size_t x = 0; x < n_; ++x) {
    const Location l = d_.where(static_cast<DataId>(x));
    if (l.node < 0 || l.node > INT16_MAX)
      throw std::logic_error("datum " + std::to_string(x) + " placed on node " + std::to_string(l.node) +
                             " (the protocol numbers nodes 0 to 32767)");
    if (!followed(static_cast<DataId>(x))) continue;
    st(x).writer = static_cast<std::int16_t>(l.node);  // version 0, the input, is at home
    if (l.node != d_.self) continue;
    if (l.device < 0 || l.device > G_)
      throw std::logic_error("datum " + std::to_string(x) + " placed on device " + std::to_string(l.device) +
                             " of a node with " + std::to_string(G_) + " GPUs");
    st(x).home = static_cast<std::int8_t>(l.device);
    have(static_cast<DataId>(x), 0) = 0;  // this node's host memory holds the input
  }
  for (int g = 1; g <= G_; ++g) {
    const platform::Device& dev = *s_.gpus[g - 1].device;
    budget_.push_back(dev.capacity() > dev.in_use() ? dev.capacity() - dev.in_use() : 0);
  }
  planned_.assign(G_, 0);
  lru_.resize(G_);
}

void ProtocolSink::release(DataId x) {
  // Of a datum this node does not follow it holds nothing and is neither
  // its writer nor its home: nothing to do.
  if (!honour_release_ || !followed(x)) return;
  bring_home(x);
  forget_copies(x);                      // every other node's copy goes now
  if (st(x).home >= 0) ensure(x, 0, 0);  // from a GPU it is homed on, or one a device-pinned task left it on
  for (int dev = st(x).home >= 0 ? 1 : 0; dev <= G_; ++dev) drop(x, dev);
}

void ProtocolSink::discard(DataId x) {
  if (!followed(x)) return;
  st(x).scratch = true;
  if (!honour_release_) return;
  forget_copies(x);
  // Every copy but the host memory of this node's own data, which is not freed (its value may be stale).
  for (int dev = st(x).home >= 0 ? 1 : 0; dev <= G_; ++dev) drop(x, dev);
}

void ProtocolSink::insert(const TaskDesc& t) {
  struct Count {  // now_ = this task's index while it is planned, the next one's after
    std::uint32_t& n;
    ~Count() { ++n; }
  } count{now_};
  // Most tasks touch nothing of this node: one placement per access, then
  // only the versions and writers (every generator walks the whole loop nest).
  const int main = t.main_output();
  if (main < 0)
    throw std::logic_error("distributed run: a task without an output (kernel " + std::to_string(t.kernel) + ")");
  // Only the data this node follows (runtime/relevance.hpp; all without a
  // relevance): a task that accesses none of them cannot touch this node and
  // only its index counts; the state of the others is not kept here.
  bool kept[kMaxAccesses];
  bool follow = false;
  for (int a = 0; a < t.n_access; ++a) {
    kept[a] = followed(t.access[a].data);
    follow |= kept[a];
  }
  if (!follow) return;
  const Location main_loc = d_.where(t.access[main].data);
  const int at = main_loc.node;  // rule 1: where the task runs
  bool touches = false;
  for (int a = 0; a < t.n_access; ++a) {
    const DataId x = t.access[a].data;
    if (!kept[a]) {  // not this node's, never held here: no placement here, no source
      loc_[a] = a == main ? main_loc : Location{-1, 0};
      from_[a] = -1;
      continue;
    }
    loc_[a] = a == main ? main_loc : d_.where(x);
    from_[a] = t.access[a].mode == AccessMode::Write ? -1 : source_for(x, at);
    touches |= loc_[a].node == d_.self || st(x).writer == d_.self || from_[a] == d_.self;
  }
  pin_floor_ = clock_;
  if (touches) {
    if (at == d_.self) {
      run_here(t, main);
    } else {
      // Inputs this node forwards to the task's node.
      for (int a = 0; a < t.n_access; ++a)
        if (from_[a] == d_.self) send_current(t.access[a].data, at, t.priority);
    }
  }
  for (int a = 0; a < t.n_access; ++a)
    if (kept[a] && writes(t.access[a].mode)) {
      st(t.access[a].data).scratch = false;  // a discard is of the version it saw
      ++st(t.access[a].data).version;
      forget_copies(t.access[a].data);  // a new version: nobody holds it yet but its writer
    }
  if (touches) after_write(t, main, at);
  for (int a = 0; a < t.n_access; ++a)
    if (kept[a] && writes(t.access[a].mode)) st(t.access[a].data).writer = static_cast<std::int16_t>(at);
}

void ProtocolSink::finish() {
  // The data this node follows, in increasing order (another's needs
  // nothing here, as in release()).
  std::vector<DataId> mine;
  mine.reserve(st_.size());
  s_.followed.for_each([&](DataId x) { mine.push_back(x); });
  for (const DataId x : mine)
    if (!st(x).scratch) bring_home(x);
  for (const DataId x : mine)
    if (st(x).home >= 0 && !st(x).scratch) ensure(x, 0, 0);
  if (!honour_release_) return;
  for (const DataId x : mine)
    if (st(x).home < 0) drop(x, 0);
  for (int g = 1; g <= G_; ++g)
    for (const DataId x : mine) drop(x, g);
}

void ProtocolSink::run_here(const TaskDesc& t, int main) {
  // Every input reaches the owner's device first (rules 2-4); the task then
  // works on that device's slots.
  const int dm = device_of(t, main);
  if (dm > 0)  // the copies this task uses are the GPU's most recent: not evicted for it
    for (int a = 0; a < t.n_access; ++a)
      if (have(t.access[a].data, dm) != kNone) touch(t.access[a].data, dm);
  TaskDesc own = t;
  for (int a = 0; a < t.n_access; ++a) {
    const DataId y = t.access[a].data;
    if (t.access[a].mode == AccessMode::Write) {
      if (loc_[a].node != d_.self)
        throw std::logic_error("distributed run: a write-only minor output on another node is not supported");
      if (dm != 0) fresh(y, dm, t.priority);  // the GPU needs a buffer to write into, not the old value
    } else {
      ensure(y, dm, t.priority, from_[a]);
    }
    own.access[a].data = slot(y, dm);
  }
  append(own);
}

int ProtocolSink::device_of(const TaskDesc& t, int main) const {
  if (t.device < 0) return loc_[main].device;
  if (t.device > G_)
    throw std::logic_error("task of kernel " + std::to_string(t.kernel) + " pinned to device " +
                           std::to_string(t.device) + " of a node with " + std::to_string(G_) + " GPUs");
  return t.device;
}

void ProtocolSink::after_write(const TaskDesc& t, int main, int at) {
  const int dm = device_of(t, main);
  for (int a = 0; a < t.n_access; ++a) {
    const DataId y = t.access[a].data;
    // A datum this node does not follow has no copy here (only a task run
    // here, a send or a receive, all of followed data, makes one).
    if (!writes(t.access[a].mode) || !followed(y)) continue;
    if (at == d_.self) {
      written(y, dm);
      // Rule 7: back to its home device. A datum of another node stays here
      // until a task elsewhere needs it or its release brings it home; so
      // does one a device-pinned task wrote (TaskDesc::device).
      if (t.device < 0 && st(y).home >= 0 && st(y).home != dm) ensure(y, st(y).home, t.priority);
    } else if (st(y).home >= 0) {
      for (int e = 0; e <= G_; ++e)  // this node's own copies are old versions now
        if (have(y, e) != kNone) have(y, e) = kStale;
    } else {
      for (int e = 0; e <= G_; ++e) drop(y, e);  // a stale copy of another node's datum
    }
  }
}

int ProtocolSink::source_for(DataId x, int to) {
  const int w = st(x).writer;
  if (to == w) return -1;
  std::uint32_t& l = st(x).list;
  if (l == 0) {
    if (free_lists_.empty()) {
      l = static_cast<std::uint32_t>(lists_.size());
      lists_.emplace_back();
    } else {
      l = free_lists_.back();
      free_lists_.pop_back();
    }
  }
  std::vector<std::int16_t>& c = lists_[l];
  if (std::find(c.begin(), c.end(), to) != c.end()) return -1;
  c.push_back(static_cast<std::int16_t>(to));
  if (broadcast_ == Broadcast::Flat) return w;
  const std::size_t parent = binomial_parent(c.size());  // `to` is holder c.size()
  return parent == 0 ? w : c[parent - 1];
}

void ProtocolSink::send_current(DataId x, int to, std::int32_t prio) {
  ensure(x, 0, prio);
  append(comm_task(kRuntimeSend, to, x, st(x).version, false, prio).add(slot(x, 0), AccessMode::Read));
}

void ProtocolSink::bring_home(DataId x) {
  const int home = d_.where(x).node;
  if (st(x).writer == home) return;
  const int from = source_for(x, home);  // -1: the home holds it already
  if (from == d_.self) send_current(x, home, 0);
  else if (from >= 0 && home == d_.self) ensure(x, 0, 0, from);
  st(x).writer = static_cast<std::int16_t>(home);
  forget_copies(x);
}

void ProtocolSink::forget_copies(DataId x) {
  std::uint32_t& l = st(x).list;
  if (l == 0) return;
  lists_[l].clear();
  free_lists_.push_back(l);
  l = 0;
}

void ProtocolSink::written(DataId y, int dev) {
  for (int e = 0; e <= G_; ++e)
    if (have(y, e) != kNone) have(y, e) = kStale;
  have(y, dev) = st(y).version;
}

void ProtocolSink::ensure(DataId x, int dev, std::int32_t prio, int from) {
  const std::uint32_t v = st(x).version;
  if (have(x, dev) == v) return;
  if (dev != 0) {
    ensure(x, 0, prio, from);
    copy(x, 0, dev, prio);
    return;
  }
  for (int g = 1; g <= G_; ++g)
    if (have(x, g) == v) {
      copy(x, g, 0, prio);
      return;
    }
  const int w = from >= 0 ? from : st(x).writer;
  if (w != d_.self) {  // the current version is on another node: it sends it (send_current there)
    append(comm_task(kRuntimeRecv, w, x, v, st(x).home >= 0, prio).add(slot(x, 0), AccessMode::Write));
    have(x, 0) = v;
    return;
  }
  throw std::logic_error("datum " + std::to_string(x) + " version " + std::to_string(v) + " is on no device of node " +
                         std::to_string(d_.self));
}

void ProtocolSink::copy(DataId x, int from, int to, std::int32_t prio) {
  if (to > 0 && have(x, to) == kNone) reserve(x, to, prio);
  TaskDesc c;
  c.kernel = kRuntimeCopy;
  c.arg[0] = from == 0 ? to : from;
  c.arg[1] = static_cast<std::int32_t>(x);
  c.arg[2] = static_cast<std::int32_t>(st(x).version);
  c.arg[3] = from == 0 ? kCopyToDevice : kCopyToHost;
  c.priority = prio;
  c.add(slot(x, from), AccessMode::Read).add(slot(x, to), AccessMode::Write);
  append(c);
  have(x, to) = st(x).version;
}

void ProtocolSink::fresh(DataId y, int g, std::int32_t prio) {
  const std::uint32_t v = st(y).version;
  if (have(y, g) == v) return;
  if (have(y, g) == kNone) {
    reserve(y, g, prio);
    TaskDesc c = comm_task(kRuntimeCopy, g, y, v, false, prio);
    c.arg[3] = kCopyBufferOnly;
    append(c.add(slot(y, g), AccessMode::Write));
  }
  have(y, g) = v;  // not yet written: only the task being planned reads it
}

void ProtocolSink::touch(DataId x, int g) {
  std::uint64_t& st = stamp(x, g);
  auto& lru = lru_[g - 1];
  if (st) lru.erase({st, x});
  st = ++clock_;
  lru.insert({st, x});
}

void ProtocolSink::reserve(DataId x, int g, std::int32_t prio) {
  const std::size_t bytes = d_.store->bytes(x);
  while (planned_[g - 1] + bytes > budget_[g - 1]) evict(victim(g, bytes), g, prio);
  planned_[g - 1] += bytes;
  touch(x, g);
  s_.plan_allocation(g, x);
}

DataId ProtocolSink::victim(int g, std::size_t bytes) {
  const auto& lru = lru_[g - 1];
  if (lru.empty() || lru.begin()->first > pin_floor_)
    throw DeviceOutOfMemory(s_.gpus[g - 1].device->name() + ": out of memory: a buffer of " + std::to_string(bytes) +
                            " bytes does not fit (" + std::to_string(planned_[g - 1]) + " of " +
                            std::to_string(budget_[g - 1]) + " bytes hold the other tiles of the task that needs it)");
  if (!regenerate_) return lru.begin()->second;
  if (!next_use_)
    next_use_ = std::make_unique<NextUse>(n_, *regenerate_, [this](const TaskDesc& t) {
      const int main = t.main_output();
      if (main < 0) return false;
      const Location l = d_.where(t.access[main].data);
      return l.node == d_.self && (t.device < 0 ? l.device : t.device) > 0;
    });
  // The copy used again furthest ahead; in least recently used order, so the oldest wins a tie.
  DataId best = lru.begin()->second;
  std::uint32_t furthest = 0;
  for (const auto& [stamp, x] : lru) {
    if (stamp > pin_floor_) break;  // the task being planned uses it (stamps only grow)
    const std::uint32_t next = next_use_->after(x, now_);
    if (next > furthest || furthest == 0) best = x, furthest = next;
    if (next == NextUse::kNever) break;
  }
  return best;
}

void ProtocolSink::evict(DataId y, int g, std::int32_t prio) {
  const std::uint32_t v = st(y).version;
  // (A discarded datum's value is no part of the result: never written back.)
  bool only_here = have(y, g) == v && st(y).writer == d_.self && !st(y).scratch;
  for (int e = 0; e <= G_ && only_here; ++e)
    if (e != g && have(y, e) == v) only_here = false;
  RunState::GpuCounters& c = s_.gpu_stats[g - 1];
  if (only_here) {
    copy(y, g, 0, prio);
    c.bytes_written_back.fetch_add(d_.store->bytes(y), std::memory_order_relaxed);
  }
  c.evictions.fetch_add(1, std::memory_order_relaxed);
  drop(y, g);
}

void ProtocolSink::drop(DataId x, int dev) {
  if (have(x, dev) == kNone) return;
  if (dev > 0) {
    std::uint64_t& st = stamp(x, dev);
    lru_[dev - 1].erase({st, x});
    st = 0;
    planned_[dev - 1] -= d_.store->bytes(x);
  }
  have(x, dev) = kNone;
  append(comm_task(kRuntimeRelease, dev, x, 0, false, 0).add(slot(x, dev), AccessMode::Write));
}

TaskDesc ProtocolSink::comm_task(std::uint16_t kernel, int peer, DataId x, std::uint32_t version, bool own,
                                 std::int32_t prio) {
  TaskDesc d;
  d.kernel = kernel;
  d.arg[0] = peer;
  d.arg[1] = static_cast<std::int32_t>(x);
  d.arg[2] = static_cast<std::int32_t>(version);
  d.arg[3] = own ? 1 : 0;
  d.priority = prio;
  return d;
}

void ProtocolSink::append(const TaskDesc& d) {
  if (Task* t = s_.window.append(d)) {
    std::vector<Task*> done;
    s_.start(t, done);
    for (Task* f : done) s_.finish(f, scratch_);
  }
}

}  // namespace tessera::detail
