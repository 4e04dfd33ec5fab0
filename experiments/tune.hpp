#pragma once
// The tile-size tuner (`tessera tune`, `tessera run --B auto`), after 001
// §4.2 and 000 App. A.1, in three steps:
//
//   1. B: the dominant kernel's speed (GEMM for Cholesky, SSRFB for QR, ...)
//      at square B×B×B tiles over a search range; the plateau is the
//      smallest B reaching `plateau_fraction` of the range's best speed
//      (the papers search 256..2048 for a GPU, here up to the largest tile a
//      calibrated GPU model measured where larger; 128..640 for a CPU core).
//      The candidates are the plateau and the larger sizes of the range. Speeds come from timing the kernel on this
//      machine with `threads` copies running at once (a native run), or from
//      the machine file's kernel model (a simulated run, or a node's GPUs).
//   2. b and s: each candidate B with s = 1..max_s; with GPUs b is the
//      host/GPU balance width B_h/(s-1) (`--b auto`, models/balance.hpp),
//      without them the runtime's default B/(2s). With GPUs on one node,
//      Cholesky and QR also try every column on the GPUs (`--dist
//      gpu-columns --B n --s S --b W`: one tile row, columns of W = 512,
//      1024, 2048, 4096 up to the range's end, at least two of them), which
//      on the lent H100 ran QR at 25.86 TFlop/s with columns of 2048 where
//      its best square tiles ran at 19.56 (2026-11-27 evening; both with
//      Cholesky QR panels and two streams, which `tessera tune
//      --gpu-qr-panel cholqr --gpu-streams 2` gives its real runs).
//   3. Refinement, cheapest trustworthy measurement first: every candidate
//      is simulated at the run's size on the machine file's model (001
//      refines by running the factorization; a simulation costs a fraction
//      of a real run and orders the candidates); then, for a native run and
//      within a time budget, candidates run for real in that order (the best
//      of each s first), the fastest few again, and the fastest real run
//      decides (a prediction off by a few percent can misrank candidates a
//      few percent apart; a real run cannot). Where real runs are cheap the
//      tuner thus measures most of its candidates; where they are dear the
//      model's order decides which few.
//
// Every simulation and real run is a child `tessera run` process (SimGrid
// allows one simulation per process, and a real run must not inherit the
// tuner's warm caches or threads); a failed one is recorded and skipped.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tessera {

struct KernelSpeed {
  std::int64_t B = 0;
  double gflops = 0;
};

// The smallest B of `curve` (sorted by B) whose speed reaches `fraction` of
// the curve's maximum. Throws InputError on an empty curve or no positive speed.
std::int64_t plateau_size(const std::vector<KernelSpeed>& curve, double fraction);

// --B-range's sizes: min, min + step, ... up to max (min <= max, step >= 1),
// stepping nowhere past int64's end.
std::vector<std::int64_t> range_sizes(std::int64_t min, std::int64_t max, std::int64_t step);

// The most sizes of --B-range times --max-s a tuning takes.
inline constexpr int kMaxTuneCandidates = 1024;

struct TuneCandidate {
  std::int64_t B = 0;
  int s = 1;
  bool auto_b = false;                        // b from the host/GPU balance (--b auto); else the run's default
  std::int64_t b = 0;                         // with auto_b: the width its simulation resolved (0: none ran)
  std::optional<double> predicted_s, real_s;  // real_s: the best of real_runs runs
  int real_runs = 0;
  std::string failed;     // why its simulation or real run failed (empty: it did not)
  int failed_status = 0;  // that run's exit status
  // --dist gpu-columns: B is the order, b (not auto) the columns' width.
  bool gpu_columns = false;
};

// Step 2: the first `sizes` B of `curve` (sorted by B; 0: all) from
// `plateau` on that are at most `max_B` (larger tiles are on the plateau
// too, and fewer of them may balance better), times s = 1..max_s (with GPUs s >= 2 takes b
// from the balance formula); `max_B` alone when the plateau is wider than the matrix.
std::vector<TuneCandidate> tune_candidates(const std::vector<KernelSpeed>& curve, std::int64_t plateau, int sizes,
                                           int max_s, int gpus, std::int64_t max_B);

// Step 2 for a tall matrix (m >= 8n, no GPUs): tiles as tall as a 32nd, a
// 16th and an 8th of a thread's rows (multiples of 64) with 256-wide columns
// (s = B/256), the sizes above `above` only. A tournament's leaves are the
// panel's tile rows and it merges m/B - 1 pairs of them, so on a tall matrix
// short tiles spend most of the time merging (README, LU: 65,536 x 1,024 at
// B = 256 ran at half of getrf's speed, at B = 2048, s = 8 at getrf's).
// They are candidates like the others: the model and the real runs decide.
std::vector<TuneCandidate> tall_candidates(std::int64_t m, std::int64_t n, int threads, int gpus, std::int64_t above);

// Step 2 with every column on the GPUs (an n x n matrix, gpus > 0): B = n,
// columns of width W = 512, 1024, 2048, ... up to `widest` (the range's
// end) that leave at least two of them, s = ceil(n / W) (the last one
// n - (s - 1) W wide), narrowest first (the first `sizes` of them; 0: all).
// Not the dominant kernel's plateau: these columns' kernels are tall panels
// and updates whose GEMMs have W as their inner size, not square tiles.
std::vector<TuneCandidate> gpu_column_candidates(std::int64_t widest, int sizes, std::int64_t n, int gpus);

struct TuneRequest {
  std::string algo = "cholesky";
  char precision = 'd';
  std::int64_t m = 0, n = 0;  // m = 0: n
  int threads = 1, gpus = 0;
  std::int64_t ib = 32;
  std::string machine;     // machine file: the model of step 3's simulations (and of the curve of a simulated run)
  bool simulated = false;  // tuning a simulated run: no real runs, the curve from the model
  // A native run's GPUs (with gpus > 0): cuda | emulated, the --device of its
  // real runs, which run each candidate with the narrow width its simulation
  // resolved (a native CUDA run cannot resolve --b auto: it has no model).
  std::string device;
  // Arguments every child run, simulated and real, gets in addition: the
  // run's own options that shape its task graph or schedule (--tslu-tree, --d, --window).
  std::vector<std::string> graph_args;
  std::string pivot;  // LU's --pivot for every child run, simulated and real (empty: the run's default)
  // Which distributions the candidates use: "" both, where every column on
  // the GPUs applies (GPUs, a square Cholesky or QR: gpu_column_candidates),
  // else multi-level's; "multi-level" or "gpu-columns" that one only (--B
  // auto on a grid's node or with --dist given: multi-level).
  std::string dist;
  // Arguments only the real child runs get: --compute-nice (a simulated run
  // has no threads to lower) and a CUDA GPU's kernel options (--gpu-qr-panel).
  std::vector<std::string> real_args;
  // Step 1's range and plateau.
  std::int64_t B_min = 128, B_max = 640, B_step = 64;
  double plateau_fraction = 0.95;
  // Candidate sizes from the plateau on; 0: every size of the range from it.
  // (With two threads a core's kernels are on their plateau from B = 192,
  // while whole runs were fastest at 384-640, the 2026-11-26 sweeps: the
  // simulations and real runs, not the kernel, tell those apart.)
  int sizes = 0;
  int max_s = 3;
  // Step 3's real runs: in at most `budget_s` seconds (process and matrix
  // set-up included), a first pass over at most `real_top` candidates (0: as
  // many as 60% of the budget allows), then the three fastest up to
  // `real_reps` runs each.
  int real_top = 0;
  int real_reps = 3;
  double budget_s = 60;
  std::string program;                               // the tessera binary children run; default /proc/self/exe
  std::function<void(const std::string&)> progress;  // one line per step and candidate
};

struct TuneResult {
  TuneRequest request;
  std::uint16_t kernel = 0;
  std::string curve_source;  // "measured" | "model"
  std::vector<KernelSpeed> curve;
  std::int64_t plateau = 0;
  std::vector<TuneCandidate> candidates;
  std::size_t chosen = 0;  // index into candidates
  std::string decided_by;  // "real runs" | "simulation" | "kernel plateau"
  std::string blas_core;   // OpenBLAS kernel set the tuner ran with
  double seconds = 0;      // what tuning took
  const TuneCandidate& choice() const { return candidates.at(chosen); }
};

// Throws InputError for a bad request (naming the option and value).
TuneResult tune(const TuneRequest& r);

// A candidate as `tessera run` options, for the "tuned: ..." lines: "--B 4096 --s 1",
// "--B 1152 --s 2 --b auto", "--dist gpu-columns --B 32768 --s 16 --b 2048".
std::string tuned_args(const TuneCandidate& c);

// The tuned-configuration file `tessera run --tuned FILE` reads.
nlohmann::json tune_json(const TuneResult& t);

struct TunedChoice {
  std::string algo;
  char precision = 'd';
  std::int64_t n = 0, B = 0;
  int s = 1, threads = 1, gpus = 0;
  bool auto_b = false;
  std::int64_t b = 0;  // with auto_b: the width the simulation resolved, which a native CUDA run takes (0: unknown)
  bool gpu_columns = false;  // --dist gpu-columns with columns of width b
};
// Reads FILE (InputError naming it and what is wrong).
TunedChoice read_tuned(const std::string& path);

// A child `tessera run`: its exit status, the last line it wrote to stderr
// and, when it succeeded, the time_s of the JSON it wrote.
struct ChildRun {
  int status = -1;
  std::string error;
  std::optional<double> time_s;
  std::optional<std::int64_t> b;  // the narrow width it ran with
};
ChildRun run_child(const std::string& program, const std::vector<std::string>& args);

// The table `tessera tune` prints: the kernel curve, every candidate and the
// choice (experiments/tune_report.cpp).
std::string tune_report(const TuneResult& t);

}  // namespace tessera
