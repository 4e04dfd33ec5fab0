// The `tessera` command line.
//   tessera run --algo cholesky|qr|... --n N [--m M] [--B B] [--s S] [--b b] [--precision d|s]
//               [--threads T] [--check] [--json FILE] [--seed K] [--input FILE.mtx] ...
//               [--backend native|sim --machine FILE [--sim-data]] [--trace FILE]
//   tessera calibrate [--out FILE] [--threads T] [--precision d,s] [--quick] [--kernels K,..] [--sizes B,..]
//                     [--for-n N,..] [--list]
//   tessera model comm --algo cholesky|qr --n N --B B --s S --grid PrxPc [--v V] [--nb NB]
//                      [--qr-tree flat|binary] [--ib IB] [--json FILE]
//   tessera tune --algo A --n N [--threads T] [--gpus G] [--machine FILE] [--backend native|sim] [--out FILE]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "algorithms/factorization.hpp"
#include "base/cpu_count.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "experiments/calibrate_command.hpp"
#include "experiments/driver.hpp"
#include "experiments/experiment_command.hpp"
#include "experiments/model_command.hpp"
#include "experiments/output_path.hpp"
#include "experiments/progress_file.hpp"
#include "experiments/run_options.hpp"
#include "experiments/run_simulated.hpp"
#include "experiments/sim_failure_option.hpp"
#include "experiments/tune_command.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "models/comm_model.hpp"
#include "models/kernel_model.hpp"
#include "models/machine.hpp"
#include "platform/native/mpi_network.hpp"
#include "platform/native/native_platform.hpp"
#include "platform/simgrid/simgrid_platform.hpp"
#include "runtime/trace.hpp"

namespace {

// An error already printed (on every rank); main() only exits with its status.
struct Reported {
  int status;
};

// One error line, written to stderr in one write(): under mpirun every rank
// may say the same thing at once into one merged stream, and a line written
// piecewise (std::cerr writes each << on its own) interleaves with another
// rank's ("tessera: error: tessera: error: ..."). A pipe keeps a write of at
// most PIPE_BUF bytes whole.
void say(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
}
void say_error(const std::string& what) { say("tessera: error: " + what); }

// The one stderr line of a failed command: "tessera: error: ..." for the
// statuses 2-4 (and a RemoteFailure's), "tessera: internal error: ..." for 5.
// `phantom`: a simulated run without data, which allocates no matrix.
std::string error_line(const std::exception_ptr& e, const tessera::RunConfig& cfg, bool phantom = false) {
  try {
    std::rethrow_exception(e);
  } catch (const tessera::DeviceOutOfMemory& x) {
    return std::string("tessera: error: ") + x.what() +
           " (a GPU holds every tile of one task at once, whatever it evicts: use smaller tiles, --B, or a GPU with "
           "more memory)";
  } catch (const tessera::SimulatedFailure& x) {
    return std::string("tessera: error: ") + x.what();  // status 5, but no internal error
  } catch (const std::bad_alloc&) {
    if (cfg.n == tessera::kUnsetSize && !cfg.input.empty())
      return "tessera: error: out of memory: the matrix of --input " + cfg.input + " does not fit";
    if (cfg.n == tessera::kUnsetSize)  // not a run's matrix: calibrate, tune, model
      return "tessera: error: out of memory: an allocation failed; ask for smaller sizes";
    if (phantom)  // the simulator's own tables (tasks, data, the platform's hosts and routes)
      return "tessera: error: out of memory: an allocation of the simulation failed (--backend sim without "
             "--sim-data allocates no matrix); simulate fewer nodes, tiles (a larger --B) or GPUs";
    const double m = static_cast<double>(cfg.m == tessera::kUnsetSize ? cfg.n : cfg.m), n = static_cast<double>(cfg.n);
    return fmt::format(
        "tessera: error: out of memory: the {} x {} matrix (--m {} --n {}, precision {}) needs {:.1f} GiB", m, n, m, n,
        cfg.precision, m * n * (cfg.precision == 's' ? 4 : 8) / 1073741824.0);
  } catch (const std::exception& x) {
    return (tessera::exit_status_of(e) == 5 ? "tessera: internal error: " : "tessera: error: ") + std::string(x.what());
  } catch (...) {
    return "tessera: internal error: an exception that is not a std::exception";
  }
}

// An error only this rank may know of: the others could be waiting for it
// in a collective, and MPI_Finalize would wait for them. Names the error and
// the rank, and ends the whole job with the error's status. `reporting`:
// met while writing the run's output, not during the run.
[[noreturn]] void end_job(tessera::platform::MpiNetwork& net, const std::exception_ptr& e,
                          const tessera::RunConfig& cfg, bool reporting = false) {
  using tessera::exit_status_of;
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    if (reporting) say_error(fmt::format("rank {}: out of memory while writing the run's output", net.node()));
    else
      say_error(cfg.n == tessera::kUnsetSize
                    ? fmt::format("rank {}: out of memory for its tiles of the --input {} matrix (precision {})",
                                  net.node(), cfg.input, cfg.precision)
                    : fmt::format("rank {}: out of memory for its tiles of the {} x {} matrix (precision {})",
                                  net.node(), cfg.m == tessera::kUnsetSize ? cfg.n : cfg.m, cfg.n, cfg.precision));
  } catch (const std::exception& x) {
    const char* kind = exit_status_of(e) == 5 ? "tessera: internal error: " : "tessera: error: ";
    say(fmt::format("{}rank {}: {}", kind, net.node(), x.what()));
  } catch (...) {
    say_error(fmt::format("rank {}: unknown error", net.node()));
  }
  net.abort(exit_status_of(e), "");  // named above
}

// Runs the factorization on the chosen backend and returns its result and the backend's name.
// A simulated cluster runs every node in this process: with a trace
// (cfg.observer, node 0's), `node_traces` gets one recorder for each other node.
// With --fail, `fail_note` gets a line for a run the failure did not end.
// Under mpirun the rank's network is made in `mpi`, so that it outlives the
// run: the caller reports the result before any rank ends.
tessera::RunResult run_on_backend(tessera::RunConfig cfg, const tessera::BackendOptions& b, std::string& backend_name,
                                  std::optional<tessera::platform::MpiNetwork>& mpi,
                                  std::vector<std::unique_ptr<tessera::TraceRecorder>>* node_traces = nullptr,
                                  std::string* fail_note = nullptr) {
  using namespace tessera;
  if (b.backend == Backend::Native) {
    if (!b.machine.empty() || b.sim_data || b.nodes != 0)
      throw InputError("--machine, --nodes and --sim-data describe a simulated run: add --backend sim");
    const bool distributed = platform::MpiNetwork::distributed(cfg.pr * cfg.pc);
    if (b.threads_from_cores)
      cfg.threads = default_threads(
          distributed ? platform::MpiNetwork::cores_per_rank() : static_cast<int>(usable_cpus()), cfg.gpus);
    platform::NativePlatform native;
    backend_name = native.backend_name();
    native.set_compute_nice(cfg.compute_nice);
    if (!distributed) return run_factorization(cfg, native);
    // One process per node, started by mpirun: each runs this same command.
    platform::MpiNetwork& net = mpi.emplace(nullptr, nullptr);
    if (net.nodes() != cfg.pr * cfg.pc) {
      // Every rank finds this: each prints it, and none exits before all
      // have (mpirun kills the others when the first exits non-zero).
      say_error(fmt::format("--grid {}x{} has {} nodes, but {} MPI process{} run{} (start it with mpirun -np {})",
                            cfg.pr, cfg.pc, cfg.pr * cfg.pc, net.nodes(), net.nodes() == 1 ? "" : "es",
                            net.nodes() == 1 ? "s" : "", cfg.pr * cfg.pc));
      net.barrier();
      throw Reported{2};
    }
    // 000 §5.3 gives the communication thread a core of its own; where the
    // rank has none to spare it shares one and must poll sparingly.
    net.set_own_core(platform::MpiNetwork::cores_per_rank() >= cfg.threads + cfg.gpus + 1);
    cfg.network = &net;
    // An error every rank meets: each prints its line, and none exits
    // before all have (mpirun kills the others when the first exits non-zero,
    // and a rank killed before it printed loses its line).
    auto agreed = [&](const std::exception_ptr& e) {
      // Met while setting up, perhaps on this rank alone: the others learn it in their first collective.
      net.agree_failed_set_up(exit_status_of(e));
      say(error_line(e, cfg));
      net.barrier();
      return Reported{exit_status_of(e)};
    };
    try {
      return run_factorization(cfg, native);
    } catch (const InputError&) {
      throw agreed(std::current_exception());  // found before any message, on every rank or this one alone
    } catch (const RemoteFailure&) {
      throw agreed(std::current_exception());  // every rank knows (NodeRuntime::run agreed on it)
    } catch (const PivotBreakdown&) {
      throw agreed(std::current_exception());  // met by a kernel, so agreed on too
    } catch (const NotCompiled&) {
      throw agreed(std::current_exception());  // a backend left out of this build: every rank finds it first
    } catch (...) {
      end_job(net, std::current_exception(), cfg);
    }
  }
  return run_simulated(cfg, b, backend_name, node_traces, fail_note);
}

// The stderr line of a run whose --check failed (exit 1).
std::string check_failure(const tessera::RunResult& r) {
  std::string what = fmt::format("residual {:.3g}", r.residuals->factor);
  for (const tessera::ResidualRatio& x : r.residuals->more) what += fmt::format(", {} {:.3g}", x.json, x.value);
  return fmt::format("--check failed: {} (a run passes below {:g})", what, tessera::kResidualThreshold);
}

// Writes a run's traces (each node its own), and on node 0 its summary,
// JSON and a failed check's error line; returns the exit status (1: the
// check failed, on every node).
int report_run(tessera::RunResult& r, const std::string& name, const std::string& json_path,
               const std::string& trace_path, tessera::TraceRecorder& trace,
               const std::vector<std::unique_ptr<tessera::TraceRecorder>>& node_traces, const std::string& fail_note) {
  using namespace tessera;
  const std::string summary = summary_line(r, name.c_str());
  if (!trace_path.empty()) {
    // Every node records its own tasks and arriving messages; node k > 0
    // writes them next to node 0's file (FILE with ".nodeK" before its
    // extension): under mpirun each rank its own, in a simulated cluster
    // this process all of them.
    const std::string path = r.node == 0 ? trace_path : node_output_path(trace_path, r.node);
    trace.set_node(r.node);
    TraceInfo info{name, r.p, r.q, summary, r.config.gpus, {}, 0, {}, {}};
    if (r.config.algo == "qr" && r.config.gpus > 0 && r.config.device == DeviceKind::Cuda) {
      info.gpu_qr_panel = r.config.gpu_qr_panel == QrPanel::CholQr ? "cholqr" : "householder";
      info.gpu_cholqr_gram = r.config.gpu_cholqr_gram;
    }
    if (r.config.gpus > 0) {
      info.gpu_warmup = r.config.gpu_warmup == Warmup::On ? "on" : "off";
      info.gpu_device = gpu_device_name(r.config);
    }
    write_output({"--trace", path}, [&](std::ostream& f) { trace.write(f, info); });
    for (std::size_t k = 0; k < node_traces.size(); ++k)
      write_output({"--trace", node_output_path(trace_path, static_cast<int>(k) + 1)},
                   [&](std::ostream& f) { node_traces[k]->write(f, info); });
  }
  // A distributed run reports once, from node 0 (it holds every node's counts).
  const bool failed = r.residuals && !r.residuals->passed();
  if (r.node != 0) return failed ? 1 : 0;
  // The file first: a standard output closed early (`| head`) ends the process at the summary (SIGPIPE).
  if (!json_path.empty())
    write_output({"--json", json_path}, [&](std::ostream& f) { f << result_json(r, name.c_str()) << '\n'; });
  std::cout << summary << std::endl;
  if (const std::string cost = cost_note(r); !cost.empty()) std::cout << cost << std::endl;
  if (!fail_note.empty()) std::cout << fail_note << std::endl;
  if (failed) say_error(check_failure(r));
  return failed ? 1 : 0;
}

int run_command(tessera::RunConfig cfg, const tessera::BackendOptions& backend, const std::string& json_path,
                const std::string& policy, const std::string& trace_path, const std::string& progress_path,
                const std::string& tuned_path) {
  using namespace tessera;
  if (policy == "priority") cfg.policy = ReadyPolicy::Priority;
  else if (policy == "fifo") cfg.policy = ReadyPolicy::Fifo;
  else if (policy == "random") cfg.policy = ReadyPolicy::Random;
  else throw InputError("--policy '" + policy + "' is not one of: priority, fifo, random");
  // An unwritable --json or --trace fails before the factorization; both are
  // written only once there is a result (experiments/output_path.hpp). Node
  // k > 0 of a cluster writes its trace beside node 0's: those are outputs
  // too, checked in one pass over the trace's directory.
  const std::vector<NamedPath> inputs = {
      {"--input", cfg.input}, {"--machine", backend.machine}, {"--tuned", tuned_path}};
  const NamedPath json_out{"--json", json_path}, trace_out{"--trace", trace_path},
      progress_out{"--progress-file", progress_path};
  check_distinct_paths({json_out, trace_out, progress_out}, inputs);
  std::vector<NamedPath> others = inputs;
  others.insert(others.end(), {json_out, progress_out});
  check_node_outputs(trace_out, cfg.pr * cfg.pc, others);
  check_output_path(json_out);
  check_output_path(trace_out);
  TraceRecorder trace;
  if (!trace_path.empty()) cfg.observer = &trace;
  std::optional<ProgressFile> progress;
  if (!progress_path.empty()) cfg.observer = &progress.emplace(progress_path, cfg.observer);
  std::string name;
  const auto wall0 = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<TraceRecorder>> node_traces;  // a simulated cluster's nodes 1..P-1
  std::string fail_note;
  std::optional<platform::MpiNetwork> mpi;  // a rank's, under mpirun
  RunResult r = run_on_backend(cfg, backend, name, mpi, &node_traces, &fail_note);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.peak_rss_bytes = peak_rss_bytes();
  const auto report = [&] { return report_run(r, name, json_path, trace_path, trace, node_traces, fail_note); };
  if (!mpi) return report();
  // No rank ends before every rank has written its output: mpirun kills the
  // others when the first exits non-zero, and a failed check ends every rank
  // with 1 while node 0 alone reports it.
  int status = 0;
  try {
    status = report();
    mpi->barrier();
  } catch (...) {
    end_job(*mpi, std::current_exception(), cfg, true);
  }
  return status;
}

}  // namespace

int run_main(int argc, char** argv) {
  if (const int rc = tessera::run_experiment_command(argc, argv); rc >= 0) return rc;
  CLI::App app{"tessera: task-based dense linear algebra on multicore + multi-GPU clusters"};
  app.require_subcommand(1);
  tessera::add_experiment_help(app);

  tessera::RunConfig cfg;
  std::string precision = "d", json_path, policy = "priority", trace_path, progress_path;
  tessera::BackendOptions backend;
  std::string impl_name = "tile", backend_choice = "native", device_name = "emulated", broadcast = "binomial",
              eviction = "next-use", qr_panel = "householder", warmup = "auto";
  auto* run =
      app.add_subcommand("run", "factor one matrix and report time, GFlop/s and (with --check) the scaled residual");
  run->add_option("--algo", cfg.algo, "the factorization: one of " + tessera::factorization_list())->required();
  run->add_option("--pivot", cfg.pivot,
                  "LU's pivoting: partial (GEPP on the whole panel, 002 Alg. 1) | tournament (CALU's TSLU, 002 "
                  "§2.4) | none; default partial");
  run->add_option("--tslu-tree", cfg.tslu_tree,
                  "the tournament's reduction tree over the panel's tile rows (--pivot tournament): binary | flat; "
                  "default binary");
  run->add_option("--qr-tree", cfg.qr_tree,
                  "QR's reduction tree down a tile column: flat (one TSQRT chain, 001 Alg. 2) | binary (a flat chain "
                  "per node row, or per --qr-domain tile rows of it, the chains' heads then reduced by TTQRT in a "
                  "binary tree; the same as flat on one node row); default flat");
  auto* qr_domain_opt = run->add_option(
      "--qr-domain", cfg.qr_domain,
      "--qr-tree binary: tile rows of a node row per flat chain (domain), the domains' heads then reduced "
      "in a binary tree inside the node row; 0 = one domain per node row; default 0");
  run->add_option("--d", cfg.d,
                  "LU with --gpus: block columns the CPU cores hold (002 Alg. 2): a count, auto (the d that balances "
                  "the two sides' flops over the whole run, models/lu_split.hpp) or eq1 (002 eq. (1)), speeds from "
                  "the kernel models; 0: none, the GPUs factor the panels too (the tournament's candidate selection "
                  "stays on the cores); default auto");
  auto* n_opt = run->add_option("--n", cfg.n, "columns (and rows unless --m); taken from the file with --input");
  auto* m_opt = run->add_option("--m", cfg.m, "rows (QR of a tall matrix); default n");
  tessera::TuningOptions tuning;
  run->add_option("--B", tuning.B,
                  "top-level tile size B, or auto (tune B, s and b first: tessera tune); default chosen from n and "
                  "threads");
  run->add_option("--tuned", tuning.tuned, "B, s and b from a file tessera tune --out wrote");
  auto* s_opt = run->add_option(
      "--s", cfg.s, "tile columns per top-level tile (s-1 narrow ones of width b, one remainder); default 1");
  std::string b_opt;
  run->add_option(
      "--b", b_opt,
      "width of the narrow tile columns, or auto (with --gpus: balance the host's columns against the GPUs', "
      "000 App. A.1); default B/(2s), B/s with --dist gpu-columns");
  run->add_option("--ib", cfg.ib, "QR inner blocking; default 32");
  run->add_option("--precision", precision, "d | s");
  auto* threads_opt = run->add_option(
      "--threads", cfg.threads,
      "CPU compute threads; native: with the GPU manager and communication threads at most max(4 x cores, 64) "
      "(threads beyond the cores only take turns on them); simulated: at most the machine file's cores per node; "
      "default 1, with --gpus G the node's cores - G - 2");
  auto* nice_opt = run->add_option(
      "--compute-nice", cfg.compute_nice,
      "native runs: the compute threads' nice levels below the node's other threads (0-19), so that those (generator, "
      "GPU managers, communication) win a core they share when they have work; default 0");
  run->add_flag("--check", cfg.check, "compute the scaled residuals and fail above the threshold (30)");
  run->add_flag("--column-major", cfg.column_major,
                "native one-node CPU runs: the matrix starts and ends column-major, as a LAPACK caller holds it; the "
                "tiles' allocation with the conversion into them, and back, timed as convert_s (outside time_s)");
  run->add_option("--json", json_path, "write the result as JSON to FILE");
  run->add_option("--trace", trace_path, "write a Chrome trace-event JSON (Perfetto) of every task to FILE");
  // Unsigned values are read as text: CLI11 would turn -1 into 2^64 - 1.
  std::string seed_text, window_text, gpu_memory_text;
  auto* seed_opt = run->add_option("--seed", seed_text, "seed of the generated matrix; default 1");
  run->add_option("--input", cfg.input, "read a dense Matrix Market file instead of generating a matrix");
  run->add_option("--matrix", cfg.matrix,
                  "generated matrix: spd (Cholesky's default) | graded (rows and columns over 6 orders of magnitude) | "
                  "illcond (condition 1e12; 1e5 in single) | rankdef (QR: rank n/2) | general (QR's default)");
  run->add_option(
      "--impl", impl_name,
      "tile (tessera) | lapack (LAPACKE on the dense matrix, the peer for benchmarks) | cusolver (cuSOLVER on one GPU alone, the peer of GPU runs; built with CUDA)");
  auto* window_opt = run->add_option("--window", window_text, "task window capacity (unfinished tasks); default 16384");
  run->add_option("--policy", policy, "ready-queue order: priority | fifo | random");
  run->add_option("--broadcast", broadcast,
                  "how a tile version read on several nodes reaches them: binomial (a tree rooted at its writer, "
                  "each reader forwarding; default) | flat (every copy from the writer)");
  run->add_option("--eviction", eviction,
                  "which copy a full GPU frees first: next-use (the one used again furthest ahead in the task graph; "
                  "default) | lru (the one used longest ago)");
  run->add_option("--gpu-kernel-depth", cfg.gpu_kernel_depth,
                  "tasks' kernels a GPU's manager thread keeps queued at once: 0 the device's own (a CUDA GPU: max(2, "
                  "--gpu-streams), the next task's kernels queued while the last's run; default) | 1 (wait for each "
                  "task's kernels)");
  run->add_option("--gpu-streams", cfg.gpu_streams,
                  "--device cuda or a simulated GPU: compute streams per GPU, the tasks' kernels on them in turn, as "
                  "many tasks queued at once (independent tasks' kernels side by side; simulated: sharing the GPU, "
                  "each at most its rate's share of GEMM's); default 1");
  run->add_option("--gpu-trsm-inverse", cfg.gpu_trsm_inverse,
                  "--device cuda: Cholesky's TRSM through the inverses of its diagonal blocks of this order (no "
                  "substitution: kernels/recursive_blocking.hpp); default 0, cuBLAS's TRSM on the whole tile");
  run->add_option("--gpu-qr-group", cfg.gpu_qr_group,
                  "--device cuda, QR: reflectors its kernels apply at once, their T factors merged (a multiple of "
                  "--ib, rounded down; 0: one block of ib at a time); default 256");
  run->add_option("--gpu-qr-panel", qr_panel,
                  "--device cuda: how QR's GEQRT and TSQRT factor a panel of ib columns: householder (cuSOLVER's "
                  "GEQRF; default) | cholqr (shifted Cholesky QR and Householder vectors rebuilt from Q: "
                  "kernels/cuda/cholqr_panel.hpp; a tile that fails its check is factored again with GEQRF)");
  run->add_option("--gpu-cholqr-gram", cfg.gpu_cholqr_gram,
                  "--gpu-qr-panel cholqr: each panel's Gram matrix as the sum over blocks of R rows (a batched GEMM "
                  "and a GEMV; R at least the panel's rows: one GEMM); default 0, one SYRK");
  run->add_option("--gpu-warmup", warmup,
                  "runs with --gpus: each GPU calls every kernel shape of the run once before the clock starts "
                  "(library loading and workspaces: experiments/gpu_warmup.hpp; the time is the JSON's gpu_warmup.s); "
                  "simulated GPUs skip their model's first-call costs, or with off pay them: "
                  "auto (on for --device cuda and simulated GPUs; default) | on | off");
  run->add_option("--backend", backend_choice, "native (real threads) | sim (SimGrid-modeled machine); default native");
  run->add_option("--machine", backend.machine, "machine file of a simulated run (platform/machines/*.json)");
  std::string grid;
  run->add_option(
      "--grid", grid,
      "PrxPc node grid of a distributed run (multi-level block-cyclic distribution): one MPI process per node "
      "under mpirun, or simulated nodes with --backend sim; default 1x1");
  run->add_option("--v", cfg.v,
                  "QR virtual tile height in tile rows (000 App. A.2.2): v adjacent tile rows on one node; default "
                  "max(1, p/(8*Pr)) for p tile rows, 1 on one node row");
  run->add_option(
      "--dist", cfg.dist,
      "tile distribution: multi-level (000 §3.1: 2-D block-cyclic top-level tiles over the nodes, columns "
      "over each node's host and GPUs) | block-cyclic-2d (ScaLAPACK's, over tile rows and columns, host "
      "only) | column-cyclic (001 §3.4, one node) | gpu-columns (multi-level's nodes, every tile column on the "
      "node's GPUs, narrow ones too, s equal ones unless --b: with --B N --s S, LAPACK's blocked Cholesky and "
      "QR on the GPUs); "
      "default multi-level");
  auto* nodes_opt =
      run->add_option("--nodes", backend.nodes, "simulated nodes (--backend sim); default Pr*Pc of --grid");
  run->add_option("--gpus", cfg.gpus, "GPUs per node (simulated: up to the machine file's); default 0");
  run->add_option(
      "--device", device_name,
      "kind of the GPUs of a native run: emulated (host memory, copies timed by --gpu-bandwidth/--gpu-latency, "
      "kernels on a CPU core) | cuda; default emulated");
  auto* device_opt = run->get_option("--device");
  auto* gpu_memory_opt = run->add_option(
      "--gpu-memory", gpu_memory_text,
      "bytes of memory of each emulated GPU (default 4 GiB), of each simulated GPU (default: the machine file's), or the most each CUDA GPU may use (default: its free memory)");
  auto* gpu_bw_opt = run->add_option("--gpu-bandwidth", cfg.emulated.bandwidth_Bps,
                                     "emulated GPU copy bandwidth, bytes/s per direction; default 12e9");
  auto* gpu_lat_opt =
      run->add_option("--gpu-latency", cfg.emulated.latency_s, "emulated GPU copy latency, seconds; default 1e-5");
  run->add_flag("--keep-tiles", cfg.keep_tiles,
                "ignore Release_Tile: keep every GPU copy to the end unless memory runs short (to compare peak "
                "memory)");
  run->add_flag("--pageable", cfg.pageable,
                "CUDA GPUs: leave the host tiles pageable instead of page-locking them (to measure what pinning "
                "gains)");
  run->add_option("--progress-file", progress_path,
                  "create FILE (empty) once the factorization's first task has finished: a marker for scripts and "
                  "tests that act while a run factors; FILE must not exist yet");
  run->add_option("--test-fault", cfg.test_fault,
                  "test only: corrupt-factor (perturb the factor before --check, which then fails: exit 1) | "
                  "internal-error (raise an internal error after the factorization: exit 5)");
  run->add_flag(
      "--sim-data", backend.sim_data,
      "simulated run on real data: also run every kernel, so --check works (default: phantom kernels, no matrix)");
  tessera::NoiseArgs noise_args;
  tessera::add_noise_options(*run, noise_args);
  std::string fail_spec;
  auto* fail_opt = run->add_option(
      "--fail", fail_spec,
      "simulated run (--backend sim): turn a host or link of the simulated machine off at a simulated time, "
      "nodeK@SECONDS (node K of the run) or link:NAME@SECONDS (NAME: nodeK-net, node K's network link; "
      "nodeK-gpuG-pcie, the PCIe link of its GPU G, from 1), e.g. node2@0.5. A node's failure ends the run at once, "
      "a link's when a message or GPU copy crosses it; either exits 5 naming it and the time. A failure after the "
      "run's end never happens (exit 0, and a line says so)");

  tessera::CalibrateCommand calibrate(app);
  tessera::ModelCommand model(app);
  tessera::TuneCommand tune(app);

  // A first word that names no command (CLI11 would only say one is required).
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* c : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || c->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + c->get_name();
    }
    if (!known) {
      say(fmt::format("tessera: error: '{}' is not a command: one of {}", argv[1], names));
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    tessera::refuse_saturated_integers(app);
    if (precision.size() != 1) throw tessera::InputError("--precision '" + precision + "' is not one of: d, s");
    if (seed_opt->count()) cfg.seed = tessera::parse_count("--seed", seed_text);
    if (window_opt->count()) cfg.window = tessera::parse_count("--window", window_text);
    if (gpu_memory_opt->count()) cfg.emulated.memory_bytes = tessera::parse_count("--gpu-memory", gpu_memory_text);
    // Given sizes and counts are >= 1 (a given --n is never the "not given" marker).
    for (const auto& [o, v] : {std::pair{n_opt, cfg.n}, {m_opt, cfg.m}, {nodes_opt, tessera::index_t{backend.nodes}}})
      if (o->count() && v < 1) throw tessera::InputError(o->get_name() + " " + o->as<std::string>() + " must be >= 1");
    if (nice_opt->count() && (cfg.compute_nice < 0 || cfg.compute_nice > 19))
      throw tessera::InputError("--compute-nice " + std::to_string(cfg.compute_nice) + " must be within 0..19");
    if (qr_domain_opt->count() && cfg.qr_domain < 0)
      throw tessera::InputError("--qr-domain " + std::to_string(cfg.qr_domain) + " must be >= 0");
    cfg.precision = precision[0];
    // Every choice that selects code becomes an enum here, once (experiments/driver.hpp).
    cfg.impl = tessera::parse_impl(impl_name);
    cfg.broadcast = tessera::parse_broadcast(broadcast);
    cfg.eviction = tessera::parse_eviction(eviction);
    cfg.gpu_qr_panel = tessera::parse_qr_panel(qr_panel);
    cfg.gpu_warmup = tessera::parse_warmup(warmup);
    cfg.device = tessera::parse_device_kind(device_name);
    backend.backend = tessera::parse_backend(backend_choice);
    if (!grid.empty()) std::tie(cfg.pr, cfg.pc) = tessera::parse_grid(grid);
    if (!b_opt.empty()) {
      const auto b = tessera::parse_size_or_auto("--b", "a width", b_opt);
      if (b) cfg.b = *b;
      else cfg.auto_b = true;
    }
    // With GPUs, a node's cores are shared as in 000 §5.3: one manager
    // thread per GPU, one device communication thread, one MPI thread, and
    // n - g - 2 compute threads.
    backend.threads_from_cores = threads_opt->count() == 0 && cfg.gpus > 0;
    // --gpu-memory also sets a simulated GPU's memory (what-if runs, out of core).
    // ... and caps what a CUDA GPU may use (out of core on a GPU whose memory the matrix fits).
    const bool sim_gpus = backend.backend == tessera::Backend::Sim, cuda = cfg.device == tessera::DeviceKind::Cuda;
    if ((sim_gpus || cuda) && gpu_memory_opt->count() > 0) {
      if (cfg.emulated.memory_bytes < 1) throw tessera::InputError("--gpu-memory 0 must be >= 1 byte");
      (sim_gpus ? backend.gpu_memory : cfg.gpu_memory_cap) = cfg.emulated.memory_bytes;
    }
    backend.noise = tessera::parse_noise(noise_args, backend.backend);
    if (fail_opt->count() > 0) {
      backend.fail = tessera::parse_fail_option(fail_spec);
      if (backend.backend != tessera::Backend::Sim)
        throw tessera::InputError("--fail " + fail_spec +
                                  " turns off a host or link of a simulated machine: add --backend sim --machine FILE");
    }
    if (backend.backend == tessera::Backend::Sim)
      for (const CLI::Option* o : {device_opt, gpu_bw_opt, gpu_lat_opt})
        if (o->count() > 0)
          throw tessera::InputError(o->get_name() + " " + o->as<std::string>() +
                                    " describes the GPUs of a native run; a simulated GPU is the machine file's");
    if (model.chosen()) return model.run();
    if (tune.chosen()) return tune.run();
    // A value equal to a field's "not given" marker would read as not given (the default, silently);
    // --n and --m are checked above (a given value below 1).
    if (*run)
      for (const auto& [name, given, unset, rule] :
           {std::tuple{"--v", cfg.v, tessera::RunConfig::kUnsetV, ">= 1"},
            std::tuple{"--gpu-qr-group", cfg.gpu_qr_group, tessera::RunConfig::kUnsetGroup, ">= 0"}})
        if (run->get_option(name)->count() > 0 && given == unset)
          throw tessera::InputError(std::string(name) + " " + std::to_string(given) + " must be " + rule);
    tuning.s_given = s_opt->count() > 0;
    tuning.dist_given = run->get_option("--dist")->count() > 0;
    tuning.simulated = backend.backend == tessera::Backend::Sim;
    tuning.machine = backend.machine;
    tuning.threads_from_cores = backend.threads_from_cores;
    if (window_opt->count()) tuning.window = window_text;
    for (const char* name : {"--gpu-streams", "--gpu-memory", "--eviction", "--gpu-kernel-depth"})
      if (const CLI::Option* o = run->get_option(name); o->count() > 0)
        tuning.gpu_args.insert(tuning.gpu_args.end(), {name, o->as<std::string>()});
    if (cfg.keep_tiles) tuning.gpu_args.emplace_back("--keep-tiles");  // (--keep-tiles=false counts as given)
    using tessera::platform::MpiNetwork;
    if (*run && tuning.B == "auto" && !tuning.simulated && MpiNetwork::launched_by_mpirun() &&
        MpiNetwork::distributed(cfg.pr * cfg.pc))
      throw tessera::InputError(
          fmt::format("--B auto under mpirun (OMPI_COMM_WORLD_SIZE={}) would tune on every rank: "
                      "tune once (tessera tune --out FILE) and pass --tuned FILE",
                      MpiNetwork::mpirun_ranks()));
    if (*run) {
      tessera::refuse_idle_options(*run, cfg, backend.backend, impl_name);
      for (const auto& [name, path] :
           {std::pair{"--json", &json_path}, {"--trace", &trace_path}, {"--progress-file", &progress_path}})
        if (run->get_option(name)->count() > 0 && path->empty())
          throw tessera::InputError(std::string(name) + " '': give a file");
    }
    if (*run) tessera::apply_tuning(cfg, tuning);
    if (*run && !b_opt.empty() && b_opt != "auto" && cfg.s == 1)
      throw tessera::InputError("--b " + b_opt + " sizes the narrow columns of --s > 1, and the run has --s 1");
    if (*run) return run_command(cfg, backend, json_path, policy, trace_path, progress_path, tuning.tuned);
    if (calibrate.chosen()) return calibrate.run(argc, argv);
  } catch (const Reported& r) {
    return r.status;
  } catch (...) {
    // One mapping from error to status (tessera::exit_status_of), one line.
    const std::exception_ptr e = std::current_exception();
    say(error_line(e, cfg, backend.backend == tessera::Backend::Sim && !backend.sim_data));
    return tessera::exit_status_of(e);
  }
  return 0;
}

// A standard output that takes nothing (closed, a full device) loses the summary line, the only result of a run
// without --json: said on stderr, and the status is not 0.
int main(int argc, char** argv) {
  const int status = run_main(argc, argv);
  if (std::cout.flush() && std::ferror(stdout) == 0) return status;
  struct stat st {};
  say_error(std::string("standard output: ") +
            (fstat(STDOUT_FILENO, &st) != 0 ? "closed" : "a write failed (a full device?)") + ": the output was lost");
  return status == 0 ? 2 : status;
}
