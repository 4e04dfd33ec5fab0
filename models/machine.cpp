#include "models/machine.hpp"

#include <optional>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/json_fields.hpp"
#include "base/kernel_table.hpp"
#include "models/kernel_model.hpp"

namespace tessera::platform {

using models::JsonFields;

namespace {

// The bounds of what a machine file may describe, beyond which SimGrid's arithmetic fails (a link of 0.1 B/s aborted
// it, a latency of 1e308 s made its clock infinite) or a count outgrows its type; no machine comes near them.
constexpr double kMinBandwidthBps = 1e3, kMaxBandwidthBps = 1e15;  // 1 kB/s .. 1 PB/s
constexpr double kMaxLatencyS = 1;
constexpr double kMaxGpuBytes = 4611686018427387904.0;  // 2^62
constexpr int kMaxNodes = 32768;                        // the protocol numbers nodes 0 to 32767
constexpr int kMaxCores = 1 << 20, kMaxGpus = 1024;

LinkSpec link(const JsonFields& f) {
  return LinkSpec{f.within("bandwidth_Bps", kMinBandwidthBps, kMaxBandwidthBps),
                  f.within("latency_s", 0, kMaxLatencyS)};
}

void require_model(const Machine& m, const JsonFields& f, const std::string& key, const std::string& name) {
  if (!m.models.count(name)) {
    std::string known;
    for (const auto& [n, _] : m.models) known += (known.empty() ? "" : ", ") + n;
    f.fail(key, f.require(key),
           "unknown kernel model (this file's kernel_models: " + (known.empty() ? "none" : known) + ")");
  }
}

}  // namespace

Machine Machine::load(const std::string& path) { return parse(read_text_file("--machine", path), path); }

Machine Machine::parse(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(origin + ": malformed JSON (byte " + std::to_string(e.byte) + "): " + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. a number beyond double's range (1e999)
    throw InputError(origin + ": not a valid machine file: " + e.what());
  }
  const JsonFields top(j, origin, "");
  Machine m;
  m.origin = origin;
  m.name = top.string("name");
  m.nodes = top.integer("nodes", 1, kMaxNodes);
  if (const auto cal = j.find("calibration"); cal != j.end() && cal->is_object())
    if (const auto core = cal->find("blas_core"); core != cal->end() && core->is_string()) m.blas_core = *core;

  // Models first: the node refers to them by name.
  if (top.has("kernel_models")) {
    const JsonFields km = top.object("kernel_models");
    for (const auto& [name, spec] : km.json().items()) {
      if (name == "source") continue;
      m.models[name] = models::model_from_json(spec, name, origin, km.field(name));
    }
  }

  const JsonFields node = top.object("node");
  const JsonFields cores = node.object("cores");
  m.node.cores = cores.integer("count", 1, kMaxCores);
  m.node.core_model = cores.string("model");
  require_model(m, cores, "model", m.node.core_model);
  if (cores.has("model_by_threads")) {
    const JsonFields by = cores.object("model_by_threads");
    for (const auto& [key, value] : by.json().items()) {
      if (key == "source") continue;
      int t = 0;
      try {
        std::size_t used = 0;
        t = std::stoi(key, &used);
        if (used != key.size()) t = 0;
      } catch (const std::exception&) {
        t = 0;
      }
      if (t < 1) by.fail(key, value, "key must be a thread count >= 1");
      const std::string name = by.string(key);
      require_model(m, by, key, name);
      m.node.core_model_by_threads[t] = name;
    }
  }
  if (node.has("gpus")) {
    const JsonFields g = node.object("gpus");
    m.node.gpus.count = g.integer("count", 0, kMaxGpus);
    if (m.node.gpus.count > 0) {
      m.node.gpus.memory_bytes = g.within("memory_bytes", 1, kMaxGpuBytes);
      m.node.gpus.pcie = link(g.object("pcie"));
      m.node.gpus.model = g.string("model");
      require_model(m, g, "model", m.node.gpus.model);
      if (g.has("stream_overlap")) {
        m.node.gpus.stream_overlap = g.number("stream_overlap");
        if (!(m.node.gpus.stream_overlap >= 0 && m.node.gpus.stream_overlap <= 1))
          g.fail("stream_overlap", g.require("stream_overlap"), "must be between 0 and 1");
      }
      if (g.has("stream_reserve_bytes"))
        m.node.gpus.stream_reserve_bytes = g.within("stream_reserve_bytes", 0, kMaxGpuBytes);
      if (g.has("host_waits")) {
        const auto& list = g.require("host_waits");
        if (!list.is_array()) g.fail("host_waits", list, "must be a list of kernel keys");
        for (const auto& key : list) {
          const auto k = key.is_string() ? kernel_from_key(key.get<std::string>()) : std::nullopt;
          if (!k) g.fail("host_waits", key, "is not a kernel key (known: " + kernel_keys_text() + ")");
          m.node.gpus.host_waits.push_back(*k);
        }
      }
    }
  }

  const JsonFields net = top.object("network");
  m.network.topology = net.string("topology");
  if (m.network.topology != "star") net.fail("topology", net.require("topology"), "unknown topology (known: star)");
  m.network.link = link(net);
  if (net.has("calibrated")) {
    const auto& c = net.require("calibrated");
    if (!c.is_boolean()) net.fail("calibrated", c, "must be true or false");
    m.network.calibrated = c.get<bool>();
  }
  return m;
}

const std::string& Machine::core_model_name(int threads) const {
  const std::string* name = &node.core_model;
  for (const auto& [t, n] : node.core_model_by_threads)
    if (t <= threads) name = &n;
  return *name;
}

const KernelTimeModel& Machine::model(const std::string& name) const {
  const auto it = models.find(name);
  if (it == models.end()) throw InputError(origin + ": no kernel model named '" + name + "'");
  return *it->second;
}

}  // namespace tessera::platform
