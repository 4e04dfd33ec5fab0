#pragma once
// Node-to-node messages: the part of the seam the MPI communication thread
// of 000 §5.4 / Fig. 9 stands behind. One NodeNetwork per node; backends:
// OpenMPI (platform/native/mpi_network), an in-process cluster of threads
// (platform/native/local_network, for tests) and SimGrid mailboxes over the
// modeled network (platform/simgrid).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <vector>

namespace tessera::platform {

// One message: the runtime's 64-bit key (which datum, which version) and a
// payload of `bytes` bytes. The payload lives after a 64-byte header in one
// 64-byte aligned allocation, so a received tile can be used in place (and a
// backend can send header and payload as one buffer). A phantom message
// (simulated runs without data) has no allocation, only its modeled size.
class Message {
 public:
  static constexpr std::size_t kHeader = 64;

  Message() = default;
  // With storage for `bytes` payload bytes (uninitialized).
  static Message with_payload(std::uint64_t key, std::size_t bytes) {
    Message m;
    m.key_ = key;
    m.bytes_ = bytes;
    const std::size_t total = (kHeader + bytes + 63) / 64 * 64;
    m.raw_.reset(static_cast<std::byte*>(std::aligned_alloc(64, total)));
    if (!m.raw_) throw std::bad_alloc();
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
  // Adopts a received buffer of kHeader + payload bytes (allocated with
  // std::aligned_alloc(64, ...)); reads key and size from its header.
  static Message from_wire(std::byte* raw) {
    Message m;
    m.raw_.reset(raw);
    const auto* h = reinterpret_cast<const std::uint64_t*>(raw);
    m.key_ = h[0];
    m.bytes_ = static_cast<std::size_t>(h[1]);
    return m;
  }

  std::uint64_t key() const { return key_; }
  std::size_t bytes() const { return bytes_; }
  bool has_data() const { return raw_ != nullptr; }
  std::byte* payload() { return raw_ ? raw_.get() + kHeader : nullptr; }
  const std::byte* payload() const { return raw_ ? raw_.get() + kHeader : nullptr; }
  // Header followed by payload, as sent on a wire.
  const std::byte* wire() const { return raw_.get(); }
  std::size_t wire_bytes() const { return kHeader + bytes_; }
  // Gives up the allocation (header + payload) to a caller that frees it with std::free.
  std::byte* release() { return raw_.release(); }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  void write_header() {
    auto* h = reinterpret_cast<std::uint64_t*>(raw_.get());
    h[0] = key_;
    h[1] = bytes_;
  }
  std::uint64_t key_ = 0;
  std::size_t bytes_ = 0;
  std::unique_ptr<std::byte, Free> raw_;
};

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
  virtual void stop() = 0;
  // Collective over all nodes, outside start()..stop(): `v` becomes the
  // element-wise sum of every node's `v` (same length everywhere).
  virtual void allreduce_sum(std::vector<double>& v) = 0;
  // Collective: true on every node when any node passes true. Lets one
  // node's failure end every node instead of leaving them waiting.
  virtual bool any(bool mine) {
    std::vector<double> x{mine ? 1.0 : 0.0};
    allreduce_sum(x);
    return x[0] > 0;
  }
};

}  // namespace tessera::platform
