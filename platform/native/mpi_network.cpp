#include "platform/native/mpi_network.hpp"

// The C API only: OpenMPI's mpi.h would otherwise pull in its deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <malloc.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "platform/native/start_thread.hpp"

namespace tessera::platform {
namespace {

constexpr int kDataTag = 7;
// Sends in flight at once: kSendsInFlight (platform/network.hpp), which the
// simulated network models too.
constexpr int kMaxSendsInFlight = kSendsInFlight;
// Receives in flight at once. Where Open MPI moves a large message in
// fragments, each message's fragments flow only once its receive is posted,
// so that several posted receives move several messages per progress call.
constexpr int kMaxRecvsInFlight = 4;
// Idle polling interval: doubles from kMinIdle to kMaxIdle while nothing
// happens. A new outgoing message wakes the thread at once; an incoming one
// waits at most kMaxIdle once the thread has been idle ~8 ms. Each wake-up
// costs a timed futex wait and an MPI progress call, which on the 2-core VM
// (where it shares the compute thread's core) was the largest overhead left:
// polling every 200 us took 18% of a core; kMaxIdle 1 ms -> 4 ms took
// Cholesky / QR at N = 8192 on 1x2 from 78 / 70 to 80 / 74 GFlop/s (10 ms gave
// no more).
constexpr auto kMinIdle = std::chrono::microseconds(20);
constexpr auto kMaxIdle = std::chrono::microseconds(4000);
// With a core of its own the thread waits at most these: while a send or a
// receive is in flight, and while nothing is. Where Open MPI cannot copy a
// large message in one step (no CMA between the processes, as on the 16-core
// GPU machine) it moves it in fragments, each needing a progress call on both
// sides; with the shared-core back-off there an 800 KB tile took 15-35 ms and
// Cholesky at N = 8192 on 2x2 (4 ranks x 4 cores) ran at 30 GFlop/s.
constexpr auto kOwnCoreInFlight = std::chrono::microseconds(5);
constexpr auto kOwnCoreIdle = std::chrono::microseconds(100);
// Sharing a core, the thread still waits at most this while a send or a
// receive is in flight, for the same fragmented copies: on the 2-core VM with
// Open MPI's single copy turned off (--mca btl_vader_single_copy_mechanism
// none, as on the GPU machine), QR at N = 8192 on 1x2 with 1 thread per rank
// took a median 22.7 ms per 900 KB tile at B = 320 and 131 ms per 3.3 MB tile
// at B = 640 with the 4 ms idle bound, 1.4 ms and 5.1 ms with this one (20 us:
// 1.1 and 4.0 ms). With the single copy, as the VM has by default, 3
// alternated pairs of QR and Cholesky at N = 8192 measured the same GFlop/s
// with it as without (92.1 against 92.0, 105.3 against 105.1).
constexpr auto kSharedInFlight = std::chrono::microseconds(50);

void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error(std::string(call) + " failed: " + std::string(text, len));
  }
}

// MPI counts are int: a message of more than 2^31 - 1 bytes (a square tile of doubles from B = 16,384; LU's
// partial-pivoting panel of m x B elements from m·B = 2^28) cannot go as that many MPI_BYTEs. It goes as one element
// of a derived datatype of exactly its bytes instead: whole blocks and the rest. Any two datatypes of n bytes have the
// same type signature (n MPI_BYTEs), so the receiver builds its own from the length it probed (MPI-3.1 §3.3.1, type
// matching) and the sender's and the receiver's need not be built alike. A type may be freed once the operation using
// it is posted (MPI-3.1 §4.1.9). Messages up to `limit` bytes go as plain MPI_BYTEs, as before.
class WireType {
 public:
  WireType(std::size_t bytes, std::size_t limit) {
    if (bytes <= limit) {
      count_ = static_cast<int>(bytes);
      return;
    }
    const std::size_t block = std::min<std::size_t>(kBlock, limit), blocks = bytes / block, rest = bytes % block;
    if (blocks > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw std::runtime_error("a message of " + std::to_string(bytes) + " bytes: more blocks than an MPI count holds");
    check(MPI_Type_contiguous(static_cast<int>(block), MPI_BYTE, &block_), "MPI_Type_contiguous");
    int lengths[2] = {static_cast<int>(blocks), static_cast<int>(rest)};
    MPI_Aint displacements[2] = {0, static_cast<MPI_Aint>(blocks * block)};
    MPI_Datatype types[2] = {block_, MPI_BYTE};
    check(MPI_Type_create_struct(rest > 0 ? 2 : 1, lengths, displacements, types, &type_), "MPI_Type_create_struct");
    check(MPI_Type_commit(&type_), "MPI_Type_commit");
    count_ = 1;
  }
  ~WireType() {
    if (type_ != MPI_BYTE) MPI_Type_free(&type_);
    if (block_ != MPI_DATATYPE_NULL) MPI_Type_free(&block_);
  }
  WireType(const WireType&) = delete;
  WireType& operator=(const WireType&) = delete;
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

 private:
  static constexpr std::size_t kBlock = std::size_t{1} << 20;
  int count_ = 0;
  MPI_Datatype type_ = MPI_BYTE, block_ = MPI_DATATYPE_NULL;
};

}  // namespace

struct MpiNetwork::Impl {
  int rank = 0, size = 1;
  bool finalize = false;
  DeliverFn deliver;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable cond;
  std::deque<std::pair<int, Message>> outbox;
  bool stopping = false;
  bool own_core = false;
  // MPI_THREAD_SERIALIZED: one thread at a time in MPI. During a run the
  // communication thread holds mpi_calls for each of its steps (never while it
  // delivers a message, waits, or takes `mutex`); a thread that ends the job
  // (abort) takes it for good before MPI_Abort, so that it never calls MPI
  // beside the communication thread. The first to end the job sets
  // `aborting`; any other thread that would end it waits for the process to go.
  std::mutex mpi_calls;
  std::atomic<bool> aborting{false};
  // The longest message sent as plain MPI_BYTEs (WireType); longer ones go as one derived datatype.
  std::size_t message_limit = static_cast<std::size_t>(std::numeric_limits<int>::max());
  std::atomic<std::uint64_t> derived_sent{0}, derived_received{0};
  std::exception_ptr error;
  // Outgoing and received buffers, recycled (see BufferPool). Outlives every
  // message of a run: messages end with the run's data store, before the network.
  BufferPool pool;
  // Memory held back for ending the job when memory ran out: MPI_Abort
  // allocates (Open MPI formats its abort notice), and where it found none
  // (a rank under `ulimit -v`) its help-text parser called exit() while the
  // compute threads still ran, which then crashed in freed BLAS buffers.
  static constexpr std::size_t kAbortReserve = std::size_t{16} << 20;
  // Taken without throwing: a rank too short of address space to hold it
  // goes on without one, and the run's preflight check names the shortage.
  std::unique_ptr<std::byte[]> abort_reserve{new (std::nothrow) std::byte[kAbortReserve]};

  void loop() {
    try {
      run();
    } catch (...) {
      // An MPI failure, or no memory for a received message, leaves the job
      // unusable; report and end every rank with the error's status (an
      // MPI failure 5, memory 4), unless another thread is ending it already.
      if (aborting.exchange(true)) wait_for_the_end();
      std::lock_guard calls(mpi_calls);
      std::lock_guard lk(mutex);
      error = std::current_exception();
      abort_reserve.reset();
      try {
        std::rethrow_exception(error);
      } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "tessera: error: rank %d: communication thread: out of memory for a message%s\n", rank,
                     receiving_bytes > 0 ? (" of " + std::to_string(receiving_bytes) + " bytes").c_str() : "");
      } catch (const std::exception& e) {
        std::fprintf(stderr, "tessera: internal error: rank %d: communication thread: %s\n", rank, e.what());
      } catch (...) {
        std::fprintf(stderr, "tessera: internal error: rank %d: communication thread: unknown error\n", rank);
      }
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, exit_status_of(error));
      std::_Exit(exit_status_of(error));  // (MPI_Abort "attempts to" end the job; errors return here)
    }
  }
  // A thread that would end the job after another began to: the process ends under it.
  [[noreturn]] static void wait_for_the_end() {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::size_t receiving_bytes = 0;  // the message being received, for an out-of-memory message

  void run() {
    std::vector<MPI_Request> reqs;
    std::vector<Message> inflight;
    struct Receive {
      MPI_Request req;
      std::byte* buf;
      std::size_t bytes;
      int source;
      std::chrono::steady_clock::time_point start;
    };
    std::vector<Receive> recvs;
    recvs.reserve(kMaxRecvsInFlight);  // (no allocation between a posted receive and its entry)
    auto idle = kMinIdle;
    for (;;) {
      bool progress = false;
      // Post queued sends.
      {
        std::unique_lock lk(mutex);
        while (!outbox.empty() && static_cast<int>(reqs.size()) < kMaxSendsInFlight) {
          auto [dest, m] = std::move(outbox.front());
          outbox.pop_front();
          lk.unlock();
          MPI_Request r;
          {
            std::lock_guard calls(mpi_calls);
            const WireType wire(m.wire_bytes(), message_limit);  // (its datatype freed before the lock goes)
            check(MPI_Isend(m.wire(), wire.count(), wire.type(), dest, kDataTag, MPI_COMM_WORLD, &r), "MPI_Isend");
            if (wire.type() != MPI_BYTE) derived_sent.fetch_add(1, std::memory_order_relaxed);
          }
          reqs.push_back(r);
          inflight.push_back(std::move(m));
          progress = true;
          lk.lock();
        }
      }
      // Test the sends in flight.
      for (std::size_t i = 0; i < reqs.size();) {
        int done = 0;
        {
          std::lock_guard calls(mpi_calls);
          check(MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE), "MPI_Test");
        }
        if (done) {
          reqs[i] = reqs.back();
          reqs.pop_back();
          inflight[i] = std::move(inflight.back());
          inflight.pop_back();
          progress = true;
        } else {
          ++i;
        }
      }
      // Probe for the next messages and receive up to kMaxRecvsInFlight at once.
      while (static_cast<int>(recvs.size()) < kMaxRecvsInFlight) {
        std::lock_guard calls(mpi_calls);
        int found = 0;
        MPI_Message msg;
        MPI_Status st;
        check(MPI_Improbe(MPI_ANY_SOURCE, kDataTag, MPI_COMM_WORLD, &found, &msg, &st), "MPI_Improbe");
        if (!found) break;
        // (MPI_Get_count's int would be MPI_UNDEFINED beyond 2^31 - 1 bytes.)
        MPI_Count count = 0;
        check(MPI_Get_elements_x(&st, MPI_BYTE, &count), "MPI_Get_elements_x");
        if (count < static_cast<MPI_Count>(Message::kHeader))
          throw std::runtime_error("a message shorter than its header");
        Receive r{MPI_REQUEST_NULL, nullptr, static_cast<std::size_t>(count), st.MPI_SOURCE,
                  std::chrono::steady_clock::now()};
        receiving_bytes = r.bytes;
        r.buf = pool.get(r.bytes);
        receiving_bytes = 0;
        const WireType wire(r.bytes, message_limit);
        check(MPI_Imrecv(r.buf, wire.count(), wire.type(), &msg, &r.req), "MPI_Imrecv");
        if (wire.type() != MPI_BYTE) derived_received.fetch_add(1, std::memory_order_relaxed);
        recvs.push_back(r);
        progress = true;
      }
      // Test them; a message is delivered when it is complete, whatever the
      // order (the runtime matches messages by datum and version).
      for (std::size_t i = 0; i < recvs.size();) {
        int done = 0;
        {
          std::lock_guard calls(mpi_calls);
          check(MPI_Test(&recvs[i].req, &done, MPI_STATUS_IGNORE), "MPI_Test");
        }
        if (!done) {
          ++i;
          continue;
        }
        const Receive r = recvs[i];
        recvs.erase(recvs.begin() + static_cast<std::ptrdiff_t>(i));
        Message m = Message::from_wire(r.buf, &pool, r.bytes);
        m.set_transit_s(std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count());
        deliver(r.source, std::move(m));
        progress = true;
      }
      std::unique_lock lk(mutex);
      // Every message this node expects has arrived once its runtime stops.
      if (stopping && outbox.empty() && reqs.empty() && recvs.empty()) return;
      const bool in_flight = !reqs.empty() || !recvs.empty();
      const auto bound = in_flight  ? (own_core ? kOwnCoreInFlight : kSharedInFlight)
                         : own_core ? kOwnCoreIdle
                                    : kMaxIdle;
      if (progress) {
        idle = std::min<std::chrono::microseconds>(kMinIdle, bound);
      } else {
        idle = std::min(idle, bound);
        cond.wait_for(lk, idle, [&] { return !outbox.empty(); });
        idle = std::min(idle * 2, bound);
      }
    }
  }
};

MpiNetwork::MpiNetwork(int* argc, char*** argv) : impl_(std::make_unique<Impl>()) {
  // Keep freed memory in the heap instead of unmapping or trimming it. Message
  // buffers are pooled already; this still took a distributed QR at N = 8192
  // on 1x2 from 65 to 70-72 GFlop/s on the 2-core VM (Cholesky unchanged
  // within noise), so some other large allocations churn; which is not pinned
  // down (the tile kernels allocate nothing).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = 0;
  if (!initialized) {
    check(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    impl_->finalize = true;
  } else {
    check(MPI_Query_thread(&provided), "MPI_Query_thread");  // (initialized by the program before)
  }
  if (provided < MPI_THREAD_SERIALIZED)
    throw std::runtime_error("the MPI library provides thread level " + std::to_string(provided) +
                             ", below MPI_THREAD_SERIALIZED");
  // Errors come back as codes (checked, and reported by name) instead of aborting inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &impl_->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &impl_->size);
}

MpiNetwork::~MpiNetwork() {
  stop();
  if (impl_->finalize) MPI_Finalize();
}

int MpiNetwork::node() const { return impl_->rank; }
int MpiNetwork::nodes() const { return impl_->size; }

void MpiNetwork::start(DeliverFn deliver) {
  impl_->deliver = std::move(deliver);
  impl_->stopping = false;
  impl_->thread = start_thread("MPI communication", "", [this] { impl_->loop(); });
}

void MpiNetwork::send(int dest, Message&& m) {
  if (!m.has_data()) throw std::logic_error("MPI network: a message without data");
  {
    std::lock_guard lk(impl_->mutex);
    impl_->outbox.emplace_back(dest, std::move(m));
  }
  impl_->cond.notify_one();
}

Message MpiNetwork::make_message(std::uint64_t key, std::size_t bytes) {
  return Message::with_payload(key, bytes, &impl_->pool);
}

void MpiNetwork::stop() {
  if (!impl_->thread.joinable()) return;
  {
    std::lock_guard lk(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->cond.notify_one();
  impl_->thread.join();
}

void MpiNetwork::allreduce_sum(std::vector<double>& v) {
  check(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
}

void MpiNetwork::abort(int code, const std::string& why) {
  // The first thread to end the job does (one error line); it waits for the
  // communication thread's MPI call in progress, if any, and keeps MPI to
  // itself from then on (Impl::mpi_calls).
  if (impl_->aborting.exchange(true)) Impl::wait_for_the_end();
  {
    std::lock_guard lk(impl_->mutex);
    impl_->abort_reserve.reset();
  }
  impl_->mpi_calls.lock();  // never unlocked: the process ends
  if (!why.empty()) std::fprintf(stderr, "tessera: error: %s\n", why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void MpiNetwork::set_own_core(bool own) { impl_->own_core = own; }

std::pair<std::uint64_t, std::uint64_t> MpiNetwork::derived_messages() const {
  return {impl_->derived_sent.load(), impl_->derived_received.load()};
}

void MpiNetwork::set_message_limit(std::size_t bytes) {
  if (bytes < 1 || bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::invalid_argument("MPI message limit " + std::to_string(bytes) + " bytes: not 1 to 2^31 - 1");
  impl_->message_limit = bytes;
}

int MpiNetwork::cores_per_rank() {
  const int machine = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int mine = CPU_COUNT(&set);
    if (mine > 0 && mine < machine) return mine;
  }
  return std::max(1, machine / local_ranks());
}

}  // namespace tessera::platform
