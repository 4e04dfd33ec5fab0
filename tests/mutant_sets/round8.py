"""Round 8: the faults four reviewers found by bug class (sizes past 32 bits, failure paths, nondeterminism, the CUDA
code before a lease), each fixed: a mutant puts each fault back and names the test that now sees it."""
from mutant_sets.common import *  # noqa: F401,F403 (m, the selections, the paths)

MPI, MAIN, HP = "platform/native/mpi_network.cpp", "experiments/tessera_main.cpp", "experiments/host_pinning.cpp"
NR, TW, OUTP = "runtime/node_runtime.cpp", "runtime/task_window.cpp", "experiments/output_path.cpp"
SGP = "platform/simgrid/simgrid_platform.cpp"
INPUT_TESTS = '-R "tessera_input_every_backend"'
OUTPUT_TESTS = '-R "tessera_outputs_on_failure"'

MUTANTS = [
    # --- Nondeterminism (a reviewer of the promised byte-identical outputs).
    # A simulated run with --sim-data and GPUs timed the empty unpinning loop (its GPUs pin nothing): unpin_s in its
    # JSON changed from run to run. Killed by HostPinning.ADeviceThatDoesNotPinIsNotAsked and
    # CliClaims4.SimulatedRunWithDataAndGpusGivesTheSameJsonTwice.
    m("unpin_times_an_empty_loop", HP, "  if (pinned_.empty()) return 0;\n", "", '-L "unit|cli"'),
    # Calibrated shapes of equal flop count (SSRFB's 128x320x320 and 320x128x320) each a point of the flops curve:
    # a call beside them took the time of whichever the order left at the edge. Killed by
    # KernelModels.EqualFlopShapesAreOnePointWhateverTheirOrder.
    m("kernel_model_equal_flops_not_merged", "models/kernel_model.cpp",
      "for (; j < pts.size() && pts[j].flops == pts[i].flops; ++j)",
      "for (; j < pts.size() && j == i; ++j)", '-L sim'),
    # Points and runs.csv in the order parallel runs finished (runs.jsonl's), not the sweep's. Killed by
    # experiments_results_reading (test_points_and_runs_csv_follow_the_sweep_not_the_finishing_order).
    m("results_in_finishing_order", ER,
      '    return sorted(records, key=lambda r: (rank.get(r["config_id"], len(rank)), first[r["config_id"]], r["repeat"]))',
      "    return list(records)", REPORT),
    # Kernels of equal total in a set's hash order (which changes from process to process). Killed by
    # experiments_trace_compare (test_kernels_of_equal_total_by_name: eight names, a chance order 1 in 40,320).
    m("trace_compare_ties_in_hash_order", TC, "key=lambda n: (-(ka.get(n, kb.get(n))[\"total_us\"]), n))",
      "key=lambda n: -(ka.get(n, kb.get(n))[\"total_us\"]))", '-R experiments_trace_compare'),

    # --- Sizes past 32 bits (a reviewer of integer arithmetic at the papers' sizes).
    # A message above 2^31 - 1 bytes went as a negative or wrapped int count. The derived datatype that carries it
    # now, with its rest after the whole blocks dropped: killed by tessera_mpi_messages_of_every_length (the limit
    # lowered to 300 bytes: 917 payload bytes arrive as 900).
    m("mpi_wire_type_drops_the_rest", MPI, "MPI_Type_create_struct(rest > 0 ? 2 : 1,",
      "MPI_Type_create_struct(1,", '-R tessera_mpi_messages'),
    # Every message sent as plain bytes (the derived datatype never taken, whatever the limit): killed by the same
    # test, which counts the messages each rank sent and received the long way (4 each with the limit lowered).
    m("mpi_wire_type_never_derived", MPI, "    if (bytes <= limit) {", "    if (true) {", '-R tessera_mpi_messages'),
    # (Not a mutant: the receiver's length read back through MPI_Get_count's int. With the limit lowered every length
    # is small, where both read the same; only a message of 2 GiB, beyond the VM's tests, tells them apart.)

    # --- Failure paths (a reviewer of exits, hangs and lost output).
    # A rank that meets an input error alone (its host's copy of the file) no longer joins the set-up agreement: the
    # other waits there for ever. Killed by tessera_input_every_backend (missing_on_one_rank, short_on_one_rank: a
    # 20 s timeout, exit 124 for 2).
    m("mpi_set_up_failure_not_agreed", MAIN, "      net.agree_failed_set_up(exit_status_of(e));\n", "", INPUT_TESTS),
    # The same in a simulated cluster: the failed node's actor ends without the agreement. Killed by
    # SimCluster.ANodeWhoseSetUpFailsEndsTheOthersAtTheAgreement (SimGrid: deadlock).
    m("sim_set_up_failure_not_agreed", SGP,
      "        if (cluster) cluster->node(k).agree_failed_set_up(exit_status_of(std::current_exception()));",
      "", '-L sim'),
    # A thread that cannot start after others unwound the run under them (a crash or a hang): the started threads no
    # longer stopped first. Killed by NodeRuntime.AThreadThatCannotStartStopsTheOnesStartedAndIsRethrown.
    m("thread_start_failure_leaves_threads_running", NR, "    unwind_start(std::current_exception());",
      "    throw;", '-L runtime'),
    # (Also tessera_thread_limits: real runs as nobody under prlimit --nproc, stopping at each thread in turn.)
    # The generator waiting on a full window is not woken by the cancellation. Killed by the same test (a hang:
    # the first compute thread's spawn fails once the generator waits for a fifth slot of 4).
    m("window_cancel_does_not_wake", TW, "  while (free_.empty() && !cancelled_) {", "  while (free_.empty()) {",
      '-L runtime'),
    # Node k's trace not checked before the run (a link into a missing directory found after all the work).
    # Killed by tessera_outputs_on_failure (2).
    m("node_traces_not_checked_first", OUTP,
      "  for (int k = 1; k < nodes; ++k) check_output_path({name(k), node_output_path(first.path, k)});\n", "",
      OUTPUT_TESTS),
    # An output written in place: a write failing part-way leaves a part of the new file for the old one. Killed by
    # tessera_outputs_on_failure (3).
    m("outputs_written_in_place", OUTP,
      '  bool in_place = (exists && !fs::is_regular_file(st)) || abs.rfind("/dev/", 0) == 0 ||',
      "  bool in_place = true ||", OUTPUT_TESTS),
    # --json /dev/stdout opened anew where the standard output goes to a file: the summary line written over the
    # JSON's first bytes. Killed by tessera_outputs_on_failure (5).
    m("stdout_output_reopened", OUTP, "    if (abs == name) {", "    if (false) {", OUTPUT_TESTS),
    # A hard-linked output renamed over: the other name keeps the old text. Killed by tessera_outputs_on_failure (5).
    m("hard_linked_output_renamed_over", OUTP, "fs::hard_link_count(o.path, e) > 1 && !e;", "false;", OUTPUT_TESTS),
    # Nodes after a node whose set-up failed run their set-up in full before the agreement (allocating what node 0
    # refused). Killed by SimCluster.ANodeWhoseSetUpFailsEndsTheOthersAtTheAgreement (node 2's body ran).
    m("sim_nodes_after_a_failed_one_set_up", SGP, "        if (cluster && cause && cluster->node(k).set_up_pending()) {",
      "        if (false) {", '-L sim'),
    # The summary printed before the JSON: a standard output closed early loses the result. Killed by
    # tessera_outputs_on_failure (1).
    m("summary_before_json", MAIN,
      "  if (!json_path.empty())\n    write_output(",
      "  std::cout << summary << std::endl;\n  if (!json_path.empty())\n    write_output(", OUTPUT_TESTS),
    # The StarPU peer's JSON written without a check (exit 0 on a full disk). Killed by tessera_outputs_on_failure (4).
    m("starpu_peer_json_unchecked", "experiments/starpu_peer.cpp", "        status = 2;\n", "", OUTPUT_TESTS),
    # A pipe given as --input to a run of several nodes: the second open waits for ever. Killed by
    # CliOutputs.APipeIsNoInputForARunOfSeveralNodes (by its time limit).
    m("pipe_input_on_several_nodes", "experiments/driver.cpp",
      "    if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))", "    if (false)", '-R "CliOutputs.APipe"'),
]
