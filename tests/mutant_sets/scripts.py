"""The experiment scripts, results, the machine's floor, trace views, experiment definitions and the lent GPU
machine's analysis (round 4), and round 5 (calibration from traces and in runs, the trace, distributed checks,
options, MPI)."""
from mutant_sets.common import *  # noqa: F401,F403 (m, the selections, the paths)

MUTANTS = [
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
    m("results_old_sweeps_points", ER, 'if (not wanted or r["config_id"] in wanted) and', "if True and", REPORT),
    # A parameter of the same name hides the run's measured value.
    m("results_params_before_metrics", ER,
     '    for src in (record.get("metrics") or {}, run_result(record), record["params"]):',
     '    for src in (record["params"], record.get("metrics") or {}, run_result(record)):', REPORT),
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
    m("explore_slowest_first", EX,
      '    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: (r["time_s"], r["label"]))',
      '    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: (-r["time_s"], r["label"]))',
      "-R experiments_explore"),
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
    # The benchmarks count checked answers only (experiments_bench_checks): the peer's runs not given --check,
    m("bench_cpu_peer_unchecked", BC, '("lapack", same_matrix + checks, ref)', '("lapack", same_matrix, ref)',
      "-R experiments_bench_checks"),
    # bench_cpu.py's LAPACKE runs on the default matrix whatever --tile-args' --matrix and --seed give tessera's.
    m("bench_cpu_peer_other_matrix", BC, '("lapack", same_matrix + checks, ref)', '("lapack", checks, ref)',
      "-R experiments_bench_checks"),
    # a result that was asked to check and says it did not (or failed) taken as it is,
    m("bench_run_json_takes_unchecked", BM, '    if checked and result.get("check_passed") is not True:',
      "    if False:", "-R experiments_bench_checks"),
    # cuSOLVER's runs not given --check,
    m("bench_gpu_peer_unchecked", BG, '"--impl", "cusolver", "--json", path, *checks]', '"--impl", "cusolver", "--json", path]',
      "-R experiments_bench_checks"),
    # bench_gpu.py's peer once per algorithm, as before: a row compared with peer runs made before other rows.
    m("bench_gpu_peer_per_algorithm", BG, "        block.append(i if i == 0 or args.rows[i - 1][0] != algo else block[-1])",
      "        block.append(next(j for j, (a, _) in enumerate(args.rows) if a == algo))", "-R experiments_bench_checks"),
    # and a wrong answer of tessera's tolerated like a failed run.
    m("bench_mpi_wrong_answer_tolerated", BM, "    return 1 if reference_missing or wrong else 0",
      "    return 1 if reference_missing else 0", "-R experiments_bench_checks"),
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
    # (The count is base's check_tile_count's since the review of extreme sizes, for the run and model comm.)
    m("run_config_tile_count_ignores_s", "base/tile_layout.cpp",
      "  return static_cast<double>(ceil_div(m, B)) * static_cast<double>(ceil_div(n, B)) * s;",
      "  return static_cast<double>(ceil_div(m, B)) * static_cast<double>(ceil_div(n, B));", WITH_CLI),
    # --d auto for a tall LU counts its tile rows as q n / m instead of q m / n (experiments_lu_002_sim's tall runs).
    m("run_config_lu_split_tall_rows_inverted", "experiments/run_config.cpp",
     "std::llround(static_cast<double>(q) * c.m / c.n)", "std::llround(static_cast<double>(q) * c.n / c.m)",
     '-R "experiments_lu_002_sim"'),
]
