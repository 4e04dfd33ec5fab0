#!/usr/bin/env python3
"""tessera on one CUDA GPU (plus the node's cores) against cuSOLVER (issue 15 point 5, issue 14's GPU row).

Each rep runs, alternating, for every configuration row:

    build/tessera run --algo A --n N --precision P --impl cusolver --json F         (the peer; see below)
    build/tessera run --algo A --n N --precision P --gpus 1 --device cuda --threads T ROW_ARGS --json F

The peer runs before each block of consecutive rows of one algorithm, once per
block and rep, and those rows are compared with that block's runs of it: a
row is never compared with peer runs made before other algorithms' rows.

and prints one line per row: the medians of --reps runs of tessera and of
cuSOLVER, cuSOLVER with and without its copies (the matrix starts and ends in
host memory for both: tessera's time includes every copy; the peer's time_s is
the factorization alone and copy_s its host<->GPU copies), and the ratios of
the medians; then tessera's copy rates, its GPU's busy time and span, and
both sides' warm-ups before their clocks (gpu_warmup.s: tessera's GPU calls
the most frequent and the largest shape of each kernel once on each stream,
cuSOLVER its routine once, so that neither time holds its libraries' first
calls, but for LU's row moves on a GPU, which tessera's warm-up cannot call). Both sides get the same --check
(default every run; at N = 32,768 a check takes minutes on the cores: `gpu_node.sh` passes $BENCH_CHECK, default
none, and the table then says that nothing was checked). A run that fails (exit status, timeout, no JSON, a check
that failed or did not run) is reported on stderr and left out; the sweep goes on; the exit status is 1 when a row
got no tessera or no cuSOLVER value or a run failed its check, 2 for a bad option (--json and --out are
checked before the first run, so a sweep's minutes are not lost at its end).

    python3 experiments/bench_gpu.py                                   # the default rows, N = 32,768, double
    python3 experiments/bench_gpu.py --precisions d,s --reps 3 --json results/gpu.json
    python3 experiments/bench_gpu.py --rows 'cholesky:--B 2048 --s 2 --b 32' 'lu:--B 1024 --d 1 --pivot partial'

ROW is ALGO:ARGS (ARGS are tessera run's options for that row). Needs a CUDA
build and a GPU; GFlop/s are the factorization's standard flop counts.
"""

import argparse
import json
import math
import os
import statistics
import sys
import tempfile

BUILD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build")  # whatever the cwd
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mpi import CHECK_MODES, CHECK_NOTES, check_args, run_json  # noqa: E402  (one way to run a program)
from runner import outputs  # noqa: E402

# The rows of the README's table (lent H100, 2026-11-25), then LU with the
# narrow panels the simulator ranks first (experiments/README.md, "LU on one
# H100"), and LU with every column on the GPU, its panels factored there by
# cuSOLVER (--d 0; at B = 2048 1.03x dgetrf with its copies on the lent H100,
# 2026-11-26).
DEFAULT_ROWS = [
    "cholesky:--B 2048 --s 1",
    "cholesky:--B 2048 --s 2 --b 32",
    "qr:--B 4096 --s 1",
    "lu:--B 1024 --d 1 --pivot partial",
    "lu:--B 1024 --d 1 --pivot tournament",
    "lu:--B 1024 --s 8 --d 1 --pivot tournament",
    "lu:--B 2048 --s 8 --d 1 --pivot tournament",
    "lu:--B 1024 --d 0 --pivot partial",
    "lu:--B 2048 --d 0 --pivot partial",
    "lu:--B 2048 --s 4 --d 0 --pivot partial",
]


def parse_row(text):
    algo, sep, args = text.partition(":")
    if not sep or algo not in ("cholesky", "qr", "lu"):
        raise argparse.ArgumentTypeError(f"--rows: '{text}' is not ALGO:ARGS with ALGO cholesky, qr or lu")
    return algo, args.split()


def median(values):
    return statistics.median(values) if values else None


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(BUILD, "tessera"),
                    help="the tessera binary (default: this checkout's build/tessera)")
    ap.add_argument("--n", type=int, default=32768)
    ap.add_argument("--precisions", default="d", help="comma-separated: d, s")
    ap.add_argument("--rows", nargs="+", type=parse_row, default=[parse_row(r) for r in DEFAULT_ROWS])
    ap.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 4) - 3),
                    help="tessera's compute threads (default: the cores less 3, for the GPU's threads)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default=None, help="folder for the per-run JSON files (default: a temporary one)")
    ap.add_argument("--json", default=None, help="write the table's values here")
    ap.add_argument("--check", choices=CHECK_MODES, default="every",
                    help="which runs of both sides check their factors (default every)")
    args = ap.parse_args()
    precisions = [p for p in args.precisions.split(",") if p]
    for p in precisions:
        if p not in ("d", "s"):
            ap.error(f"--precisions: '{p}' is not d or s")
    if not precisions:
        ap.error(f"--precisions '{args.precisions}': names no precision (d, s or d,s)")
    if args.n < 1 or args.reps < 1 or args.threads < 1:
        ap.error("--n, --reps and --threads must be at least 1")
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        ap.error(f"--timeout {args.timeout}: must be a positive number of seconds")
    why = args.json and outputs.output_problem(args.json, [])
    if why:
        ap.error(f"--json {args.json}: {why}")
    why = args.out and outputs.folder_problem(args.out)
    if why:
        ap.error(f"--out {args.out}: {why}")
    if not os.path.isfile(args.binary) or not os.access(args.binary, os.X_OK):
        ap.error(f"--binary {args.binary}: not an executable (build it: cmake --build build --target tessera)")
    out_dir = args.out or tempfile.mkdtemp(prefix="tessera-bench-gpu-")

    # The peer's block of each row: the first row of its run of consecutive rows of the same algorithm.
    block = []
    for i, (algo, _) in enumerate(args.rows):
        block.append(i if i == 0 or args.rows[i - 1][0] != algo else block[-1])
    # values[(prec, row index)] = tessera's runs; peer[(prec, block)] = (with copies, without)
    tile, peer = {}, {}
    wrong = []  # the runs whose check failed
    copies, link = {}, {}  # tessera's copies' GB/s (in, out) per run; the peer's copies' GB/s
    spans = {}  # tessera's (run time, GPU manager's busy time, GPU's own kernel span) per run, seconds
    warm, peer_warm = {}, {}  # the warm-ups' seconds before the clock: tessera's per row, the peer's per block
    for prec in precisions:
        for r in range(args.reps):
            checks = check_args(args.check, r)
            for i, (algo, extra) in enumerate(args.rows):
                if block[i] == i:
                    path = os.path.join(out_dir, f"row{i}_{prec}_cusolver_r{r}.json")
                    res = run_json(f"cuSOLVER {algo} {prec} rep {r} (rows from {i})", [
                        args.binary, "run", "--algo", algo, "--n", str(args.n), "--precision", prec,
                        "--impl", "cusolver", "--json", path, *checks], path, args.timeout, bool(checks), wrong)
                    try:
                        if res is not None:
                            gf, t, c = float(res["gflops"]), float(res["time_s"]), float(res.get("copy_s", 0.0))
                            pw = float(res["gpu_warmup"]["s"]) if res.get("gpu_warmup") else None
                    except (KeyError, TypeError, ValueError) as e:
                        print(f"  cuSOLVER {algo} {prec} rep {r}: no usable JSON in {path}: {e!r}", file=sys.stderr)
                        res = None
                    if res is not None:
                        if pw is not None:
                            peer_warm.setdefault((prec, i), []).append(pw)
                        peer.setdefault((prec, i), []).append((gf * t / (t + c), gf))
                        # The matrix in and out, one after the other: the link's bandwidth.
                        item = 8 if prec == "d" else 4
                        if c > 0:
                            link.setdefault((prec, i), []).append(2 * args.n * args.n * item / c / 1e9)
                path = os.path.join(out_dir, f"row{i}_{prec}_tessera_r{r}.json")
                res = run_json(f"tessera {algo} {' '.join(extra)} {prec} rep {r}", [
                    args.binary, "run", "--algo", algo, "--n", str(args.n), "--precision", prec, "--gpus", "1",
                    "--device", "cuda", "--threads", str(args.threads), *extra, "--json", path, *checks], path,
                    args.timeout, bool(checks), wrong)
                try:
                    if res is not None:  # every number read first: a result without one is no run, not a crash
                        gf, w = float(res["gflops"]), float(res["gpu_warmup"]["s"]) if res.get("gpu_warmup") else None
                        sp, cp = [], []
                        for g in res.get("gpu_stats", [])[:1]:
                            sp.append((float(res["time_s"]), float(g.get("busy_s", 0.0)),
                                       float(g.get("kernel_span_s", 0.0))))
                            if g.get("copy_in_s", 0) > 0 and g.get("copy_out_s", 0) > 0:
                                cp.append((g["bytes_in"] / g["copy_in_s"] / 1e9, g["bytes_out"] / g["copy_out_s"] / 1e9))
                except (KeyError, TypeError, ValueError, AttributeError) as e:
                    print(f"  tessera {algo} {' '.join(extra)} {prec} rep {r}: no usable JSON in {path}: {e!r}",
                          file=sys.stderr)
                    res = None
                if res is not None:
                    tile.setdefault((prec, i), []).append(gf)
                    if w is not None:
                        warm.setdefault((prec, i), []).append(w)
                    spans.setdefault((prec, i), []).extend(sp)
                    copies.setdefault((prec, i), []).extend(cp)
                print(f"  {prec} rep {r + 1}/{args.reps} {algo} {' '.join(extra)}: "
                      f"{fmt(tile.get((prec, i), [None])[-1] if res else None, 1)} GFlop/s", file=sys.stderr, flush=True)

    print(f"N = {args.n}, tessera: --gpus 1 --device cuda --threads {args.threads}; medians of {args.reps} alternated runs; "
          "TFlop/s")
    print("Checks: " + CHECK_NOTES[args.check])
    print("| algo | prec | tessera args | tessera | cuSOLVER with copies | cuSOLVER without | ratio with copies "
          "| ratio without | tessera reps | cuSOLVER reps (with copies) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|---|")
    rows_out, missing = [], False
    for prec in precisions:
        for i, (algo, extra) in enumerate(args.rows):
            t = tile.get((prec, i), [])
            p = peer.get((prec, block[i]), [])
            mt = median(t)
            mw, mo = median([x[0] for x in p]), median([x[1] for x in p])
            rw = mt / mw if mt and mw else None
            ro = mt / mo if mt and mo else None
            missing |= not t or not p
            print(f"| {algo} | {prec} | `{' '.join(extra)}` | {fmt(mt and mt / 1e3)} | {fmt(mw and mw / 1e3)} | "
                  f"{fmt(mo and mo / 1e3)} | {fmt(rw)} | {fmt(ro)} | {', '.join(f'{x / 1e3:.2f}' for x in t) or '-'} | "
                  f"{', '.join(f'{x[0] / 1e3:.2f}' for x in p) or '-'} |")
            rows_out.append({"algo": algo, "precision": prec, "args": extra, "n": args.n, "tessera_gflops": t,
                             "cusolver_gflops_with_copies": [x[0] for x in p],
                             "cusolver_gflops_without_copies": [x[1] for x in p],
                             "ratio_with_copies": rw, "ratio_without_copies": ro})

    def each_row():
        """(JSON row, precision, row index, algo, row args) in the rates table's order."""
        for pi, prec in enumerate(precisions):
            for i, (algo, extra) in enumerate(args.rows):
                yield rows_out[pi * len(args.rows) + i], prec, i, algo, extra

    print()
    print("Copies (GB/s; tessera: bytes over the time its streams spent copying, medians; cuSOLVER: the matrix in and "
          "out over its copy_s, the link's bandwidth):")
    print("| algo | prec | tessera args | tessera in | tessera out | cuSOLVER |")
    print("|---|---|---|---:|---:|---:|")
    for row, prec, i, algo, extra in each_row():
        c = copies.get((prec, i), [])
        print(f"| {algo} | {prec} | `{' '.join(extra)}` | {fmt(median([x[0] for x in c]), 1)} | "
              f"{fmt(median([x[1] for x in c]), 1)} | {fmt(median(link.get((prec, block[i]), [])), 1)} |")
        row["copies_gbps_in_out"] = c
        row["cusolver_copies_gbps"] = link.get((prec, block[i]), [])
    print()
    print("The GPU's time (tessera, medians, seconds: the run; the manager thread's busy time, from each task's start "
          "to its kernels' end; the GPU's own span of each task's kernels; busy less span is the host's share of "
          "each task, launches and waits):")
    print("| algo | prec | tessera args | run | manager busy | kernel span | busy - span |")
    print("|---|---|---|---:|---:|---:|---:|")
    for row, prec, i, algo, extra in each_row():
        sp = spans.get((prec, i), [])
        run_s, busy, span = (median([x[k] for x in sp]) for k in range(3))
        print(f"| {algo} | {prec} | `{' '.join(extra)}` | {fmt(run_s, 3)} | {fmt(busy, 3)} | {fmt(span, 3)} | "
              f"{fmt(busy - span if busy is not None and span is not None else None, 3)} |")
        row["time_busy_span_s"] = sp
    print()
    print("Warm-up before the clock (medians, seconds, not in the times above: tessera's GPU calls each kernel's most "
          "frequent and largest shape once on each stream, --gpu-warmup; cuSOLVER its routine on an identity of the "
          "matrix's size; - where a run did none):")
    print("| algo | prec | tessera args | tessera | cuSOLVER |")
    print("|---|---|---|---:|---:|")
    for row, prec, i, algo, extra in each_row():
        w, pw = warm.get((prec, i), []), peer_warm.get((prec, block[i]), [])
        print(f"| {algo} | {prec} | `{' '.join(extra)}` | {fmt(median(w), 3)} | {fmt(median(pw), 3)} |")
        row["warmup_s"] = w
        row["cusolver_warmup_s"] = pw
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"n": args.n, "threads": args.threads, "reps": args.reps, "check": args.check, "rows": rows_out},
                      f, indent=1)
    if wrong:
        print(f"bench_gpu.py: {len(wrong)} run(s) failed their check: {', '.join(wrong)}", file=sys.stderr)
    return 1 if missing or wrong else 0


if __name__ == "__main__":
    outputs.run_main(main)
