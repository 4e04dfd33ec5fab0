#include "runtime/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <ostream>
#include <tuple>
#include <utility>

#include "base/error.hpp"
#include "base/kernel_table.hpp"

namespace tessera {

void TraceRecorder::on_run_start(int threads, const Executor& executor, double now) {
  if (!have_origin_) origin_ = now, have_origin_ = true;
  executor_ = &executor;
  while (static_cast<int>(workers_.size()) < threads) {
    workers_.push_back(std::make_unique<WorkerBuffer>());
    workers_.back()->events.reserve(1024);
  }
}

void TraceRecorder::on_run_end(double) { executor_ = nullptr; }

void TraceRecorder::on_task_start(int worker, const TaskDesc&, double now) { workers_[worker]->started = now; }

void TraceRecorder::on_task_end(int worker, const TaskDesc& t, double now) {
  WorkerBuffer& b = *workers_[worker];
  b.events.push_back(
      TaskEvent{b.started, now, t, executor_ ? executor_->shape(t) : KernelShape{t.kernel}, std::exchange(b.span, -1)});
}

void TraceRecorder::on_copy(int gpu, bool to_device, DataId d, std::size_t bytes, double start, double end) {
  TransferRecord r;
  r.kind = to_device ? TransferRecord::Kind::HostToDevice : TransferRecord::Kind::DeviceToHost;
  r.thread = 1000 + 2 * (gpu - 1) + (to_device ? 0 : 1);
  r.from = to_device ? -1 : gpu - 1;
  r.to = to_device ? gpu - 1 : -1;
  r.data = d;
  r.bytes = bytes;
  r.start = start;
  r.end = end;
  on_transfer(r);
}

void TraceRecorder::on_message(int from, int to, DataId d, std::size_t bytes, double start, double end) {
  TransferRecord r;
  r.kind = TransferRecord::Kind::Node;
  r.thread = kMessageLane;
  r.from = from;
  r.to = to;
  r.data = d;
  r.bytes = bytes;
  r.start = start;
  r.end = end;
  on_transfer(r);
}

void TraceRecorder::on_transfer(const TransferRecord& r) {
  std::lock_guard lk(transfer_lock_);
  transfers_.push_back(r);
}

std::size_t TraceRecorder::task_events() const {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w->events.size();
  return n;
}

namespace {

std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) o += fmt::format("\\u{:04x}", static_cast<int>(c));
    else o += c;
  }
  return o + '"';
}

const char* mode_name(AccessMode m) {
  switch (m) {
    case AccessMode::Read: return "r";
    case AccessMode::Write: return "w";
    default: return "rw";
  }
}

std::string data_json(DataId d, const TraceInfo& info) {
  const auto tiles = static_cast<DataId>(info.tile_rows) * static_cast<DataId>(info.tile_cols);
  if (info.tile_rows > 0 && d < tiles) return fmt::format(R"("i":{},"j":{})", d % info.tile_rows, d / info.tile_rows);
  if (info.tile_rows > 0) return fmt::format(R"("panel":{})", d - tiles);
  return fmt::format(R"("data":{})", d);
}

const char* transfer_kind(TransferRecord::Kind k) {
  switch (k) {
    case TransferRecord::Kind::HostToDevice: return "h2d";
    case TransferRecord::Kind::DeviceToHost: return "d2h";
    default: return "node";
  }
}

}  // namespace

void TraceRecorder::write(std::ostream& out, const TraceInfo& info) const {
  // Merge the worker buffers into one deterministic order.
  struct Ref {
    double start;
    int tid;
    std::size_t index;  // into its worker's buffer, or into the transfers
    bool transfer;
  };
  std::vector<Ref> order;
  order.reserve(task_events() + transfers_.size());
  for (std::size_t w = 0; w < workers_.size(); ++w)
    for (std::size_t e = 0; e < workers_[w]->events.size(); ++e)
      order.push_back({workers_[w]->events[e].start, static_cast<int>(w), e, false});
  std::vector<TransferRecord> transfers;
  {
    std::lock_guard lk(transfer_lock_);
    transfers = transfers_;
  }
  for (std::size_t e = 0; e < transfers.size(); ++e)
    order.push_back({transfers[e].start, transfers[e].thread, e, true});
  std::stable_sort(order.begin(), order.end(), [](const Ref& a, const Ref& b) {
    return std::tie(a.start, a.tid, a.transfer, a.index) < std::tie(b.start, b.tid, b.transfer, b.index);
  });

  // Whole nanoseconds since the origin, printed as microseconds: the end of
  // one event and the start of the next on a worker never cross by rounding.
  const auto ns = [&](double t) { return static_cast<long long>(std::llround((t - origin_) * 1e9)); };
  const auto micro = [](long long n) {
    return fmt::format("{}{}.{:03d}", n < 0 ? "-" : "", std::llabs(n) / 1000, static_cast<int>(std::llabs(n) % 1000));
  };
  const auto us = [&](double t) { return micro(ns(t)); };
  const auto dur = [&](double a, double b) { return micro(ns(b) - ns(a)); };
  out << "{\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"format\":\"tessera-trace\",\"version\":1,\"backend\":"
      << quoted(info.backend) << ",\"tile_rows\":" << info.tile_rows << ",\"tile_cols\":" << info.tile_cols
      << ",\"run\":" << quoted(info.run)
      << (info.gpu_qr_panel.empty() ? std::string() : ",\"gpu_qr_panel\":" + quoted(info.gpu_qr_panel))
      << (info.gpu_qr_panel == "cholqr" ? ",\"gpu_cholqr_gram\":" + std::to_string(info.gpu_cholqr_gram) : "")
      << (info.gpu_warmup.empty() ? std::string() : ",\"gpu_warmup\":" + quoted(info.gpu_warmup))
      << (info.gpu_device.empty() ? std::string() : ",\"gpu_device\":" + quoted(info.gpu_device))
      << "},\n\"traceEvents\":[\n";
  out << fmt::format(R"x({{"ph":"M","pid":{},"name":"process_name","args":{{"name":"node {} ({})"}}}})x", node_, node_,
                     info.backend);
  const std::size_t cpus =
      workers_.size() - std::min<std::size_t>(workers_.size(), static_cast<std::size_t>(std::max(0, info.gpus)));
  for (std::size_t w = 0; w < workers_.size(); ++w) {
    const std::string name = w < cpus ? fmt::format("cpu{}", w) : fmt::format("gpu{}", w - cpus + 1);
    out << fmt::format(
        ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"{}\"}}}}", node_, w,
        name);
    out << fmt::format(
        ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{}}}}}",
        node_, w, w);
  }
  for (int g = 1; g <= info.gpus; ++g)
    for (int dir = 0; dir < 2; ++dir)
      out << fmt::format(
          ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"gpu{} {}\"}}}}",
          node_, 1000 + 2 * (g - 1) + dir, g, dir ? "d2h" : "h2d");
  if (std::any_of(transfers.begin(), transfers.end(),
                  [](const TransferRecord& t) { return t.kind == TransferRecord::Kind::Node; }))
    out << fmt::format(
        ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"messages in\"}}}}",
        node_, kMessageLane);
  std::string line;
  for (const Ref& r : order) {
    line.clear();
    if (!r.transfer) {
      const TaskEvent& e = workers_[r.tid]->events[r.index];
      const TaskDesc& d = e.desc;
      line = fmt::format(
          ",\n{{\"name\":{},\"cat\":\"task\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
          "\"args\":{{\"k\":{},\"i\":{},\"j\":{},\"precision\":\"{}\",\"m\":{},\"n\":{},\"kdim\":{},\"ib\":{},{}"
          "\"tiles\":[",
          quoted(kernel_name(d.kernel)), node_, r.tid, us(e.start), dur(e.start, e.end), d.arg[0], d.arg[1], d.arg[2],
          e.shape.precision ? e.shape.precision : '?', e.shape.m, e.shape.n, e.shape.k, e.shape.ib,
          e.gpu_span >= 0 ? fmt::format("\"gpu_span_us\":{:.3f},", e.gpu_span * 1e6) : std::string());
      for (int a = 0; a < d.n_access; ++a)
        line += fmt::format("{}{{{},\"mode\":\"{}\"}}", a ? "," : "", data_json(d.access[a].data, info),
                            mode_name(d.access[a].mode));
      line += "]}}";
    } else {
      const TransferRecord& t = transfers[r.index];
      line = fmt::format(
          ",\n{{\"name\":\"transfer\",\"cat\":\"transfer\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
          "\"args\":{{\"kind\":\"{}\",\"from\":{},\"to\":{},\"bytes\":{},\"tile\":{{{}}}}}}}",
          node_, t.thread, us(t.start), dur(t.start, t.end), transfer_kind(t.kind), t.from, t.to, t.bytes,
          data_json(t.data, info));
    }
    out << line;
  }
  out << "\n]}\n";
}

}  // namespace tessera
