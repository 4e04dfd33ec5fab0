#pragma once
// The generator's side of a distributed run or a run with GPUs: the
// task-assignment protocol (000 §6) plus the bookkeeping that lets every
// node decide, without a message, which tile versions travel where. Every
// node sees every task and every write, so all agree on each datum's version
// and on which node holds that version (its writer). A node keeps, for each
// datum it follows (runtime/relevance.hpp) and each of its devices, which
// version that device's copy holds (slot(d, dev) of the window); the writer
// of a datum's current version keeps which other nodes it has sent that
// version to.
//
// The eight rules of 000 §6 decide where a task runs (rule 1: on the node
// and device of its main output) and what moves inside a node (rules 2, 3,
// 5, 7: 000 §5.4, see below). Between nodes the data flow decides:
//   - an input reaches the task's node from the node that holds its current
//     version (rule 4 when that is the datum's home);
//   - a minor output written on another node stays there (rules 6 and 8
//     would send it home at once): the next task that needs it receives it
//     from there, and its Release_Tile, or the end of generation, brings its
//     last version home.
// This is the data flow 000 App. A.2.2 counts for QR: the row-t tile of a
// flat-tree chain goes down from one virtual tile's node to the next ("one
// B x B tile out of every virtual tile will be sent down to its below
// process") instead of returning to its home after every update.
//
// A version several nodes read travels down a binomial tree (Broadcast::
// Binomial, the default): its writer is holder 0, and the k-th node to need
// it (in generation order, the same on every node) receives it from holder
// k with its highest set bit cleared, which received it earlier. The writer
// sends ceil(log2(r + 1)) messages for r readers instead of r, and the last
// reader is that many hops away instead of behind r sends on one link: the
// tree broadcast 000 App. A.2.1 counts ("log P" messages per broadcast) and
// ScaLAPACK's BLACS use by default. Every node keeps each version's holder
// list, since any of them may be the one that forwards; a list lives from a
// version's first remote read to its next write or its release.
// Broadcast::Flat sends every copy from the writer.
//
// A GPU's memory is planned here too: every buffer the plan allocates on a
// GPU counts against its capacity, and when a new one would not fit, a copy
// on that GPU is freed first, after its readers, written back to host memory
// when the GPU held the node's only current version (write-back as StarPU's
// MSI protocol does; never a copy the task being planned uses). Which copy:
// the one this node's GPUs use again furthest ahead in the task graph
// (runtime/next_use.hpp: the generator run a second time, on the first
// eviction), the copy used longest ago among those used again equally late
// or never; without the generator, the copy used longest ago (least recently used).
// RunState::admit makes the device communication thread allocate in the
// planned order, so the plan's bound holds at run time.
//
// Copies inside a node follow 000 §5.4: a GPU's input comes from the host
// (from another GPU it is relayed through the host, so a tile several GPUs
// read crosses to the host once); a version written away from the datum's
// home device goes back to it at once (rule 7); a remote datum arrives in
// host memory and is copied on to the GPUs that read it. A datum whose home
// is a GPU starts in host memory (version 0 is the input) and ends there: at
// its Release_Tile, or when generation ends, its last version is copied back
// and the GPU's buffer freed.
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "runtime/next_use.hpp"
#include "runtime/protocol.hpp"
#include "runtime/run_state.hpp"

namespace tessera::detail {

class ProtocolSink final : public TaskSink {
 public:
  // `regenerate`: the generator this sink is fed by, run again to learn the
  // future uses of the data when a GPU must evict (nullptr: least recently
  // used). It follows the tasks that touch the data RunState::followed
  // holds (runtime/relevance.hpp).
  ProtocolSink(RunState& s, std::size_t n_data, int gpus, bool honour_release, Broadcast broadcast,
               const std::function<void(TaskSink&)>* regenerate = nullptr);

  // Every node sees the release: the datum's last version returns to its
  // home node (from the node that wrote it, if another), a GPU's last
  // version of a datum homed there to host memory, and every copy on another
  // node or device is freed after its readers. The home forgets who held
  // the version (a later read, which the algorithm promised not to make,
  // would bring it again instead of waiting for a message never sent).
  void release(DataId x) override;
  // As release, but no copy is brought home, now or by finish(): the value
  // is scratch. A later read, which the algorithm promised not to make,
  // finds no current copy and fails (ensure).
  void discard(DataId x) override;
  void insert(const TaskDesc& t) override;
  // Generation has ended: every datum's last version returns to its home
  // node's host memory, and every other copy is freed after its readers.
  // (The window then knows each copy's last reader, as Release_Tile tells it
  // earlier; without Release_Tile the GPU buffers stay until the run ends,
  // and run() frees them after every thread has finished.)
  void finish();

 private:
  // have() of a device that holds no copy of a datum, and of one whose copy
  // (a GPU buffer, an alien host copy) is an old version: the buffer stays
  // until a drop frees it or a copy brings the current version into it.
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  static constexpr std::uint32_t kStale = 0xFFFFFFFEu;

  DataId slot(DataId x, int dev) const { return static_cast<DataId>(dev * n_ + x); }
  // The per-datum tables hold the data this node follows (RunState::followed),
  // at their index: a node of a 10x10 grid follows 5-10% of the data.
  std::size_t at(DataId x) const { return s_.followed.index(x); }
  bool followed(DataId x) const { return s_.followed.has(x); }
  struct Datum;
  Datum& st(DataId x) { return st_[at(x)]; }
  std::uint32_t& have(DataId x, int dev) { return have_[at(x) * (G_ + 1) + dev]; }
  std::uint64_t& stamp(DataId x, int g) { return stamp_[at(x) * G_ + (g - 1)]; }

  // This node runs task t (its main output, access `main`, lives here).
  // The device task t runs on: TaskDesc::device, or its main output's.
  int device_of(const TaskDesc& t, int main) const;
  void run_here(const TaskDesc& t, int main);
  // This node's view of the versions task t (run on node `at`) just wrote.
  void after_write(const TaskDesc& t, int main, int at);
  // The node that sends x's current version to node `to`, recording that
  // `to` now holds it; -1 when `to` holds it already. Every node calls this
  // for every remote read, so all agree (see the broadcast above).
  int source_for(DataId x, int to);
  // Sends x's current version, which this node holds, to node `to`.
  void send_current(DataId x, int to, std::int32_t prio);
  // Moves x's current version to its home node if another node holds it.
  void bring_home(DataId x);
  // Device `dev` now holds the only current copy of y on this node.
  void written(DataId y, int dev);
  // Makes slot(x, dev) hold x's current version: from the host to a GPU,
  // from a GPU to the host, from the node that holds it to the host.
  // `from`: the node a remote current version comes from (-1: its writer).
  void ensure(DataId x, int dev, std::int32_t prio, int from = -1);
  void copy(DataId x, int from, int to, std::int32_t prio);
  // Makes slot(y, g) a buffer for a write-only output of the task being
  // planned: the current version is not copied in, since the task
  // overwrites every byte (a buffer GPU g already holds is reused).
  void fresh(DataId y, int g, std::int32_t prio);
  // GPU g used x now (least recently used order).
  void touch(DataId x, int g);
  // Plans a new buffer for x on GPU g, evicting other copies until it fits.
  void reserve(DataId x, int g, std::int32_t prio);
  // The copy GPU g frees next (see the top of this file); throws DeviceOutOfMemory when
  // every copy it holds belongs to the task being planned.
  DataId victim(int g, std::size_t bytes);
  // Frees GPU g's copy of y, first writing back the node's only current version.
  void evict(DataId y, int g, std::int32_t prio);
  // Frees device dev's copy of x (not the host memory of this node's own data) after its readers.
  void drop(DataId x, int dev);
  static TaskDesc comm_task(std::uint16_t kernel, int peer, DataId x, std::uint32_t version, bool own,
                            std::int32_t prio);
  void append(const TaskDesc& d);

  RunState& s_;
  const DistContext& d_;
  std::size_t n_;
  int G_;
  bool honour_release_;
  // Per datum, what every task's accesses look up, in one place (one cache
  // line per access rather than one per array): the current version, the
  // node that holds it, its holder list (below) and, for this node's own
  // data, the device it lives on (-1: another node's).
  struct Datum {
    std::uint32_t version = 0;
    std::uint32_t list = 0;
    std::int16_t writer = 0;
    std::int8_t home = -1;
    bool scratch = false;  // its current version discarded: no part of the result (in the padding)
  };
  std::vector<Datum> st_;
  std::vector<std::uint32_t> have_;  // per datum and device: the version this node's copy holds
  Broadcast broadcast_;
  // Per datum read away from its writer: the other nodes that hold its
  // current version, in the order they got it (holders 1, 2, ...), in
  // lists_[st_[x].list] (0: none). Every generator looks a list up for every
  // remote read of the whole task graph, so an index per datum rather than a
  // hash map; emptied lists are reused.
  std::vector<std::vector<std::int16_t>> lists_;
  std::vector<std::uint32_t> free_lists_;
  void forget_copies(DataId x);
  std::vector<Task*> scratch_;
  Location loc_[kMaxAccesses];  // where the current task's accesses live
  int from_[kMaxAccesses];      // the node each input comes from (-1: none)
  // GPU memory plan, per GPU g at [g-1]: bytes it may use, bytes of the
  // buffers planned now, and its buffers by last use (stamp(x, g), 0: none);
  // stamps above pin_floor_ belong to the task being planned.
  std::vector<std::size_t> budget_, planned_;
  std::vector<std::set<std::pair<std::uint64_t, DataId>>> lru_;
  std::vector<std::uint64_t> stamp_;
  std::uint64_t clock_ = 0, pin_floor_ = 0;
  // Eviction by next use: the generator, the tasks inserted so far, the table (built on the first eviction).
  const std::function<void(TaskSink&)>* regenerate_ = nullptr;
  std::uint32_t now_ = 0;
  std::unique_ptr<NextUse> next_use_;
};

}  // namespace tessera::detail
