#include "platform/native/local_network.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include "platform/native/start_thread.hpp"

namespace tessera::platform {

class LocalCluster::Endpoint final : public NodeNetwork {
 public:
  Endpoint(LocalCluster& c, int self) : cluster_(c), self_(self) {}
  ~Endpoint() override { stop(); }
  int node() const override { return self_; }
  int nodes() const override { return cluster_.nodes(); }

  void start(DeliverFn deliver) override {
    deliver_ = std::move(deliver);
    stopping_ = false;
    thread_ = start_thread("node " + std::to_string(self_) + " network", "", [this] { loop(); });
  }

  void send(int dest, Message&& m) override {
    if (dest < 0 || dest >= nodes() || dest == self_)
      throw std::logic_error("local network: node " + std::to_string(self_) + " sends to node " + std::to_string(dest));
    Endpoint& d = *cluster_.endpoints_[dest];
    {
      std::lock_guard lk(d.mutex_);
      d.inbox_.push_back({self_, std::move(m), std::chrono::steady_clock::now()});
    }
    d.cond_.notify_one();
  }

  void stop() override {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lk(mutex_);
      stopping_ = true;
    }
    cond_.notify_one();
    thread_.join();
  }

  void allreduce_sum(std::vector<double>& v) override {
    std::unique_lock lk(cluster_.reduce_mutex_);
    // Wait until the previous round has been read by everyone.
    cluster_.reduce_cond_.wait(lk, [&] { return cluster_.reduce_left_ == 0; });
    if (cluster_.reduce_arrived_ == 0) cluster_.reduce_sum_.assign(v.size(), 0.0);
    if (cluster_.reduce_sum_.size() != v.size()) throw std::logic_error("allreduce_sum: lengths differ between nodes");
    for (std::size_t i = 0; i < v.size(); ++i) cluster_.reduce_sum_[i] += v[i];
    const std::uint64_t round = cluster_.reduce_round_;
    if (++cluster_.reduce_arrived_ == nodes()) {
      cluster_.reduce_arrived_ = 0;
      cluster_.reduce_left_ = nodes();
      ++cluster_.reduce_round_;
      cluster_.reduce_cond_.notify_all();
    } else {
      cluster_.reduce_cond_.wait(lk, [&] { return cluster_.reduce_round_ != round; });
    }
    v = cluster_.reduce_sum_;
    if (--cluster_.reduce_left_ == 0) cluster_.reduce_cond_.notify_all();
  }

 private:
  struct Incoming {
    int source;
    Message m;
    std::chrono::steady_clock::time_point sent;
  };
  void loop() {
    std::unique_lock lk(mutex_);
    for (;;) {
      cond_.wait(lk, [&] { return stopping_ || !inbox_.empty(); });
      if (inbox_.empty()) return;  // stopping, and every expected message was delivered
      Incoming in = std::move(inbox_.front());
      inbox_.pop_front();
      lk.unlock();
      in.m.set_transit_s(std::chrono::duration<double>(std::chrono::steady_clock::now() - in.sent).count());
      deliver_(in.source, std::move(in.m));
      lk.lock();
    }
  }

  LocalCluster& cluster_;
  int self_;
  DeliverFn deliver_;
  std::mutex mutex_;
  std::condition_variable cond_;
  std::deque<Incoming> inbox_;
  bool stopping_ = false;
  std::thread thread_;
};

LocalCluster::LocalCluster(int nodes) {
  if (nodes < 1) throw std::invalid_argument("a local cluster needs at least one node, not " + std::to_string(nodes));
  for (int i = 0; i < nodes; ++i) endpoints_.push_back(std::make_unique<Endpoint>(*this, i));
}
LocalCluster::~LocalCluster() = default;
NodeNetwork& LocalCluster::node(int i) { return *endpoints_.at(i); }

}  // namespace tessera::platform
