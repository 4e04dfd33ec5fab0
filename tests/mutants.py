#!/usr/bin/python3
"""Mutation runs: would the tests notice a plausible bug?

Each mutant changes one piece of source text the way a bug would (a rule left
out, a formula changed, an off-by-one), rebuilds, runs the tests that could
notice it (ctest --stop-on-failure on the mutant's labels), and restores the
file. KILLED: a test failed. SURVIVED: every test passed, which means either a
missing test or a change that cannot matter (an equivalent mutant, said in
its `why`). STALE: the source text is no longer there (the code changed:
update the mutant). Exit status 1 when a mutant without a `why` survived;
a `why` beginning OPEN names a known gap, a test still to write (counted
at the end).
Not part of the test command: one run of every mutant
takes about an hour on 2 cores.

    /usr/bin/python3 tests/mutants.py --build build              # every mutant
    /usr/bin/python3 tests/mutants.py --build build --only rule7  # names containing 'rule7'
    /usr/bin/python3 tests/mutants.py --list

It edits the working tree: the files it mutates must have no uncommitted
changes, and each is restored (also on Ctrl-C) before the next mutant; the
build folder is rebuilt from the restored sources at the end.
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE = '-L "unit|runtime|sim|numerics"'
WITH_CLI = '-L "unit|runtime|sim|numerics|cli"'
SCRIPTS = "-L experiments"


def m(name, path, old, new, tests=CORE, why=""):
    return {"name": name, "file": path, "old": old, "new": new, "tests": tests, "why": why}


PS, TW, DI = "runtime/protocol_sink.cpp", "runtime/task_window.cpp", "runtime/distribution.cpp"
LU, QT, CM = "kernels/cpu/lu_kernels.cpp", "algorithms/qr_tree.cpp", "models/comm_model.cpp"
KM, KN, SG = "models/kernel_model.cpp", "models/kernel_noise.cpp", "platform/simgrid/simgrid_platform.cpp"
RQ, KT, RP = "runtime/ready_queue.cpp", "base/kernel_table.hpp", "experiments/runner/report.py"
ER, HF, EX = "analysis/experiment_results.py", "experiments/heldout_floor.py", "experiments/explore.py"
TS, TC, L2 = "analysis/trace_summary.py", "analysis/trace_compare.py", "experiments/lu_002_sim.py"
REPORT = '-R "experiments_(report|runner|quick|results)"'
DF, EXR = "experiments/runner/definition.py", "experiments/runner/expr.py"
DEFS = '-R "experiments_(definitions|runner)"'
GP, GC = "experiments/gpu_predict.py", "analysis/gpu_clocks.py"
BG = "experiments/bench_gpu.py"
BC = "experiments/bench_cpu.py"
BS = "experiments/bench_starpu.py"
TV, EA, FK = "experiments/tune_validate.py", "experiments/explore_args.py", "analysis/figure_kinds.py"
TD, XP, BM = "analysis/trace_devices.py", "experiments/experiment.py", "experiments/bench_mpi.py"
PRIO = "{ return (q - out_col) * (q + 1) + (q - k); }"

MUTANTS = [
    # The protocol (000 §6) and the task window.
    m("protocol_flat_broadcast", PS, "return parent == 0 ? w : c[parent - 1];", "return parent == 0 ? w : w;"),
    m("protocol_no_write_back", PS, "  if (only_here) {", "  if (false && only_here) {"),
    m("protocol_evicts_planned_inputs", PS,
      "    if (stamp > pin_floor_) break;  // the task being planned uses it (stamps only grow)\n", ""),
    m("protocol_no_rule7", PS, "if (t.device < 0 && st(y).home >= 0 && st(y).home != dm) ensure",
      "if (false && t.device < 0 && st(y).home >= 0 && st(y).home != dm) ensure"),
    m("protocol_rule7_on_pinned_tasks", PS, "if (t.device < 0 && st(y).home >= 0 && st(y).home != dm) ensure",
      "if (st(y).home >= 0 && st(y).home != dm) ensure"),
    m("protocol_keeps_holders_of_old_version", PS, "      forget_copies(t.access[a].data);  // a new version",
      "      // a new version"),
    m("window_write_after_read", TW, "e->fired = w ? list.head == nullptr : list.writers == 0;",
      "e->fired = list.writers == 0;"),
    m("next_use_never", "runtime/next_use.cpp", "return c < start_[x + 1] ? uses_[c] : kNever;",
      "return c < start_[x + 1] ? kNever : kNever;"),
    m("ready_queue_ignores_priority", RQ, "    if (a.priority != b.priority) return a.priority < b.priority;\n", ""),
    m("ready_queue_later_first", RQ, "    return a.seq > b.seq;", "    return a.seq < b.seq;"),
    m("priority_all_zero", KT, PRIO, "{ return 0 * ((q - out_col) * (q + 1) + (q - k)); }", WITH_CLI),
    m("priority_by_step_only", KT, PRIO, "{ return 0 * (q - out_col) + (q - k); }", WITH_CLI),
    # Distribution and algorithms.
    m("distribution_gpu_not_cyclic_per_node", DI,
      "else if (layout_.is_remainder(j)) l.device = (top / Pc_) % G_ + 1;",
      "else if (layout_.is_remainder(j)) l.device = top % G_ + 1;"),
    m("distribution_default_v", DI, "return std::max(1, p / (8 * Pr));", "return std::max(1, p / (4 * Pr));"),
    m("cholesky_skips_last_narrow_column", "algorithms/cholesky.cpp",
      "    for (int j = k + 1; j < L.first_col_of_top(t + 1); ++j)\n      sink.insert(make_task(kGsmmDiag",
      "    for (int j = k + 1; j + 1 < L.first_col_of_top(t + 1); ++j)\n      sink.insert(make_task(kGsmmDiag",
      WITH_CLI),
    m("lu_tournament_drops_odd_set", LU, "          up.push_back(std::move(level[i]));\n", ""),
    m("lu_tournament_no_pivoting", LU, "  out.assign(order.begin(), order.begin() + k);",
      "  out.assign(rows.begin(), rows.begin() + k);"),
    m("lu_flat_tournament_skips_last_block", LU, "    for (index_t blk = 1; blk < nblocks; ++blk) {",
      "    for (index_t blk = 1; blk + 1 < nblocks; ++blk) {"),
    m("qr_tree_short_row_heads", QT, "if (h == t || (h > t && tall_[h])) return h;", "if (h == t || (h > t)) return h;"),
    m("qr_tree_stride_3", QT, "for (std::size_t s = 1; s < rows.size(); s *= 2)",
      "for (std::size_t s = 1; s < rows.size(); s *= 3)"),
    m("check_zero_matrix_always_passes", "algorithms/check.cpp",
      "  if (anorm <= 0) return resid <= 0 ? 0.0 : resid / (scale * eps);", "  if (anorm <= 0) return 0.0;"),
    # Models.
    m("comm_qr_closed_form", CM, "n2s_over_b2_sqrt_p(c) / 4 * std::log2(P);", "n2s_over_b2_sqrt_p(c) / 2 * std::log2(P);"),
    m("comm_cholesky_words", CM, "n * n / sqrt_p * (lg / 4 + 0.5);", "n * n / sqrt_p * (lg / 4 + 0.25);"),
    m("comm_binary_tree_sends", CM, "return D <= 1 ? 0 : (D - 1) + D / 2;", "return D <= 1 ? 0 : (D - 1) + (D + 1) / 2;"),
    m("lu_split_rounds", "models/lu_split.cpp", "std::floor(exact * (1 + 1e-9))", "std::round(exact * (1 + 1e-9))"),
    m("lu_split_without_panels", "models/lu_split.cpp", "cpu += mk - 1.0 / 3.0;", "cpu += 0 * (mk - 1.0 / 3.0);"),
    m("kernel_model_lower_point", KM,
      "const double rate = lo->rate + (f - lo->flops) / (hi->flops - lo->flops) * (hi->rate - lo->rate);",
      "const double rate = lo->rate;"),
    m("kernel_model_nearest_shape_only", KM, "constexpr std::size_t kNearest = 4;", "constexpr std::size_t kNearest = 1;"),
    m("balance_truncates", "models/balance.cpp", "std::llround(b / granularity) * granularity",
      "static_cast<std::int64_t>(b / granularity) * granularity"),
    m("cold_start_when_warm", "models/cold_start.cpp",
      "const double fc = warm ? 0.0 : m.first_call_s(sh.kernel, sh.precision);",
      "const double fc = m.first_call_s(sh.kernel, sh.precision);"),
    m("noise_quartile_span", KN, "constexpr double kQuartileSpan = 2 * 0.6744897501960817;",
      "constexpr double kQuartileSpan = 0.6744897501960817;"),
    m("noise_box_muller_half_angle", KN, "std::cos(2.0 * std::numbers::pi * u2);", "std::cos(std::numbers::pi * u2);",
      why="equivalent: cos(pi u) and cos(2 pi u) have the same distribution for u uniform on (0, 1)"),
    m("noise_one_factor_for_all_nodes", KN, '0x6E6F6465ull /* "node" */, static_cast<std::uint64_t>(node)));',
      '0x6E6F6465ull /* "node" */, 0));'),
    # The simulator.
    m("sim_latency_on_each_link", SG, "->set_latency(m.network.link.latency_s / 2)",
      "->set_latency(m.network.link.latency_s)"),
    m("sim_pcie_without_latency", SG, "->set_latency(m.node.gpus.pcie.latency_s)", "->set_latency(0)"),
    m("sim_every_message_at_once", SG, "    for (int k = 0; k < kSendsInFlight; ++k)\n      senders_.push_back",
      "    for (int k = 0; k < 64; ++k)\n      senders_.push_back"),
    m("sends_in_flight_1", "platform/network.hpp", "inline constexpr int kSendsInFlight = 16;",
      "inline constexpr int kSendsInFlight = 1;", '-L "unit|runtime|sim|numerics|mpi"',
      why="a design constant (the MPI thread's and the simulator's alike); the tests pin that both follow it"),
    # GPU memory, the protocol's copies and the counters a run reports (second round).
    # A task's inputs already on its GPU left evictable while its other inputs get buffers.
    m("protocol_task_inputs_not_pinned", PS, "  if (dm > 0)  // the copies this task uses are the GPU's most recent: not evicted for it\n    for (int a = 0; a < t.n_access; ++a)\n      if (have(t.access[a].data, dm) != kNone) touch(t.access[a].data, dm);\n",
      "", CORE),
    # A discarded (scratch) copy written back on eviction.
    m("protocol_writes_back_scratch", PS, "bool only_here = have(y, g) == v && st(y).writer == d_.self && !st(y).scratch;",
      "bool only_here = have(y, g) == v && st(y).writer == d_.self;", WITH_CLI),
    # An evicted copy written back although the host (or another GPU) holds its version.
    m("protocol_writes_back_what_the_host_has", PS, "  for (int e = 0; e <= G_ && only_here; ++e)",
      "  for (int e = 0; e <= G_ && false; ++e)", WITH_CLI),
    # Bytes written back not counted.
    m("protocol_written_back_bytes_uncounted", PS, "c.bytes_written_back.fetch_add(d_.store->bytes(y), std::memory_order_relaxed);",
      "c.bytes_written_back.fetch_add(0, std::memory_order_relaxed);", WITH_CLI),
    # A dropped copy's bytes kept in the GPU's plan.
    m("protocol_drop_keeps_planned_bytes", PS, "    planned_[dev - 1] -= d_.store->bytes(x);\n",
      "", CORE),
    # A buffer that fits exactly evicts another.
    m("protocol_exact_fit_evicts", PS, "while (planned_[g - 1] + bytes > budget_[g - 1])",
      "while (planned_[g - 1] + bytes >= budget_[g - 1])", CORE),
    # A released datum homed on a GPU not brought to host memory before its copies go.
    m("protocol_release_leaves_gpu_home", PS, "  if (st(x).home >= 0) ensure(x, 0, 0);  // from a GPU",
      "  if (false) ensure(x, 0, 0);  // from a GPU", CORE),
    # A node's copies of its own datum kept current when another node writes it.
    m("protocol_own_copies_not_staled", PS, "      for (int e = 0; e <= G_; ++e)  // this node's own copies are old versions now",
      "      for (int e = 0; e <= G_ && false; ++e)  // this node's own copies are old versions now", CORE,
      why="equivalent: a copy's version number already differs from the new version; kStale only names it"),
    # A task's inputs not followed by the node that runs it.
    m("relevance_only_main_output", "runtime/relevance.cpp", "        r.set(at, x);",
      "        if (a == main) r.set(at, x);", CORE),
    # Copies admitted together each checked against the free memory alone.
    m("admission_forgets_admitted", "runtime/run_state.hpp", "dev.in_use() + admitted[g - 1] + bytes > dev.capacity()",
      "dev.in_use() + bytes > dev.capacity()", CORE),
    # Distinct bytes counted at every crossing.
    m("distinct_bytes_every_copy", "runtime/run_state.hpp", "    if (!(crossed & bit)) {",
      "    if (true) {", WITH_CLI),
    # A GPU's peak bytes never recorded.
    m("gpu_peak_never_updated", "runtime/run_state.hpp", "      while (now > p && !peak.compare_exchange_weak(p, now)) {",
      "      while (false && !peak.compare_exchange_weak(p, now)) {", WITH_CLI),
    # A queued copy's stream busy from when it was queued.
    m("copy_busy_counts_queueing", "runtime/device_comm.cpp", "      const double began = std::max(f.started, st.last_ended);",
      "      const double began = f.started;", WITH_CLI,
      why="real clocks only (the simulated GPU queues one copy per stream): GpuRuntimeCopyDepth bounds the busy "
          "time from below; an upper bound on an emulated device's sleeps would be flaky on a loaded 2-core machine"),
    # A buffer-only copy counted as moving bytes (busy time, trace).
    m("copy_busy_counts_buffer_only", "runtime/device_comm.cpp", "      const bool moved = f.task->desc.arg[3] != kCopyBufferOnly;",
      "      const bool moved = true;", WITH_CLI),
    # Protocol memory, task window, copies and a run's statistics (third round, proposed by a reviewer).
    # Release_Tile frees only GPU copies: a received copy of another node's datum stays in host memory until
    # generation ends (ProtocolRules.AReleasedCopyOfAnotherNodesDatumIsFreedAtTheRelease).
    m("protocol_release_keeps_alien_host_copies", PS,
      "  for (int dev = st(x).home >= 0 ? 1 : 0; dev <= G_; ++dev) drop(x, dev);\n}\n\nvoid ProtocolSink::discard",
      "  for (int dev = 1; dev <= G_; ++dev) drop(x, dev);\n}\n\nvoid ProtocolSink::discard", CORE),
    # Off-by-one: when another node writes a datum, the stale copy on this node's last device (host memory without
    # GPUs) is not dropped; it holds memory (a GPU's plan) until Release_Tile.
    # (ProtocolRules.ACopyOfAnotherNodesDatumGoesWhenAnotherNodeWritesIt)
    m("protocol_stale_alien_copy_on_last_device_kept", PS,
      "      for (int e = 0; e <= G_; ++e) drop(y, e);  // a stale copy of another node's datum",
      "      for (int e = 0; e < G_; ++e) drop(y, e);  // a stale copy of another node's datum", CORE),
    # A node that wrote another node's datum is not told when a third node writes it (after_write skipped): its
    # stale copies stay until Release_Tile. (The same test.)
    m("protocol_old_writer_not_touched", PS,
      "    touches |= loc_[a].node == d_.self || st(x).writer == d_.self || from_[a] == d_.self;",
      "    touches |= loc_[a].node == d_.self || from_[a] == d_.self;", CORE),
    # Eviction ties go to the most recently used copy (the comment says the oldest wins).
    # (ProtocolRules.OfCopiesUsedAgainEquallyLateTheOldestIsEvicted)
    m("protocol_next_use_tie_newest", PS,
      "    if (next > furthest || furthest == 0) best = x, furthest = next;",
      "    if (next >= furthest || furthest == 0) best = x, furthest = next;", WITH_CLI),
    # Belady's future counts the host's tasks too, so a tile the cores read soon stays on the GPU.
    # (ProtocolRules.TheHostsTasksDoNotKeepACopyOnTheGpu)
    m("protocol_next_use_counts_host_tasks", PS,
      "      return l.node == d_.self && (t.device < 0 ? l.device : t.device) > 0;",
      "      return l.node == d_.self && (t.device < 0 ? l.device : t.device) >= 0;", WITH_CLI),
    # A task pinned to the host (TaskDesc::device 0, LU's cores' columns) runs on its main output's device instead.
    # (ProtocolRules.ATaskPinnedToTheHostRunsOnTheHost)
    m("protocol_host_pinned_task_runs_on_main_device", PS,
      "  if (t.device < 0) return loc_[main].device;",
      "  if (t.device <= 0) return loc_[main].device;", WITH_CLI),
    # A source minor output's peer (where it goes, 000 §6) named as the owner instead of the datum's home.
    # (ProtocolUnion checks every instance's peer.)
    m("protocol_source_minor_output_peer_is_owner", "runtime/protocol.cpp",
      "{same_node ? InstanceKind::IntraNodeSourceMinorOutput : InstanceKind::InterNodeSourceMinorOutput, a, x});",
      "{same_node ? InstanceKind::IntraNodeSourceMinorOutput : InstanceKind::InterNodeSourceMinorOutput, a, m});",
      CORE),
    # A finished reader releases the writer right after it, although readers ahead of it still run (WAR).
    # Expected killed by TaskWindow.FireReleasesReadersUpToTheNextWriter (r2 finishes before r1).
    m("window_reader_releases_writer_behind_it", "runtime/task_window.cpp",
      "    } else if (x && writes(x->mode)) {\n      // The last reader ahead of a writer is gone.\n      release_entry(x, ready);",
      "    } else if (e->next && writes(e->next->mode)) {\n      // The last reader ahead of a writer is gone.\n      release_entry(e->next, ready);",
      CORE),
    # A parked copy (waiting for GPU memory) is handed to a stream that already holds its depth of copies.
    # Expected killed by the out-of-core runs' max_queued <= copy_depth (gpu_test_util expect_correct).
    m("device_comm_parked_copy_ignores_stream_depth", "runtime/device_comm.cpp",
      "          if (s.streams[it->stream].has_room() && s.admit(*it, reserved)) {",
      "          if (s.admit(*it, reserved)) {", CORE),
    # The copy mailbox's heap not popped: the last posted copy goes first, not the highest priority.
    # (CopyStreams.AStreamTakesTheMostUrgentCopyFirst)
    m("device_comm_mailbox_not_by_priority", "runtime/device_comm.cpp",
      "            std::pop_heap(st.mbox.begin(), st.mbox.end(), RunState::lower_priority);\n",
      "", CORE),
    # An emulated GPU's copies in and out share one copy engine (no overlap of the two directions, 000 §5.4).
    # (CopyStreams.TheTwoDirectionsHaveAnEngineEach)
    m("emulated_gpu_one_copy_engine", "platform/native/emulated_device.cpp",
      "  Engine& e = engines_[stream & 1];", "  Engine& e = engines_[0];", CORE),
    # Words sent counted as 8-byte doubles whatever the precision. (SimCluster.AMessageTakesTheLatency...,
    # single precision).
    m("comm_words_sent_assume_double", "runtime/node_runtime.cpp",
      "    stats.comm.words_sent = s.sent_bytes / w;",
      "    stats.comm.words_sent = s.sent_bytes / sizeof(double);", WITH_CLI),
    # The last breakdown in column order reported instead of the first (tessera_input_every_backend, label mpi,
    # under mpirun; CliExitStatus.OnASimulatedClusterTheFirstBreakdownInColumnOrderIsReported in a simulated cluster).
    m("distributed_breakdown_reports_last_column", "runtime/node_runtime.cpp",
      "        if (breakdown(k) && (primary < 0 || status[P + k] < status[P + primary])) primary = k;",
      "        if (breakdown(k) && (primary < 0 || status[P + k] > status[P + primary])) primary = k;", WITH_CLI),
    # Under mpirun (tessera_mpi_traces, label mpi): every message reported as from the receiving rank itself,
    # and received messages without their transit time.
    m("mpi_message_from_self", "platform/native/mpi_network.cpp", "        deliver(r.source, std::move(m));",
      "        deliver(rank, std::move(m));", '-L mpi'),
    m("mpi_transit_not_measured", "platform/native/mpi_network.cpp",
      "        m.set_transit_s(std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count());\n",
      "", '-L mpi'),
    # A GPU's kernel_span_s counted from the device's construction (warm-up and earlier runs included).
    # (SimGpuStreamsRuns.EachRunReportsItsOwnKernelSpan: two runs on one simulated GPU.)
    m("gpu_kernel_span_since_device_start", "runtime/node_runtime.cpp",
      "    d.kernel_span_s = options_.gpus[g - 1].device->kernel_span_s() - span_at_start[g - 1];",
      "    d.kernel_span_s = options_.gpus[g - 1].device->kernel_span_s();", WITH_CLI),
    # copy_in_s and copy_out_s reported from each other's stream. (SimGpusPhantom.EachDirectionsCopyTimeIsItsOwnBytes:
    # lopsided traffic).
    m("gpu_copy_times_swapped", "runtime/node_runtime.cpp",
      "    d.copy_in_s = s.streams[2 * (g - 1)].busy_s, d.copy_out_s = s.streams[2 * (g - 1) + 1].busy_s;",
      "    d.copy_in_s = s.streams[2 * (g - 1) + 1].busy_s, d.copy_out_s = s.streams[2 * (g - 1)].busy_s;", WITH_CLI),
    # A task retired out of order (several streams) counted busy only from its own queuing, not from the
    # earliest still in flight beside it: GPU busy_s (and the trace's task start) too small.
    # (SimGpuStreamsRuns.AGpusBusyTimeCoversEveryKernel)
    m("gpu_busy_from_own_queueing_only", "runtime/node_runtime.cpp",
      "        for (const Queued& o : flight) queued = std::min(queued, o.queued_at);\n",
      "", WITH_CLI),
    # GPU lanes and sharing, message counters (third round).
    # A panel queued behind a busy panel stream instead of taking another.
    m("lanes_panel_waits_for_stream_0", "platform/kernel_lanes.hpp", "if (busy.size() == 1 || (panel && busy[0] == 0)) return 0;",
      "if (busy.size() == 1 || panel) return 0;", CORE),
    # Lanes taken in turn whatever their load.
    m("lanes_round_robin_only", "platform/kernel_lanes.hpp", "    if (busy[l] < busy[lane]) lane = l;",
      "    if (false && busy[l] < busy[lane]) lane = l;", CORE),
    # A kernel's share of the GPU as GEMM's rate over its own.
    m("device_share_inverted", "platform/kernel_time_model.hpp", "return std::clamp((flops / t) / (gemm_flops / t_gemm), kMinDeviceShare, 1.0);",
      "return std::clamp((gemm_flops / t_gemm) / (flops / t), kMinDeviceShare, 1.0);", CORE),
    # The panels' stream without its priority in the GPU's sharing.
    m("sim_gpu_panels_without_priority", "platform/simgrid/sim_gpu.cpp", "static constexpr double kFirstStreamWeight = 1e6;",
      "static constexpr double kFirstStreamWeight = 1;", CORE),
    # Bytes received not counted.
    m("messages_received_bytes_uncounted", "runtime/run_state.hpp", "    received_bytes.fetch_add(m.bytes(), std::memory_order_relaxed);",
      "    received_bytes.fetch_add(0, std::memory_order_relaxed);", WITH_CLI),
    # Checks, generators, executors' edge cases, machine files, the tuner (second round).
    # A distributed check summing only the stored lower triangle.
    m("dist_check_cholesky_norm_lower_only", "algorithms/dist_check.cpp",
      "          if (r0 + r > c0 + c) colsum[r0 + r] += x;\n", "", CORE),
    # QR's residual scaled by n, not max(m, n).
    m("check_qr_residual_scaled_by_n", "algorithms/check.cpp",
      "  return {scaled_ratio(resid, anorm, static_cast<double>(std::max(m, n)), eps),",
      "  return {scaled_ratio(resid, anorm, static_cast<double>(n), eps),", CORE),
    # LU's solve ratio n times looser (LuCheck.SolveRatioIsTheScaledResidualOfASolve).
    m("lu_solve_check_scaled_by_n_squared", "algorithms/lu_check.cpp",
      "      ratio = scaled_ratio(rnorm, ainf * xnorm, static_cast<double>(n), eps);",
      "      ratio = scaled_ratio(rnorm, ainf * xnorm, static_cast<double>(n * n), eps);", CORE),
    # LU's flops counted as QR's (Driver.FlopCounts).
    m("lu_flops_counted_like_qr", "algorithms/lu_factorization.cpp",
      "    return M * N * N - N * N * N / 3.0;",
      "    return 2.0 * M * N * N - 2.0 * N * N * N / 3.0;", WITH_CLI),
    # 002's CPU share one column wider (LuTaskGraph.TheCpuShareHoldsColumnsKToKPlusD).
    m("lu_split_one_extra_cpu_column", "algorithms/lu.cpp",
      "    return o.d > 0 && j < k + o.d ? 0", "    return o.d > 0 && j <= k + o.d ? 0", CORE),
    # A single row below the diagonal block left out (LuTaskGraph.TheTopRowUpdates...).
    m("lu_top_row_gemm_skips_single_row", "algorithms/lu.cpp",
      "      if (L.row_height(t) > L.col_local_offset(k) + L.col_width(k))",
      "      if (L.row_height(t) > L.col_local_offset(k) + L.col_width(k) + 1)", CORE),
    # QR's final R rows released only at the end (TaskGraphReleases).
    m("qr_row_tiles_never_released", "algorithms/qr.cpp",
      "    if (k + 1 == q || L.col_top(k + 1) != t)", "    if (k + 1 == q)", CORE),
    # GSMM_DIAG timed over rows above the diagonal (CholeskyShapes).
    m("cholesky_shape_gsmm_diag_full_height", "algorithms/cholesky.cpp",
      "      s.m = L.row_height(i) - L.col_local_offset(j);", "      s.m = L.row_height(i);", CORE),
    # Rank floor(n/2) for odd n (MatrixGen.RankDeficientOfOddOrderHasRankCeilHalf).
    m("matrix_gen_rankdef_floor", "base/matrix_gen.cpp",
      "  const index_t rank = (n + 1) / 2;", "  const index_t rank = n / 2;", CORE),
    # A tall graded matrix scaled over n (MatrixGen.GradedIsTheSpdKindScaledOverTheRows).
    m("matrix_gen_graded_by_columns", "base/matrix_gen.cpp",
      "std::pow(10.0, -6.0 * static_cast<double>(i) / static_cast<double>(m - 1))",
      "std::pow(10.0, -6.0 * static_cast<double>(i) / static_cast<double>(n - 1))", CORE),
    # "calibrated": false ignored (MachineFiles, SimCluster.AMessageTakes...).
    m("machine_calibrated_flag_ignored", "models/machine.cpp",
      "    m.network.calibrated = c.get<bool>();", "    m.network.calibrated = true;", WITH_CLI),
    # A model_by_threads key 0 accepted (MachineFiles.ModelByThreadsKeysAreThreadCounts).
    m("machine_bad_thread_key_accepted", "models/machine.cpp",
      "      if (t < 1) by.fail(key, value, \"key must be a thread count >= 1\");",
      "      if (t < 0) by.fail(key, value, \"key must be a thread count >= 1\");", WITH_CLI),
    # The slowest of a candidate's runs kept (TuneCli.RealRunsRepeatTheFastest...).
    m("tune_keeps_slowest_repeat", "experiments/tune.cpp",
      "        c.real_s = c.real_s ? std::min(*c.real_s, *run.time_s) : *run.time_s;",
      "        c.real_s = c.real_s ? std::max(*c.real_s, *run.time_s) : *run.time_s;", WITH_CLI),
    # The slowest three repeated (TuneCli.RealRunsRepeatTheFastest...).
    m("tune_repeats_slowest_three", "experiments/tune.cpp",
      "[&](std::size_t a, std::size_t b) { return *t.candidates[a].real_s < *t.candidates[b].real_s; });",
      "[&](std::size_t a, std::size_t b) { return *t.candidates[a].real_s > *t.candidates[b].real_s; });",
      WITH_CLI),
    # --B auto on a grid tuned for N/(Pr Pc) (TuneCli.BAutoChildrenRunTheRunsOwnDistribution).
    m("apply_tuning_share_of_all_nodes", "experiments/apply_tuning.cpp",
      "  const int share = std::max(cfg.pr, cfg.pc);", "  const int share = cfg.pr * cfg.pc;", WITH_CLI),
    # One simulated node's GPU buffers (PreflightMemory.SimulatedGpusWithData...).
    m("preflight_sim_gpu_buffers_one_node", "experiments/preflight.cpp",
      "  need.gpu_buffers = gpus * need.nodes_here;", "  need.gpu_buffers = gpus;", WITH_CLI),
    # A pipe refused as input (CliOutputs.AnInputThroughAPipeIsRead).
    m("input_file_refuses_pipes", "base/input_file.cpp",
      "  if (!fs::is_regular_file(st) && !fs::is_fifo(st))", "  if (!fs::is_regular_file(st))", WITH_CLI),
    # Experiment scripts.
    m("report_mean_for_median", RP, '"median": statistics.median(good)', '"median": statistics.mean(good)', SCRIPTS),
    m("report_smallest_reference", RP, "out.append(v / max(refs))", "out.append(v / min(refs))", SCRIPTS),
    m("report_best_of_smallest", RP, "best = max(cands, key=lambda c: c[0])", "best = min(cands, key=lambda c: c[0])",
      SCRIPTS),
    m("bench_mpi_ratio_upside_down", "experiments/bench_mpi.py", 'ratio = f"{t / s:.2f}x"', 'ratio = f"{s / t:.2f}x"',
      SCRIPTS),
    m("runner_timeout_as_failure", "experiments/runner/execute.py",
      'record["status"] = "ok" if result is not None else ("timeout" if timed_out else "failed")',
      'record["status"] = "ok" if result is not None else ("failed" if timed_out else "failed")', SCRIPTS),
    # Round 4: the Python layer users read numbers from (results folders, the machine's floor, explore's ranking,
    # trace views, lu_002_sim's models of d), each run against the tests of its script.
    # Reading results (analysis/experiment_results.py): what every figure and the report are drawn from.
    # A configuration run again (a resumed or repeated sweep) keeps its first record instead of its last.
    m("results_keep_first_record", ER, '                records[(r["config_id"], r["repeat"])] = r',
     '                records.setdefault((r["config_id"], r["repeat"]), r)', REPORT),
    # A point's value the mean of its repeats instead of their median.
    m("results_mean_not_median", ER, "        return statistics.median(vals) if vals else None",
     "        return statistics.mean(vals) if vals else None", REPORT),
    # Failed repeats' numbers counted in a point's value.
    m("results_values_of_failed_runs", ER, "        for r in self.ok:\n            v = _lookup(r, name)",
     "        for r in self.runs:\n            v = _lookup(r, name)", REPORT),
    # Points of an earlier sweep (configurations the definition no longer has) plotted beside the last sweep's.
    m("results_old_sweeps_points", ER, 'if not wanted or r["config_id"] in wanted)', "if True)", REPORT),
    # A parameter of the same name hides the run's measured value.
    m("results_params_before_metrics", ER,
     '    for src in (record.get("metrics") or {}, record.get("result") or {}, record["params"]):',
     '    for src in (record["params"], record.get("metrics") or {}, record.get("result") or {}):', REPORT),
    # A point with a successful repeat still reported as failed.
    m("results_failure_beside_successes", ER, "        if self.ok or not self.failed:", "        if not self.failed:",
     REPORT),
    # The machine's own floor (experiments/heldout_floor.py).
    m("heldout_error_over_the_earlier_sweep", HF,
     '100.0 * (a[k]["best"] - b[k]["best"]) / b[k]["best"] for k in keys}',
     '100.0 * (a[k]["best"] - b[k]["best"]) / a[k]["best"] for k in keys}', "-R experiments_heldout_floor"),
    m("heldout_shift_added", HF, "{k: e - shift for k, e in floor.items()}", "{k: e + shift for k, e in floor.items()}",
     "-R experiments_heldout_floor"),
    m("heldout_worst_by_signed_error", HF, "    key = max(errors, key=lambda k: abs(errors[k]))",
     "    key = max(errors, key=lambda k: errors[k])", "-R experiments_heldout_floor"),
    m("heldout_model_error_over_prediction", HF, "            model = 100.0 * (pred - best) / best",
     "            model = 100.0 * (pred - best) / pred", "-R experiments_heldout_floor"),
    # `tessera explore` (experiments/explore.py): its ranking and recommendation.
    m("explore_slowest_first", EX, '    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: r["time_s"])',
     '    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: -r["time_s"])', "-R experiments_explore"),
    m("explore_seeds_mean", EX, "            row.update(time_s=statistics.median(times),",
     "            row.update(time_s=sum(times) / len(times),", "-R experiments_explore"),
    m("explore_failed_seed_ignored", EX, '        bad = [r for r in rs if r["status"] != "ok"]\n        row = dict(',
     "        bad = []\n        row = dict(", "-R experiments_explore"),
    m("explore_faster_than_second_over_second", EX, "    return 100.0 * (b - a) / a", "    return 100.0 * (b - a) / b",
     "-R experiments_explore"),
    # Trace views (analysis/trace_summary.py, trace_compare.py).
    m("trace_summary_makespan_from_zero", TS, "    makespan = end - start", "    makespan = end",
     '-R "experiments_trace"'),
    m("trace_summary_transfer_bytes_last", TS, '        x["bytes"] += e.get("args", {}).get("bytes", 0)',
     '        x["bytes"] = e.get("args", {}).get("bytes", 0)', '-R "experiments_(trace|bad)"'),
    m("trace_compare_ratio_inverted", TC, '            row["mean_ratio"] = y["mean_us"] / x["mean_us"] if',
     '            row["mean_ratio"] = x["mean_us"] / y["mean_us"] if', '-R "experiments_trace"'),
    m("trace_compare_same_tasks_by_name", TC,
     '    same = set(ka) == set(kb) and all(ka[n]["count"] == kb[n]["count"] for n in ka)',
     "    same = set(ka) == set(kb)", '-R "experiments_trace"'),
    m("trace_compare_spread_is_range", TC, '"spread_us": q[2] - q[0]', '"spread_us": d[-1] - d[0]',
     '-R "experiments_trace"'),
    # experiments/lu_002_sim.py's models of d (experiments_lu_002_sim).
    m("lu002_eq1_rounds_up", L2, "    d = math.floor(q * P * g1 / (P * g1 + g2) * (1 + 1e-9))",
     "    d = math.ceil(q * P * g1 / (P * g1 + g2) * (1 - 1e-9))", "-R experiments_lu_002_sim"),
    m("lu002_panel_flops", L2, "        cpu += mk - 1.0 / 3.0", "        cpu += mk", "-R experiments_lu_002_sim"),
    m("lu002_cpu_columns_off_by_one", L2, "            if j < k + d:", "            if j <= k + d:",
     "-R experiments_lu_002_sim"),
    m("lu002_balance_sums_sides", L2, "        t = max(cpu / (P * g1), gpu / g2)", "        t = cpu / (P * g1) + gpu / g2",
     "-R experiments_lu_002_sim"),
    m("lu002_efficiency_step", L2, "            return ea + (eb - ea) * (size - a) / (b - a)", "            return eb",
     "-R experiments_lu_002_sim"),
    # Experiment definitions (experiments/runner/definition.py, expr.py): which runs a sweep makes.
    # Simulations (deterministic) repeated as often as real runs.
    m("definition_sim_repeats", DF, '        return 1 if backend == "sim" else self.doc.get("repeats", 1)',
     '        return self.doc.get("repeats", 1)', DEFS),
    # A --quick section's fixed values ignored.
    m("definition_quick_fixed_ignored", DF, '        fixed.update(section.get("fixed", {}))\n', "", DEFS),
    # A --quick section's derived values ignored.
    m("definition_quick_derived_ignored", DF, '        derived.update(section.get("derived", {}))\n', "", DEFS),
    # A skip entry leaves out a point matching any of its keys instead of all.
    m("definition_skip_any_key", DF,
     "            if all(params.get(k) in (v if isinstance(v, list) else [v]) for k, v in s[\"where\"].items()):",
     "            if any(params.get(k) in (v if isinstance(v, list) else [v]) for k, v in s[\"where\"].items()):", DEFS),
    # Zipped lists of a sweep factor crossed instead of zipped.
    m("definition_zip_as_product", DF, "    return [dict(zip(keys, values)) for values in zip(*[factor[k] for k in keys])]",
     "    return [dict(zip(keys, values)) for values in itertools.product(*[factor[k] for k in keys])]", DEFS),
    # grid_of(nodes): the least square grid (1 x nodes) instead of the most square.
    m("expr_grid_least_square", EXR,
     "    pr = max(d for d in range(1, math.isqrt(nodes) + 1) if nodes % d == 0)",
     "    pr = min(d for d in range(1, math.isqrt(nodes) + 1) if nodes % d == 0)", DEFS),
    m("expr_grid_transposed", EXR, '    return "%dx%d" % (pr, nodes // pr)', '    return "%dx%d" % (nodes // pr, pr)', DEFS),
    # The lent GPU machine's analysis (issue 15 point 7: simulated runs within 10% of the real ones).
    # The prediction's error relative to the prediction instead of the real run.
    m("gpu_predict_error_over_prediction", GP,
     '            err = (pred["time_s"] - real["time_s"]) / real["time_s"] if is_real_policy else None',
     '            err = (pred["time_s"] - real["time_s"]) / pred["time_s"] if is_real_policy else None',
     "-R experiments_gpu_scripts"),
    # A GPU's first task of a kernel taken as its latest.
    m("gpu_predict_first_call_latest", GP, '        if gpu not in first or e["ts"] < first[gpu][0]:',
     '        if gpu not in first or e["ts"] > first[gpu][0]:', "-R experiments_gpu_scripts"),
    # A real run whose GPU first calls were paid simulated with its warm-up on (the first calls left out).
    m("gpu_predict_warmup_when_paid", GP, '        if cold == "paid":\n            sim_args += ["--gpu-warmup", "off"]',
     '        if cold != "paid":\n            sim_args += ["--gpu-warmup", "off"]', "-R experiments_gpu_scripts"),
    # The other tasks' model time not scaled to their count (first calls taken out of the real side only).
    m("gpu_predict_rest_model_unscaled", GP, "            rest_model = model_s * (n - firsts) / n",
     "            rest_model = model_s", "-R experiments_gpu_scripts"),
    # The clocks' slow share against the step's own highest instead of the call's.
    m("gpu_clocks_slow_against_step_top", GC, '"slow_share": sum(1 for v in sm if v < 0.95 * top) / len(sm),',
     '"slow_share": sum(1 for v in sm if v < 0.95 * max(sm)) / len(sm),', "-R experiments_gpu_clocks"),
    # Idle samples counted (an idle GPU's low clocks read as a slowdown).
    m("gpu_clocks_idle_counted", GC, "        busy = [s for s in samples if start <= s[0] <= end and is_busy(s)]",
     "        busy = [s for s in samples if start <= s[0] <= end]", "-R experiments_gpu_clocks"),
    # The idle bit (GpuIdle) reported as a reason.
    m("gpu_clocks_idle_reason_kept", GC, '"reasons": reason_names(mask & ~0x1)})', '"reasons": reason_names(mask)})',
     "-R experiments_gpu_clocks"),
    # bench_gpu.py, the table issue 15 point 5 is decided by, and bench_cpu.py (experiments_bench_numbers).
    # cuSOLVER's rate with and without its copies swapped.
    m("bench_gpu_peer_copies_swapped", BG, "append((gf * t / (t + c), gf))", "append((gf, gf * t / (t + c)))",
     "-R experiments_bench_numbers"),
    m("bench_gpu_ratio_inverted", BG, "            rw = mt / mw if mt and mw else None",
     "            rw = mw / mt if mt and mw else None", "-R experiments_bench_numbers"),
    m("bench_gpu_mean_not_median", BG, "    return statistics.median(values) if values else None",
     "    return statistics.mean(values) if values else None", "-R experiments_bench_numbers"),
    # The link's rate from the matrix's one way instead of in and out.
    m("bench_gpu_link_one_way", BG, "append(2 * args.n * args.n * item / c / 1e9)",
     "append(args.n * args.n * item / c / 1e9)", "-R experiments_bench_numbers"),
    m("bench_cpu_ratio_inverted", BC, "        ratio = t / l if t and l else None", "        ratio = l / t if t and l else None",
     "-R experiments_bench_numbers"),
    m("bench_cpu_mean_not_median", BC, "        t = statistics.median(tile) if tile else None",
     "        t = statistics.mean(tile) if tile else None", "-R experiments_bench_numbers"),
    # A ratio equal to its target reported as missed.
    m("bench_cpu_target_strict", BC, 'else "yes" if ratio >= target else "NO")', 'else "yes" if ratio > target else "NO")',
     "-R experiments_bench_numbers"),
    # bench_starpu.py: tessera against the worse StarPU policy instead of the better.
    m("bench_starpu_worst_policy", BS, "        best = max(peers) if peers else None", "        best = min(peers) if peers else None",
     "-R experiments_bad_input"),
    # Round 5, proposed by a reviewer: calibration from traces and in runs, the trace, distributed checks, options, MPI.
    # Old native traces (no gpu_warmup field) treated as warm, so their first calls are lost.
    m("cft_old_native_trace_warm", "experiments/calibrate_from_traces.cpp",
     '(warmup.empty() ? t.value("/otherData/backend"_json_pointer, std::string()) == "native" : warmup == "off")',
     '(warmup == "off")', CORE),
    # Traces run at two --ib values merged silently.
    m("cft_ib_conflict_ignored", "experiments/calibrate_from_traces.cpp", "    if (blockings.size() > 1) {",
     "    if (blockings.size() > 2) {", CORE),
    # A first call faster than the median gives a negative cost.
    m("cft_first_call_excess_can_be_negative", "experiments/calibrate_from_traces.cpp",
     "push_back(std::max(0.0, c.seconds - median_of(it->second)));", "push_back(c.seconds - median_of(it->second));",
     CORE),  # CalibrateFromTraces.AFirstCallFasterThanTheRestCostsNothing
    # --in-run --passes keeps the slowest pass's median per shape, run time, task gap
    # (InRunCalibration.PassesKeepTheFastestOfEachNumber).
    m("in_run_keeps_slowest_pass", "experiments/calibrate_in_run.cpp",
     "    if (it == best_.end() || x.median_s < it->second.median_s) best_[key] = x;",
     "    if (it == best_.end() || x.median_s > it->second.median_s) best_[key] = x;", CORE),
    m("in_run_keeps_slowest_run", "experiments/calibrate_in_run.cpp",
     "runs_[i].time_s = std::min(runs_[i].time_s, runs[i].time_s);",
     "runs_[i].time_s = std::max(runs_[i].time_s, runs[i].time_s);", CORE),
    m("in_run_keeps_last_task_gap", "experiments/calibrate_in_run.cpp",
     "    if (it == task_s_.end() || median < it->second) task_s_[t] = median;",
     "    task_s_[t] = median;", CORE),
    # A pass below min_calls for a shape still counts for it.
    m("in_run_pass_min_calls_ignored", "experiments/calibrate_in_run.cpp",
     "summarize_in_run(calls, min_calls_)", "summarize_in_run(calls, 1)", CORE),
    # Equally near run shapes: the last in the file wins, not the first.
    m("in_run_nearest_ratio_last_of_ties", "experiments/calibrate_in_run.cpp",
     "if (const double d = dist(r); best == nullptr || d < best_d) best = &r, best_d = d;",
     "if (const double d = dist(r); best == nullptr || d <= best_d) best = &r, best_d = d;", CORE),
    # A scaled shape keeps its isolated min_s while its median is scaled.
    m("in_run_min_s_not_scaled", "experiments/calibrate_in_run.cpp",
     '        if (e.contains("min_s")) e["min_s"] = five_digits(e["min_s"].get<double>() * *sc);\n', "", CORE),
    # A trace's tile coordinates i and j swapped (Trace.SimulatedCholeskyFollowsSchemaAndIsDeterministic).
    m("trace_tile_coordinates_transposed", "runtime/trace.cpp",
     'return fmt::format(R"("i":{},"j":{})", d % info.tile_rows, d / info.tile_rows);',
     'return fmt::format(R"("i":{},"j":{})", d / info.tile_rows, d % info.tile_rows);', '-L "sim|cli"'),
    # Distributed orthogonality scaled by n, not m (check.cpp uses m).
    m("dist_check_orth_scaled_by_n", "algorithms/dist_check.cpp", "onorm / (static_cast<double>(m) * eps)",
     "onorm / (static_cast<double>(n) * eps)", CORE),
    # |I - Q^T Q| from its upper part without the mirror
    # (DistributedCheck.OrthogonalityOfATallQAndOfACorruptReflector, both).
    m("dist_check_orth_upper_only", "algorithms/dist_check.cpp",
     "            if (r0 + x < c0 + col) w_cols[r0 + x] += g;\n", "", CORE),
    # The summary and JSON variant drop "domain=D" (CliQrTree.TheVariantNamesTheDomains).
    m("qr_variant_drops_domain", "algorithms/qr_factorization.cpp",
     'return domain_ > 0 ? "tree=binary domain=" + std::to_string(domain_) : "tree=binary";', 'return "tree=binary";',
     WITH_CLI),
    # The 2^30-tile limit ignores --s (CliOutputs.HostileSizesAreRefusedBeforeAnythingGrowsWithThem, under 2 GiB).
    m("run_config_tile_count_ignores_s", "experiments/run_config.cpp", "  const double tiles = rows * cols * c.s;",
     "  const double tiles = rows * cols;", WITH_CLI),
    # --d auto for a tall LU counts its tile rows as q n / m instead of q m / n (experiments_lu_002_sim's tall runs).
    m("run_config_lu_split_tall_rows_inverted", "experiments/run_config.cpp",
     "std::llround(static_cast<double>(q) * c.m / c.n)", "std::llround(static_cast<double>(q) * c.n / c.m)",
     '-R "experiments_lu_002_sim"'),
    # Round 6: Python scripts with no mutant before (a helper's proposals).
    # --- experiments/tune_validate.py (only its bad options are tested: test_bad_input.py test_tune_validate)
    # Bug: tuned / best computed upside down (best / tuned). The ratio is then always <= 1, so
    # `ok &= ratio <= 1.05` always holds: a tuner 30% off the sweep's best is reported as 0.77 and exits 0.
    # Survived the tests before round 6 (no test runs a sweep + tune + confirm). Detect: a stand-in tessera whose
    # `run` writes time_s from its --B/--s (or --tuned file's choice) and whose `tune` writes a choice that
    # is 1.3x slower than the best grid point; run tune_validate.py --cells cholesky:d:64 --reps 1; assert
    # exit 1 and summary.json[0]["tuned_over_best"] == 1.3 (within 1e-9).
    # Killed since by experiments_bench_numbers.
    m("tune_validate_ratio_upside_down", TV, "        ratio = t / b if t and b else None",
      "        ratio = b / t if t and b else None", "-R experiments_bench_numbers"),
    # Bug: the sweep's "three fastest" sorted the wrong way: the three slowest grid points are confirmed,
    # so the best of the contenders is the tuned configuration itself and tuned/best <= 1.0 whatever
    # the tuner chose. Survived the tests before round 6. Detect: the same stand-in (time_s a known function of B
    # and s); assert summary.json's "best" names the fastest grid point ("B<b> s<s>") and runs_s has
    # its key, and that exit is 1 when the tuned choice is slower than it by more than 5%.
    # Killed since by experiments_bench_numbers.
    m("tune_validate_confirms_slowest_three", TV, '                  key=lambda r: r["time_s"])[:3]',
      '                  key=lambda r: -r["time_s"])[:3]', "-R experiments_bench_numbers"),

    # --- experiments/explore_args.py (tests: test_explore.py, cases dry_run / bad_set)
    # Bug: the range START:STOP:STEP loses its rounding tolerance, so a STOP a float step lands on is
    # dropped: 0.1:0.3:0.1 gives [0.1, 0.2] ((0.3-0.1)/0.1 = 1.9999999999999998), 0.1:0.7:0.2 three
    # values instead of four. The docstring promises "STOP included when a step lands on it".
    # Survived the tests before round 6 (the dry run's 12.5e9:50e9:12.5e9 divides exactly: 3.0). Detect:
    # explore --dry-run --set network.latency_s=0.1:0.3:0.1 (or explore_args.parse_values("x",
    # "0.1:0.3:0.1")) and assert 3 values / 3x the configurations.
    # Killed since by experiments_explore_values.
    m("explore_range_drops_stop_by_rounding", EA,
      "            count = int(math.floor((stop - start) / step * (1 + 1e-12))) + 1",
      "            count = int(math.floor((stop - start) / step)) + 1", "-R experiments_explore"),
    # Bug: the general rule "count" (minimum 0) is tried before "cores.count" (minimum 1); first match
    # wins, so --set node.cores.count=0 is accepted and every run of the sweep then fails in tessera's
    # machine loader instead of exit 2 before the sweep. Survived the tests before round 6 (bad_set only tries
    # node.gpus.count=-1 / 1e30). Detect: bad_set case ["--set", "node.cores.count=0"] expecting exit 2
    # and one line naming "node.cores.count".
    # Killed since by experiments_explore_bad_set.
    m("explore_set_cores_count_zero_allowed", EA,
      'SET_RULES = (("nodes", True, 1, False), ("cores.count", True, 1, False), ("count", True, 0, False),',
      'SET_RULES = (("nodes", True, 1, False), ("count", True, 0, False), ("cores.count", True, 1, False),',
      "-R experiments_explore"),

    # --- analysis/figure_kinds.py (tests only check that PNG/PDF files exist and are > 2000 bytes)
    # Bug: grouped bars not centred on their category: each series shifted by i * width instead of
    # (i - (k-1)/2) * width. Equivalent with one series; with two or more (000-fig6, 001-fig11 have
    # series) the bars sit right of their tick and the paper markers (ref_x keeps the centred shift)
    # no longer stand over the bar of their series. Survived the tests before round 6. Detect: call
    # figure_kinds.bars on a hand-made Results with 2 series x 2 categories and assert the Rectangle
    # x-centres of ax.patches are {-0.2, 0.2, 0.8, 1.2}.
    # Killed since by experiments_figure_kinds.
    m("figure_bars_not_centred", FK,
      '            pos = cats.index(p.params.get(spec["x"])) + (i - (len(keys) - 1) / 2) * width',
      '            pos = cats.index(p.params.get(spec["x"])) + i * width', SCRIPTS),
    # Bug: the breakdown's stacked segments start at the previous segment's height instead of the running
    # total: from the third category on, segments overlap and the bar no longer reaches 100%
    # (001-fig10-breakdown has 3+ categories). Survived the tests before round 6. Detect: figure_kinds.breakdown on
    # one point with shares 50/30/20 and assert the top of the highest rectangle is 100 (and the third
    # segment's y is 80).
    # Killed since by experiments_figure_kinds.
    m("figure_breakdown_not_stacked", FK, "            bottom += v", "            bottom = v", SCRIPTS),

    # --- analysis/trace_devices.py (tests: test_trace_views.py, test_trace_compare.py)
    # Bug: merging an interval that lies inside the previous one shortens the merged interval to the
    # inner one's end (out[-1][1] = e instead of max(...)). The unit case (0,2),(1,3) extends, so it
    # passes; a long h2d copy overlapping a short d2h copy loses time from transfer_total_s (and
    # transfer_exposed_s), and idle_s grows by the same amount, so "adds up" still holds.
    # Survived the tests before round 6. Detect: assertEqual(trace_devices.union([(0, 10), (1, 3)]), [[0, 10]]).
    # Killed since by experiments_trace_views.
    m("trace_devices_union_shrinks_nested", TD, "            out[-1][1] = max(out[-1][1], e)",
      "            out[-1][1] = e", "-R experiments_trace"),
    # Bug: idle computed as makespan - kernel time, forgetting the exposed copy time: the shares no
    # longer add to 100%. Prediction: KILLED by experiments_trace_views
    # (test_device_breakdown_adds_up: the keeneland GPU run's first h2d copies run before any GPU kernel,
    # so some row has transfer_exposed_s > 0 and kernel + exposed + idle exceeds the makespan).
    m("trace_devices_idle_ignores_exposed_copies", TD,
      '"idle_s": max(0.0, makespan - kernel_s - exposed)', '"idle_s": max(0.0, makespan - kernel_s)',
      "-R experiments_trace"),

    # --- experiments/experiment.py
    # Bug: `tessera experiment list` counts configurations instead of runs (repeats ignored) in its full
    # and quick columns. Only validate-prediction (native, repeats 3) differs; the CLI claim test
    # compares list against dry runs for two sim definitions (repeats 1) only. Survived the tests before round 6.
    # Detect: in CliClaims3.ExperimentListShowsEveryDefinitionAndItsSweeps, also compare
    # validate-prediction's list counts with its dry run's summed "xR" (e.g. full = 3 x points).
    # Killed since by experiments_runner.
    m("experiment_list_counts_points_not_runs", XP, "    return sum(c.repeats for c in configs)",
      "    return len(configs)", '-R "CliClaims3.ExperimentList|experiments_(runner|definitions)"'),
    # Bug: --timeout 0 accepted (Runner then falls back to the definition's timeout: `timeout_s or ...`).
    # Prediction: KILLED by experiments_runner (BadDefinitions.test_bad_timeout_and_out, case
    # ["--timeout", "0"] expects exit 2 naming "--timeout 0").
    m("experiment_timeout_zero_accepted", XP, "    if a.timeout is not None and a.timeout <= 0:",
      "    if a.timeout is not None and a.timeout < 0:", "-R experiments_runner"),

    # --- experiments/bench_mpi.py (test_bad_input.py test_bench_mpi: bad options + one 1x1 sweep, reps 1)
    # Bug: the exit status tracks the wrong side: 1 when tessera got no value, 0 when ScaLAPACK (the
    # reference) failed every rep, the opposite of the docstring. Survived the tests before round 6 (the good sweep
    # has both sides). Detect: the same sweep with FAKE_FAIL="--nb" (only scalapack_peer gets --nb):
    # expect exit 1 and "failed" in the ScaLAPACK column; with FAKE_FAIL="--threads" expect exit 0.
    # Killed since by experiments_bad_input.
    m("bench_mpi_missing_reference_from_tessera", BM, "        reference_missing |= not scalapack",
      "        reference_missing |= not tessera", "-R experiments_bad_input"),
    # Bug: the rank count is Pr + Pc instead of Pr * Pc: a 2x2 grid runs 4 ranks either way, but 1x1
    # runs 2 ranks and 1x3 / 2x3 run 4 / 5: tessera and ScaLAPACK then run with ranks their grid does
    # not use (or too few). Survived the tests before round 6 (1x1 under mpirun with a stand-in that ignores its rank
    # count). Detect: the good sweep with --grid 1x3 and FAKE_LOG: assert 3 logged calls per run
    # (one per rank), or that the header says "ranks=3" for 1x3 (and "ranks=1" for 1x1).
    # Killed since by experiments_bad_input.
    m("bench_mpi_ranks_pr_plus_pc", BM, "    nprocs = pr * pc", "    nprocs = pr + pc",
      "-R experiments_bad_input"),

    # --- experiments/runner/report.py (tests: test_report_values.py, check_report.py)
    # Bug: the ours/paper column computed as paper/ours: 1.5x the paper shows 0.67. check_report only
    # checks that the paper's value is in the row; the Rows unit test uses an entry without a paper
    # value. Survived the tests before round 6. Detect: report.entry_row on SWEEP with entry {"where": {"variant":
    # "calu", "d": 2}, "metric": "gflops", "value": 100.0, ...}: assert the ours/paper cell is "1.50".
    # Killed since by experiments_report_values.
    m("report_ratio_paper_over_ours", RP, "    ratio = value / paper if paper else None",
      "    ratio = paper / value if paper else None", REPORT),
    # Bug: only differences above the paper (ratio > 1.15) ask for a recorded cause; ours 40% below
    # the paper gets no "**no cause recorded**" line, the report claims agreement silently.
    # Survived the tests before round 6. Detect: entry_row with paper value 200 and ours 120 (ratio 0.6) and empty
    # notes: assert causes == [(id, "**no cause recorded**: ...")].
    # Killed since by experiments_report_values.
    m("report_only_overshoot_needs_cause", RP, "    if ratio is not None and abs(ratio - 1) > THRESHOLD:",
      "    if ratio is not None and ratio - 1 > THRESHOLD:", REPORT),
    # Bug: the shortfall note "(k of n references ran)" keeps the largest count of references over the
    # points instead of the smallest, so a point with fewer references goes unmentioned.
    # Survived the tests before round 6 (test_missing_references_in_a_list_are_said has one point only). Detect: two
    # pivotings each with d=auto, one with references at d=1,2,4 and one with d=1 only; entry
    # {"where": {"d": "auto"}, "relative_to": {"d": [1, 2, 4]}}: assert "1 of 3 references ran" in how.
    # Killed since by experiments_report_values.
    m("report_shortfall_of_most_references", RP,
      "            fewest = len(refs) if fewest is None else min(fewest, len(refs))",
      "            fewest = len(refs) if fewest is None else max(fewest, len(refs))", REPORT),
    # Bug: a point counts as its own reference (the filter q.params != p.params dropped): relative_to's
    # baseline point contributes a ratio of 1.0. Prediction: KILLED by experiments_report_values
    # (RelativeTo.test_each_point_paired_then_aggregated: min over d = 1, 2, 4 becomes 1.0, not 1.2).
    m("report_point_is_its_own_reference", RP, "        others = [q for q in matches if q.params != p.params]",
      "        others = list(matches)", REPORT),
    # Round 6, proposed by a reviewer: the cores' and the GPU's calibration (experiments/calibrate.cpp,
    # calibrate_device.cpp, calibrate_command.cpp) and a run's GPU warm-up (experiments/gpu_warmup.cpp).
    # One deterministic test would kill the first four sample_calls mutants at once: kernels::sample_calls with
    # min_reps = max_reps = 9, min_time_s = 0.08 and timed(i) returning {1, 2, 3, 4, 5, 6, 7, 8, 100}[i]
    # must give reps 9, median_s 5, spread_s 4 (7 - 3) and min_s 1.
    #
    # The spread as the range of the calls instead of their interquartile range.
    # Survived the tests before round 6: Calibrate.MeasurementIsPositiveWithSpread only checks spread_s >= 0; nothing else reads a real
    # calibration's spread_s. Observable: every measurement's spread_s in the machine file (max - min, blown up by
    # one preempted call), hence the sigmas of --noise auto (models/kernel_noise.cpp), and entries with
    # spread_s >= 2 median_s silently dropped from the noise. Detected by the sample_calls test above (4, not 99).
    # Killed since by Calibrate.SampleCallsGivesTheMedianSpreadAndMinimum.
    m("calibrate_spread_is_range", "experiments/calibrate.cpp",
      "  r.spread_s = quantile(samples, 0.75) - quantile(samples, 0.25);",
      "  r.spread_s = samples.back() - samples.front();", CORE),
    # The model's time the mean of the calls instead of their median.
    # Survived the tests before round 6: the tests check median_s > 0 and min_s <= median_s (a mean is never below the minimum), and the
    # device test compares the file's figure with the same median_s it wrote. Observable: every median_s of a
    # `tessera calibrate` file (and of --device's, and of `tessera tune`'s speed curve) pulled up by outliers,
    # so every simulated time. Detected by the sample_calls test above (median 5, not 136/9).
    # Killed since by Calibrate.SampleCallsGivesTheMedianSpreadAndMinimum.
    m("calibrate_median_is_mean", "experiments/calibrate.cpp",
      "  r.median_s = quantile(samples, 0.5);",
      "  r.median_s = total / static_cast<double>(samples.size());", CORE),
    # min_s the slowest call instead of the fastest.
    # KILLED by Calibrate.MeasurementIsPositiveWithSpread (EXPECT_LE(m.min_s, m.median_s): with >= 5 calls timed to
    # the nanosecond the slowest is above the median).
    m("calibrate_min_is_max", "experiments/calibrate.cpp",
      "  r.min_s = samples.front();", "  r.min_s = samples.back();", CORE),
    # min_reps ignored once min_time_s is reached: a kernel slower than min_time_s (a GPU's tiles of 2048-4096,
    # the link's larger copies at 0.2 GB/s) is timed once, its "median" one call and its spread 0.
    # Survived the tests before round 6 (unless a loaded machine happens to stretch one call of the tests' tiny kernels past min_time_s =
    # 2 ms): the tests' kernels take microseconds, so min_time_s needs far more calls than min_reps anyway, and
    # the link fit of single copies stays within its 30%. Observable: reps 1 and spread_s 0 in the file for slow
    # shapes. Detected by the sample_calls test above (reps 9, not 1), or by timed(i) returning 1.0 s with
    # min_reps 5: reps must be 5.
    # Killed since by Calibrate.SampleCallsGivesTheMedianSpreadAndMinimum.
    m("calibrate_min_reps_ignored_after_min_time", "experiments/calibrate.cpp",
      "(n >= o.min_reps && (total >= o.min_time_s", "(n >= 1 && (total >= o.min_time_s", CORE),
    # --passes keeps the slowest pass of each shape instead of the fastest (the opposite of what the header and the
    # option's help promise: interference only slows kernels).
    # Survived the tests before round 6: Calibrate.PassesKeepOneMeasurementPerShape checks one measurement per shape and median_s > 0, not
    # which pass it is. Observable: every median_s of a --passes N file is the worst pass's. Detected by
    # calibrate() with passes = 3 and an o.progress that records each line's "median X us" per shape and
    # concurrency: each result's median_s * 1e6 must be within 0.05 us of the smallest of its three printed
    # medians (three passes of a 32x32 GSMM almost surely differ by more than that); or by a seam taking the per-pass
    # measurements (a keep_fastest(out, i, m) helper) tested on numbers.
    # Killed since by Calibrate.EachShapeKeepsItsFastestPass (and Calibrate.PassesKeepOneMeasurementPerShape).
    m("calibrate_passes_keep_slowest", "experiments/calibrate.cpp",
      "  else if (m.median_s < kept.at(i).median_s) kept[i] = m;",
      "  else if (m.median_s > kept.at(i).median_s) kept[i] = m;", CORE),
    # Every concurrency level's model gets the 1-thread start-up cost (the wrong thread count's figure).
    # Survived the tests before round 6: CalibrateCli.QuickFileLoadsAndDrivesASimulatedRun (--threads 2) only checks the 2-thread run's
    # time_s > 0; no test reads start_s of a written file. Observable: kernel_models.core-xT.start_s.value is
    # x1's for every T (its source still says T threads), so a simulated T-thread run starts with 1 thread's
    # start-up. Detected deterministically: kernels::calibration_machine_file on a hand-made Calibration (one
    # measurement at concurrency 1 and one at 2, startup.start_s = {1: 0.001, 2: 0.003}) must give
    # core-x2.start_s.value 0.003 and core-x1's 0.001.
    # Killed since by Calibrate.EachThreadCountsModelHasItsOwnStartUp.
    m("calibrate_start_s_of_one_thread", "experiments/calibrate.cpp",
      "startup.start_s.find(m.concurrency)", "startup.start_s.find(1)", CORE),
    # The --for-n shapes only of the largest thread count's default tiles (not of 1..max(concurrency)).
    # KILLED by Calibrate.ShapesCoverTheRuntimesCalls (concurrency {1, 2}, N = 1000: the 1-thread tiles are
    # B = 320 (d) and 384 (s), the 2-thread ones 192; o.sizes is empty, so the 1-thread shapes are missing).
    m("calibrate_shapes_of_most_threads_only", "experiments/calibrate.cpp",
      "      for (int t = 1; t <= max_threads; ++t)", "      for (int t = max_threads; t <= max_threads; ++t)", CORE),
    # The link's bandwidth fitted through the origin (slope sum(xt) / sum(x^2)) instead of with an intercept: the
    # latency is read as bandwidth (slope + latency * sum(x) / sum(x^2)). The tests' link (50 us, 1-4 MiB at
    # 0.2 GB/s) hides it (+0.3%); a real GPU (10 us, 50 GB/s) calibrated with --quick (copies of 1 and 4 MiB)
    # gets a bandwidth ~14% low, with the default sizes (copies up to 128 MiB) ~0.5% low.
    # Survived the tests before round 6: CalibrateDevice.LinkFitFindsTheModeledLink allows 0.7x-1.15x of the bandwidth. Observable: every
    # link fit (to_device/from_device bandwidth_Bps, node.gpus.pcie.bandwidth_Bps of the file). Detected by the
    # same test with an emulated device of latency 20 ms (the mutant finds 0.44x the bandwidth), or by moving the
    # fit into a pure function tested on exact points (t = 1e-3 + b / 1e9 for b = 1, 2, 4 MiB: slope 1e-9 exactly).
    # Killed since by CalibrateDevice.LinkFitHasAnIntercept.
    m("device_link_fit_through_origin", "experiments/calibrate_device.cpp",
      "(n * sxy - sx * sy) / det : 0;", "sxy / sxx : 0;", CORE),
    # node.gpus.pcie's latency always the to-device fit's, while its bandwidth is the slower direction's (a field
    # of the wrong measurement).
    # Survived the tests before round 6: CalibrateDevice.MachineFileCarriesTheGpuAndDrivesASimulation checks pcie.bandwidth_Bps only, and
    # both directions of the emulated link have the same latency. Observable: node.gpus.pcie.latency_s when the
    # link is slower from the device (as on the H200 node). Detected deterministically: device_machine_file with a
    # hand-made DeviceCalibration (to_device 2e9 B/s + 1e-5 s, from_device 1e9 B/s + 3e-5 s) must give
    # pcie = 1e9 B/s + 3e-5 s.
    # Killed since by CalibrateDevice.TheFilesLinkIsTheSlowerDirectionsWhole.
    m("device_pcie_latency_of_other_direction", "experiments/calibrate_device.cpp",
      '{"latency_s", {{"value", sig(slow.latency_s)}', '{"latency_s", {{"value", sig(c.to_device.latency_s)}', CORE),
    # --device --passes keeps each shape's last pass instead of its fastest: a device test reading each pass's
    # median from the progress lines (CalibrateDevice.PassesKeepEachShapesFastest) caught it once and missed it
    # once (later passes run warm, so the last is often the fastest); both calibrations now combine passes in
    # keep_fastest_pass, whose mutant is deterministic on numbers given by hand.
    # Both calibrations' shared pass combination keeping the last pass (Calibrate.EachShapeKeepsItsFastestPass).
    m("calibrate_passes_keep_last", "experiments/calibrate.cpp",
      "  else if (m.median_s < kept.at(i).median_s) kept[i] = m;", "  else kept[i] = m;", CORE),
    # Of equally frequent shapes the first in key order (the smallest) instead of the largest becomes "frequent".
    # KILLED by GpuWarmup.CholeskyOfUnevenTilesWarmsFiveShapes (TRSM and GSMM_DIAG have 3 tasks of 300 rows and 3 of
    # 100: the plan gets both sizes of each, 7 shapes instead of 5).
    m("warmup_frequent_tie_keeps_smaller", "experiments/gpu_warmup.cpp",
      "if (count > p.count || (count == p.count && size(key) > size(p.frequent))) p.frequent = key, p.count = count;",
      "if (count > p.count) p.frequent = key, p.count = count;", CORE),
    # Only the last GPU frees what it kept of the warm-up's scratch buffers (free_kept moved after the loop).
    # Survived the tests before round 6: every warm-up test has one device (GpuWarmup.CallsEachShapeOnEveryStreamItsTasksMayTake checks
    # freed == 1 on it; the driver test runs --gpus 1). Observable: with --gpus G > 1 --gpu-warmup on a CUDA node,
    # GPUs 1..G-1 start the run with the libraries' cached scratch memory still held (less memory than the
    # runtime's capacity assumes: out-of-memory or evictions). Detected by warm_up_gpus({&a, &b}, plan) with two
    # StreamsDevice: a.freed == 1 and b.freed == 1.
    # Killed since by GpuWarmup.CallsEachShapeOnEveryStreamItsTasksMayTake.
    m("warmup_free_kept_last_device_only", "experiments/gpu_warmup.cpp",
      "    dev->free_kept();\n  }\n", "  }\n  if (!devices.empty()) devices.back()->free_kept();\n", CORE),
    # The machine file's node.cores.count the smaller of --threads and the host's cores instead of the larger.
    # Survived the tests before round 6: CalibrateCli.QuickFileLoadsAndDrivesASimulatedRun runs --threads 2 and checks count >= 2, which
    # min(2, cores) meets on any machine of 2 cores or more. Observable: `tessera calibrate` (default --threads 1)
    # writes a 1-core node, so simulated runs with that file model one core. Detected by `calibrate --quick
    # --threads 1 --precision d --kernels gsmm --sizes 64 --for-n 0`: node.cores.count must equal
    # std::thread::hardware_concurrency() (killed on any machine with more than one core).
    # Killed since by CalibrateCli.SeveralInnerBlockingsAreMeasuredAndLookedUp.
    m("calibrate_command_cores_min", "experiments/calibrate_command.cpp",
      "  const int cores = std::max<int>(threads_, static_cast<int>(std::thread::hardware_concurrency()));",
      "  const int cores = std::min<int>(threads_, static_cast<int>(std::thread::hardware_concurrency()));", WITH_CLI),
    # --device keeps the cores' default --for-n (2048, 4096, 8192 with the cores' default tiles, B = 320/384 and
    # their remainders) instead of only the GPU's square sizes 512-4096.
    # Survived the tests before round 6: no test runs `calibrate --device` without an explicit --for-n but for --list, and
    # CalibrateDeviceCli.BadOptionsAreRejected's --list only looks for GSMM and LU_PANEL and the absence of LU_LEAF.
    # Observable: the GPU calibration times dozens of small CPU-tile shapes (far longer; calibration.gpu.for_n
    # [2048, 4096, 8192]). Detected by `calibrate --device emulated --base local.json --precision d --list`: every
    # listed m and n in {512, 1024, 2048, 4096}.
    # Killed since by CalibrateDeviceCli.BadOptionsAreRejected.
    m("calibrate_command_device_keeps_cpu_for_n", "experiments/calibrate_command.cpp",
      "std::vector<std::int64_t>{512, 1024, 2048, 4096};\n    o.for_n.clear();",
      "std::vector<std::int64_t>{512, 1024, 2048, 4096};", WITH_CLI),
    # --in-run --base runs QR with the command's --ib (default 32) instead of the inner blocking the base measured.
    # Survived the tests before round 6: InRunCalibrationCli.BaseGetsTheRunsAlone's base was calibrated at ib = 32 (the default), and the
    # explicit-mismatch refusal is a separate check. Observable: for a base calibrated with --ib 16, the in-run
    # QR shapes are timed and merged at ib 32, beside the base's ib-16 entries instead of onto them
    # (the simulated run at the base's ib keeps the isolated times). Detected by a base
    # `calibrate --quick --precision d --kernels tsqrt --sizes 64 --for-n 0 --ib 16`, then
    # `calibrate --in-run --base it --precision d --kernels tsqrt --in-run-n 1024`: every merged entry with
    # in_run_calls has ib 16 (the mutant's have 32).
    # Killed since by InRunCalibrationCli.RunsTakeTheBasesInnerBlocking.
    m("calibrate_command_in_run_ignores_base_ib", "experiments/calibrate_command.cpp",
      "    runs.ib = base_ib;\n", "", WITH_CLI),
    # Round 6 (reviewer): reading user matrices, what a run reports, the simulated/distributed drivers,
    # `tessera model`, the CPU tile kernels and the ScaLAPACK peer. Fragment for MUTANTS in tests/mutants.py
    # (uses its m(), CORE, WITH_CLI). Each old text occurs exactly once in its file (checked with str.count).

    # --- base/matrix_market.cpp ---
    # Bug: a skew-symmetric file's header reported as "symmetric" (symmetry != "general"), so a distributed
    # Cholesky (its node streams the file: resolve_matrix trusts the header and skips Freivalds' check) runs
    # on a skew matrix instead of refusing it.
    # Survived the tests before round 6 (no test gives a skew-symmetric file to a distributed or simulated run; the only
    # skew test, MatrixMarket.ArraySkewSymmetricOmitsTheDiagonal, reads it densely).
    # Observable: `run --algo cholesky --backend sim --machine keeneland.json --grid 2x1 --sim-data --input
    # skew.mtx` exits 3 ("not positive definite", the zero diagonal) instead of 2 ("needs a symmetric matrix").
    # Test: that run (or the same under mpirun in tests/input_every_backend.sh, beside asym.mtx) with a 3x3
    # array skew-symmetric file; expect exit 2 and "needs a symmetric matrix".
    # Killed since by MatrixMarket.HeaderSaysSymmetricOnlyForSymmetricFiles.
    m("mm_skew_header_reads_as_symmetric", "base/matrix_market.cpp", "  info.symmetric = sym;",
      "  info.symmetric = sym || skew;", WITH_CLI),
    # Bug: the square check forgets skew-symmetric files (only symmetric ones must be square).
    # Survived the tests before round 6 (MatrixMarketErrors.SizeLine only tries a non-square *symmetric* file).
    # Observable: "%%MatrixMarket matrix array real skew-symmetric\n2 3\n1\n" is read as a 2x3 matrix
    # (exit 0) instead of refused at line 2 naming "2 x 3"; a coordinate skew file with m > n mirrors
    # (r, c) to (c, r) outside the m x n storage (out-of-bounds write).
    # Test: expect_error("%%MatrixMarket matrix array real skew-symmetric\n2 3\n1\n", 2, {"2 x 3"}).
    # Killed since by MatrixMarketErrors.SizeLine.
    m("mm_skew_not_required_square", "base/matrix_market.cpp", "  if ((sym || skew) && info.m != info.n)",
      "  if (sym && info.m != info.n)", CORE),
    # Bug: the dense-input size clamp removed: a file declaring a huge matrix is allocated as given.
    # Survived the tests before round 6 (no test reads a file whose size line exceeds 4e9 entries; "too large for a dense
    # input" occurs in no test).
    # Observable: "%%MatrixMarket matrix coordinate real general\n100000 100000 0\n" given to `run --algo lu
    # --input` under a 4 GiB address-space cap exits 4 (bad_alloc, out of memory) instead of 2 naming the file
    # and "too large for a dense input on one node"; without a cap it tries to zero 80 GB.
    # Test: expect_rejected(kInvalidInput, base({"--input", f}, "lu"), {f, "too large for a dense input"}, k4GiB).
    # Killed since by CliBadInput.MalformedMatrixMarket.
    m("mm_dense_size_limit_removed", "base/matrix_market.cpp",
      "        if (static_cast<double>(info.m) * static_cast<double>(info.n) > 4e9)",
      "        if (false && static_cast<double>(info.m) * static_cast<double>(info.n) > 4e9)", WITH_CLI),

    # --- experiments/report.cpp ---
    # Bug: the simulation-cost line's tasks/s counts node 0's tasks only, not every node's (README: "every
    # node's tasks, the runtime's own included").
    # Survived the tests before round 6: CliClaims2.SimulatedClusterJsonAndCostLine only asserts tasks/s >= the JSON's
    # `tasks` (node 0's) over wall, which the mutant meets exactly.
    # Observable: on a 2x2 simulated cluster the cost line's tasks/s is about a quarter of the truth.
    # Test: in the same 2x2 run, assert tasks/s x wall > 2 x j["tasks"] (every node runs a share of the
    # 2x2 grid's tasks), or compare with the sum of the four nodes' task events in --trace files.
    # Killed since by CliClaims2.SimulatedClusterJsonAndCostLine.
    m("report_cost_line_tasks_of_node0_only", "experiments/report.cpp",
      "  const double tasks = static_cast<double>(r.tasks_all_nodes ? r.tasks_all_nodes : r.tasks);",
      "  const double tasks = static_cast<double>(r.tasks);", WITH_CLI),
    # Bug: the summary line's gpu_peak_MiB is the last GPU's peak, not the most any GPU held.
    # Survived the tests before round 6: the --gpus 2/3 line checks (tests/CMakeLists.txt tessera_gpus_*) match
    # gpu_peak_MiB=[0-9.]+ only; with one GPU the mutant is exact.
    # Observable: with --gpus 3 (multi-level: GPUs hold unequal column sets) gpu_peak_MiB differs from
    # max(gpu_stats[].peak_bytes) / 2^20.
    # Test: an emulated --gpus 3 run with --json; parse gpu_peak_MiB from the summary and compare it to
    # max over gpu_stats of peak_bytes / 2^20 to 0.05 (and pick a shape where the GPUs' peaks differ).
    # Killed since by CliClaims2.GpuRunJsonImbalanceAndDefaultThreads.
    m("report_gpu_peak_of_last_gpu", "experiments/report.cpp",
      "    for (const DeviceStats& d : r.gpus) peak = std::max(peak, d.peak_bytes);",
      "    for (const DeviceStats& d : r.gpus) peak = d.peak_bytes;", WITH_CLI),

    # --- experiments/run_distributed.cpp ---
    # Bug: a distributed run's time_s is the reporting node's own (node 0's) instead of the slowest node's.
    # Prediction: KILLED by CliClaims2.SimulatedClusterJsonAndCostLine (EXPECT_EQ(time_s, max(node_time_s)):
    # on its 2x2 Cholesky the last POTF2' runs on node 3, so node 0 is not the slowest).
    m("distributed_time_of_own_node", "experiments/run_distributed.cpp",
      "  r.time_s = *std::max_element(r.node_time_s.begin(), r.node_time_s.end());",
      "  r.time_s = r.node_time_s[self];", WITH_CLI),

    # --- experiments/run_simulated.cpp ---
    # Bug: the machine file's node.gpus.stream_overlap not handed to the simulated GPUs (every file runs as
    # overlap 1).
    # Survived the tests before round 6: the overlap is tested only through make_sim_gpu directly
    # (test_sim_gpu_streams.cpp's own simulations) and parsing (MachineFiles); no shipped machine file sets it,
    # so no `tessera run --backend sim` sees a value other than 1.
    # Observable: a machine file with "stream_overlap": 0 gives the same time_s with --gpu-streams 3 as one
    # with 1 (the GPU's streams fully share it), where it should be slower.
    # Test: lent-h100-node.json with node.gpus.stream_overlap = 0 vs as shipped, phantom QR n 8192 B 2048
    # --gpus 1 --gpu-streams 3 --threads 13; EXPECT_GT(time_s(overlap 0), time_s(overlap 1)).
    # Killed since by SimGpuStreamsRuns.TheMachineFilesStreamOverlapReachesTheGpus.
    m("sim_gpu_stream_overlap_ignored", "experiments/run_simulated.cpp",
      "{cfg.gpu_streams, machine.node.gpus.stream_overlap, machine.node.gpus.host_waits}",
      "{cfg.gpu_streams, 1.0, machine.node.gpus.host_waits}", WITH_CLI),

    # --- experiments/model_command.cpp ---
    # Bug: `model kernels`' leave-one-out error relative to the prediction instead of the measurement.
    # Survived the tests before round 6: CalibrateCli.ModelKernelsReportsLeaveOneOutErrors checks the table's rows and
    # names, no number.
    # Observable: every median/worst percentage changes (e.g. a 2x over-prediction reads 50% instead of 100%).
    # Test: a machine file whose calibrated model has three GSMM sizes, one off the others' line; compare the
    # printed worst error with models::leave_one_out's |predicted/median - 1| x 100.
    # Killed since by CalibrateCli.ModelKernelsReportsLeaveOneOutErrors.
    m("model_kernels_error_over_prediction", "experiments/model_command.cpp",
      "            std::abs(x.predicted_s / x.entry.median_s - 1) * 100);",
      "            std::abs(x.entry.median_s / x.predicted_s - 1) * 100);", WITH_CLI),
    # Bug: the flops and shape interpolations' errors filed under each other's column.
    # Survived the tests before round 6 (same test: no number, and the header still says "flops | shape").
    # Observable: the "flops: median / worst" column shows the shape interpolation's errors and vice versa.
    # Test: as above, compare each column with leave_one_out(entries, Flops) and (…, Shape) on local.json
    # --model core-x1 for the "all" row.
    # Killed since by CalibrateCli.ModelKernelsReportsLeaveOneOutErrors.
    m("model_kernels_columns_swapped", "experiments/model_command.cpp",
      "errs[{kernel_name(x.entry.kernel), x.entry.precision}][how == models::Interpolation::Shape].push_back(",
      "errs[{kernel_name(x.entry.kernel), x.entry.precision}][how == models::Interpolation::Flops].push_back(",
      WITH_CLI),
    # Bug: `model comm --json` writes tessera's closed-form message count as ScaLAPACK's (the peer's row).
    # Survived the tests before round 6: CliModelComm.CholeskyTableAndJson checks scalapack.words only (and its case has
    # PDPOTRF msgs 12 = tessera's closed form 12); CliClaims.ModelCommJsonForQr checks no scalapack field.
    # Observable: for QR (n 8 B 2 grid 2x2 --v 2 --nb 4) the JSON's scalapack.messages differs from the
    # table's "PDGEQRF msg (Table 1)" row (34).
    # Test: in ModelCommJsonForQr, EXPECT_DOUBLE_EQ(j["scalapack"]["messages"], the library's PDGEQRF count
    # for the shape and nb), or that case's 34.
    # Killed since by CliClaims.ModelCommJsonForQr.
    m("model_comm_json_scalapack_messages_are_tesseras", "experiments/model_command.cpp",
      '{"messages", r.scalapack_messages}', '{"messages", r.msg_closed}', WITH_CLI),

    # --- kernels/cpu/tile_kernels.cpp ---
    # Bug: the zero-pivot scan of TRSM's L stops one short, so a zero in L's last diagonal entry takes the
    # inverted-leaves route: LAPACK's TRTRI returns info > 0 without inverting (check_info ignores it), and
    # the leaf is multiplied by L's block itself: finite wrong values instead of substitution's infinities.
    # Survived the tests before round 6: TrsmKernel.AZeroOnTheDiagonalGivesWhatSubstitutionGives puts the zero at
    # column 21 of 40, never the last.
    # Test: the same test with zero = n - 1 (39): EXPECT_FALSE(isfinite(a[i + 39 m])) for every row.
    # Killed since by TrsmKernel.AZeroOnTheDiagonalGivesWhatSubstitutionGives<double>.
    m("tile_trsm_zero_last_diagonal_missed", "kernels/cpu/tile_kernels.cpp",
      "  for (index_t j = 0; j < n; ++j)\n    if (l[j + j * ldl] == T(0))",
      "  for (index_t j = 0; j + 1 < n; ++j)\n    if (l[j + j * ldl] == T(0))", CORE),
    # Bug: POTF2' reports a breakdown one column late (LAPACK's info treated as 0-based).
    # Prediction: KILLED by CliExitStatus.NotPositiveDefiniteIsThree ("leading minor of order 2" becomes 3)
    # and CliBadInput.NotPositiveDefiniteNamesTheColumn ("column 27").
    m("tile_potf2p_breakdown_column_late", "kernels/cpu/tile_kernels.cpp", "  if (info > 0) return info;\n  // L2",
      "  if (info > 0) return info + 1;\n  // L2", WITH_CLI),

    # --- experiments/scalapack_peer.cpp (label mpi: its checks run under mpirun) ---
    # Bug: PDGETRF's flops counted as Cholesky's n^3/3 instead of LU's 2n^3/3 (mn^2 - n^3/3, m = n).
    # Survived the tests before round 6: scalapack_peer_lu_*_check match gflops=[0-9.]+ only.
    # Observable: the peer's LU GFlop/s halves, so bench_mpi.py's tessera/ScaLAPACK ratio for LU doubles.
    # Test: run the peer with --json; EXPECT gflops x time_s x 1e9 == 2 n^3 / 3 (to the printed digits), for
    # each --algo (n^3/3, 4n^3/3, 2n^3/3: tessera's own flop_count for m = n).
    # Killed since by scalapack_peer_numbers.
    m("scalapack_lu_flops_like_cholesky", "experiments/scalapack_peer.cpp", ": 2.0 * n * n * n / 3.0;",
      ": n * n * n / 3.0;", "-L mpi"),
    # Bug: the peer's time taken before the closing barrier and reduced with MPI_MIN: the fastest rank's own
    # span instead of the factorization's (the slowest rank's, as tessera's time_s).
    # Survived the tests before round 6: the peer's tests check the line's shape (time=[0-9.]+s) and the residual only.
    # Observable: a rank with little work (--n 600 --nb 600 --grid 1x2: rank 1 holds nothing) reports
    # microseconds and an absurd gflops; on balanced grids the time is slightly too short.
    # Test: --n 600 --nb 600 --grid 1x2 --algo cholesky --json: EXPECT time_s >= a one-rank run's time x 0.5,
    # or gflops below a per-rank ceiling (e.g. 200).
    m("scalapack_time_of_fastest_rank", "experiments/scalapack_peer.cpp",
      "  MPI_Barrier(MPI_COMM_WORLD);\n  const double local_time = MPI_Wtime() - t0;\n  double time_s = 0.0;\n"
      "  MPI_Allreduce(&local_time, &time_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);",
      "  const double local_time = MPI_Wtime() - t0;\n  MPI_Barrier(MPI_COMM_WORLD);\n  double time_s = 0.0;\n"
      "  MPI_Allreduce(&local_time, &time_s, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);", "-L mpi",
      why="equivalent in practice: PDPOTRF ends in a collective, so every rank leaves it within microseconds of the "
          "slowest (measured under the mutant: one 600-block on 1x2, where rank 1 holds nothing, 5.9-10.5 ms)"),
    # Bug: LU's growth factor max|U| over ||A||_1 instead of over max|A|.
    # Survived the tests before round 6: growth=[0-9.e+-]+ is matched, never valued ("reported, not checked").
    # Observable: for the n = 600 uniform [-0.5, 0.5) matrix ||A||_1 is about 150 x max|A|: growth reads about
    # 0.03 instead of the order of 10 (partial pivoting's growth on random matrices, >= 1 in practice).
    # Test: the LU peer check on 1x2 and 2x1 with --json: growth_factor within [1, 100] and equal on both grids
    # (the matrix depends on neither grid nor NB).
    # Killed since by scalapack_peer_numbers.
    m("scalapack_growth_over_one_norm", "experiments/scalapack_peer.cpp", "amax > 0 ? umax / amax : 0.0}",
      "anorm > 0 ? umax / anorm : 0.0}", "-L mpi"),
    # Bug: --matrix zerocol zeroes column n/2 (1-based) instead of n/2 + 1.
    # Prediction: KILLED by scalapack_peer_lu_zero_pivot (expects U(301,301) for n = 600; gets U(300,300)).
    m("scalapack_zerocol_off_by_one", "experiments/scalapack_peer.cpp", "zerocol ? opt.n / 2 : -1}",
      "zerocol ? (opt.n - 1) / 2 : -1}", "-L mpi"),
]


def sh(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def run_one(mu, build):
    path = os.path.join(ROOT, mu["file"])
    with open(path) as f:
        src = f.read()
    if src.count(mu["old"]) != 1:
        return "STALE", "the text occurs %d times in %s" % (src.count(mu["old"]), mu["file"])
    try:
        with open(path, "w") as f:
            f.write(src.replace(mu["old"], mu["new"]))
        b = sh("ninja", build)
        if b.returncode != 0:
            return "BUILD FAILED", b.stdout[-600:]
        t = sh("ctest -j2 --stop-on-failure --timeout 300 -E tessera_format %s" % mu["tests"], build)
        failed = [l.split(":", 1)[1].split()[0] for l in t.stdout.splitlines()
                  if ("***Failed" in l or "***Exception" in l or "***Timeout" in l) and ":" in l]
        return ("KILLED", ", ".join(failed[:2])) if t.returncode != 0 else ("SURVIVED", mu["why"])
    finally:
        with open(path, "w") as f:
            f.write(src)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="a configured build folder (ninja) of this checkout")
    ap.add_argument("--only", default="", help="run the mutants whose name contains this text")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = ap.parse_args()
    chosen = [x for x in MUTANTS if args.only in x["name"]]
    if args.list:
        for x in chosen:
            print("%-40s %s" % (x["name"], x["file"]))
        return 0
    if not chosen:
        print("mutants.py: --only %r: no mutant's name contains it (--list names them)" % args.only, file=sys.stderr)
        return 2
    build = os.path.abspath(args.build)
    if not os.path.isfile(os.path.join(build, "build.ninja")):
        print("mutants.py: --build %s: no build.ninja there (./setup.sh build makes one)" % args.build, file=sys.stderr)
        return 2
    files = sorted({x["file"] for x in chosen})
    dirty = sh("git status --porcelain -- " + " ".join(files), ROOT).stdout.strip()
    if dirty:
        print("mutants.py: uncommitted changes in files it would mutate:\n" + dirty, file=sys.stderr)
        return 2
    survived = gaps = 0
    try:
        for x in chosen:
            start = time.time()
            verdict, detail = run_one(x, build)
            survived += verdict == "SURVIVED" and not x["why"]
            gaps += verdict == "SURVIVED" and x["why"].startswith("OPEN")
            print("%-12s %-40s %5.0f s  %s" % (verdict, x["name"], time.time() - start, detail), flush=True)
    finally:
        sh("ninja", build)  # the restored sources
    if gaps:
        print("%d survivors are known gaps (their why begins OPEN): tests still to write" % gaps)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
