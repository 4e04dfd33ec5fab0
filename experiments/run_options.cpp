#include "experiments/run_options.hpp"

#include <charconv>
#include <cstdint>
#include <string_view>

namespace tessera {

void refuse_idle_options(const CLI::App& run, const RunConfig& cfg, Backend backend, const std::string& impl_name) {
  // An option that would change nothing is refused, not ignored.
  const auto given = [&](const char* name) {  // "--device cuda", "--keep-tiles"
    const CLI::Option* o = run.get_option(name);
    return std::string(name) + (o->get_expected_max() == 0 ? "" : " " + o->as<std::string>());
  };
  if (cfg.gpus == 0)
    for (const char* name : {"--device", "--gpu-memory", "--gpu-bandwidth", "--gpu-latency", "--keep-tiles",
                             "--pageable", "--eviction", "--gpu-kernel-depth"})
      // (cuSOLVER runs on a GPU without --gpus: --device may name it, --pageable its matrix.)
      if (run.get_option(name)->count() > 0 &&
          !(cfg.impl == Impl::Cusolver &&
            (std::string_view(name) == "--device" || std::string_view(name) == "--pageable")))
        throw InputError(given(name) + " describes the run's GPUs, and it has none: add --gpus G");
  if (cfg.impl != Impl::Tile) {
    for (const auto& [name, does] : {std::pair{"--B", "sizes tiles"},
                                     {"--s", "sizes tiles"},
                                     {"--b", "sizes tiles"},
                                     {"--tuned", "sizes tiles"},
                                     {"--dist", "places tiles"},
                                     {"--ib", "sets the tile kernels' inner blocking"},
                                     {"--qr-tree", "chooses the tile reduction tree"},
                                     {"--qr-domain", "cuts the tile reduction tree's domains"},
                                     {"--tslu-tree", "chooses the tournament's tree"},
                                     {"--d", "splits the tile columns between cores and GPUs"},
                                     {"--window", "sizes the task window"},
                                     {"--policy", "orders the ready tile tasks"},
                                     {"--broadcast", "sends tiles between nodes"},
                                     {"--trace", "traces the tile tasks"}})
      if (run.get_option(name)->count() > 0)
        throw InputError(given(name) + " " + does + ", and --impl " + impl_name + " factors the dense matrix whole");
    // The peers' LU is getrf: partial pivoting.
    if (!cfg.pivot.empty() && cfg.pivot != "partial")
      throw InputError("--pivot " + cfg.pivot + ": --impl " + impl_name + " runs getrf, whose pivoting is partial");
  }
  // Only a CUDA GPU copies from page-locked host memory (an emulated or simulated one models its link).
  if (run.get_option("--pageable")->count() > 0 && cfg.gpus > 0 &&
      (cfg.device != DeviceKind::Cuda || backend == Backend::Sim))
    throw InputError("--pageable leaves the host tiles of CUDA GPUs unlocked (--device cuda); the run's GPUs are " +
                     std::string(backend == Backend::Sim ? "simulated" : "emulated"));
  // Lowered compute threads (0, the default, lowers nothing anywhere).
  if (cfg.compute_nice > 0 && (backend == Backend::Sim || cfg.impl != Impl::Tile))
    throw InputError("--compute-nice " + std::to_string(cfg.compute_nice) + " sets the priority of " +
                     (backend == Backend::Sim
                          ? "a native run's threads; a simulated node has none"
                          : "the tile runtime's threads, and --impl " + impl_name + " factors the dense matrix whole"));
  // QR's own options, given with another factorization (even at their defaults).
  if (cfg.algo != "qr")
    for (const char* name : {"--ib", "--gpu-qr-panel", "--gpu-qr-group", "--gpu-cholqr-gram"})
      if (run.get_option(name)->count() > 0)
        throw InputError(given(name) + " sets QR's kernels, and the run is --algo " + cfg.algo);
}

void refuse_saturated_integers(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    // (Text options that are counts, --seed and --window, have their own messages.)
    if (o->get_type_name() != "INT" && o->get_type_name() != "UINT") continue;
    for (const std::string& v : o->results()) {
      std::string_view digits(v);
      if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) digits.remove_prefix(1);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) continue;
      std::int64_t value = 0;
      const char* first = v.data() + (v.front() == '+' ? 1 : 0);
      if (std::from_chars(first, v.data() + v.size(), value).ec == std::errc::result_out_of_range)
        throw InputError(o->get_name() + " " + v + " is outside the whole numbers a run takes (-2^63 to 2^63 - 1)");
    }
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) refuse_saturated_integers(*sub);
}

}  // namespace tessera
