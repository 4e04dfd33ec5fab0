#!/usr/bin/env python3
"""tessera's runtime against StarPU's on one node: the same tile Cholesky, tiles, kernels and priorities.

000 §7.3 (Fig. 8) compares the paper's runtime with StarPU on one node. `starpu_peer` (experiments/starpu_peer.cpp)
submits tessera's own Cholesky tasks, with tessera's CPU kernels and priorities, to StarPU; so the two runs below
differ in the runtime alone. For each (N, tile) configuration, alternating in one sweep, --reps times each:

    build/tessera run --algo cholesky --n N --B NB --s 1 --threads T --precision P --json F
    build/starpu_peer --n N --nb NB --threads T --precision P --sched S --json F      (for each S in --sched)

It prints one row per configuration: the median GFlop/s of tessera and of each StarPU scheduling policy, and the
ratio of tessera's median to the best policy's. Both get the same --check (default every run: each checks its factor
by a scaled residual after its timing). A run that fails (exit status, timeout, no JSON, a check that failed or did
not run), and a peer run that did not run what was asked (its workers, its policy, or a task count other than
tessera's), is reported on stderr and left out; the sweep goes on; the exit status is 1 when a configuration got no
value of tessera's or of StarPU's or a run failed its check, 2 for a bad option (one line naming it, before any run; each --sched policy is tried on a one-tile
matrix first). StarPU keeps its bus calibration under OUT/starpu-home (STARPU_HOME), not in $HOME.

    /usr/bin/python3 experiments/bench_starpu.py                        # the sweep below, d, all cores
    /usr/bin/python3 experiments/bench_starpu.py --configs 3840:128 --reps 1 --markdown
    /usr/bin/python3 experiments/bench_starpu.py --blas-core Haswell --precision s
    /usr/bin/python3 experiments/bench_starpu.py --grid 1x2 --threads 1 --configs 7680:320   # StarPU-MPI, mpirun

With --grid PrxPc both run under `mpirun -np Pr*Pc` (--mpirun-args for both): tessera with --grid, the peer through
StarPU-MPI on tessera's placement of the tiles, --threads workers per rank each.
"""
import argparse
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

BUILD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build")  # whatever the cwd
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mpi import (CHECK_MODES, CHECK_NOTES, MPIRUN, build_or_out_problem, check_args, fmt_values,  # noqa: E402
                       parse_grid, run_json)
from runner import outputs  # noqa: E402

# (N, tile order): tessera's default tiles on this node's sizes, and smaller tiles, down to tasks of a few
# microseconds, where a runtime's own cost per task shows (000 Fig. 8's "250% faster when N <= 7680" is a
# statement about small problems).
CONFIGS = "1920:320,3840:320,7680:320,11520:320,3840:192,3840:128,1920:64,1920:32,960:32"


def cholesky_tasks(n, nb):
    """Tasks of a square-tile Cholesky of q = ceil(n / nb) tile columns: q POTF2', q(q-1)/2 TRSM, as many diagonal
    updates, q(q-1)(q-2)/6 GEMM."""
    q = -(-n // nb)
    return q + q * (q - 1) + q * (q - 1) * (q - 2) // 6


def parse_configs(text):
    """[(n, nb)] from 'N:NB,N:NB'; raises ValueError naming the bad entry."""
    out = []
    for entry in (e for e in text.split(",") if e):
        try:
            n, nb = (int(x) for x in entry.split(":"))
        except ValueError:
            raise ValueError(f"'{entry}' is not N:NB (e.g. 3840:320)")
        if n < 1 or nb < 1:
            raise ValueError(f"'{entry}' needs N, NB >= 1")
        out.append((n, nb))
    if not out:
        raise ValueError("names no configuration")
    return out


def check_options(args):
    """Why the options cannot make a sweep (one line naming the option and its value), or None; creates --out."""
    try:
        parse_configs(args.configs)
    except ValueError as e:
        return f"--configs {args.configs!r}: {e}"
    for option in ("reps", "threads"):
        if getattr(args, option) < 1:
            return f"--{option} {getattr(args, option)}: must be at least 1"
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        return f"--timeout {args.timeout}: must be a positive number of seconds"
    try:
        shlex.split(args.mpirun_args)
    except ValueError as e:
        return f"--mpirun-args {args.mpirun_args!r}: {e}"
    if args.precision not in ("d", "s"):
        return f"--precision {args.precision!r}: must be d or s"
    scheds = [s for s in args.sched.split(",") if s]
    if not scheds or any(not s.isidentifier() for s in scheds):
        return f"--sched {args.sched!r}: must name StarPU scheduling policies, e.g. lws,prio"
    return build_or_out_problem(args.build, ("starpu_peer", "tessera"), args.out, "; starpu_peer needs libstarpu-dev")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default=CONFIGS, help=f"N:NB pairs (default {CONFIGS})")
    ap.add_argument("--threads", type=int, default=None,
                    help="compute threads / StarPU CPU workers, per rank (default: the cores, or 1 with --grid)")
    ap.add_argument("--grid", type=parse_grid, default=None, help="PrxPc: both under mpirun on Pr*Pc ranks")
    ap.add_argument("--mpirun-args", default="", help="extra mpirun arguments for both, with --grid")
    ap.add_argument("--precision", default="d", help="d or s")
    ap.add_argument("--sched", default="lws,prio", help="StarPU scheduling policies, each run in turn (default lws,prio)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--build", default=BUILD,
                    help="folder holding starpu_peer and tessera (default: this checkout's build/)")
    ap.add_argument("--out", default=None, help="folder for the per-run JSON files (default: a temporary one)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds before one run is abandoned")
    ap.add_argument("--blas-core", default=None,
                    help="OpenBLAS kernel set for both (OPENBLAS_CORETYPE, e.g. Haswell); default: OpenBLAS's choice")
    ap.add_argument("--check", choices=CHECK_MODES, default="every",
                    help="which runs of both sides check their factors (default every)")
    args = ap.parse_args()
    if args.threads is None:
        args.threads = 1 if args.grid else os.cpu_count()
    why = check_options(args)
    if why:
        print(f"bench_starpu.py: {why}", file=sys.stderr)
        return 2
    if args.blas_core:
        os.environ["OPENBLAS_CORETYPE"] = args.blas_core
    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # both call it from their own threads (starpu_peer also sets it)
    configs = parse_configs(args.configs)
    scheds = [s for s in args.sched.split(",") if s]
    out_dir = args.out or tempfile.mkdtemp(prefix="tessera-bench-starpu-")
    os.environ["STARPU_HOME"] = os.path.join(out_dir, "starpu-home")
    peer = os.path.join(args.build, "starpu_peer")
    for s in scheds:  # a policy StarPU does not have, or workers it cannot start: refused before the sweep
        probe = subprocess.run([peer, "--n", "1", "--nb", "1", "--threads", str(args.threads), "--sched", s],
                               capture_output=True, text=True)
        if probe.returncode == 2:
            lines = [l for l in probe.stderr.splitlines() if "error:" in l]
            print(f"bench_starpu.py: --sched {s}: {lines[0] if lines else 'starpu_peer refused it'}", file=sys.stderr)
            return 2
    tessera_bin = os.path.join(args.build, "tessera")
    tty = sys.stderr.isatty()
    mpirun, grid = [], []
    if args.grid:
        pr, pc = args.grid
        grid = ["--grid", f"{pr}x{pc}"]
        mpirun = MPIRUN + shlex.split(args.mpirun_args) + ["-np", str(pr * pc)]
        if args.blas_core:
            mpirun += ["-x", "OPENBLAS_CORETYPE"]
        mpirun += ["-x", "OPENBLAS_NUM_THREADS", "-x", "STARPU_HOME"]

    print(f"cholesky {args.precision} threads={args.threads}{' grid=' + grid[1] if grid else ''} reps={args.reps} "
          f"(alternating tessera / StarPU {', '.join(scheds)}), JSON in {out_dir}", flush=True)
    print("Checks: " + CHECK_NOTES[args.check], flush=True)
    heads = ["N", "NB", "tasks", "tessera GFlop/s"] + [f"StarPU {s}" for s in scheds] + ["tessera/best StarPU", "reps"]
    if args.markdown:
        print("| " + " | ".join(heads) + " |")
        print("|" + "---:|" * (len(heads) - 1) + "---|")
    else:
        print("  ".join(f"{h:>12}" for h in heads[:-1]) + "  reps (tessera / StarPU ...)")
    missing = False
    cores = set()
    failed_checks = []  # the runs whose check failed
    for n, nb in configs:
        values = {"tessera": []} | {s: [] for s in scheds}
        for r in range(args.reps):
            if tty:
                print(f"\r  N={n} NB={nb} rep {r + 1}/{args.reps} ...", end="", file=sys.stderr, flush=True)
            path = os.path.join(out_dir, f"cholesky_{args.precision}_{n}_{nb}_tessera_r{r}.json")
            cmd = mpirun + [tessera_bin, "run", "--algo", "cholesky", "--n", str(n), "--B", str(nb), "--s", "1",
                            "--threads", str(args.threads), "--precision", args.precision, "--json", path] + grid \
                + check_args(args.check, r)
            runs = [("tessera", cmd, path)]
            for s in scheds:
                path = os.path.join(out_dir, f"cholesky_{args.precision}_{n}_{nb}_starpu-{s}_r{r}.json")
                runs.append((s, mpirun + [peer, "--n", str(n), "--nb", str(nb), "--threads", str(args.threads),
                                          "--precision", args.precision, "--sched", s, "--json", path] + grid
                             + check_args(args.check, r), path))
            for key, cmd, path in runs:
                label = f"{key} N={n} NB={nb} rep {r + 1}"
                result = run_json(label, cmd, path, args.timeout, "--check" in cmd, failed_checks)
                if result is None:
                    continue
                # The tasks of the same graph (tessera's JSON counts them all on one node; under --grid every
                # node's, the messages' sends and receives too), and for the peer the workers and the policy asked
                # for.
                asked = {} if key == "tessera" and grid else {"tasks": cholesky_tasks(n, nb)}
                if key != "tessera":
                    asked |= {"threads": args.threads, "sched": key}
                wrong = [f"{k} {result.get(k)} (asked {v})" for k, v in asked.items() if result.get(k) != v]
                if wrong:
                    print(f"  {label}: ran something else: {', '.join(wrong)}", file=sys.stderr)
                    continue
                values[key].append(float(result["gflops"]))
                cores.add(result.get("blas_core", "?"))
        if tty:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
        med = {k: statistics.median(v) if v else None for k, v in values.items()}
        peers = [med[s] for s in scheds if med[s] is not None]
        missing |= not peers or med["tessera"] is None
        best = max(peers) if peers else None
        ratio = f"{med['tessera'] / best:.2f}x" if best and med["tessera"] is not None else "-"
        cells = [str(n), str(nb), str(cholesky_tasks(n, nb))] + [f"{med[k]:.1f}" if med[k] is not None else "failed" for k in values] + [ratio]
        reps = " / ".join(fmt_values(v) for v in values.values())
        if args.markdown:
            print("| " + " | ".join(cells + [reps]) + " |", flush=True)
        else:
            print("  ".join(f"{c:>12}" for c in cells) + "  " + reps, flush=True)
    print("OpenBLAS kernels: " + ("/".join(sorted(cores)) or "-"), flush=True)
    if failed_checks:
        print(f"bench_starpu.py: {len(failed_checks)} run(s) failed their check: {', '.join(failed_checks)}",
              file=sys.stderr)
    return 1 if missing or failed_checks else 0


if __name__ == "__main__":
    outputs.run_main(main)
