#!/usr/bin/env python3
"""tessera's distributed runs against ScaLAPACK (PDPOTRF, PDGEQRF, PDGETRF) under mpirun.

For each algorithm it runs, alternating in one sweep, --reps times each:

    mpirun --allow-run-as-root --oversubscribe -np P build/scalapack_peer --algo A --n N --nb NB --grid PrxPc --json F
    mpirun --allow-run-as-root --oversubscribe -np P build/tessera run --algo A --n N --grid PrxPc --threads T --json F

with P = Pr*Pc, and prints one row per algorithm: the median GFlop/s of each,
the ratio tessera/ScaLAPACK of the medians, and every rep's value. Both
get the same --check (default every run: each checks its factors by a scaled
residual after its timing). A run that fails (exit status, timeout, no JSON,
a check that failed or did not run) is reported on stderr and left out; the
sweep goes on; the exit status is 1 when an algorithm got no ScaLAPACK value
or a run of either side failed its check, 2 for a bad option (one line naming
it, before any run).

    /usr/bin/python3 experiments/bench_mpi.py                          # cholesky,qr N=8192 grid 1x2
    /usr/bin/python3 experiments/bench_mpi.py --n 2048 --reps 1 --markdown
    /usr/bin/python3 experiments/bench_mpi.py --blas-core SkylakeX          # both peers on OpenBLAS's AVX-512 kernels
    /usr/bin/python3 experiments/bench_mpi.py --algos lu --tile-args '--pivot tournament'   # LU (issue 14)
    python3 experiments/bench_mpi.py --grid 2x2 --threads 3 --scalapack-threads 4 --mpirun-args '--bind-to none'
                                                                        # 4 ranks x 4 cores (tessera: 3 + its MPI thread)
"""
import argparse
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

BUILD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build")  # whatever the cwd
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import outputs  # noqa: E402

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]


def parse_grid(text):
    try:
        pr, pc = (int(x) for x in text.split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--grid '{text}' is not PrxPc (e.g. 1x2)")
    if pr < 1 or pc < 1:
        raise argparse.ArgumentTypeError(f"--grid '{text}' needs Pr, Pc >= 1")
    return pr, pc


# --check MODE of the bench scripts: which runs of each side check their factors (a scaled residual, the run's own
# --check), so that a fast wrong answer is not counted: every run, each side's first run of a row, or none (the table
# then says that nothing was checked).
CHECK_MODES = ("every", "first", "none")
CHECK_NOTES = {"every": "every run of both sides checked (--check: scaled residual; a failed check is left out)",
               "first": "only each side's first run of a row checked (--check first)",
               "none": "results NOT checked (--check none): a wrong answer would count"}


def check_args(mode, rep):
    """["--check"] when rep (0-based) of a side is to be checked under --check MODE, else []."""
    return ["--check"] if mode == "every" or (mode == "first" and rep == 0) else []


def check_passed_in(json_path):
    """The check_passed a run left in json_path (True, False or None), None when there is no readable JSON."""
    try:
        with open(json_path, encoding="utf-8") as f:
            result = json.load(f)
        return result.get("check_passed") if isinstance(result, dict) else None
    except (OSError, ValueError, RecursionError):
        return None


def run_json(label, cmd, json_path, timeout, checked=False, wrong=None):
    """Runs cmd; returns the JSON result it wrote to json_path, or None after
    reporting on stderr why not (timeout, exit status, no JSON). With `checked`
    (the run was given --check) its JSON must say check_passed true: a failed
    check (the programs exit 1 after writing it) or none is reported and left
    out, and a failed one's label added to the list `wrong` when given."""
    if os.path.exists(json_path):
        os.remove(json_path)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"  {label}: timed out after {timeout} s: {' '.join(cmd)}", file=sys.stderr)
        return None
    except OSError as e:
        print(f"  {label}: cannot run {cmd[0]}: {e}", file=sys.stderr)
        return None
    if proc.returncode != 0:
        # The program's own first message lines, not mpirun's boilerplate after them.
        lines = [l for l in (proc.stderr + proc.stdout).splitlines() if l.strip() and not l.startswith("---")]
        print(f"  {label}: exit {proc.returncode}: {' '.join(lines[:2]) if lines else '(no output)'}", file=sys.stderr)
        if checked and wrong is not None and check_passed_in(json_path) is False:
            wrong.append(label)
        return None
    try:
        with open(json_path, encoding="utf-8") as f:
            result = json.load(f)
        float(result["gflops"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
        print(f"  {label}: no usable JSON in {json_path}: {e}", file=sys.stderr)
        return None
    if checked and result.get("check_passed") is not True:
        failed = result.get("check_passed") is False
        why = f"its check failed (residual {result.get('residual')})" if failed else "asked to --check, its JSON " \
            f"says check_passed {json.dumps(result.get('check_passed'))}"
        print(f"  {label}: {why}; left out", file=sys.stderr)
        if failed and wrong is not None:
            wrong.append(label)
        return None
    return result


def run_one(label, cmd, json_path, timeout, cores=None, wrong=None):
    """Runs cmd; returns its JSON result's GFlop/s, or None after reporting why not (with --check in cmd, also a
    failed or missing check, whose label goes to `wrong`). Adds the OpenBLAS kernel set the run reports to `cores`
    (a set) when given."""
    result = run_json(label, cmd, json_path, timeout, "--check" in cmd, wrong)
    if result is None:
        return None
    if cores is not None:
        cores.add(result.get("blas_core", "?"))
    return float(result["gflops"])


def fmt_values(values):
    return ", ".join(f"{v:.1f}" for v in values) if values else "-"


def check_options(args):
    """Why the options cannot make a sweep (one line naming the option and its value), or None; creates --out."""
    algos = [a for a in args.algos.split(",") if a]
    if not algos:
        return f"--algos {args.algos!r}: names no algorithm (cholesky, qr, lu)"
    for a in algos:
        if a not in ("cholesky", "qr", "lu"):
            return f"--algos {args.algos!r}: '{a}' is not one of: cholesky, qr, lu"
    for option in ("n", "reps", "threads", "nb", "scalapack_threads"):
        if getattr(args, option) < 1:
            return f"--{option.replace('_', '-')} {getattr(args, option)}: must be at least 1"
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        return f"--timeout {args.timeout}: must be a positive number of seconds"
    for option in ("mpirun_args", "tile_args"):
        try:
            shlex.split(getattr(args, option))
        except ValueError as e:
            return f"--{option.replace('_', '-')} {getattr(args, option)!r}: {e}"
    if matrix_args(shlex.split(args.tile_args), ("--input",)):
        return (f"--tile-args {args.tile_args!r}: --input reaches tessera only (the ScaLAPACK peer generates its "
                "matrix): give --matrix and --seed, which both sides take")
    return build_or_out_problem(args.build, ("scalapack_peer", "tessera"), args.out)


# Options of --tile-args that choose the matrix: given to the ScaLAPACK peer too, which generates tessera's own
# matrices (base/matrix_gen.hpp), so that both factor the same one. It reads no file: --input is refused.
MATRIX_OPTIONS = ("--matrix", "--seed")


def matrix_args(tile, options=MATRIX_OPTIONS):
    """The options of a --tile-args list that choose the matrix (`--matrix K`, `--seed=S`, ...), in order."""
    out, take = [], False
    for a in tile:
        if take:
            out.append(a)
            take = False
        elif a in options:
            out.append(a)
            take = True
        elif a.split("=", 1)[0] in options:
            out.append(a)
    return out


def build_or_out_problem(build, programs, out, hint=""):
    """Why folder `build` lacks one of `programs` or folder `out` cannot take the results (one line naming the
    option and its value), or None; creates `out`."""
    for program in programs:
        path = os.path.join(build, program)
        if not os.path.isfile(path) or not os.access(path, os.X_OK):
            return f"--build {build}: no {program} there (build it: cmake --build {build}{hint})"
    if out:
        why = outputs.folder_problem(out)
        if why:
            return f"--out {out}: {why}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--algos", default="cholesky,qr", help="comma-separated: cholesky, qr, lu")
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--grid", type=parse_grid, default=(1, 2), help="process grid PrxPc (default 1x2)")
    ap.add_argument("--threads", type=int, default=1, help="tessera compute threads per rank")
    ap.add_argument("--nb", type=int, default=256, help="ScaLAPACK block size")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--build", default=BUILD,
                    help="folder holding scalapack_peer and tessera (default: this checkout's build/)")
    ap.add_argument("--out", default=None, help="folder for the per-run JSON files (default: a temporary one)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds before one run is abandoned")
    ap.add_argument("--scalapack-threads", type=int, default=1,
                    help="OpenBLAS threads per ScaLAPACK rank (default 1; give the cores per rank for ranks of several cores)")
    ap.add_argument("--mpirun-args", default="",
                    help="extra mpirun arguments for both peers, e.g. '--bind-to none' for ranks of several cores")
    ap.add_argument("--tile-args", default="", help="extra arguments for tessera's runs, e.g. '--pivot tournament'")
    ap.add_argument("--blas-core", default=None,
                    help="OpenBLAS kernel set for both peers (OPENBLAS_CORETYPE, e.g. SkylakeX); default: OpenBLAS's choice")
    ap.add_argument("--check", choices=CHECK_MODES, default="every",
                    help="which runs of both sides check their factors (default every)")
    args = ap.parse_args()
    why = check_options(args)
    if why:
        print(f"bench_mpi.py: {why}", file=sys.stderr)
        return 2
    mpirun = list(MPIRUN) + shlex.split(args.mpirun_args)
    tile_args = shlex.split(args.tile_args)
    if args.blas_core:
        os.environ["OPENBLAS_CORETYPE"] = args.blas_core
        mpirun += ["-x", "OPENBLAS_CORETYPE"]

    algos = [a for a in args.algos.split(",") if a]
    pr, pc = args.grid
    grid = f"{pr}x{pc}"
    nprocs = pr * pc
    out_dir = args.out or tempfile.mkdtemp(prefix="tessera-bench-mpi-")
    scalapack_bin = os.path.join(args.build, "scalapack_peer")
    tessera_bin = os.path.join(args.build, "tessera")
    tty = sys.stderr.isatty()

    print(f"N={args.n} grid={grid} ranks={nprocs} tessera threads/rank={args.threads} ScaLAPACK nb={args.nb} threads/rank={args.scalapack_threads} "
          f"reps={args.reps} (alternating), JSON in {out_dir}", flush=True)
    print("Checks: " + CHECK_NOTES[args.check], flush=True)
    if args.markdown:
        print("| algo | N | grid | ScaLAPACK GFlop/s | tessera GFlop/s | tessera/ScaLAPACK | ScaLAPACK reps | tessera reps |")
        print("|---|---:|---|---:|---:|---:|---|---|")
    else:
        print(f"{'algo':<9}{'N':>6}  {'grid':<5} {'ScaLAPACK':>9} {'tessera':>9} {'ratio':>6}  reps (ScaLAPACK | tessera)")
    reference_missing = False
    wrong = []  # the runs whose check failed
    cores = {"ScaLAPACK": set(), "tessera": set()}
    for algo in algos:
        scalapack, tessera = [], []
        for r in range(args.reps):
            if tty:
                print(f"\r  {algo} N={args.n} rep {r + 1}/{args.reps} ...", end="", file=sys.stderr, flush=True)
            path = os.path.join(out_dir, f"{algo}_{args.n}_{grid}_scalapack_r{r}.json")
            cmd = mpirun + ["-np", str(nprocs), scalapack_bin, "--algo", algo, "--n", str(args.n),
                            "--nb", str(args.nb), "--grid", grid, "--json", path,
                            "--blas-threads", str(args.scalapack_threads)] + matrix_args(tile_args) + \
                check_args(args.check, r)
            g = run_one(f"scalapack {algo} rep {r + 1}", cmd, path, args.timeout, cores["ScaLAPACK"], wrong)
            if g is not None:
                scalapack.append(g)
            path = os.path.join(out_dir, f"{algo}_{args.n}_{grid}_tessera_r{r}.json")
            cmd = mpirun + ["-np", str(nprocs), tessera_bin, "run", "--algo", algo, "--n", str(args.n),
                            "--grid", grid, "--threads", str(args.threads), "--json", path] + tile_args \
                + check_args(args.check, r)
            g = run_one(f"tessera {algo} rep {r + 1}", cmd, path, args.timeout, cores["tessera"], wrong)
            if g is not None:
                tessera.append(g)
        if tty:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
        reference_missing |= not scalapack
        s = statistics.median(scalapack) if scalapack else None
        t = statistics.median(tessera) if tessera else None
        s_txt = f"{s:.1f}" if s is not None else "failed"
        t_txt = f"{t:.1f}" if t is not None else "failed"
        ratio = f"{t / s:.2f}x" if s and t is not None else "-"
        if args.markdown:
            print(f"| {algo} | {args.n} | {grid} | {s_txt} | {t_txt} | {ratio} | "
                  f"{fmt_values(scalapack)} | {fmt_values(tessera)} |", flush=True)
        else:
            print(f"{algo:<9}{args.n:>6}  {grid:<5} {s_txt:>9} {t_txt:>9} {ratio:>6}  "
                  f"{fmt_values(scalapack)} | {fmt_values(tessera)}", flush=True)
    # Both peers link the same OpenBLAS; say which kernels it ran (see README, OpenBLAS kernels).
    print("OpenBLAS kernels: " + ", ".join(f"{k} {'/'.join(sorted(v)) or '-'}" for k, v in cores.items()), flush=True)
    # A failing tessera run is reported and tolerated (its side may be unfinished);
    # no ScaLAPACK value at all means the comparison itself is broken, and so does a wrong answer on either side.
    if wrong:
        print(f"bench_mpi.py: {len(wrong)} run(s) failed their check: {', '.join(wrong)}", file=sys.stderr)
    return 1 if reference_missing or wrong else 0


if __name__ == "__main__":
    outputs.run_main(main)
