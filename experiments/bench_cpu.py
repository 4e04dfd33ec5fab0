#!/usr/bin/env python3
"""tessera against OpenBLAS LAPACKE (potrf, geqrf) on this machine.

Each configuration runs tessera's tile runtime and the LAPACKE peer in turn,
alternating, `--reps` times each in the same sweep and with the same number of
threads (tessera: compute threads, each kernel single-threaded; LAPACKE:
OpenBLAS threads). It prints the median GFlop/s of each and the ratio of the
medians, and writes every run's JSON to --out.

    /usr/bin/python3 experiments/bench_cpu.py            # the issue's sweep
    /usr/bin/python3 experiments/bench_cpu.py --quick    # N = 2048 only
    /usr/bin/python3 experiments/bench_cpu.py --blas-core SkylakeX   # both on OpenBLAS's AVX-512 kernels
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

# (algo, precision, n, target ratio tessera/LAPACKE) -- targets from issue 2.
SWEEP = [
    ("cholesky", "d", 4096, 1.1),
    ("cholesky", "d", 8192, 1.0),
    ("qr", "d", 8192, 1.2),
    ("cholesky", "s", 8192, 1.0),
    ("qr", "s", 8192, None),
]


def run(binary, algo, prec, n, threads, impl, extra, out_dir, tag):
    path = os.path.join(out_dir, f"{algo}_{prec}_{n}_{impl}_{tag}.json")
    cmd = [binary, "run", "--algo", algo, "--n", str(n), "--precision", prec,
           "--threads", str(threads), "--impl", impl, "--json", path] + extra
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
    args = ap.parse_args()
    if args.blas_core:
        os.environ["OPENBLAS_CORETYPE"] = args.blas_core
    out_dir = args.out or tempfile.mkdtemp(prefix="tessera-bench-")
    os.makedirs(out_dir, exist_ok=True)
    sweep = [(a, p, 2048, None) for a, p, _, _ in SWEEP[1:]] if args.quick else SWEEP
    reps = 1 if args.quick else args.reps
    tty = sys.stderr.isatty()

    print(f"threads={args.threads} reps={reps} (alternating tessera / LAPACKE), JSON in {out_dir}")
    print(f"{'algo':<9}{'prec':<5}{'N':>6}  {'tessera GF/s':>12}  {'LAPACKE GF/s':>12}  {'ratio':>6}  {'target':>6}  met")
    all_met = True
    cores = set()
    for algo, prec, n, target in sweep:
        tile, ref = [], []
        for r in range(reps):
            if tty:
                print(f"\r  {algo} {prec} N={n} rep {r + 1}/{reps} ...", end="", file=sys.stderr, flush=True)
            for impl, extra, values in (("tile", args.tile_args.split(), tile), ("lapack", [], ref)):
                result = run(args.binary, algo, prec, n, args.threads, impl, extra, out_dir, f"r{r}")
                values.append(result["gflops"])
                cores.add(result.get("blas_core", "?"))
        if tty:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
        t, l = statistics.median(tile), statistics.median(ref)
        ratio = t / l
        met = "" if target is None else ("yes" if ratio >= target else "NO")
        all_met &= met != "NO"
        tgt = "" if target is None else f"{target:.1f}x"
        print(f"{algo:<9}{prec:<5}{n:>6}  {t:>12.1f}  {l:>12.1f}  {ratio:>5.2f}x  {tgt:>6}  {met}", flush=True)
    print("OpenBLAS kernels: " + "/".join(sorted(cores)), flush=True)
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
