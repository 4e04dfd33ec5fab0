// One run as the command line describes it: the configuration resolved, the
// input built, the parts of experiments/driver_parts.hpp chosen by where the
// run goes (a peer, one node, one node of a distributed run or with GPUs).
#include "experiments/driver.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <set>

#include "experiments/driver_parts.hpp"
#include "experiments/input_matrix.hpp"
#include "experiments/kernel_call.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "models/cold_start.hpp"
#include "platform/native/local_network.hpp"
#include "platform/native/mpi_network.hpp"

namespace tessera {
namespace driver {

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

int cuda_ordinal(int g, int gpus, int present, int local_rank, int local_ranks, bool chosen) {
  if (chosen || local_ranks <= 1) return g - 1;
  if (static_cast<long long>(local_ranks) * gpus > present)
    throw InputError(fmt::format(
        "--gpus {} on each of the {} ranks of this host needs {} CUDA devices, and {} {} "
        "present (each rank takes GPUs of its own; to choose them, set CUDA_VISIBLE_DEVICES "
        "per rank)",
        gpus, local_ranks, static_cast<long long>(local_ranks) * gpus, present, present == 1 ? "is" : "are"));
  return local_rank * gpus + g - 1;
}

}  // namespace driver

std::uint64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::uint64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

double flop_count(const std::string& algo, index_t m, index_t n) { return factorization(algo).flops(m, n); }

namespace {

std::unique_ptr<platform::Device> make_native_device(const RunConfig& c, int g, int node) {
  if (c.device == DeviceKind::Emulated) return std::make_unique<platform::EmulatedDevice>(g, c.emulated);
  if (!TESSERA_HAVE_CUDA) throw NotCompiled("CUDA");
  const int present = kernels::cuda_device_count();
  if (c.gpus > present) {
    std::string why = kernels::cuda_backend_unavailable();
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); why.empty() && visible != nullptr)
      why = fmt::format("CUDA_VISIBLE_DEVICES='{}' chooses the devices this process sees", visible);
    throw InputError(fmt::format("--gpus {} asks for more GPUs than the {} CUDA device{} present{}", c.gpus, present,
                                 present == 1 ? "" : "s", why.empty() ? "" : " (" + why + ")"));
  }
  kernels::CudaKernelOptions options;
  options.trsm_inverse_leaf = c.gpu_trsm_inverse;
  options.compute_streams = c.gpu_streams;
  options.cholqr_panels = c.gpu_qr_panel == QrPanel::CholQr;
  options.cholqr_gram_rows = c.gpu_cholqr_gram;
  if (c.gpu_qr_group != RunConfig::kUnsetGroup) options.reflector_group = c.gpu_qr_group;
  const int ordinal =
      driver::cuda_ordinal(g, c.gpus, present, platform::MpiNetwork::local_rank(), platform::MpiNetwork::local_ranks(),
                           std::getenv("CUDA_VISIBLE_DEVICES") != nullptr);
  return kernels::make_cuda_device(g, ordinal, c.gpu_memory_cap, options);
}

}  // namespace

RunResult run_factorization(RunConfig config, platform::Platform& platform) {
  if (config.network) config.network->begin_set_up();
  std::optional<DenseMatrix> input;
  // A distributed run's node never holds the whole input: it streams the file into its own tiles, opening it several
  // times (its header, its symmetry, its entries): a pipe gives its data once, and a second open would wait for ever.
  if (!config.input.empty() && config.network) {
    std::error_code e;
    const std::filesystem::file_status st = std::filesystem::status(config.input, e);
    if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
      throw InputError("--input " + config.input +
                       ": not a regular file, and a run of several nodes reads it more than once (each node streams "
                       "it into its own tiles): save it to a file first");
  }
  if (!config.input.empty())
    input = config.network ? read_input_header(config.input) : read_matrix_market(config.input);
  driver::resolve(config, input ? &*input : nullptr);
  RunResult r;
  r.config = config;
  const DenseMatrix* in = input ? &*input : nullptr;
  // This node's variation around its models' times (none unless asked for),
  // then its start-up costs: one state for its host's and GPUs' models.
  const int node = config.network ? config.network->node() : 0;
  std::optional<models::NoisyModel> core_noisy, gpu_noisy;
  const KernelTimeModel* core_base = config.model;
  const KernelTimeModel* gpu_base = config.gpu_model;
  if (config.noise.active() && core_base) core_base = &core_noisy.emplace(*core_base, config.noise, node, 0);
  if (config.noise.active() && gpu_base) gpu_base = &gpu_noisy.emplace(*gpu_base, config.noise, node, 1);
  // The host is domain 0, GPU g domain g: each initializes on its own. A
  // warmed GPU (--gpu-warmup on) has called every kernel it can call before
  // the clock; LU's row moves stay cold (experiments/gpu_warmup.hpp).
  const auto cold = std::make_shared<models::ColdStartState>();
  std::optional<models::ColdStartModel> core_model;
  std::deque<models::ColdStartModel> gpu_models;
  if (core_base) r.config.model = &core_model.emplace(*core_base, cold);
  if (gpu_base) {
    std::set<std::uint16_t> warm;
    if (config.gpu_warmup == Warmup::On)
      for (const KernelInfo& k : kernel_table())
        if (kernels::calibration::has_device_call(k.id)) warm.insert(k.id);
    r.config.gpu_model_each.clear();  // (the caller's models are the base, wrapped here)
    for (int g = 1; g <= std::max(config.gpus, 1); ++g) {
      gpu_models.emplace_back(*gpu_base, cold, g, warm);
      r.config.gpu_model_each.push_back(&gpu_models.back());
    }
    r.config.gpu_model = r.config.gpu_model_each.front();
  }
  if (config.impl != Impl::Tile) {
    if (config.precision == 'd') driver::run_peer<double>(r, platform, in);
    else driver::run_peer<float>(r, platform, in);
  } else if (config.network || config.gpus > 0) {
    // GPUs: the protocol's runtime, on a one-node "cluster" when there is no network.
    std::optional<platform::LocalCluster> one;
    if (!config.network) {
      one.emplace(1);
      r.config.network = &one->node(0);
    }
    std::vector<std::unique_ptr<platform::Device>> own;
    if (r.config.devices.empty())
      for (int g = 1; g <= config.gpus; ++g) own.push_back(make_native_device(config, g, r.config.network->node()));
    for (auto& d : own) r.config.devices.push_back(d.get());
    if (static_cast<int>(r.config.devices.size()) != config.gpus)
      throw std::logic_error("the backend gave " + std::to_string(r.config.devices.size()) + " GPUs for --gpus " +
                             std::to_string(config.gpus));
    if (config.precision == 'd') driver::run_distributed<double>(r, platform, in);
    else driver::run_distributed<float>(r, platform, in);
    r.config.network = config.network;
    r.config.devices = config.devices;
  } else {
    if (config.precision == 'd') driver::run_local<double>(r, platform, in);
    else driver::run_local<float>(r, platform, in);
  }
  r.config.model = config.model;
  r.config.gpu_model = config.gpu_model;
  r.config.gpu_model_each = config.gpu_model_each;
  r.gflops = r.time_s > 0 ? flop_count(config.algo, config.m, config.n) / r.time_s * 1e-9 : 0.0;
  return r;
}

}  // namespace tessera
