#pragma once
// Node-to-node messages: the part of the seam the MPI communication thread
// of 000 §5.4 / Fig. 9 stands behind. One NodeNetwork per node; backends:
// OpenMPI (platform/native/mpi_network), an in-process cluster of threads
// (platform/native/local_network, for tests) and SimGrid mailboxes over the
// modeled network (platform/simgrid).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessera::platform {

// Recycles message buffers by size. A distributed run moves thousands of
// same-sized tiles; buffers fresh from the allocator cost their page faults
// again and again (on the 2-core VM, mapping fresh pages cost more CPU than
// the MPI copy into them). Thread-safe; keeps at most `max_bytes` idle.
class BufferPool {
 public:
  explicit BufferPool(std::size_t max_bytes = std::size_t{512} << 20) : max_bytes_(max_bytes) {}
  ~BufferPool() {
    for (auto& [size, list] : free_)
      for (std::byte* p : list) std::free(p);
  }
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A 64-byte aligned buffer of at least `bytes` (rounded up to 64).
  std::byte* get(std::size_t bytes) {
    bytes = round(bytes);
    {
      std::lock_guard lk(mutex_);
      auto it = free_.find(bytes);
      if (it != free_.end() && !it->second.empty()) {
        std::byte* p = it->second.back();
        it->second.pop_back();
        idle_ -= bytes;
        return p;
      }
    }
    auto* p = static_cast<std::byte*>(std::aligned_alloc(64, bytes));
    if (!p) throw std::bad_alloc();
    return p;
  }
  // Takes back a buffer from get(bytes).
  void put(std::byte* p, std::size_t bytes) {
    bytes = round(bytes);
    {
      std::lock_guard lk(mutex_);
      if (idle_ + bytes <= max_bytes_) {
        free_[bytes].push_back(p);
        idle_ += bytes;
        return;
      }
    }
    std::free(p);
  }

 private:
  static std::size_t round(std::size_t b) { return (b + 63) / 64 * 64; }
  std::size_t max_bytes_, idle_ = 0;
  std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<std::byte*>> free_;
};

// Gives a message's buffer back to its pool, or to the allocator.
struct BufferRelease {
  BufferPool* pool = nullptr;
  std::size_t bytes = 0;
  void operator()(std::byte* p) const {
    if (pool) pool->put(p, bytes);
    else std::free(p);
  }
};

// One message: the runtime's 64-bit key (which datum, which version) and a
// payload of `bytes` bytes. The payload lives after a 64-byte header in one
// 64-byte aligned allocation, so a received tile can be used in place (and a
// backend can send header and payload as one buffer). A phantom message
// (simulated runs without data) has no allocation, only its modeled size.
class Message {
 public:
  static constexpr std::size_t kHeader = 64;

  Message() = default;
  // With storage for `bytes` payload bytes (uninitialized), from `pool`
  // when given (and returned there when the message is destroyed).
  static Message with_payload(std::uint64_t key, std::size_t bytes, BufferPool* pool = nullptr) {
    Message m;
    m.key_ = key;
    m.bytes_ = bytes;
    const std::size_t total = kHeader + bytes;
    if (pool) {
      m.raw_ = Raw(pool->get(total), Free{pool, total});
    } else {
      m.raw_.reset(static_cast<std::byte*>(std::aligned_alloc(64, (total + 63) / 64 * 64)));
      if (!m.raw_) throw std::bad_alloc();
    }
    m.write_header();
    return m;
  }
  // Without storage: only the key and the modeled size travel.
  static Message phantom(std::uint64_t key, std::size_t bytes) {
    Message m;
    m.key_ = key;
    m.bytes_ = bytes;
    return m;
  }
  // Adopts a received buffer of kHeader + payload bytes (from pool->get(its
  // size), or with std::aligned_alloc(64, ...) when no pool is given); reads
  // key and size from its header.
  static Message from_wire(std::byte* raw, BufferPool* pool = nullptr, std::size_t raw_bytes = 0) {
    Message m;
    m.raw_ = Raw(raw, Free{pool, raw_bytes});
    const auto* h = reinterpret_cast<const std::uint64_t*>(raw);
    m.key_ = h[0];
    m.bytes_ = static_cast<std::size_t>(h[1]);
    return m;
  }

  std::uint64_t key() const { return key_; }
  std::size_t bytes() const { return bytes_; }
  // Seconds the message took to arrive, as the receiving backend measured
  // it just before delivering it (0: not measured). The modeled network
  // (SimGrid) counts from the send; a real one from when this node's
  // communication thread began receiving it. A duration, so that no clock
  // has to be shared between processes.
  double transit_s() const { return transit_s_; }
  void set_transit_s(double s) { transit_s_ = s; }
  bool has_data() const { return raw_ != nullptr; }
  std::byte* payload() { return raw_ ? raw_.get() + kHeader : nullptr; }
  const std::byte* payload() const { return raw_ ? raw_.get() + kHeader : nullptr; }
  // Header followed by payload, as sent on a wire.
  const std::byte* wire() const { return raw_.get(); }
  std::size_t wire_bytes() const { return kHeader + bytes_; }

 private:
  using Free = BufferRelease;
  using Raw = std::unique_ptr<std::byte, Free>;
  void write_header() {
    auto* h = reinterpret_cast<std::uint64_t*>(raw_.get());
    h[0] = key_;
    h[1] = bytes_;
  }
  std::uint64_t key_ = 0;
  std::size_t bytes_ = 0;
  double transit_s_ = 0;
  Raw raw_;
};

// How many messages a node has in flight at once; the others wait in its
// outbox, in the order they were sent. 000 §5.3's MPI thread keeps one send
// posted (Fig. 9); the MPI backend and the simulated network both use this.
inline constexpr int kSendsInFlight = 16;

// Called on the communication thread for every message that arrives, with
// the sending node.
using DeliverFn = std::function<void(int source, Message&& m)>;

// One node's end of the network. start() begins its communication thread
// (each backend owns it: a std::thread, or a SimGrid actor); send() may then be called from any thread of the node and
// returns at once; stop() is called once the node's runtime has finished (so
// every message it expects has arrived) and returns after every message it
// sent has left and the communication thread has ended.
class NodeNetwork {
 public:
  virtual ~NodeNetwork() = default;
  virtual int node() const = 0;
  virtual int nodes() const = 0;
  virtual void start(DeliverFn deliver) = 0;
  virtual void send(int dest, Message&& m) = 0;
  // A message with room for `bytes` payload bytes, from the backend's
  // buffers where it keeps some (the runtime packs outgoing data into it).
  virtual Message make_message(std::uint64_t key, std::size_t bytes) { return Message::with_payload(key, bytes); }
  virtual void stop() = 0;
  // Collective over all nodes, outside start()..stop(): `v` becomes the
  // element-wise sum of every node's `v` (same length everywhere).
  virtual void allreduce_sum(std::vector<double>& v) = 0;
  // Ends every node of the run at once with exit status `code`, for an error
  // the others cannot learn of (they would wait for this node's messages),
  // after printing `why` (unless empty: printed already) as this node's one
  // error line. The default ends this process: one process per node, or a
  // whole in-process cluster or simulation.
  [[noreturn]] virtual void abort(int code, const std::string& why) {
    if (!why.empty()) std::fprintf(stderr, "tessera: error: %s\n", why.c_str());
    std::fflush(nullptr);
    std::_Exit(code);
  }
  // Collective: returns on a node once every node has called it.
  void barrier() {
    std::vector<double> x{0.0};
    allreduce_sum(x);
  }
  // Collective: true on every node when any node passes true. Lets one
  // node's failure end every node instead of leaving them waiting.
  virtual bool any(bool mine) {
    std::vector<double> x{mine ? 1.0 : 0.0};
    allreduce_sum(x);
    return x[0] > 0;
  }
  // Collective, a run's first: where every node has set up its part (read its input, built its tiles, readied its
  // GPUs). Each passes 0, or the exit status of the error that stopped its set-up (which it reports itself); each
  // learns the first node that failed and its status ({-1, 0}: none failed). A node whose set-up threw calls it from
  // its error handler while set_up_pending(): an error met by one node alone (its host's copy of the input file, its
  // host's GPUs) then ends every node, where the others would wait in their first collective for a call that never
  // came.
  std::pair<int, int> agree_set_up(int status) {
    set_up_pending_ = false;
    std::vector<double> v(static_cast<std::size_t>(nodes()), 0.0);
    v[static_cast<std::size_t>(node())] = status;
    allreduce_sum(v);
    for (int k = 0; k < nodes(); ++k)
      if (v[static_cast<std::size_t>(k)] != 0) return {k, static_cast<int>(v[static_cast<std::size_t>(k)])};
    return {-1, 0};
  }
  bool set_up_pending() const { return set_up_pending_; }
  // From a node's error handler: takes part in the agreement with the error's status if the node had not yet.
  void agree_failed_set_up(int status) {
    if (set_up_pending_) agree_set_up(status);
  }
  // A run begins its set-up (each run on this network agrees once).
  void begin_set_up() { set_up_pending_ = true; }

 private:
  bool set_up_pending_ = true;
};

}  // namespace tessera::platform
