"""Round 7: the command line and drivers, the runtime's headers and platforms, the analysis scripts and the StarPU
peer, each proposed by a reviewer who read code no mutant covered."""
from mutant_sets.common import *  # noqa: F401,F403 (m, the selections, the paths)

MAIN, DRV, OUT = "experiments/tessera_main.cpp", "experiments/driver.cpp", "experiments/output_path.cpp"
INP, TUNE, PRE = "experiments/input_matrix.cpp", "experiments/tune_command.cpp", "experiments/preflight.cpp"
CFG, SIM, DIST = "experiments/run_config.cpp", "experiments/run_simulated.cpp", "experiments/run_distributed.cpp"
KTC = "base/kernel_table.cpp"
NP = "platform/native/native_platform.cpp"
HMD = "platform/native/host_memory_device.hpp"
KC = "experiments/kernel_call.hpp"
CF = "algorithms/cholesky_factorization.cpp"
TCP = "analysis/trace_critical_path.py"
TG = "analysis/trace_gantt.py"
PE = "analysis/plot_experiment.py"
EP = "experiments/explore_plot.py"
OU = "experiments/runner/outputs.py"
SP = "experiments/starpu_peer.cpp"
KNH = "models/kernel_noise.hpp"
TH = "experiments/tune.hpp"
CIR = "experiments/calibrate_in_run.hpp"
CP_TESTS = '-R "experiments_(trace_compare|trace_views|bad_input)"'
GANTT_TESTS = '-R "experiments_(trace_views|bad_input)"'

MUTANTS = [
    # --- Proposed by a reviewer of the command line and drivers (tessera_main, driver, output_path, input_matrix,
    # tune_command, preflight, run_config, run_simulated, run_distributed).
    # ---------------------------------------------------------------- tessera_main.cpp
    # Bug: a native run no longer refuses --nodes (the check names --machine, --nodes and --sim-data, but
    # --nodes is left out of the condition), so `--nodes 4` without --backend sim quietly runs one native node.
    # Prediction: SURVIVES. The only --nodes cases are simulated ones (CliOutputs.UnsignedAndSizeOptionsRefuse...
    # --nodes 0 and CliClaims2.SimulatedRunsRefuseWhatTheyCannotDo --nodes 3 --grid 1x2); the native refusal is
    # tested only with --machine (CliClaims2.NativeRunsRefuseSimulatedOptionsAndBadPairs); cli_fuzz never gives --nodes.
    # Observable: `tessera run --algo cholesky --n 300 --nodes 4` exits 0 (one node, no grid) instead of 2.
    # Test: expect_rejected(kInvalidInput, base({"--n", "300", "--nodes", "4"}), {"--nodes", "--backend sim"})
    # (and the same for "--sim-data").
    # Killed since by CliClaims4.NativeRunsRefuseNodesAndSimData.
    m("main_native_accepts_nodes", MAIN,
      "    if (!b.machine.empty() || b.sim_data || b.nodes != 0)",
      "    if (!b.machine.empty() || b.sim_data)", '-L cli'),

    # Bug: an empty --trace is no longer refused (dropped from the list of outputs that need a file name), so
    # `--trace ''` runs and writes no trace.
    # Prediction: SURVIVES. Only `--json ''` (CliOutputs.OptionsThatWouldChangeNothingAreRefused) and
    # `--progress-file ''` (CliClaims3.OptionsThatChangeNothingAreRefused) are tested.
    # Observable: `tessera run --algo cholesky --n 64 --trace ''` exits 0 and writes nothing instead of exit 2
    # "--trace '': give a file".
    # Test: expect_rejected(kInvalidInput, base({"--n", "64", "--trace", ""}), {"--trace ''", "give a file"}).
    # Killed since by CliClaims4.EmptyTraceIsRefused.
    m("main_empty_trace_accepted", MAIN,
      '{std::pair{"--json", &json_path}, {"--trace", &trace_path}, {"--progress-file", &progress_path}})',
      '{std::pair{"--json", &json_path}, {"--progress-file", &progress_path}})', '-L cli'),

    # Bug: the refusal of --B auto under mpirun is flipped to simulated runs (`tuning.simulated` for
    # `!tuning.simulated`): a native `--B auto` under mpirun now tunes on every rank (each rank forks its own
    # child runs and may choose other tiles than its peers), the thing the refusal exists to prevent.
    # Prediction: SURVIVES. No test runs --B auto under mpirun (grep "under mpirun would tune": no hit); outside
    # mpirun launched_by_mpirun() is false, so no cli/sim test sees the flip.
    # Observable: `mpirun -np 2 tessera run --algo cholesky --n 512 --grid 1x2 --B auto` no longer exits 2 with
    # "--B auto under mpirun would tune on every rank".
    # Test: under mpirun -np 2 (label mpi), that command: exit 2, the message once per rank, no summary line.
    # Killed since by tessera_mpi_b_auto_refused.
    # (The condition reads the job's size since the environment review: refused in a job of several ranks.)
    m("main_b_auto_under_mpirun_not_refused", MAIN,
      '*run && tuning.B == "auto" && !tuning.simulated && MpiNetwork::launched_by_mpirun()',
      '*run && tuning.B == "auto" && tuning.simulated && MpiNetwork::launched_by_mpirun()', '-L mpi'),

    # Control. Bug: --policy fifo selects the random ready queue.
    # Prediction: KILLED by CliClaims.PolicyChangesOrderNotResult (on the simulated node fifo's order must differ
    # from random's, and fifo must run GSMM_DIAG(0,7,7) before POTF2'(1,1,1)).
    # Run: killed as the tests stood by CliClaims.PolicyChangesOrderNotResult (a control).
    m("main_fifo_policy_is_random", MAIN,
      '  else if (policy == "fifo") cfg.policy = ReadyPolicy::Fifo;',
      '  else if (policy == "fifo") cfg.policy = ReadyPolicy::Random;', '-L cli'),

    # ---------------------------------------------------------------- driver.cpp
    # Bug: the process's CPU time reads the microsecond fields as milliseconds (1e-3 for 1e-6): cpu_s gains
    # up to +-1000 s of noise per reading (the difference of two readings can even be negative).
    # Prediction: SURVIVES. No test reads cpu_s from a real run: test_validate_prediction.py writes its own JSON,
    # and validate-prediction's quick sweep computes cores_got = cpu_s / time_s without checking it.
    # Observable: any run's JSON cpu_s (and validate-prediction's cores_got): e.g. a 1-thread native run of
    # 0.2 s reports cpu_s of hundreds of seconds, or below 0.
    # Test: a native run with --threads 1 (n 1000): 0 <= cpu_s <= 1.5 * time_s + 0.05; with --threads 2 on a
    # machine of >= 2 cores, cpu_s > time_s.
    # Killed since by CliClaims4.CpuSecondsOfASingleThreadedRun.
    m("driver_cpu_s_usec_as_msec", DRV,
      "1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec)",
      "1e-3 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec)", WITH_CLI),

    # Bug: the peak resident memory converts ru_maxrss (KiB) with 1000 instead of 1024.
    # Prediction: SURVIVES. peak_rss_bytes is in the JSON and the cost line ("peak memory N MiB"), which
    # CliClaims2.SimulatedClusterJsonAndCostLine matches only as [0-9.]+; nothing compares the value.
    # Observable: JSON peak_rss_bytes and the simulation cost line 2.3% low (e.g. 1000 MiB reads 977 MiB).
    # Test: run tessera as a child, get its ru_maxrss from wait4(): the JSON's peak_rss_bytes is within
    # [0.995, 1.0] x ru_maxrss * 1024 (the child's final peak is at least the one it reported).
    # Killed since by CliClaims4.PeakRssIsTheProcesssOwnInBytes.
    m("driver_peak_rss_kib_as_1000", DRV,
      "static_cast<std::uint64_t>(u.ru_maxrss) * 1024;",
      "static_cast<std::uint64_t>(u.ru_maxrss) * 1000;", WITH_CLI),

    # ---------------------------------------------------------------- output_path.cpp
    # Bug: check_node_outputs counts node k < nodes as k <= nodes: an output named like the trace of node P
    # (which a P-node run never writes: its nodes are 0..P-1) is refused as "one file" with it.
    # Prediction: SURVIVES. CliOutputs.EveryNodesTraceFileIsCheckedBeforeTheRun gives --json t.node1.json on
    # 1x2 (refused either way); CliClaims3.SimulatedClusterWritesATracePerNode checks no t.node2.json exists but
    # gives no output of that name; mpi_traces.sh gives none either.
    # Observable: `tessera run --backend sim --machine keeneland.json --algo cholesky --n 256 --grid 1x2
    # --trace t.json --json t.node2.json` exits 2 ("... and --trace (node 2) ... are one file") instead of 0.
    # Test: that command succeeds and both t.json, t.node1.json and t.node2.json (the JSON) are written.
    # Killed since by CliClaims4.AnOutputNamedLikeANodeTheRunLacksIsWritten.
    m("output_node_outputs_off_by_one", OUT,
      "if (const std::optional<int> k = node_of(base, p); k && *k < nodes)",
      "if (const std::optional<int> k = node_of(base, p); k && *k <= nodes)", '-L "cli|sim|mpi"'),

    # Control. Bug: a cluster's node traces are not checked for a 2-node run (nodes < 3 for nodes < 2).
    # Prediction: KILLED by CliOutputs.EveryNodesTraceFileIsCheckedBeforeTheRun (--grid 1x2, --json t.node1.json
    # must be refused naming --trace (node 1)).
    # Run: killed as the tests stood by CliOutputs.EveryNodesTraceFileIsCheckedBeforeTheRun (a control).
    m("output_node_outputs_skip_two_nodes", OUT,
      "  if (first.path.empty() || nodes < 2) return;",
      "  if (first.path.empty() || nodes < 3) return;", '-L "cli|sim|mpi"'),

    # ---------------------------------------------------------------- input_matrix.cpp
    # Bug: the symmetry check of a Cholesky --input file loosened from 1e-12 to 1e-6 relative: an asymmetric
    # file whose triangles differ in the 7th digit passes, and the factorization silently uses its lower half.
    # Prediction: SURVIVES. The asymmetric files of the tests differ grossly (CliBadInput.NonSymmetricCholeskyInput:
    # 0.5 against 0.25; input_every_backend.sh's asym.mtx).
    # Observable: a general 2x2 file A(1,1) = A(2,2) = 4, A(2,1) = 1, A(1,2) = 1.0000001 with --algo cholesky:
    # exit 0 instead of exit 2 "needs a symmetric matrix, but A(2,1) = 1 differs from A(1,2) = 1".
    # Test: that file (array format, read whole by a one-node run): expect_rejected(kInvalidInput, ..., {"A(2,1)"}).
    # Killed since by CliClaims4.CholeskyInputMustBeSymmetricToRounding.
    m("input_symmetry_tolerance_loose", INP,
      "if (std::abs(x - y) > 1e-12 * std::max(std::abs(x), std::abs(y)))",
      "if (std::abs(x - y) > 1e-6 * std::max(std::abs(x), std::abs(y)))", '-L "cli|mpi"'),

    # Bug: --matrix no longer refused on a phantom simulated run (the rule reduced to phantom && --check, which
    # resolve() has refused already): the run succeeds and its JSON names a matrix that never existed.
    # Prediction: SURVIVES. No test gives --matrix to a simulated run without --sim-data (grep "fills the matrix":
    # no test); cli_fuzz adds --matrix only to native or --sim-data runs.
    # Observable: `tessera run --algo qr --n 512 --backend sim --machine keeneland.json --matrix graded` exits 0
    # (JSON "matrix": "graded") instead of exit 2 "--matrix graded fills the matrix, which a simulated run has
    # only with --sim-data".
    # Test: expect_rejected(kInvalidInput, sim({"--n", "512", "--matrix", "graded"}), {"--matrix graded",
    # "--sim-data"}); the same with --sim-data runs.
    # Killed since by CliClaims4.PhantomRunsRefuseMatrix.
    m("input_phantom_accepts_matrix", INP,
      '  if (c.phantom)\n    throw InputError("--matrix " + c.matrix + " fills the matrix',
      '  if (c.phantom && c.check)\n    throw InputError("--matrix " + c.matrix + " fills the matrix', '-L "sim|cli"'),

    # ---------------------------------------------------------------- tune_command.cpp
    # Bug: --B-range refuses MIN = MAX (b <= a for b < a), though its own message allows 1 <= MIN <= MAX: a search
    # of one size (to tune s and b at a fixed B) is impossible.
    # Prediction: SURVIVES. The tests give 640:128:64 (refused either way), 128:256:0, 0:256:64, 1:2, and
    # ranges with MIN < MAX that run.
    # Observable: `tessera tune --algo cholesky --n 512 --B-range 256:256:64 --backend sim --machine M --quiet`
    # exits 2 instead of 0 with every candidate at B = 256.
    # Test: that command: exit 0, every candidate's B is 256, the curve has one point.
    # Killed since by CliClaims4.TuneRangeOfOneSize.
    m("tune_b_range_refuses_one_size", TUNE,
      "    if (a < 1 || b < a || c < 1)",
      "    if (a < 1 || b <= a || c < 1)", '-L "cli|experiments"'),

    # Bug: the report's table marks the first candidate "<- chosen" instead of the chosen one.
    # Prediction: SURVIVES. Every tune test passes --quiet (tune_report is never printed under test); only the
    # "tuned:" line and the --out JSON are checked.
    # Observable: without --quiet, when real runs decide (no model, or a real run beats the simulated order),
    # the marked row is not the "tuned: --B B --s S" of the last line.
    # Test: TuneCli.WithoutAModelRealRunsDecide without --quiet, or with children that report scripted times
    # (as RealRunsRepeatTheFastestAndKeepEachOnesBest) making the last candidate fastest: the row ending in
    # "<- chosen" has the B and s of the JSON's choice.
    # Killed since by TuneCli.RealRunsRepeatTheFastestAndKeepEachOnesBest (the table's chosen row).
    m("tune_report_marks_first_as_chosen", "experiments/tune_report.cpp",
      'i == t.chosen ? "  <- chosen" : ""',
      'i == 0 ? "  <- chosen" : ""', '-L "cli|experiments"'),

    # ---------------------------------------------------------------- preflight.cpp
    # Bug: the ranks sharing this host's memory read from OMPI_COMM_WORLD_LOCAL_RANK (the rank's index on the
    # host) instead of OMPI_COMM_WORLD_LOCAL_SIZE: ranks 0 and 1 each count all of MemAvailable as theirs.
    # Prediction: SURVIVES. RanksOnOneHostSplitMemAvailable tests available_memory() with ranks_on_host given; the
    # mpirun tests of the preflight (mpi_host_memory.sh) bind with `ulimit -v`, which is below MemAvailable / 2,
    # so the split is never the least bound.
    # Observable: under `mpirun -np 2` on one host, a --grid 1x2 run whose share exceeds MemAvailable / 2 but not
    # MemAvailable passes the preflight (then swaps or is OOM-killed) instead of exit 4 "MemAvailable ... split
    # between the 2 MPI ranks on this host".
    # Test: mpirun -np 2 tessera run --algo cholesky --grid 1x2 --n N with N^2 * 8 / 2 between 0.6 and 0.9 x
    # MemAvailable (read from /proc/meminfo; skip where that N is absurd): exit 4 naming the split.
    # Killed since by tessera_mpi_memory_split_between_ranks.
    # (The environment is read by MpiNetwork::local_ranks() since c3480b1, for the preflight and the others.)
    m("preflight_ranks_from_local_rank", "platform/native/mpi_network.hpp",
      'mpirun_count("OMPI_COMM_WORLD_LOCAL_SIZE", 1, 1)',
      'mpirun_count("OMPI_COMM_WORLD_LOCAL_RANK", 1, 1)', '-L mpi'),

    # ---------------------------------------------------------------- run_config.cpp
    # Bug: --d eq1 (002 eq. (1)) ignores the GPU count: the GPUs' side has the speed of one GPU whatever --gpus.
    # Prediction: SURVIVES. Only experiments_lu_002_sim runs --d eq1, always with --gpus 1 (opteron6172-s2050 has
    # one GPU), where g2 * 1 = g2.
    # Observable: a simulated LU with --gpus 2 --d eq1 (e.g. keeneland.json, --n 8192 --B 512 --threads 7)
    # keeps the d of one GPU: more columns on the cores than eq. (1) gives for two GPUs (JSON "d").
    # Test: JSON d of --gpus 2 --d eq1 equals models::cpu_block_columns(q, P, g1, 2 g2) and is below --gpus 1's.
    # Killed since by experiments_lu_002_sim (eq1_counts_every_gpu; CliClaims4.LuEq1CountsEveryGpu, outside this
    # selection, too).
    m("run_config_eq1_of_one_gpu", CFG,
      "models::cpu_block_columns(q, c.threads, g1, g2 * c.gpus)",
      "models::cpu_block_columns(q, c.threads, g1, g2)", '-R "experiments_lu_002_sim"'),

    # Bug: QR's default virtual tile height counts the tile rows rounded down (m / B instead of ceil(m / B)).
    # Prediction: SURVIVES. It changes v only when ceil(m/B) is a multiple of 8 Pr and m is not a multiple of B
    # (or m < B: 0 tile rows, refused); the tests' QR grids without --v have few tile rows (700 x 600 B 64 on
    # 2x1: 11 and 10 rows both give v = 1; the equivalence shapes 384/512 at B 96, cli_fuzz up to 25 rows) or give
    # --v.
    # Observable: `tessera run --algo qr --m 2047 --n 512 --B 64 --grid 2x1 --backend sim --machine keeneland.json`
    # reports v=1 (31 rows / 16) instead of v=2 (32 / 16), with other message counts; --m 100 --n 100 --B 128 on
    # 2x1 exits 2 "virtual tile height of 0 tile rows".
    # Test: that command's summary line has v=2 (and its JSON "v" is default_virtual_tile_height(32, 2)).
    # Run: killed as the tests stood, the prediction wrong, by Driver.DefaultTileSizesAreValidForEverySplit (one
    # node with n < B: 0 tile rows, "virtual tile height of 0 tile rows"); the partial-row case v=1 for v=2 is
    # CliClaims4.QrDefaultVirtualHeightCountsThePartialRow's.
    m("run_config_virtual_height_rows_rounded_down", CFG,
      "default_virtual_tile_height(static_cast<int>(ceil_div(c.m, c.B)), c.pr)",
      "default_virtual_tile_height(static_cast<int>(c.m / c.B), c.pr)", '-L "sim|cli|mpi|numerics|experiments"'),

    # ---------------------------------------------------------------- run_simulated.cpp
    # Bug: a sigma of exactly kMaxNoiseSigma (2) is refused: `x >= kMaxNoiseSigma` for `x > kMaxNoiseSigma`,
    # though the help and the message say "at most 2" / "a number from 0 to 2".
    # Prediction: SURVIVES. KernelNoise's bad-value cases give 2.5, -0.1, inf; the good runs use 0.05-0.3
    # (cli_fuzz 0.2, 000-fig6-unequal-nodes 0.05).
    # Observable: `--kernel-noise 2` (or --node-noise 2) on a simulated run exits 2 instead of running.
    # Test: sim run with --kernel-noise 2 --node-noise 2: exit 0; 2.0000001: exit 2 naming it.
    # Killed since by CliClaims4.NoiseSigmaOfTwoIsAllowed.
    m("sim_noise_sigma_max_excluded", SIM,
      "|| x < 0 || x > kMaxNoiseSigma)",
      "|| x < 0 || x >= kMaxNoiseSigma)", '-L "sim|cli|experiments"'),

    # Bug: --noise-seed alone on a native run is no longer refused (left out of the condition).
    # Prediction: SURVIVES. The native refusal is tested with --kernel-noise 0.1 only (test_kernel_noise.cpp's
    # last bad case); cli_fuzz gives noise options to simulated runs only.
    # Observable: `tessera run --algo cholesky --n 64 --noise-seed 3` exits 0 instead of 2 "... vary a simulated
    # run's kernel times: add --backend sim --machine FILE".
    # Test: that command (and --node-noise 0.1 alone): expect_rejected(kInvalidInput, ..., {"--noise-seed",
    # "add --backend sim"}).
    # Killed since by CliClaims4.NoiseOptionsEachRefusedNatively.
    m("sim_noise_seed_native_accepted", SIM,
      "if ((given(args.kernel_opt) || given(args.node_opt) || given(args.seed_opt)) && backend != Backend::Sim)",
      "if ((given(args.kernel_opt) || given(args.node_opt)) && backend != Backend::Sim)", '-L "sim|cli"'),

    # Bug: a --fail link that went off but that nothing crossed afterwards is said to have gone off at the run's
    # end (sim.clock()) instead of at its failure time.
    # Prediction: SURVIVES. sim_failures.sh tests the line of a failure after the run's end ("never happened") and
    # links that a message crossed (exit 5); no case turns a link off that nothing crosses later.
    # Observable: the stdout line "failure: --fail link:node1-net@T: link node1-net was turned off at X s of
    # simulated time, but nothing crossed it afterwards" has X = the run's simulated end instead of T.
    # Test: a 1x2 simulated run: take the last message's arrival time from a first run's trace; a second run with
    # --fail link:node1-net@t (t between it and the run's end): exit 0 and the line names t.
    # Killed since by SimCluster.ALinkNothingCrossesAfterwardsIsNamedAtItsTime.
    m("sim_fail_note_time_of_run_end", SIM,
      "f.spec, f.name, *t);",
      "f.spec, f.name, sim.clock());", '-L sim'),

    # ---------------------------------------------------------------- run_distributed.cpp
    # Bug: require_fits refuses a tile exactly as large as a GPU's memory (>= for >), though the device holds it
    # (HostMemoryDevice::allocate refuses only bytes > capacity - used; GpuRuntime.* tests allocate exactly up to
    # the capacity).
    # Prediction: SURVIVES. The tests' small GPUs are far below a tile (--gpu-memory 1000, 200000 for 115200-byte
    # tiles of which a task needs three) or far above; none gives exactly one tile's bytes.
    # Observable: `tessera run --algo cholesky --n 64 --B 64 --gpus 1 --gpu-memory 32768` (one 32768-byte tile,
    # POTF2' alone) exits 2 "a tile of 32768 bytes does not fit in the 32768 bytes of GPU 1" instead of 0.
    # Test: that command succeeds (and with --gpu-memory 32767 exits 2 naming the tile).
    # Killed since by CliClaims4.ATileAsLargeAsTheGpusMemoryFits.
    m("distributed_tile_of_exact_capacity_refused", DIST,
      "if (store.bytes(static_cast<DataId>(x)) > d.capacity())",
      "if (store.bytes(static_cast<DataId>(x)) >= d.capacity())", '-L "runtime|sim|numerics|cli|mpi"'),
    # --- Proposed by a reviewer of the runtime, platforms and kernel table (kernel_table, lu, cholesky_factorization, native_platform,
    # tile_data_store, host_memory_device, kernel_call).
    # ---------------------------------------------------------------- base/kernel_table.cpp
    # Bug: TTQRT's flop formula has m and n swapped in its leading term (2mn^2 for 2nm^2), the classic mix-up of
    #   the triangle's order with the trapezoid's rows.
    # Prediction: SURVIVES. The only test of the formula (test_qr_binary_tree's ratio to TSQRT) uses m = n = 300,
    #   where both terms agree; no sim test pins a binary-tree QR makespan (SimCluster.QrBinaryTreeMessagesFollow...
    #   counts messages, the tessera_sim_qr_binary_tree_* tests only check ` ok`), and the GPU warm-up test only
    #   asks that a TTQRT shape is warmed.
    # Observable: every TTQRT whose b-side is a short last tile row (m = tt_rows < n = w_k), e.g. m = 58, n = 64:
    #   174,619 flops -> 219,163 (+26%), so the simulated time of `tessera run --algo qr --m 1500 --n 600 --B 64
    #   --qr-tree binary --qr-domain 1 --backend sim --machine keeneland.json` (last tile row 28 tall) grows.
    # Test: in test_qr_binary_tree, EXPECT_DOUBLE_EQ(kernel_flops({kTtqrt, 'd', 20, 30, 0}),
    #   2*30*20*20 - 4*20*20*20/3.0 + 2*20*10*10) (a hand count of a trapezoid, m < n).
    # Killed since by KernelTable.ReductionTreeFlopsAreTheSumsOverTheirReflectors.
    m("kt_ttqrt_trapezoid_dims_swapped", KTC,
      "[](double m, double n, double /*k*/) { return 2 * n * m * m - 4 * m * m * m / 3 + 2 * m * (n - m) * (n - m); }",
      "[](double m, double n, double /*k*/) { return 2 * m * n * n - 4 * m * m * m / 3 + 2 * m * (n - m) * (n - m); }",
      WITH_CLI),

    # Bug: TTMQR's branch test is flipped (m <= k for m >= k): a pair whose lower triangle has fewer rows than the
    #   panel is width (m < k, a short last tile row) is counted as a full k x k triangle, 2nk^2.
    # Prediction: SURVIVES. test_qr_binary_tree checks TTMQR at m = k = 300 only, where both branches give 2nk^2
    #   (and tt_rows never makes m > k); no test pins a binary-tree makespan.
    # Observable: TTMQR with m = 8, n = 64, k = 64 (a last tile row of 8): 122,880 flops -> 524,288 (4.3x): the
    #   simulated time of a binary-tree QR whose m is 8 past a multiple of B (e.g. --m 1480 --n 600 --B 64
    #   --qr-tree binary --qr-domain 1 --backend sim --machine keeneland.json) grows.
    # Test: EXPECT_DOUBLE_EQ(kernel_flops({kTtmqr, 'd', 8, 64, 64}), 2*64*8*8 + 4*8*64*56) beside the m = k case.
    # Killed since by KernelTable.ReductionTreeFlopsAreTheSumsOverTheirReflectors.
    m("kt_ttmqr_short_rows_comparison_flipped", KTC,
      '{kTtmqr, "TTMQR", "ttmqr",\n     [](double m, double n, double k) { return m >= k ?',
      '{kTtmqr, "TTMQR", "ttmqr",\n     [](double m, double n, double k) { return m <= k ?',
      WITH_CLI),

    # Bug: LU_TRSM_U's count is mn^2 instead of m^2n (L is m x m, A is m x n): the dimensions of the triangle and
    #   of the block it solves are swapped.
    # Prediction: SURVIVES. test_kernel_table's FlopsOfKnownShapes has no LU kernel; every LU sim test
    #   (LuSimulated, SimGpuStreamsRuns.RealDataPassesTheCheck, CalibrateCli.LuKernelsAreListedAndDriveASimulatedRun)
    #   checks time_s > 0 or the residual only, and lu_002_sim's --d auto comes from models/lu_split (own flop counts)
    #   and LU_GEMM's speed, not from LU_TRSM_U.
    # Observable: TRSM_U of panel column k (w_k = 96) on a narrower column j (the last, 28 wide, of --n 700 --B 96):
    #   96*96*28 = 258,048 flops -> 96*28*28 = 75,264; any LU sim with s > 1 or n % B != 0 changes its time_s.
    # Test: EXPECT_DOUBLE_EQ(kernel_flops({kLuTrsmU, 'd', 30, 20, 0}), 30.0*30*20) in FlopsOfKnownShapes (and the
    #   other LU rows: LU_TRSM_L m n^2, LU_GEMM 2mnk, LU_PANEL/LU_DIAG m n^2 - n^3/3).
    # Killed since by KernelTable.FlopsOfKnownShapes.
    m("kt_lu_trsm_u_dims_swapped", KTC, "[](double m, double n, double /*k*/) { return m * m * n; }",
      "[](double m, double n, double /*k*/) { return m * n * n; }", WITH_CLI),

    # Bug: LU_PANEL (GEPP of the gathered panel) counted with Householder QR's 2mn^2 - 2n^3/3 (a copy of GEQRT's
    #   row): twice GEPP's flops.
    # Prediction: SURVIVES. No test has an LU flop count; LU sim tests check time_s > 0 or the residual; the lent
    #   H100's 2048 panel (MachineFiles.LentH100NodeLoadsWithLuPanels) is an exact measured shape, found before any
    #   flop-based interpolation.
    # Observable: every simulated LU with partial pivoting (the default) on a peak-efficiency machine file: each
    #   PANEL takes twice as long, e.g. `tessera run --algo lu --n 2000 --B 200 --backend sim --machine
    #   opteron6172-s2050.json --threads 12` reports a larger time_s; `calibrate` overlap rates for LU_PANEL double.
    # Test: in FlopsOfKnownShapes, EXPECT_DOUBLE_EQ(kernel_flops({kLuPanel, 'd', 30, 20, 0}), 30.0*400 - 8000/3.0).
    # Killed since by KernelTable.FlopsOfKnownShapes.
    m("kt_lu_panel_householder_count", KTC,
      '"lu_panel", [](double m, double n, double /*k*/) { return m * n * n - n * n * n / 3; }',
      '"lu_panel", [](double m, double n, double /*k*/) { return 2 * m * n * n - 2 * n * n * n / 3; }', WITH_CLI),

    # Control. Bug: LARFB_Q loses its rate proxy (LARFB), so a calibrated model, which never measures LARFB_Q,
    #   has no rate for forming Q.
    # Prediction: KILLED by CliOutputs.SimulatedQrChecksOnACalibratedMachine (sim QR --check on local.json must
    #   exit 0; the model throws "has no measurement of kernel larfb_q" and the run exits 2).
    # Run: killed as the tests stood by CliOutputs.SimulatedQrChecksOnACalibratedMachine (a control).
    m("kt_larfb_q_no_rate_proxy", KTC, "    case kLarfbQ: return kLarfb;\n", "", WITH_CLI),

    # ---------------------------------------------------------------- algorithms/lu.hpp
    # Bug: LuExecutor::shape hands the kernel models and traces the other precision ('s' for a double run, 'd'
    #   for a single one): the ternary's branches swapped.
    # Prediction: SURVIVES. Only QrExecutor's precision is checked in a trace (test_trace: QR in single precision);
    #   no test traces LU; LU --sim-data runs (LuSimulated, SimGpuStreamsRuns) check the residual and time_s > 0, and
    #   Keeneland's and the Opteron's models have both precisions, so nothing throws; phantom LU runs use
    #   Factorization::shape with the run's precision and are unaffected.
    # Observable: `tessera run --algo lu --n 960 --B 96 --backend sim --machine keeneland.json --sim-data` reports
    #   a time_s different from the same run without --sim-data (single-precision rates); a native `tessera run --algo
    #   lu --trace t.json` writes "precision":"s" in every task; `calibrate --in-run` would file LU's double calls as
    #   single-precision entries.
    # Test: trace a native double LU (n 300, B 64) and assert every task's args.precision == "d"; or assert that a
    #   simulated LU's time_s is the same with and without --sim-data (as SimTime.SimDataDoesNotChangeSimulatedTime
    #   does for Cholesky).
    # Killed since by CliClaims4.LuTasksCarryTheRunsPrecision.
    m("lu_executor_shape_precision_swapped", "algorithms/lu.hpp",
      "return lu_shape(a_.layout(), t, sizeof(T) == 8 ? 'd' : 's'); }",
      "return lu_shape(a_.layout(), t, sizeof(T) == 8 ? 's' : 'd'); }", WITH_CLI),

    # Control. Bug: --pivot tournament without --tslu-tree runs the flat tree (the documented default is binary).
    # Prediction: KILLED by LuBuffersSize.TileSizeBeyondTheMatrixIsBoundedByIt (a tournament case with no tree given:
    #   expect_checked wants "tree=binary" in the variant).
    # Run: killed as the tests stood by LuBuffersSize.TileSizeBeyondTheMatrixIsBoundedByIt (a control).
    m("lu_default_tslu_tree_flat", "algorithms/lu.hpp", "  LuTree tree = LuTree::Binary;",
      "  LuTree tree = LuTree::Flat;", WITH_CLI),

    # ---------------------------------------------------------------- platform/native/native_platform.cpp
    # Bug: a thread that cannot be started (std::system_error, EAGAIN) is reported as a plain runtime_error, not as
    #   OutOfMemory: the command exits 5 "tessera: internal error: cannot start the thread ..." instead of 4
    #   "tessera: error: ...".
    # Prediction: SURVIVES. No test makes std::thread fail: the preflight refusals (CliPreflight.*) stop the run
    #   before any thread is spawned, and grep "cannot start the thread" in tests/ finds nothing.
    # Observable: `ulimit -v` set just above what preflight counts (or a process limit for a non-root user) so that
    #   the Nth compute thread's stack cannot be mapped: exit 4 and "out of memory"-class message -> exit 5.
    # Test: in a forked child, setrlimit(RLIMIT_AS) to the current VmSize + a few MiB, then NativePlatform::spawn 64
    #   compute threads: EXPECT_THROW(..., OutOfMemory) with "cannot start the thread" in what().
    # Killed since by NativePlatform.AThreadThatCannotStartIsOutOfMemory.
    m("native_thread_start_failure_not_out_of_memory", "platform/native/start_thread.hpp",
      "    throw OutOfMemory(\"cannot start the thread '\" + name + \"'\" + context + \": \" + e.what()",
      "    throw std::runtime_error(\"cannot start the thread '\" + name + \"'\" + context + \": \" + e.what()", WITH_CLI),

    # Bug: --compute-nice lowers every thread but the generator: the GPU managers and the device communication
    #   thread run N levels down too (role != Generator for role == Compute), which starves exactly the threads
    #   the option exists to keep responsive.
    # Prediction: SURVIVES. NativePlatform.ComputeThreadsRunTheGivenNiceLevelsBelowTheOthers runs without GPUs and
    #   checks only the compute threads (tasks) and the generator; the CLI tests only refuse bad levels.
    # Observable: `tessera run --algo cholesky --n 1200 --B 120 --gpus 1 --compute-nice 5`: the "gpu1" and
    #   "gpu-comm" threads show nice +5 in /proc/self/task/*/stat (they should stay at the process's level).
    # Test: the same NiceRecorder test on a one-node run with one emulated GPU (DistContext, LocalCluster(1)): tasks
    #   whose main output lives on the GPU (run on its manager thread) must record the base level, host tasks
    #   base + levels; an observer's on_copy (the device communication thread) must see the base level too.
    # Killed since by NativePlatform.OnlyComputeThreadsGoDownAndRelativeToTheirStarter.
    m("native_compute_nice_lowers_gpu_threads", NP, "  if (role == ThreadRole::Compute && compute_nice_ > 0) {",
      "  if (role != ThreadRole::Generator && compute_nice_ > 0) {", '-L "runtime|cli"'),

    # Bug: the compute threads' nice value is set to `levels` itself, not `levels` below the thread's current one
    #   (min(19, levels) for min(19, now + levels)).
    # Prediction: SURVIVES. The test runs at nice 0 (ctest does not renice), where both give `levels`.
    # Observable: `nice -n 5 tessera run --algo cholesky --n 2000 --threads 4 --compute-nice 3`: the compute threads
    #   should run at 8; with the mutant they ask for 3, which a non-root user is refused (they stay at 5, not lowered
    #   at all) and root gets (compute threads now above the generator at 5).
    # Test: in ComputeThreadsRunTheGivenNiceLevelsBelowTheOthers, first setpriority the calling thread to base + 2
    #   (threads inherit it), then expect tasks at min(19, base + 2 + levels), the generator at base + 2; restore.
    # (Builds with one -Wunused-variable warning: `now` is no longer read.)
    # Killed since by NativePlatform.OnlyComputeThreadsGoDownAndRelativeToTheirStarter.
    m("native_compute_nice_absolute", NP, "(void)setpriority(PRIO_PROCESS, tid, std::min(19, now + levels));",
      "(void)setpriority(PRIO_PROCESS, tid, std::min(19, levels));", '-L "runtime|cli"'),

    # ---------------------------------------------------------------- algorithms/cholesky_factorization.cpp
    # Bug: --impl cusolver for Cholesky calls cuSOLVER's getrf (LU) instead of potrf (copied from LU's row).
    # Prediction: SURVIVES on a machine without a CUDA GPU (CliClaims.CudaEndToEnd and CliClaims3's cusolver copy_s
    #   test skip); KILLED by CliClaims.CudaEndToEnd where a GPU is present (the cusolver Cholesky check fails, or
    #   getrf writes its pivots through the empty aux buffer).
    # Observable: `tessera run --algo cholesky --n 2048 --impl cusolver --check` on a GPU machine: exit 1 (check
    #   failed) or a crash instead of exit 0 with ` ok`.
    # Test: already written (CliClaims.CudaEndToEnd); a CPU-only test could assert
    #   factorization("cholesky").cusolver_routine() == PeerRoutine::Potrf (and Geqrf for QR, Getrf for LU).
    # Killed since by FactorizationRegistry.EachFactorizationsPeersAndDefaultMatrix.
    m("cholesky_cusolver_routine_getrf", CF,
      "PeerRoutine cusolver_routine() const override { return PeerRoutine::Potrf; }",
      "PeerRoutine cusolver_routine() const override { return PeerRoutine::Getrf; }", '-L "unit|cli|cuda"'),

    # Bug: Cholesky's default input (no --matrix, no --input) is the graded matrix instead of spd.
    # Prediction: SURVIVES. CliGoodRun.GeneratedMatrixKindsPassTheCheck pins the default only for QR ("general");
    #   graded Cholesky passes --check in both precisions (tessera_matrix_graded_cholesky_threads[_s]), so every
    #   checked default Cholesky run still ends ` ok`; peers and tessera use the same default, so comparisons agree.
    # Observable: `tessera run --algo cholesky --n 500 --json r.json`: "matrix": "graded" (and another residual)
    #   instead of "spd".
    # Test: in GeneratedMatrixKindsPassTheCheck, beside QR's default: run cholesky --n 50 --json and expect
    #   "matrix" == "spd".
    # Killed since by CliClaims4.DefaultMatrixPerFactorization.
    m("cholesky_default_matrix_graded", CF,
      "MatrixKind default_matrix() const override { return MatrixKind::Spd; }",
      "MatrixKind default_matrix() const override { return MatrixKind::Graded; }", WITH_CLI),

    # ---------------------------------------------------------------- algorithms/tile_data_store.hpp
    # Bug: a node's store counts words as 8-byte doubles whatever T is (sizeof(double) for sizeof(T)).
    # Prediction: SURVIVES. Single-precision words are checked only on a phantom run
    #   (SimCluster.AMessageTakesTheLatency..., PhantomDataStore's word); CliClaims2.SimulatedClusterJsonAndCostLine
    #   is phantom and double; no mpi script or --sim-data test reads words.
    # Observable: `tessera run --algo cholesky --n 960 --B 96 --precision s --backend sim --machine keeneland.json
    #   --grid 2x1 --sim-data --json r.json`: per_node words_sent = bytes_sent / 8, half the same phantom run's, and
    #   the summary's words_max halves (mpirun runs in single precision likewise).
    # Test: that run with and without --sim-data: words_sent equal, and bytes_sent == 4 * words_sent.
    # Killed since by CliClaims4.SinglePrecisionWordsAreFourBytes.
    m("tile_store_words_assume_double", "algorithms/tile_data_store.hpp",
      "  std::size_t word_bytes() const override { return sizeof(T); }",
      "  std::size_t word_bytes() const override { return sizeof(double); }", '-L "unit|runtime|sim|numerics|cli|mpi"'),

    # ---------------------------------------------------------------- platform/native/host_memory_device.hpp
    # Control. Bug: a failed asynchronous copy is reported as done (done(nullptr)): a lost PCIe transfer goes
    #   unnoticed.
    # Prediction: KILLED by tessera_sim_failures (pcie_one_node: --fail link:node0-gpu2-pcie@0.3 must exit 5 naming
    #   the lost copy; with the mutant the run completes and exits 0).
    # Run: killed as the tests stood by InRunCalibrationCli.CalibratesRunsAndDrivesASimulation (the first to fail) (a control).
    m("host_device_copy_errors_swallowed", HMD, "      done(error);\n    });", "      done(nullptr);\n    });",
      '-L "runtime|sim"'),

    # ---------------------------------------------------------------- experiments/kernel_call.hpp
    # Bug: TRSM no longer counts as destroying its input, so prepare() (and prepare_on on a device) stops restoring
    #   A from A0 between timed calls: each call solves on the previous call's result, A L^-T with L's diagonal ~n,
    #   shrinking A by ~1/n per call until it is subnormal and then zero.
    # Prediction: SURVIVES. The calibration tests check median_s > 0, reps and the statistics of hand-made times;
    #   none compares a call's operands or result across calls (min_reps 5: far from subnormal values).
    # Observable: `tessera calibrate --precision s --kernels trsm --sizes 256` with its default repetitions: after
    #   ~16 calls per copy the operand is subnormal and TRSM's median is inflated by subnormal arithmetic (machine
    #   files then model TRSM too slow); on a device, the same through prepare_on.
    # Test: for each calibrated kernel, KernelCall c(shape, ib, 1, 1); c.prepare(0); c.run(0); copy operand(0, kA)
    #   (and kC); c.prepare(0); c.run(0); EXPECT the same bytes: every destroyed input is put back.
    # Killed since by KernelCall.EveryCallFindsTheOperandsTheFirstFound.
    m("calibrate_trsm_input_not_restored", KC, "      case kPotf2p:\n      case kTrsm:\n      case kGeqrt:",
      "      case kPotf2p:\n      case kGeqrt:", '-L "runtime|sim|cli"'),
    # --- Proposed by a reviewer of the analysis scripts, the runner's outputs, the StarPU peer and model headers.
    # --- analysis/trace_critical_path.py -------------------------------------------------------------
    # Bug: a tile listed without "mode" counts as read-only instead of read-write (the default the docstring
    #   and accesses() give is "rw"), so such a task writes nothing and no later task depends on it.
    # Prediction: SURVIVES. Every hand-made event in test_trace_compare.py / test_bad_input.py names its mode,
    #   and tessera's trace writer (runtime/trace.cpp) always writes it, so the default is never reached; it
    #   matters for traces made by hand or by other tools, which the script documents it reads. (Checked on a
    #   copy: CriticalPath, Numbers and test_bad_input pass with the mutant.)
    # Observable: critical_path() of A (0..10 us, tiles [{"i":0,"j":0}]) then B (10..20 us long, same tile):
    #   30 us, 2 tasks; with the mutant B does not depend on A: 20 us, 1 task (checked on a copy).
    # Test: in CriticalPath, events whose "tiles" entries have no "mode" key; assert critical_path_s == 30e-6
    #   and tasks == 2.
    # Killed since by experiments_trace_compare (CriticalPath.test_tile_without_mode_is_read_write).
    m("cp_missing_mode_read_only", TCP, '        mode = t.get("mode", "rw")', '        mode = t.get("mode", "r")',
      CP_TESTS),

    # Bug: tasks that start at the same time are ordered longest first instead of by end time, so a
    #   zero-length writer (a simulated LU's row moves take 0 s in a calibrated model) sorts after the reader
    #   that starts when it ends: the read-after-write edge is lost and a reversed write-after-read edge added.
    # Prediction: SURVIVES. Only the hand-made DAGs have equal starts (A and C at 0, R1 and R2 at 1), and in
    #   each the tied tasks touch different tiles or are both readers; the real/sim Cholesky traces have no
    #   zero-length tasks and are checked only for 0 < CP <= makespan.
    # Observable: P (0, 10 us, rw X), W (10, 0 us, rw X), R (10, 5 us, r X, rw Y): path P -> W -> R, 3 tasks,
    #   kernels {P, W, R}; with the mutant P -> R, 2 tasks, W missing from "kernels" (checked on a copy; the
    #   existing CriticalPath and Numbers tests pass with it).
    # Test: that event list through tcp.critical_path(); assert tasks == 3 and kernels == {"P":1,"W":1,"R":1}.
    # Killed since by experiments_trace_compare (CriticalPath.test_zero_length_writer_before_reader_starting_with_it).
    # (The order is now in_order()'s: tasks grouped by (start, end), the groups sorted; the mutant keys the groups by
    #   (start, -duration), which sorts them the same wrong way.)
    m("cp_tie_break_longest_first", TCP, '        groups[(e["ts"], e["ts"] + e["dur"])].append(e)',
      '        groups[(e["ts"], -e["dur"])].append(e)', CP_TESTS),

    # Bug: a node's makespan measured from time 0 instead of from its first task's start (the trace-wide one
    #   keeps the subtraction), so nodes[i].makespan_s and nodes[i].ratio are wrong whenever a node's first
    #   task starts after 0.
    # Prediction: SURVIVES. The tests read only the top-level makespan_s / ratio and nodes[0]["dag_tasks"];
    #   no test reads a node's own makespan_s or ratio.
    # Observable: A (100..110 us, rw X), B (110..140 us, rw X): nodes[0].makespan_s 40e-6 -> 140e-6 and
    #   nodes[0].ratio 1.0 -> 0.286 (checked on a copy), in trace_compare.py --json's critical_path.a.nodes.
    # Test: one node starting at ts 100; assert c["nodes"][0]["makespan_s"] == c["makespan_s"] and
    #   c["nodes"][0]["ratio"] == c["ratio"].
    # Killed since by experiments_trace_compare (CriticalPath.test_node_makespan_from_its_first_task).
    m("cp_node_makespan_from_zero", TCP,
      '    span_us = max(e["ts"] + e["dur"] for e in order) - min(e["ts"] for e in order) if order else 0.0',
      '    span_us = max(e["ts"] + e["dur"] for e in order) if order else 0.0', CP_TESTS),

    # Bug (control): write-after-read edges dropped: a writer no longer waits for the readers of the tile's
    #   previous version.
    # Prediction: KILLED by experiments_trace_compare (CriticalPath.test_diamond_write_after_read: W2's
    #   predecessors lose R1, R2; the path is 51 us, not 82).
    # Observable: the diamond's critical path 82 us -> 51 us.
    # Test: exists (test_diamond_write_after_read).
    # Run: killed as the tests stood by experiments_trace_compare (a control).
    m("cp_no_write_after_read", TCP, "                mine.update(readers[key])", "                pass", CP_TESTS),

    # --- analysis/trace_gantt.py ---------------------------------------------------------------------
    # Bug: --from S drops every bar that started before S, also those still running at S (the test is on the
    #   bar's start instead of its end), so the chart of a window hides the tasks that span its left edge.
    # Prediction: SURVIVES. The only window in the tests is --from 5 --to 1 (refused before drawing); every
    #   chart that is drawn has no window.
    # Observable: test_bad_input's good trace (POTRF 0-10 us, TRSM 10-15 us) with --from 0.000012:
    #   "1 bars" -> "0 bars" (TRSM, which runs 10-15 us, is left out). Checked on a copy (a variant with a
    #   second node's TRSM: 2 bars -> 0); test_bad_input passes with the mutant.
    # Test: trace_gantt.py good.json --out x.png --from 0.000012; assert stdout ends "1 bars".
    # Killed since by experiments_trace_views (GanttHandMade.test_window_keeps_bars_crossing_its_edges).
    m("gantt_window_drops_straddling_bars", TG,
      "            if (t_from is not None and b < t_from) or (t_to is not None and a > t_to):",
      "            if (t_from is not None and a < t_from) or (t_to is not None and a > t_to):", GANTT_TESTS),

    # Bug: an empty window (--from equal to --to) is accepted: the check reads > instead of >=.
    # Prediction: SURVIVES. test_bad_input refuses --from 5 --to 1 only (5 > 1 either way).
    # Observable: trace_gantt.py T --out x.png --from 5 --to 5: exit 2 "the window's start must be before its
    #   end" -> exit 0, "0 bars", and matplotlib's singular-xlims warning on stderr (checked on a copy).
    # Test: add ("--from", "5", "--to", "5") to test_options' refusals; assert exit 2 naming "--from 5 --to 5".
    # Killed since by experiments_bad_input (Traces.test_options).
    m("gantt_empty_window_accepted", TG,
      "    if a.t_from is not None and a.t_to is not None and a.t_from >= a.t_to:",
      "    if a.t_from is not None and a.t_to is not None and a.t_from > a.t_to:", GANTT_TESTS),

    # Bug: lanes are keyed without the node (pid), so a distributed run's per-node files share one block of
    #   lanes: node 1's cpu0 bars are drawn on node 0's cpu0 lane, labelled "node 0".
    # Prediction: SURVIVES. test_gantt_png charts a one-node GPU trace and test_bad_input a one-node trace; the
    #   only number checked is the bar count, which does not change.
    # Observable: lanes() of a task on (pid 0, tid 0) and one on (pid 1, tid 0), both threads named cpu0:
    #   lane keys (0, cpu0, 0) and (1, cpu0, 0) -> one key (0, cpu0, 0): one lane, both bars on it (checked on
    #   a copy: the pid field of every lane key becomes 0).
    # Test: trace_gantt.lanes(events) on a two-pid event list (or a --grid 2x1 simulated run's two files);
    #   assert [k[0] for k in order] == [0, 1].
    # Killed since by experiments_trace_views (GanttHandMade.test_each_node_has_its_lanes).
    m("gantt_nodes_share_lanes", TG, '        lane = (e["pid"], names.get(', '        lane = (0, names.get(',
      GANTT_TESTS),

    # --- analysis/plot_experiment.py -----------------------------------------------------------------
    # Bug: the definition given (plot_experiment.py --definition FILE, or `tessera experiment plot NAME`,
    #   which passes the definition file as it is now) loses to meta.json's copy: plots added or changed in
    #   the definition since the sweep are not drawn.
    # Prediction: SURVIVES. Every plot in the tests uses the definition the results were run from (same plots
    #   in meta.json); test_plot_definition_option only checks refusals.
    # Observable: plot_experiment.py DIR --definition OTHERDIR/badin.json (badin's definition with plots[0]
    #   .file = "t2"): prints figures/t2.png, t2.pdf -> figures/t.png, t.pdf (checked on a copy with
    #   test_bad_input's fake results; test_bad_input passes with the mutant).
    # Test: that call in test_plot_definition_option; assert the output names t2.png and it exists.
    # Killed since by experiments_bad_input (Runner.test_plot_definition_option).
    m("plot_definition_given_ignored", PE, "    defn = definition or results.definition",
      "    defn = results.definition or definition", SCRIPTS),

    # Bug: plot_results reads the experiment's name from a key meta.json does not have ("name" instead of
    #   "experiment"), so its guard against another experiment's results never fires. plot_experiment.py's
    #   main() checks again itself, but `tessera experiment plot NAME --out DIR` relies on plot_results.
    # Prediction: SURVIVES. test_plot_definition_option goes through plot_experiment.py main(), whose own check
    #   still refuses "holds results of badin"; no test plots another definition through `experiment plot`.
    # Observable: experiment.py plot defs/other.json --out DIR_OF_badin: exit 2 "meta.json: results of badin,
    #   not of the definition given (other)" -> exit 0, figures/t.png and t.pdf drawn from badin's runs
    #   (checked on a copy; test_bad_input passes with the mutant).
    # Test: in test_bad_input, experiment("plot", definition("other"), "--out", good copy); assert refused
    #   naming "results of badin".
    # Killed since by experiments_bad_input (Runner.test_plot_definition_option).
    m("plot_results_wrong_meta_key", PE, '    ran = results.meta.get("experiment")',
      '    ran = results.meta.get("name")', SCRIPTS),

    # --- experiments/explore_plot.py -----------------------------------------------------------------
    # Bug: the heatmap marks the slowest successful configuration as the best (min -> max): the red box,
    #   the star and the title "best: LABEL, T s" all name the slowest.
    # Prediction: SURVIVES. test_explore's sweep checks only that explore.png is a PNG over 5000 bytes; the
    #   recommendation printed by explore.py is computed apart from the figure.
    # Observable: rows with times 1.0 (label "B=128") and 2.0 ("B=256"): title "t\nbest: B=128, 1 s" ->
    #   "t\nbest: B=256, 2 s" (checked on a copy).
    # Test: call explore_plot.draw(rows, [], path, "t") with plt.close patched to keep the figure (or
    #   plt.savefig wrapped); assert "best: B=128" in fig.axes[0].get_title().
    # Killed since by experiments_explore_ranking (heatmap).
    m("explore_plot_best_is_slowest", EP,
      '    best = min((r for r in rows if r["status"] == "ok"), key=lambda r: r["time_s"], default=None)',
      '    best = max((r for r in rows if r["status"] == "ok"), key=lambda r: r["time_s"], default=None)',
      '-R experiments_explore'),

    # --- experiments/runner/outputs.py ---------------------------------------------------------------
    # Bug: folder_problem(create=False) creates the folder anyway (the early return dropped), so a dry run
    #   (`tessera experiment run DEF --dry-run`, `tessera explore ... --dry-run`) makes its results folder,
    #   and the runner's "traces" check creates results/X/traces before any run.
    # Prediction: SURVIVES. The dry-run tests (test_explore dry_run, CliClaims3's definition counts,
    #   test_runner's parallel dry run) assert only that no runs.jsonl was written, never that the folder is
    #   absent.
    # Observable: experiment.py run badin.json --out NEW --dry-run: NEW absent -> created, empty (checked on
    #   a copy; test_bad_input passes with the mutant); the same for tessera explore --dry-run.
    # Test: in test_explore dry_run (or CliClaims3), assert not os.path.exists(out_dir) after a dry run to a
    #   fresh path.
    # Killed since by experiments_bad_input (Runner.test_dry_run_makes_no_folder) and experiments_explore_dry_run.
    m("outputs_dry_run_creates_folder", OU, "    if not create:\n        return None\n", "",
      '-L "experiments|cli"'),

    # Bug: output_problem compares an output with an input by name only (os.path.samefile replaced by ==), so
    #   an output that is a hard link to an input (same file, another name) is accepted and overwrites it.
    # Prediction: SURVIVES. test_bad_input and test_heldout_floor pass the input's own path as the output,
    #   which the realpath comparison before it already catches.
    # Observable: ln trace.json link.json; trace_gantt.py trace.json --out link.json: exit 2 "is an input
    #   (trace.json): it would be overwritten" -> exit 0 and trace.json replaced by a PNG (checked on a copy;
    #   test_bad_input passes with the mutant).
    # Test: os.link(self.good, L); refused(py("analysis/trace_gantt.py", self.good, "--out", L), "is an input").
    # Killed since by experiments_bad_input (Traces.test_options).
    m("outputs_hard_link_input", OU, "os.path.samefile(p, path)", "p == path",
      '-R "experiments_(trace_compare|trace_views|bad_input|heldout_floor)"'),

    # --- experiments/starpu_peer.cpp -----------------------------------------------------------------
    # Bug: the peer's GFlop/s counts LU's 2n^3/3 flops instead of Cholesky's n^3/3, doubling StarPU's rate
    #   against tessera's (bench_starpu.py's "tessera/best StarPU" column halves).
    # Prediction: SURVIVES. The ctest lines match gflops=[0-9.]+ and no test reads the JSON's gflops.
    # Observable: starpu_peer --n 1000 --nb 96 --json F: gflops == 1000^3/3/time_s/1e9 -> twice that.
    # Test: a peers test that writes --json and asserts gflops == n**3/3/time_s/1e9 (to 1e-9 relative), as
    #   tessera's own JSON is checked.
    # Killed since by starpu_peer_numbers.
    m("starpu_gflops_lu_flop_count", SP, "gflops = n * n * n / 3.0 / seconds / 1e9;",
      "gflops = 2.0 * n * n * n / 3.0 / seconds / 1e9;", '-L peers'),

    # Bug: the breakdown column is the POTF2' tile's own column instead of the global one (the tile's first
    #   column col0 left out), so a breakdown beyond the first tile column names the wrong column.
    # Prediction: SURVIVES. starpu_peer_refuses_general (--n 300 --nb 64 --matrix general) matches only
    #   "column [0-9]+" and exit 3: any column passes, and a breakdown in the first tile column (col0 = 0)
    #   gives the same number anyway.
    # Observable: --matrix general --nb 1 (every tile one column): "column K" -> "column 1" for any K > 1; a
    #   breakdown in tile column t > 0 reports K - t*nb.
    # Test: run --matrix general at --nb 64 and --nb 1 (same --seed) and assert the same column; or pin the
    #   column for a seed whose breakdown is past the first tile.
    # Killed since by starpu_peer_numbers.
    m("starpu_breakdown_column_in_tile", SP, "args.breakdown->compare_exchange_strong(none, args.col0 + info);",
      "args.breakdown->compare_exchange_strong(none, info);", '-L peers'),

    # Bug: under --grid the reported time is the fastest rank's (MPI_MIN) instead of the slowest's, which is
    #   when the factorization ends.
    # Prediction: SURVIVES. The mpi peers tests match time=[0-9.]+s and check the residual only.
    # Observable: mpirun -np 2 starpu_peer --grid 1x2 ...: time= the smaller of the two ranks' times, gflops
    #   larger; bench_starpu.py --grid's StarPU column too fast.
    # Test: hard to see from outside; a test could run --grid 2x1 with a rank made slower (e.g. an env var read
    #   by a test-only hook) or compare time_s with the wall time of the mpirun (time_s >= every rank's span).
    m("starpu_mpi_fastest_rank_time", SP,
      "MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);",
      "MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);",
      '-R "starpu_peer_(mpi|numbers)"',
      why="equivalent in practice: every rank leaves starpu_mpi_wait_for_all (collective) with the last task, so the "
          "ranks' times differ by microseconds; starpu_peer_numbers' 1x2 run whose one tile rank 1 does not hold "
          "passed under the mutant (rank 1's own span is that of the factorization)"),

    # Bug: --threads equal to STARPU_MAXCPUS is refused (> became >=): Debian's StarPU 1.3 has
    #   STARPU_MAXCPUS 4, so the largest run it can do, --threads 4, exits 2.
    # Prediction: SURVIVES. The tests run --threads 1 and 2 and refuse 99.
    # Observable: starpu_peer --n 300 --nb 64 --threads 4 (on a machine with 4+ cores): exit 0 -> exit 2
    #   "--threads 4: this StarPU (1.3.x) runs at most 4 CPU workers per process".
    # Test: a peers case with --threads STARPU_MAXCPUS (4; the test may skip on fewer cores) expecting exit 0
    #   and "threads=4" in the line.
    # Killed since by starpu_peer_numbers.
    m("starpu_threads_max_refused", SP, "  if (o.threads > STARPU_MAXCPUS)", "  if (o.threads >= STARPU_MAXCPUS)",
      '-L peers'),

    # Bug: STARPU_SCHED is no longer removed when --sched is given; StarPU 1.3's select_sched_policy reads
    #   STARPU_SCHED before conf.sched_policy_name, so the environment wins and the run stops with exit 4
    #   ("StarPU runs scheduling policy eager, not --sched lws") instead of running the policy asked for.
    # Prediction: SURVIVES. No peers test sets STARPU_SCHED (bench_starpu.py does not either).
    # Observable: STARPU_SCHED=eager starpu_peer --n 300 --nb 64 --sched lws: exit 0 "sched=lws" -> exit 4.
    # Test: one peers case with ENVIRONMENT STARPU_SCHED=eager and --sched lws, EXPECT_RC 0 and "sched=lws".
    # Killed since by starpu_peer_numbers.
    m("starpu_sched_env_wins", SP, '  if (!o.sched.empty()) unsetenv("STARPU_SCHED");\n', "", '-L peers'),

    # --- models/kernel_noise.hpp ---------------------------------------------------------------------
    # Bug: the noisy decorator does not pass the inner model's first-call costs on (returns 0), and the
    #   cold-start wrapper in driver.cpp asks the noisy model, so every simulated run with --kernel-noise or
    #   --node-noise on a calibrated file loses its first-call costs (local.json: potf2p 1.385 ms, ...).
    # Prediction: SURVIVES. The noise runs in tests/sim use keeneland.json (peak-efficiency: no first-call
    #   costs); the one run on local.json (AutoListsTheSigmasItDrewWith) checks sigmas and that two runs agree.
    # Observable: tessera run --backend sim --machine platform/machines/local.json --algo cholesky --n 2000
    #   --threads 2 --kernel-noise 1e-12: time_s equals the run without noise (to ~1e-9) -> about 5-10 ms less.
    # Test: in KernelNoiseRuns, run local.json with and without --kernel-noise 1e-12 (and --node-noise
    #   1e-12); assert the times agree to 1e-9 relative.
    # Killed since by KernelNoiseRuns.FirstCallCostsPassThroughTheNoise.
    m("noise_first_call_not_forwarded", KNH, "    return inner_.first_call_s(kernel, precision);",
      "    return 0.0;", '-R "KernelNoise"'),

    # --- experiments/tune.hpp ------------------------------------------------------------------------
    # Bug: the cap on a tuning's candidates (--B-range sizes x --max-s) raised from 1024 to 4096, so a search
    #   of thousands of simulations or real runs starts instead of being refused.
    # Prediction: SURVIVES. The only test of the cap, CliOutputs.TuneCalibrateAndModelRefuseWhatTheyCannotDo,
    #   asks for 9 x 100000 candidates, over either cap. (1 << 20 would be KILLED there.)
    # Observable: tessera tune --algo cholesky --n 2048 --B-range 128:640:1 --max-s 3 (1539 candidates):
    #   exit 2 "... make 1539 candidates, more than 1024: narrow them" -> 1539 simulations/real runs.
    # Test: expect_rejected(kInvalidInput, with({"--B-range", "128:640:1"}), {"1539 candidates"}).
    # Killed since by CliClaims4.TuneCandidatesAreCappedAt1024.
    m("tune_candidate_cap_raised", TH, "inline constexpr int kMaxTuneCandidates = 1024;",
      "inline constexpr int kMaxTuneCandidates = 4096;", '-L cli'),

    # --- experiments/calibrate_in_run.hpp ------------------------------------------------------------
    # Bug: min_calls default 5 -> 8: a shape needs 8 calls in a pass to be kept, so at the default orders
    #   the shapes called 5-7 times (N = 2048, B = 320: the 6 full POTF2' tiles, 5 calls after the first;
    #   the edge row's TRSM and diagonal updates, 6 each) drop out of the in-run model, and the record's
    #   min_calls says 8.
    # Prediction: SURVIVES. InRunCalibrationCli.CalibratesRunsAndDrivesASimulation asks in_run_calls >= 5 of
    #   the entries kept and at least 3 of them (TRSM, GSMM_DIAG, GSMM still have 14-19 calls);
    #   BaseGetsTheRunsAlone's N = 256 has no GSMM at all either way; no test reads record["min_calls"].
    # Observable: calibrate --in-run ... --in-run-n 2048: calibration.in_run.min_calls 5 -> 8 and POTF2' d
    #   320x320 no longer carries in_run_calls (it stays the isolated time, scaled).
    # Test: in CalibratesRunsAndDrivesASimulation assert rec["min_calls"] == 5 and that the potf2p d 320x320
    #   entry has in_run_calls == 5.
    # Killed since by InRunCalibrationCli.CalibratesRunsAndDrivesASimulation.
    m("in_run_min_calls_8", CIR, "  int min_calls = 5;", "  int min_calls = 8;", '-R "InRun"'),
    # --- A reviewer of how values of several nodes become one found a distributed run's tasks, imbalance_ratio
    # and gpu_peak_MiB to be node 0's alone (the README read as the run's); since round 7 the JSON's tasks are
    # every node's, each node's in comm.per_node with its imbalance and GPU peak, and the ratio and the peak the
    # worst node's. Bug: the old behaviour back.
    # Killed by SimCluster.EveryNodesTasksAndTheWorstNodesGpuNumbers.
    m("report_tasks_of_node0", "experiments/report.cpp",
      'j["tasks"] = run_tasks(r);', 'j["tasks"] = r.tasks;', WITH_CLI),
    # Killed by SimCluster.EveryNodesTasksAndTheWorstNodesGpuNumbers.
    m("report_imbalance_of_node0", "experiments/report.cpp", 'j["imbalance_ratio"] = run_imbalance(r);',
      'j["imbalance_ratio"] = r.node_imbalance[r.node];', WITH_CLI),
    # Killed by SimCluster.EveryNodesTasksAndTheWorstNodesGpuNumbers.
    m("report_line_gpu_peak_of_node0", "experiments/report.cpp",
      ": *std::max_element(r.node_gpu_peak_bytes.begin(), r.node_gpu_peak_bytes.end());",
      ": r.node_gpu_peak_bytes[0];", WITH_CLI),
    # --- Found in review this round, fixed, and pinned. A call starting as the first call of its kernel ends (the
    # next task of its lane) paid the first-call cost again or not by rounding: ColdStartState compared exactly.
    # Killed by KernelModels' cold-start test (a start 1e-12 s before the end) and KernelNoiseRuns.
    m("cold_start_exact_end", "models/cold_start.cpp", "now < it->second - kSlack_s", "now < it->second",
      '-L sim'),
    # gpu_predict's per-kernel table keyed only ten kernels' models, so LU's panels, TTQRT and the rest read
    # "model s nan". Killed by experiments_gpu_scripts (every kernel table row's name gives its key).
    m("gpu_predict_model_key_upper_case", "experiments/gpu_predict.py",
      'return "potf2p" if trace_name == "POTF2\'" else trace_name.lower()',
      'return "potf2p" if trace_name == "POTF2\'" else trace_name', '-R experiments_gpu_scripts'),
]
