"""Round 11: the faults of this session's reviews (what a resumed or repeated sweep keeps; both sides of a benchmark
on one matrix and in one layout), each fixed: a mutant puts each fault back and names the test that now sees it."""
from mutant_sets.common import *  # noqa: F401,F403 (m, the selections, the paths)

EXE, PROC = "experiments/runner/execute.py", "experiments/runner/processes.py"
RESUME = "-R experiments_runner_resume"
CHECKS = "-R experiments_bench_checks"

MUTANTS = [
    # --- What a resumed sweep keeps.
    # A simulation kept after its machine file's figures changed: one figure mixes two models. Killed by
    # Resume.test_resume_reruns_a_simulation_whose_machine_changed.
    m("resume_keeps_changed_machine", EXE, "        if then is None or now is None or then == now:\n",
      "        if True:\n", RESUME),
    # A real run of another host kept: two machines' speeds in one figure. Killed by
    # Resume.test_resume_reruns_a_real_run_of_another_host.
    m("resume_keeps_other_hosts_run", EXE,
      '        if config.backend == "sim" or not then or then == self.stamp["host"]:',
      "        if True:", RESUME),
    # An older sweep's extra repeats read into a point's median. Killed by
    # Resume.test_fewer_repeats_leave_the_extra_runs_out.
    m("results_extra_repeats_read", ER, 'r["repeat"] < repeats.get(r["config_id"], r["repeat"] + 1)]', "True]",
      RESUME),
    # No lock: a second sweep into the folder runs beside the first. Killed by
    # Resume.test_a_second_sweep_into_the_folder_is_refused.
    m("sweep_folder_unlocked", PROC, "        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n", "        pass\n",
      RESUME),
    # --- Both sides of a benchmark on one matrix, in one layout.
    # The ScaLAPACK peer's matrix another than tessera's (here another seed's). Killed by scalapack_peer_numbers.
    m("scalapack_peer_other_matrix", "experiments/scalapack_peer.cpp",
      "  const tessera::MatrixGenerator entry(choice.kind, seed, a.n, a.n",
      "  const tessera::MatrixGenerator entry(choice.kind, seed + 1, a.n, a.n", "-R scalapack_peer_numbers"),
    # bench_mpi.py's --matrix and --seed reach tessera only. Killed by Bench.test_bench_mpi_same_matrix.
    m("bench_mpi_peer_other_matrix", "experiments/bench_mpi.py", "] + matrix_args(tile_args) + \\\n", "] + \\\n",
      CHECKS),
    # bench_mpi.py takes --input, which the peer cannot read. Killed by Bench.test_bench_mpi_same_matrix.
    m("bench_mpi_input_taken", "experiments/bench_mpi.py",
      '    if matrix_args(shlex.split(args.tile_args), ("--input",)):', "    if False:", CHECKS),
    # The rate with conversions divided the wrong way. Killed by experiments_bench_numbers.
    m("bench_cpu_conversions_inverted", "experiments/bench_cpu.py",
      '    return float(result["gflops"]) * t / (t + c) if t > 0 and c >= 0 else None',
      '    return float(result["gflops"]) * (t + c) / t if t > 0 and c >= 0 else None', "-R experiments_bench_numbers"),
    # The dense matrix of --column-major left out of the preflight. Killed by PreflightMemory.
    m("preflight_forgets_dense_copy", "experiments/preflight.cpp",
      "  need.dense_copy = c.column_major ? matrix : 0.0;", "  need.dense_copy = 0.0;", '-R "PreflightMemory"'),
    # The tiles built from the dense matrix left uninitialized. Killed by
    # TileMatrixTest.ThreadedDensePassesAndTheFactoryAgree and tessera_column_major.
    m("from_dense_factory_copies_nothing", "base/tile_matrix.cpp", "  t.from_dense(a, lda, max_threads);\n  return t;",
      "  return t;", '-R "TileMatrixTest|tessera_column_major"'),
]
