"""Round 10: the faults this session's reviewers found by bug class (the environment a run inherits; extreme sizes and
machine files; the documentation's commands run as written), each fixed: a mutant puts each fault back and names the
test that now sees it."""
from mutant_sets.common import *  # noqa: F401,F403 (m, the selections, the paths)

MPI_NET, MAIN, PRE, MACH = ("platform/native/mpi_network.hpp", "experiments/tessera_main.cpp",
                            "experiments/preflight.cpp", "models/machine.cpp")
ENV = '-R "tessera_environment"'
MPI_1X1 = '-R "tessera_environment|tessera_mpi_cholesky_d_1x1"'

MUTANTS = [
    # --- The environment a run inherits.
    # OMPI_COMM_WORLD_SIZE read as atoi would: "4x" is 4, "abc" a number too. Killed by tessera_environment.
    m("mpirun_count_takes_a_prefix", MPI_NET, "    if (end == v || *end != '\\0' || errno == ERANGE",
      "    if (end == v || errno == ERANGE", ENV),
    # The local size read without the job's: a leftover OMPI_COMM_WORLD_LOCAL_SIZE=100000 splits the host's memory
    # (exit 4). Killed by tessera_environment.
    m("local_size_read_without_a_job", MPI_NET,
      '  static int local_ranks() { return launched_by_mpirun() ? mpirun_count("OMPI_COMM_WORLD_LOCAL_SIZE", 1, 1) : 1; }',
      '  static int local_ranks() { return mpirun_count("OMPI_COMM_WORLD_LOCAL_SIZE", 1, 1); }', ENV),
    # A job of one rank initializes MPI: the second run under the rank's environment fails in MPI_Init. Killed by
    # tessera_environment (two runs inside mpirun -np 1) and tessera_mpi_cholesky_d_1x1.
    m("one_rank_job_initializes_mpi", MPI_NET,
      "  static bool distributed(int grid_nodes) { return grid_nodes > 1 || mpirun_ranks() > 1; }",
      "  static bool distributed(int grid_nodes) { return grid_nodes > 1 || mpirun_ranks() > 0; }", MPI_1X1),
    # A standard output that takes nothing goes unnoticed (exit 0, the summary lost). Killed by tessera_environment.
    m("stdout_failure_unnoticed", MAIN, "  if (std::cout.flush() && std::ferror(stdout) == 0) return status;",
      "  return status;", ENV),
    # tune's child JSON always in /tmp. Killed by TuneCli.ChildJsonGoesToTmpdir.
    m("tune_ignores_tmpdir", "experiments/tune_child.cpp",
      "  const std::string dir = tmpdir != nullptr && *tmpdir != '\\0' &&",
      "  const std::string dir = false && tmpdir != nullptr && *tmpdir != '\\0' &&", '-R "TuneCli"'),
    # --- Extreme sizes and machine files.
    # A phantom simulation's actors unchecked: SimGrid aborts (exit 134) at the first stack it cannot give. Killed
    # by CliPreflight.APhantomSimulationsActorsMustFitTheAddressSpace.
    m("phantom_actors_unchecked", PRE,
      "    if (available && available->bytes <= 0)\n      throw OutOfMemory(\n          fmt::format(\"out of memory: the simulated",
      "    if (false && available && available->bytes <= 0)\n      throw OutOfMemory(\n          fmt::format(\"out of memory: the simulated",
      '-R "CliPreflight"'),
    # The actors counted in int: --gpu-streams 2^31 - 1 wraps. Killed by
    # PreflightMemory.ASimulatedClustersActorsReserveTheirStacks.
    m("actors_counted_in_int", PRE, "(gpus > 0 ? 1 + g * (2 + std::max<std::int64_t>(gpu_streams, 1)) : 0)",
      "(gpus > 0 ? 1 + static_cast<int>(g * (2 + std::max<std::int64_t>(gpu_streams, 1))) : 0)",
      '-R "PreflightMemory"'),
    # The platform of every node of the file: a 32,768-node file grows past 12 GB. Killed by
    # SimCluster.AMachineOfManyNodesBuildsTheRunsNodesOnly (its timeout, or its peak memory).
    m("platform_of_every_node", SG, "std::make_unique<Impl>(machine, nodes == 0 ? machine.nodes : nodes,",
      "std::make_unique<Impl>(machine, machine.nodes,", '-R "SimCluster.AMachineOfMany"'),
    # A link of any positive bandwidth (0.1 B/s aborted SimGrid). Killed by MachineFiles.ValuesBeyondAnyMachineAreNamed.
    m("any_positive_bandwidth", MACH, "constexpr double kMinBandwidthBps = 1e3,",
      "constexpr double kMinBandwidthBps = 0,", '-R "MachineFiles"'),
    # A bounded field's message shows the {value, source} object, its source first. Killed by the same test.
    m("bounded_field_shows_the_object", "base/json_fields.hpp",
      '      fail(key, value(key), std::string("must be ") + (above',
      '      fail(key, require(key), std::string("must be ") + (above', '-R "MachineFiles"'),
    # A kernel time that is not finite slept: SimGrid's clock becomes infinite. Killed by
    # SimTime.AKernelTimeThatIsNotFiniteIsNamed.
    m("infinite_kernel_time_slept", SG,
      "  if (!std::isfinite(modeled_s) || !std::isfinite(sim_.clock() + modeled_s))",
      "  if (false && !std::isfinite(modeled_s))", '-R "SimTime"'),
    # --- The documentation's commands.
    # A quick sweep's figure titled as the full sweep's. Killed by experiments_figure_kinds (QuickSweep).
    m("quick_figure_unmarked", "analysis/plot_experiment.py", '    if not meta.get("quick"):\n        return spec',
      "    return spec", '-R "experiments_figure_kinds"'),
    # --- Determinism of what the tools write (a reviewer comparing repeated runs and regenerations).
    # Equal times ranked in the order of the values on the command line. Killed by experiments_explore_ranking.
    m("explore_ties_in_given_order", EX,
      '    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: (r["time_s"], r["label"]))',
      '    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: r["time_s"])', "-R experiments_explore"),
    # The report dated by the clock. Killed by experiments_report (made twice, compared; dated by its newest run).
    m("report_dated_by_the_clock", RP, '    out[2] = out[2].replace("{newest run}", _date_shown(newest)',
      '    out[2] = out[2].replace("{newest run}", datetime.datetime.now().isoformat()', REPORT),
    # A phantom run's JSON names this host's BLAS kernels. Killed by SimCluster.PhantomRunIsDeterministic.
    m("phantom_json_names_the_hosts_blas", "experiments/report.cpp",
      '  j["blas_core"] = c.phantom ? nlohmann::json(nullptr) : nlohmann::json(kernels::blas_core());',
      '  j["blas_core"] = kernels::blas_core();', '-R "SimCluster"'),
    # --- What a command leaves behind when it is interrupted (a reviewer's signals and full disks).
    # A child run outlives its tuner. Killed by TuneChild.EndsWithTheTuner.
    m("tune_child_outlives_the_tuner", "experiments/tune_child.cpp", "    ::prctl(PR_SET_PDEATHSIG, SIGKILL);\n", "",
      '-R "TuneChild"'),
    # SimGrid's SIGINT handler kept: Ctrl-C lists every actor and exits 1. Killed by tessera_environment.
    m("simgrid_keeps_sigint", SG, "  sigaction(SIGINT, &interrupt, nullptr);\n", "", ENV),
]
