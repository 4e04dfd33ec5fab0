#!/usr/bin/env python3
"""tessera against OpenBLAS LAPACKE (potrf, geqrf, getrf) on this machine.

Each configuration runs tessera's tile runtime and the LAPACKE peer in turn,
alternating, `--reps` times each in the same sweep and with the same number of
threads (tessera: compute threads, each kernel single-threaded; LAPACKE:
OpenBLAS threads), on the same matrix (--tile-args' --matrix, --seed and
--input go to both) and with the same --check (default every run: each checks
its factors by a scaled residual after its timing). It prints the median
GFlop/s of each and the ratio of the medians, and writes every run's JSON to
--out. tessera's runs start and end column-major as LAPACKE's do
(--column-major): its rate counts the factorization alone, as LAPACKE's, and
the `w/ conv` column is the ratio with tessera's conversions into tiles and
back (their allocation included) added to its time, what a caller holding a
LAPACK-layout matrix would see. A run that fails (exit status, no JSON, a check that failed or did
not run) is reported on stderr with its reason and left out; the sweep goes
on. Exit status: 0 every target met, 1 a target missed or a run
failed, 2 a bad option (one line naming it, before any run) or tessera
refused every run as bad input (e.g. a wrong --tile-args; its message quoted).

    /usr/bin/python3 experiments/bench_cpu.py            # the issue's sweep
    /usr/bin/python3 experiments/bench_cpu.py --quick    # N = 2048 only
    /usr/bin/python3 experiments/bench_cpu.py --blas-core SkylakeX   # both on OpenBLAS's AVX-512 kernels
    /usr/bin/python3 experiments/bench_cpu.py --sweep lu   # LU (issue 14): partial and tournament against getrf
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

BUILD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build")  # whatever the cwd
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import outputs  # noqa: E402
from runner.outputs import UsageError  # noqa: E402
from bench_mpi import CHECK_MODES, CHECK_NOTES, check_args, matrix_args  # noqa: E402

# (algo, precision, n, target ratio tessera/LAPACKE[, tessera's extra arguments, m])
# -- targets from issue 2.
SWEEP = [
    ("cholesky", "d", 4096, 1.1),
    ("cholesky", "d", 8192, 1.0),
    ("qr", "d", 8192, 1.2),
    ("cholesky", "s", 8192, 1.0),
    ("qr", "s", 8192, None),
]

# LU, issue 14 point 5: the best of partial / tournament >= 1.0x getrf at
# N = 8192 (each variant is listed; the target applies to the better one),
# tournament >= 1.2x on the tall-skinny m = 65,536, n = 1,024.
SWEEP_LU = [
    ("lu", "d", 8192, None, ["--pivot", "partial"]),
    ("lu", "d", 8192, None, ["--pivot", "tournament"]),
    ("lu", "s", 8192, None, ["--pivot", "partial"]),
    ("lu", "s", 8192, None, ["--pivot", "tournament"]),
    # Tall-skinny: the default tiles (B = 256 here), and tiles as tall as a sixteenth of a thread's rows with
    # 128-wide columns, which cut the tournament's merges (README, LU).
    ("lu", "d", 1024, None, ["--pivot", "tournament"], 65536),
    ("lu", "d", 1024, 1.2, ["--pivot", "tournament", "--B", "2048", "--s", "8"], 65536),
    ("lu", "d", 1024, None, ["--pivot", "partial"], 65536),
]


# Options each run gets from the script; --tile-args must not give them again.
OWN_OPTIONS = ("--algo", "--n", "--m", "--precision", "--threads", "--impl", "--json", "--check", "--column-major")
# Options of --tile-args that choose the matrix: given to the LAPACKE runs too, so that both factor the same one.
MATRIX_OPTIONS = ("--matrix", "--seed", "--input")


def run(binary, algo, prec, n, threads, impl, extra, out_dir, tag, m=None):
    """One run: (its JSON result, None), or (None, (exit status, why)) when it failed (with --check in `extra`, also
    when its JSON does not say that the check passed)."""
    variant = re.sub(r"[^A-Za-z0-9_.]", "", "_".join(extra))
    path = os.path.join(out_dir, f"{algo}_{prec}_{m or n}x{n}_{impl}_{variant}_{tag}.json")
    cmd = [binary, "run", "--algo", algo, "--n", str(n), "--precision", prec,
           "--threads", str(threads), "--impl", impl, "--json", path] + extra + (["--m", str(m)] if m else [])
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        return None, (None, f"cannot start {binary}: {e.strerror or e}")
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if l.strip() and not l.startswith("Run with --help")]
        return None, (p.returncode, lines[0] if lines else "no message")
    try:
        with open(path, encoding="utf-8") as f:
            result = json.load(f)
        float(result["gflops"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
        return None, (0, f"exit 0 but no usable JSON in {path}: {e}")
    if "--check" in extra and result.get("check_passed") is not True:
        passed = json.dumps(result.get("check_passed"))
        return None, (0, f"exit 0 but asked to --check, {path} says check_passed {passed}")
    return result, None


def with_conversions(result):
    """A --column-major run's GFlop/s with its conversions (convert_s) added to its time; None without them."""
    try:
        t, c = float(result["time_s"]), float(result["convert_s"])
    except (KeyError, TypeError, ValueError):
        return None
    return float(result["gflops"]) * t / (t + c) if t > 0 and c >= 0 else None


def check_options(args):
    """Refuses, before any run, what would make every run fail or the results unwritable; returns --tile-args split."""
    for option, v in (("--threads", args.threads), ("--reps", args.reps)):
        if v < 1:
            raise UsageError(f"{option} {v}: must be >= 1")
    if not os.path.isfile(args.binary) or not os.access(args.binary, os.X_OK):
        raise UsageError(f"--binary {args.binary}: not an executable (build it: cmake --build build --target tessera)")
    try:
        tile = shlex.split(args.tile_args)
    except ValueError as e:
        raise UsageError(f"--tile-args {args.tile_args!r}: {e}")
    if tile and not tile[0].startswith("-"):
        raise UsageError(f"--tile-args {args.tile_args!r}: must be tessera run options ('{tile[0]}' is none)")
    for a in tile:
        if a.split("=", 1)[0] in OWN_OPTIONS:
            raise UsageError(f"--tile-args {args.tile_args!r}: {a.split('=', 1)[0]} is the script's own option")
    if args.out:
        why = outputs.folder_problem(args.out)
        if why:
            raise UsageError(f"--out {args.out}: {why}")
    return tile


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(BUILD, "tessera"),
                    help="the tessera binary (default: this checkout's build/tessera)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="N = 2048 only, one rep")
    ap.add_argument("--out", default=None, help="folder for the per-run JSON files")
    ap.add_argument("--tile-args", default="", help="extra arguments for the tessera runs, e.g. '--B 256'")
    ap.add_argument("--blas-core", default=None,
                    help="OpenBLAS kernel set for both (OPENBLAS_CORETYPE, e.g. SkylakeX); default: OpenBLAS's choice")
    ap.add_argument("--sweep", choices=["issue2", "lu"], default="issue2", help="which sweep; default issue2")
    ap.add_argument("--check", choices=CHECK_MODES, default="every",
                    help="which runs of both sides check their factors (default every)")
    args = ap.parse_args()
    try:
        tile_args = check_options(args)
    except UsageError as e:
        print(f"bench_cpu.py: {e}", file=sys.stderr)
        return 2
    if args.blas_core:
        os.environ["OPENBLAS_CORETYPE"] = args.blas_core
    out_dir = args.out or tempfile.mkdtemp(prefix="tessera-bench-")
    full = SWEEP if args.sweep == "issue2" else SWEEP_LU
    sweep = [(e[0], e[1], 2048, None) + tuple(e[4:5]) for e in full[1:]] if args.quick else full
    reps = 1 if args.quick else args.reps
    tty = sys.stderr.isatty()

    print(f"threads={args.threads} reps={reps} (alternating tessera / LAPACKE), JSON in {out_dir}")
    print("Checks: " + CHECK_NOTES[args.check])
    same_matrix = matrix_args(tile_args, MATRIX_OPTIONS)
    print(f"{'algo':<9}{'prec':<5}{'N':>12}  {'tessera GF/s':>12}  {'LAPACKE GF/s':>12}  {'ratio':>6}  {'w/ conv':>7}  "
          f"{'target':>6}  met  variant")
    all_met = True
    cores = set()
    failures = []  # (impl, exit status, why) of every failed run
    for entry in sweep:
        algo, prec, n, target = entry[:4]
        own = list(entry[4]) if len(entry) > 4 else []
        m = entry[5] if len(entry) > 5 else None
        tile, ref, converted = [], [], []  # converted: tessera's rate with its conversions in its time
        for r in range(reps):
            if tty:
                print(f"\r  {algo} {prec} N={n} rep {r + 1}/{reps} ...", end="", file=sys.stderr, flush=True)
            checks = check_args(args.check, r)
            for impl, extra, values in (("tile", tile_args + own + checks + ["--column-major"], tile),
                                        ("lapack", same_matrix + checks, ref)):
                result, why = run(args.binary, algo, prec, n, args.threads, impl, extra, out_dir, f"r{r}", m)
                if result is None:
                    failures.append((impl,) + why)
                    print(f"\r  {algo} {prec} N={n} {impl} rep {r + 1}: exit {why[0]}: {why[1]}", file=sys.stderr,
                          flush=True)
                    continue
                values.append(result["gflops"])
                cores.add(result.get("blas_core", "?"))
                rate = with_conversions(result) if impl == "tile" else None
                if rate is not None:
                    converted.append(rate)
        if tty:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
        t = statistics.median(tile) if tile else None
        l = statistics.median(ref) if ref else None
        ratio = t / l if t and l else None
        conv = statistics.median(converted) / l if converted and len(converted) == len(tile) and l else None
        met = "" if target is None else ("-" if ratio is None else "yes" if ratio >= target else "NO")
        all_met &= met not in ("NO", "-")
        tgt = "" if target is None else f"{target:.1f}x"
        size = f"{m}x{n}" if m else f"{n}"

        def g(v):
            return f"{v:.1f}" if v is not None else "failed"
        print(f"{algo:<9}{prec:<5}{size:>12}  {g(t):>12}  {g(l):>12}  {'-' if ratio is None else f'{ratio:.2f}x':>6}  "
              f"{'-' if conv is None else f'{conv:.2f}x':>7}  {tgt:>6}  {met:>3}  {' '.join(own)}", flush=True)
    print("OpenBLAS kernels: " + ("/".join(sorted(cores)) or "-"), flush=True)
    tile_runs = len(sweep) * reps
    refused = [f for f in failures if f[0] == "tile" and f[1] == 2]
    if len(refused) == tile_runs:
        print(f"bench_cpu.py: tessera refused every run as bad input (exit 2): {refused[0][2]}", file=sys.stderr)
        return 2
    if failures:
        print(f"bench_cpu.py: {len(failures)} run(s) failed (reported above)", file=sys.stderr)
    return 0 if all_met and not failures else 1


if __name__ == "__main__":
    outputs.run_main(main)
