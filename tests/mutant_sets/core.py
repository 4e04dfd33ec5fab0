"""The runtime's rules (000 §6), the task window, distributions, algorithms, models, the simulator, GPU memory and the
counters a run reports, checks, generators, machine files and the tuner (rounds 1-3)."""
from mutant_sets.common import *  # noqa: F401,F403 (m, the selections, the paths)

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
    m("priority_all_zero", KT, PRIO, "{ return 0 * lexicographic_priority(q, q - out_col, q - k); }", WITH_CLI),
    m("priority_by_step_only", KT, PRIO, "{ return lexicographic_priority(q, 0, q - k); }", WITH_CLI),
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
    m("check_zero_matrix_always_passes", "base/numerics.hpp",
      "  if (anorm <= 0) return resid <= 0 ? 0.0 : resid / scale / eps;", "  if (anorm <= 0) return 0.0;"),
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
]
