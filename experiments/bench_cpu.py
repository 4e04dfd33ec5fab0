#!/usr/bin/env python3
"""tessera against OpenBLAS LAPACKE (potrf, geqrf, getrf) on this machine.

Each configuration runs tessera's tile runtime and the LAPACKE peer in turn,
alternating, `--reps` times each in the same sweep and with the same number of
threads (tessera: compute threads, each kernel single-threaded; LAPACKE:
OpenBLAS threads). It prints the median GFlop/s of each and the ratio of the
medians, and writes every run's JSON to --out.

    /usr/bin/python3 experiments/bench_cpu.py            # the issue's sweep
    /usr/bin/python3 experiments/bench_cpu.py --quick    # N = 2048 only
    /usr/bin/python3 experiments/bench_cpu.py --blas-core SkylakeX   # both on OpenBLAS's AVX-512 kernels
    /usr/bin/python3 experiments/bench_cpu.py --sweep lu   # LU (issue 14): partial and tournament against getrf
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

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


def run(binary, algo, prec, n, threads, impl, extra, out_dir, tag, m=None):
    path = os.path.join(out_dir, f"{algo}_{prec}_{m or n}x{n}_{impl}_{'_'.join(extra).replace('-', '')}_{tag}.json")
    cmd = [binary, "run", "--algo", algo, "--n", str(n), "--precision", prec,
           "--threads", str(threads), "--impl", impl, "--json", path] + extra + (["--m", str(m)] if m else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/tessera")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="N = 2048 only, one rep")
    ap.add_argument("--out", default=None, help="folder for the per-run JSON files")
    ap.add_argument("--tile-args", default="", help="extra arguments for the tessera runs, e.g. '--B 256'")
    ap.add_argument("--blas-core", default=None,
                    help="OpenBLAS kernel set for both (OPENBLAS_CORETYPE, e.g. SkylakeX); default: OpenBLAS's choice")
    ap.add_argument("--sweep", choices=["issue2", "lu"], default="issue2", help="which sweep; default issue2")
    args = ap.parse_args()
    if args.blas_core:
        os.environ["OPENBLAS_CORETYPE"] = args.blas_core
    out_dir = args.out or tempfile.mkdtemp(prefix="tessera-bench-")
    os.makedirs(out_dir, exist_ok=True)
    full = SWEEP if args.sweep == "issue2" else SWEEP_LU
    sweep = [(e[0], e[1], 2048, None) + tuple(e[4:5]) for e in full[1:]] if args.quick else full
    reps = 1 if args.quick else args.reps
    tty = sys.stderr.isatty()

    print(f"threads={args.threads} reps={reps} (alternating tessera / LAPACKE), JSON in {out_dir}")
    print(f"{'algo':<9}{'prec':<5}{'N':>12}  {'tessera GF/s':>12}  {'LAPACKE GF/s':>12}  {'ratio':>6}  {'target':>6}  met"
          "  variant")
    all_met = True
    cores = set()
    for entry in sweep:
        algo, prec, n, target = entry[:4]
        own = list(entry[4]) if len(entry) > 4 else []
        m = entry[5] if len(entry) > 5 else None
        tile, ref = [], []
        for r in range(reps):
            if tty:
                print(f"\r  {algo} {prec} N={n} rep {r + 1}/{reps} ...", end="", file=sys.stderr, flush=True)
            for impl, extra, values in (("tile", args.tile_args.split() + own, tile), ("lapack", [], ref)):
                result = run(args.binary, algo, prec, n, args.threads, impl, extra, out_dir, f"r{r}", m)
                values.append(result["gflops"])
                cores.add(result.get("blas_core", "?"))
        if tty:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
        t, l = statistics.median(tile), statistics.median(ref)
        ratio = t / l
        met = "" if target is None else ("yes" if ratio >= target else "NO")
        all_met &= met != "NO"
        tgt = "" if target is None else f"{target:.1f}x"
        size = f"{m}x{n}" if m else f"{n}"
        print(f"{algo:<9}{prec:<5}{size:>12}  {t:>12.1f}  {l:>12.1f}  {ratio:>5.2f}x  {tgt:>6}  {met:>3}  {' '.join(own)}",
              flush=True)
    print("OpenBLAS kernels: " + "/".join(sorted(cores)), flush=True)
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
