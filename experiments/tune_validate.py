#!/usr/bin/python3
"""How good is `tessera tune`? Its choice against a brute-force real sweep (issue 16 point 1).

For each cell (algorithm, precision, N) on this machine, with --threads T:
  1. sweep: every B from 128 to 640 in steps of 64 and s in 1..3, one real
     run each (`tessera run --B B --s s`), appended to a JSON-lines file so an
     interrupted sweep resumes where it stopped;
  2. tune: `tessera tune` for the cell, its choice written to a file;
  3. confirm: the tuned configuration, the sweep's three fastest and
     LAPACKE's peer run again in turn, --reps times, alternating; each one's
     time is the best of its reps (the sweep's single run only ranks); the
     tuned configuration is a point of the sweep's grid too, so the best is
     taken over all of them (tuned / best <= 1.0 means the tuner found the best).
The table gives the tuned time over the best time and, for Cholesky, the
tuned configuration's speed over LAPACKE's (dpotrf/spotrf). A run that fails
is recorded with its exit status and the sweep goes on. Exit status: 0 every
cell's tuned configuration within 5% of the best, 1 not (or a cell failed),
2 a bad option or --markdown file (one line naming it, before any run).

    OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 experiments/tune_validate.py --out /tmp/tv-skx
    /usr/bin/python3 experiments/tune_validate.py --cells cholesky:d:8192 --out /tmp/tv
"""
import argparse
import json
import os
import subprocess
import sys
import time

BUILD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build")  # whatever the cwd
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import outputs  # noqa: E402
from runner.outputs import UsageError  # noqa: E402

CELLS = [(a, p, n) for a in ("cholesky", "qr") for p in ("d", "s") for n in (4096, 8192)]
GRID = [(B, s) for B in range(128, 641, 64) for s in (1, 2, 3)]


PAUSE = None  # --pause-file: while it exists, no run starts (the machine is wanted for something else)
ALGOS, PRECISIONS = ("cholesky", "qr", "lu"), ("d", "s")
SUMMARY_KEYS = ("openblas_coretype", "algo", "precision", "n", "tuned", "tuned_s", "best", "best_s", "tuned_over_best",
                "lapack_over_tuned")


def wait_while_paused():
    if PAUSE and os.path.exists(PAUSE):
        print(f"\n  paused while {PAUSE} exists", file=sys.stderr, flush=True)
        open(PAUSE + ".ack", "w", encoding="utf-8").close()
        while os.path.exists(PAUSE):
            time.sleep(1)
        if os.path.exists(PAUSE + ".ack"):
            os.remove(PAUSE + ".ack")


def run_once(binary, algo, prec, n, threads, extra, json_path):
    """One real run; its time in seconds, or None (and why) if it failed."""
    wait_while_paused()
    cmd = [binary, "run", "--algo", algo, "--precision", prec, "--n", str(n), "--threads", str(threads),
           "--json", json_path] + extra
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''}"
    try:
        with open(json_path, encoding="utf-8") as f:
            r = json.load(f)
        return float(r["time_s"]), r.get("blas_core", "?")
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
        return None, f"exit 0 but no usable JSON: {e}"


def load_rows(path):
    """The sweep's rows so far (JSON lines; a line that is no row, e.g. one cut short by a kill, is skipped with a
    warning)."""
    rows = {}
    if os.path.exists(path):
        with open(path, "rb") as f:
            for n, line in enumerate(f, 1):
                try:
                    if not line.strip():
                        continue
                    r = json.loads(line.decode("utf-8"))
                    if not isinstance(r, dict) or not isinstance(r.get("key"), str):
                        raise ValueError("no key")
                    rows[r["key"]] = r
                except (ValueError, RecursionError):
                    print(f"tune_validate: {path}:{n}: not a row of the sweep, line ignored", file=sys.stderr)
    return rows


def sweep(args, cell, rows, log):
    """Runs the grid points of a cell not yet in `rows`, each appended to the file `log`; returns how many failed."""
    algo, prec, n = cell
    failed = 0
    todo = [(B, s) for B, s in GRID if f"{algo}:{prec}:{n}:B{B}:s{s}" not in rows]
    for i, (B, s) in enumerate(todo):
        key = f"{algo}:{prec}:{n}:B{B}:s{s}"
        print(f"\r  sweep {algo} {prec} N={n}: {i + 1}/{len(todo)} (B={B}, s={s})   ", end="", file=sys.stderr, flush=True)
        t, info = run_once(args.binary, algo, prec, n, args.threads, ["--B", str(B), "--s", str(s)], args.tmp_json)
        row = {"key": key, "algo": algo, "precision": prec, "n": n, "B": B, "s": s, "time_s": t, "info": info}
        rows[key] = row
        outputs.append_line(log, json.dumps(row))
        if t is None:
            failed += 1
            print(f"\r  sweep {algo} {prec} N={n} B={B} s={s}: {info}", file=sys.stderr, flush=True)
    print("\r" + " " * 70 + "\r", end="", file=sys.stderr)
    return failed


def tune(args, cell):
    algo, prec, n = cell
    out = os.path.join(args.out, f"tuned_{algo}_{prec}_{n}.json")
    wait_while_paused()
    cmd = [args.binary, "tune", "--algo", algo, "--precision", prec, "--n", str(n), "--threads", str(args.threads),
           "--out", out] + args.tune_args.split()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    try:
        with open(out, encoding="utf-8") as f:
            tuned = json.load(f)
        if not all(k in tuned["choice"] for k in ("B", "s")):
            raise KeyError("choice.B and choice.s")
        return tuned, out
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
        return None, f"exit 0 but no usable tuned file {out}: {e}"


def confirm(args, cell, rows, tuned_path):
    """Best-of-reps times of the tuned configuration, the sweep's top three and the LAPACKE peer."""
    algo, prec, n = cell
    done = sorted((r for r in rows.values() if r["key"].startswith(f"{algo}:{prec}:{n}:")
                   and isinstance(r.get("time_s"), (int, float)) and r["time_s"] > 0),
                  key=lambda r: r["time_s"])[:3]
    with open(tuned_path, encoding="utf-8") as f:
        choice = json.load(f)["choice"]
    # The tuned configuration runs once per rep even when it is one of the
    # sweep's best: two slots of one configuration would only measure noise.
    same = f"B{choice['B']} s{choice['s']}"
    contenders = {"tuned": ["--tuned", tuned_path]}
    for r in done:
        if f"B{r['B']} s{r['s']}" != same or choice.get("b") is not None:
            contenders[f"B{r['B']} s{r['s']}"] = ["--B", str(r["B"]), "--s", str(r["s"])]
    if algo == "cholesky":
        contenders["lapack"] = ["--impl", "lapack"]
    best = {k: None for k in contenders}
    every = {k: [] for k in contenders}
    for rep in range(args.reps):
        for k, extra in contenders.items():
            print(f"\r  confirm {algo} {prec} N={n}: rep {rep + 1}/{args.reps} {k}      ", end="", file=sys.stderr,
                  flush=True)
            t, _ = run_once(args.binary, algo, prec, n, args.threads, extra, args.tmp_json)
            every[k].append(t)
            if t is not None and (best[k] is None or t < best[k]):
                best[k] = t
    print("\r" + " " * 70 + "\r", end="", file=sys.stderr)
    return best, every


def read_summary(path):
    """The rows of a summary.json that tune_validate wrote, or UsageError naming the file and what is wrong."""
    if os.path.isdir(path):
        raise UsageError(f"--markdown {path}: is a folder, not a summary.json")
    try:
        with open(path, encoding="utf-8") as f:
            rows = json.load(f)
    except OSError as e:
        raise UsageError(f"--markdown {path}: cannot read it ({e.strerror or e})")
    except ValueError as e:
        raise UsageError(f"--markdown {path}: not JSON ({e})")
    except RecursionError:
        raise UsageError(f"--markdown {path}: JSON nested too deeply, not a summary.json")
    if not isinstance(rows, list):
        raise UsageError(f"--markdown {path}: not a summary.json of tune_validate (a list of cells)")
    if not rows:
        raise UsageError(f"--markdown {path}: holds no cell (an empty list): no table to print")
    for i, r in enumerate(rows):
        try:
            missing = [k for k in SUMMARY_KEYS if k not in r]
            ok = not missing and all(r[k] is None or isinstance(r[k], (int, float))
                                     for k in ("tuned_s", "best_s", "tuned_over_best", "lapack_over_tuned"))
            ok = ok and all(k in r["tuned"]["choice"] for k in ("B", "s", "decided_by"))
            ok = ok and isinstance(r["tuned"]["seconds"], (int, float))
        except (TypeError, KeyError):
            ok = False
        if not ok:
            raise UsageError(f"--markdown {path}: cell {i} is not a summary row of tune_validate"
                             + (f" (no {', '.join(missing)})" if missing else ""))
    return rows


def markdown(paths):
    """The table of experiments/README.md from one or more summary.json files (every file checked first)."""
    summaries = [read_summary(p) for p in paths]
    print("| OpenBLAS kernels | algo | prec | N | tuned | tuned s | best of sweep | best s | tuned / best | LAPACKE / tuned "
          "| tuning took s |")
    print("|---|---|---|---:|---|---:|---|---:|---:|---:|---:|")
    for r in (r for rows in summaries for r in rows):
        t = r["tuned"]["choice"]
        lap = "" if r["lapack_over_tuned"] is None else f"{r['lapack_over_tuned']:.2f}x"
        print(f"| {r['openblas_coretype']} | {r['algo']} | {r['precision']} | {r['n']} | B={t['B']} s={t['s']} "
              f"({t['decided_by']}) | {number(r['tuned_s'])} | {r['best']} | {number(r['best_s'])} | "
              f"{number(r['tuned_over_best'])} | {lap} | {r['tuned']['seconds']:.0f} |")


def number(v):
    """A time or ratio of the tables in 3 decimals, "-" when its runs failed."""
    return "-" if v is None else f"{v:.3f}"


def check_options(args):
    """The cells to run, after every option is checked (UsageError naming it otherwise); creates --out."""
    if not args.out:
        raise UsageError("--out FOLDER is required")
    for option, v in (("--threads", args.threads), ("--reps", args.reps)):
        if v < 1:
            raise UsageError(f"{option} {v}: must be >= 1")
    if not os.path.isfile(args.binary) or not os.access(args.binary, os.X_OK):
        raise UsageError(f"--binary {args.binary}: not an executable (build it: cmake --build build --target tessera)")
    cells = CELLS
    if args.cells:
        cells = []
        for c in args.cells.split(","):
            parts = c.split(":")
            if len(parts) != 3 or parts[0] not in ALGOS or parts[1] not in PRECISIONS or not parts[2].isdigit() \
                    or int(parts[2]) < 1:
                raise UsageError(f"--cells entry '{c}' is not algo:precision:N ({'|'.join(ALGOS)}, d|s, N >= 1)")
            cells.append((parts[0], parts[1], int(parts[2])))
    why = outputs.folder_problem(args.out)
    if why:
        raise UsageError(f"--out {args.out}: {why}")
    return cells


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(BUILD, "tessera"),
                    help="the tessera binary (default: this checkout's build/tessera)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", help="folder for the sweep's JSON lines, the tuned files and the summary")
    ap.add_argument("--markdown", nargs="+", metavar="SUMMARY", help="only print the Markdown table of summary.json files")
    ap.add_argument("--cells", default="", help="algo:precision:N,... (default: Cholesky and QR, d and s, 4096 and 8192)")
    ap.add_argument("--tune-args", default="", help="extra arguments for `tessera tune`")
    ap.add_argument("--sweep-only", action="store_true", help="only the brute-force sweep")
    ap.add_argument("--pause-file", default=None,
                    help="while FILE exists no run starts (FILE.ack says the sweep is waiting): a quiet machine for "
                         "every timed run while it is used for something else")
    args = ap.parse_args()
    global PAUSE
    PAUSE = args.pause_file
    try:
        if args.markdown:
            markdown(args.markdown)
            return 0
        cells = check_options(args)
    except UsageError as e:
        print(f"tune_validate: {e}", file=sys.stderr)
        return 2
    args.tmp_json = os.path.join(args.out, "last_run.json")
    sweep_path = os.path.join(args.out, "sweep.jsonl")
    rows = load_rows(sweep_path)
    core = os.environ.get("OPENBLAS_CORETYPE", "OpenBLAS's choice")
    print(f"threads={args.threads}, OPENBLAS_CORETYPE={core}, results in {args.out}", flush=True)
    failed = sum(sweep(args, cell, rows, sweep_path) for cell in cells)
    if failed:
        print(f"tune_validate: {failed} run(s) of the sweep failed (recorded in {sweep_path})", file=sys.stderr)
    if args.sweep_only:
        return 1 if failed else 0
    summary, ok = [], True
    print(f"{'algo':<9}{'prec':<5}{'N':>6}  {'tuned':>16}  {'best of sweep':>14}  {'tuned/best':>10}  {'vs LAPACKE':>10}")
    for cell in cells:
        algo, prec, n = cell
        tuned, where = tune(args, cell)
        if tuned is None:
            print(f"{algo:<9}{prec:<5}{n:>6}  tune failed: {where}", flush=True)
            ok = False
            continue
        best, every = confirm(args, cell, rows, where)
        t = best.pop("tuned")
        lap = best.pop("lapack", None)
        best["tuned (= " + f"B{tuned['choice']['B']} s{tuned['choice']['s']})"] = t  # the tuned one is a sweep point too
        name, b = min(((k, v) for k, v in best.items() if v), key=lambda kv: kv[1], default=("-", None))
        ratio = t / b if t and b else None
        speed = lap / t if lap and t else None
        ok &= ratio is not None and ratio <= 1.05
        label = f"B{tuned['choice']['B']} s{tuned['choice']['s']}"
        print(f"{algo:<9}{prec:<5}{n:>6}  {label:>16}  {name:>14}  {number(ratio):>10}  "
              f"{'' if speed is None else f'{speed:.2f}x':>10}", flush=True)
        summary.append({"algo": algo, "precision": prec, "n": n, "tuned": tuned, "tuned_s": t, "best": name,
                        "best_s": b, "tuned_over_best": ratio, "lapack_s": lap, "lapack_over_tuned": speed,
                        "openblas_coretype": core, "threads": args.threads, "reps": args.reps, "runs_s": every})
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    outputs.run_main(main)
