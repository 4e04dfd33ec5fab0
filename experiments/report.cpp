// What a run reports: the one summary line and the result JSON.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string_view>

#include <nlohmann/json.hpp>

#include "experiments/driver_parts.hpp"
#include "kernels/cpu/tile_kernels.hpp"

namespace tessera {

CommMax comm_max(const RunResult& r) {
  CommMax m;
  for (const CommStats& s : r.comm) {
    m.messages_sent = std::max(m.messages_sent, s.messages_sent);
    m.words_sent = std::max(m.words_sent, s.words_sent);
    m.messages = std::max(m.messages, s.messages_sent + s.messages_received);
    m.words = std::max(m.words, s.words_sent + s.words_received);
  }
  return m;
}

namespace {

// The run's tasks (every node's, the runtime's own included), and its load
// imbalance and GPU peak memory: the worst node's (each node's are in the
// JSON's comm.per_node; 0 where no node's numbers were gathered: a run of
// one node without GPUs, a peer's).
std::uint64_t run_tasks(const RunResult& r) {
  return r.node_tasks.empty() ? r.tasks : std::accumulate(r.node_tasks.begin(), r.node_tasks.end(), std::uint64_t{0});
}
double run_imbalance(const RunResult& r) {
  return r.node_imbalance.empty() ? 0.0 : *std::max_element(r.node_imbalance.begin(), r.node_imbalance.end());
}
std::size_t run_gpu_peak_bytes(const RunResult& r) {
  return r.node_gpu_peak_bytes.empty() ? 0
                                       : *std::max_element(r.node_gpu_peak_bytes.begin(), r.node_gpu_peak_bytes.end());
}

}  // namespace

std::string cost_note(const RunResult& r) {
  if (r.config.machine.empty()) {
    if (!r.gpu_warmup) return "";
    std::string note = fmt::format("gpu warm-up before the clock: {:.3f} s, {} kernel calls", r.gpu_warmup->seconds,
                                   r.gpu_warmup->calls);
    for (const std::string& s : r.gpu_warmup->skipped) note += "; skipped " + s;
    for (const std::string& k : r.gpu_warmup->cold) note += "; " + k + " not warmed";
    return note;
  }
  // Simulated tasks (every node's, with the runtime's own) and messages per
  // second of wall time: the simulator's speed, comparable across sizes.
  const double tasks = static_cast<double>(run_tasks(r));
  double messages = 0;
  for (const CommStats& s : r.comm) messages += static_cast<double>(s.messages_sent);
  const double wall = r.wall_s > 0 ? r.wall_s : 1e-9;
  return fmt::format("simulation cost: wall {:.1f} s, peak memory {:.0f} MiB, {:.0f} tasks/s, {:.0f} messages/s",
                     r.wall_s, static_cast<double>(r.peak_rss_bytes) / (1 << 20), tasks / wall, messages / wall);
}

std::string summary_line(const RunResult& r, const char* backend) {
  const RunConfig& c = r.config;
  std::string res = "residual=-", verdict = "unchecked";
  if (r.residuals) {
    res = fmt::format("residual={:.3g}", r.residuals->factor);
    for (const ResidualRatio& x : r.residuals->more) res += fmt::format(" {}={:.3g}", x.name, x.value);
    verdict = r.residuals->passed() ? "ok" : "FAILED";
  }
  std::string grid;
  if (!r.comm.empty() && (r.nodes > 1 || c.gpus == 0)) {  // (a one-node run with GPUs has no network)
    const CommMax mx = comm_max(r);
    grid += fmt::format(" grid={}x{} msgs_max={} words_max={}", c.pr, c.pc, mx.messages, mx.words);
    if (factorization(c.algo).uses_virtual_tiles() && c.pr > 1) grid += fmt::format(" v={}", c.v);
  }
  if (c.gpus > 0)
    grid += fmt::format(" gpus={} imbalance={:.3f} gpu_peak_MiB={:.1f}", c.gpus, run_imbalance(r),
                        static_cast<double>(run_gpu_peak_bytes(r)) / (1 << 20));
  // The factorization's variant (LU: pivot=... d=...) after the backend.
  std::string variant = c.factor ? c.factor->variant() : "";
  if (!variant.empty()) variant = " " + variant;
  return fmt::format(
      "{:<8} {} {} {}x{} B={} s={} b={} tiles={}x{} threads={}{} backend={}{} time={:.4f}s gflops={:.2f} {} {}", c.algo,
      to_string(c.impl), c.precision, c.m, c.n, c.B, c.s, c.b, r.p, r.q, c.threads, grid, backend, variant, r.time_s,
      r.gflops, res, verdict);
}

namespace {

// The GPUs' warm-up before the clock (experiments/gpu_warmup.hpp; the
// cuSOLVER peer's: one call on an identity); null: none.
nlohmann::json warmup_json(const RunResult& r) {
  if (!r.gpu_warmup) return nullptr;
  return {{"s", r.gpu_warmup->seconds},
          {"calls", r.gpu_warmup->calls},
          {"shapes", r.gpu_warmup->shapes},
          {"skipped", r.gpu_warmup->skipped},
          {"cold", r.gpu_warmup->cold}};
}

}  // namespace

std::string result_json(const RunResult& r, const char* backend) {
  const RunConfig& c = r.config;
  nlohmann::json j;
  j["algo"] = c.algo;
  j["impl"] = to_string(c.impl);
  j["backend"] = backend;
  j["m"] = c.m;
  j["n"] = c.n;
  j["B"] = c.B;
  j["s"] = c.s;
  j["b"] = c.b;
  j["ib"] = c.ib;
  j["tiles_from"] = c.tiles_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.tiles_from);
  j["precision"] = std::string(1, c.precision);
  j["threads"] = c.threads;
  if (std::string_view(backend) == "native" && c.impl == Impl::Tile) j["compute_nice"] = c.compute_nice;  // 0: off
  j["seed"] = c.seed;
  // The OpenBLAS kernel set the run's kernels used: none in a simulated run without data, whose JSON is then the same
  // on every host.
  j["blas_core"] = c.phantom ? nlohmann::json(nullptr) : nlohmann::json(kernels::blas_core());
  j["input"] = c.input.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.input);
  j["matrix"] = c.matrix.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.matrix);
  if (!c.pivot.empty() || (c.factor && !c.factor->variant().empty())) {
    j["variant"] = c.factor ? c.factor->variant() : "";
    j["d"] = c.d_columns;
    if (!c.d_source.empty()) j["d_source"] = c.d_source;
  }
  j["tiles"] = {r.p, r.q};
  j["tasks"] = run_tasks(r);
  j["window"] = c.window;
  if (c.impl == Impl::Tile) j["dist"] = c.dist;
  if (c.noise.active()) {
    j["kernel_noise"] = {{"sigma", c.noise.sigma_from_model ? nlohmann::json("auto") : nlohmann::json(c.noise.sigma)},
                         {"node_sigma", c.noise.node_sigma},
                         {"seed", c.noise.seed}};
    // auto: the sigmas the run drew with, per kernel and precision ("gsmm/d").
    auto sigmas = [](const std::map<std::pair<std::uint16_t, char>, double>& m) {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [key, sigma] : m) out[std::string(kernel_key(key.first)) + "/" + key.second] = sigma;
      return out;
    };
    if (c.noise.sigma_from_model) j["kernel_noise"]["sigmas"] = sigmas(c.noise.core_sigmas);
    if (c.noise.sigma_from_model && c.gpus > 0) j["kernel_noise"]["gpu_sigmas"] = sigmas(c.noise.gpu_sigmas);
  }
  j["time_s"] = r.time_s;
  j["cpu_s"] = r.cpu_s;
  j["settle_s"] = r.settle_s;
  j["gflops"] = r.gflops;
  j["busy_s"] = r.busy_s;
  if (c.column_major) j["convert_s"] = r.convert_s;
  if (c.impl == Impl::Cusolver) {
    j["copy_s"] = r.copy_s;
    j["pinned_bytes"] = r.pinned_bytes;  // the matrix page-locked for its copies (0 with --pageable)
    j["pin_s"] = r.pin_s;
    j["unpin_s"] = r.unpin_s;
    j["gpu_warmup"] = warmup_json(r);
  }
  if (r.residuals) {
    j["residual"] = r.residuals->factor;
    for (const ResidualRatio& x : r.residuals->more) j[x.json] = x.value;
    j["check_passed"] = r.residuals->passed();
  } else {
    j["residual"] = nullptr;
    j["check_passed"] = nullptr;
  }
  j["residual_threshold"] = kResidualThreshold;
  j["wall_s"] = r.wall_s;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  if (!r.comm.empty()) {
    j["grid"] = {c.pr, c.pc};
    j["v"] = c.v;
    j["nodes"] = r.nodes;
    j["node_time_s"] = r.node_time_s;
    nlohmann::json per = nlohmann::json::array();
    for (std::size_t k = 0; k < r.comm.size(); ++k) {
      const CommStats& s = r.comm[k];
      nlohmann::json node = {{"messages_sent", s.messages_sent},
                             {"words_sent", s.words_sent},
                             {"bytes_sent", s.bytes_sent},
                             {"messages_received", s.messages_received},
                             {"words_received", s.words_received},
                             {"bytes_received", s.bytes_received},
                             {"tasks", r.node_tasks[k]}};  // (gather_nodes fills them with comm)
      if (c.gpus > 0) {
        node["imbalance_ratio"] = r.node_imbalance[k];
        node["gpu_peak_bytes"] = r.node_gpu_peak_bytes[k];
      }
      per.push_back(node);
    }
    const CommMax mx = comm_max(r);
    j["comm"] = {{"per_node", per},
                 {"max_messages_sent", mx.messages_sent},
                 {"max_words_sent", mx.words_sent},
                 {"max_messages", mx.messages},
                 {"max_words", mx.words},
                 {"broadcast", to_string(c.broadcast)}};
  }
  if (c.gpus > 0) {
    j["gpus"] = c.gpus;
    j["eviction"] = to_string(c.eviction);
    j["gpu_kernel_depth"] = c.gpu_kernel_depth;
    if (c.gpu_trsm_inverse > 0) j["gpu_trsm_inverse"] = c.gpu_trsm_inverse;
    if (c.gpu_streams > 1) j["gpu_streams"] = c.gpu_streams;
    if (c.gpu_qr_panel != QrPanel::Householder) j["gpu_qr_panel"] = to_string(c.gpu_qr_panel);
    if (c.gpu_qr_group != RunConfig::kUnsetGroup) j["gpu_qr_group"] = c.gpu_qr_group;
    if (c.gpu_cholqr_gram > 0) j["gpu_cholqr_gram"] = c.gpu_cholqr_gram;
    j["device"] = gpu_device_name(c);
    if (c.machine.empty() && c.device == DeviceKind::Emulated)
      j["emulated_gpu"] = {{"memory_bytes", c.emulated.memory_bytes},
                           {"bandwidth_Bps", c.emulated.bandwidth_Bps},
                           {"latency_s", c.emulated.latency_s}};
    nlohmann::json per = nlohmann::json::array();
    for (std::size_t g = 0; g < r.gpus.size(); ++g) {
      const DeviceStats& d = r.gpus[g];
      per.push_back({{"gpu", g + 1},
                     {"busy_s", d.busy_s},
                     {"capacity_bytes", d.capacity_bytes},
                     {"peak_bytes", d.peak_bytes},
                     {"bytes_at_end", d.bytes_at_end},
                     {"copies_in", d.copies_in},
                     {"bytes_in", d.bytes_in},
                     {"copies_out", d.copies_out},
                     {"bytes_out", d.bytes_out},
                     {"evictions", d.evictions},
                     {"bytes_written_back", d.bytes_written_back},
                     {"distinct_bytes_in", d.distinct_bytes_in},
                     {"distinct_bytes_out", d.distinct_bytes_out},
                     {"copy_in_s", d.copy_in_s},
                     {"copy_out_s", d.copy_out_s},
                     {"kernel_span_s", d.kernel_span_s},
                     {"kernel_fallbacks", d.kernel_fallbacks}});
    }
    j["gpu_stats"] = per;
    // Host data page-locked for the GPUs' copies (0 where the devices do not pin).
    j["pinned_bytes"] = r.pinned_bytes;
    j["pin_s"] = r.pin_s;
    j["unpin_s"] = r.unpin_s;
    if (c.machine.empty()) j["gpu_warmup"] = warmup_json(r);  // a native run's GPUs
    // A simulated run's GPUs: their models' first-call costs skipped (warmed, the default) or paid (--gpu-warmup off).
    else j["gpu_first_calls"] = c.gpu_warmup == Warmup::Off ? "paid" : "warmed";
    j["imbalance_ratio"] = run_imbalance(r);
    j["release_tiles"] = !c.keep_tiles;
  }
  if (!c.machine.empty()) {
    j["machine"] = c.machine;
    j["sim_data"] = !c.phantom;
  }
  return j.dump(2);
}

}  // namespace tessera
