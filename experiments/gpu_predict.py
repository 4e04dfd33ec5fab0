#!/usr/bin/env python3
"""Real GPU-node runs against the simulator's predictions from the node's calibrated machine file (issue 15 point 7).

    python3 experiments/gpu_predict.py results/gpu-node/2026-11-25-h200 [--binary build/tessera] [--json out.json]

DIR holds what one lent GPU node measured: runs.json (a manifest: the
machine file `tessera calibrate --device cuda` wrote there, and per run the
tessera run arguments, its JSON result and optionally its trace), the files
it names; or, without runs.json, what `gpu_node.sh run ... bench` wrote
(bench.json and bench/), each row's median run then being the real run
(and DIR/node.json, or --machine, the calibration). For every run, the same arguments with `--backend sim --machine
DIR/<machine_file> --gpus 1 --threads T` (phantom kernels; --check dropped,
since a phantom run has no factors, and the CUDA kernel options, whose
effect is the machine file's kernel times; with the real run's GPU capacity
as --gpu-memory where it gave none) give the prediction; a run the manifest
marks with an eviction policy is predicted with that policy too (the runtime's
default is next-use). Prints:

  1. real time, predicted time and the error (predicted - real) / real, with
     bytes copied in (real and predicted) for the runs that went out of core;
  2. for the runs with a trace: per GPU kernel and shape, the real time its
     tasks took on the GPU in the run (trace events) against the calibrated
     model's median times the number of tasks, so a prediction's error can be
     put down to the kernels that cause it.

A run whose simulation fails, or whose result or trace file cannot be read
(no positive time_s, gpu_stats not a list of GPUs with their byte counts),
is reported on stderr and left out; so is a bench row none of whose runs left
a result (each missing or unreadable run is named). Kernel shapes the GPU
model lacks are listed and left out of the per-kernel totals (null in
--json). Exit status: 0 every run predicted, 1 a run left out, 2 a bad option
or input file (runs.json, bench.json, the machine file, a --json that is one
of the inputs; one line naming it, before any simulation).
"""

import argparse
import collections
import json
import math
import os
import sys
import tempfile

BUILD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build")  # whatever the cwd
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mpi import run_json  # noqa: E402
from runner import outputs  # noqa: E402
from runner.outputs import UsageError  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(BUILD), "analysis"))
import trace_summary  # noqa: E402  (the traces' reader: format, version, gzip)


def model_key(trace_name):
    """The machine file's key of a kernel a trace names (base/kernel_table.cpp: the key is the name in lower case,
    POTF2' excepted)."""
    return "potf2p" if trace_name == "POTF2'" else trace_name.lower()


# Options that choose how a CUDA GPU computes a kernel, which the simulator takes from the machine file's kernel
# times instead: dropped, with their value, from a prediction's arguments (a file calibrated with them, such as
# `tessera calibrate --device cuda --gpu-qr-panel cholqr`'s, predicts such runs). --gpu-streams stays: a simulated
# GPU runs that many streams.
CUDA_KERNEL_OPTIONS = ("--gpu-trsm-inverse", "--gpu-qr-panel", "--gpu-qr-group", "--gpu-cholqr-gram")
# A native run's GPU warm-up (experiments/gpu_warmup.hpp): dropped from the real run's arguments, and chosen
# from what its result says instead (the JSON's gpu_warmup, absent where the run was cold: --gpu-warmup off, or
# made before 2026-11-28): a cold run is predicted with `--gpu-warmup off` where the machine file's GPU model has
# first-call costs of the run's factorization's kernels in its precision (`tessera calibrate --from-traces` of cold runs' traces writes them),
# else as a warm one (its table row says "paid, not modeled"; the per-kernel table's "first s" shows them).
REAL_ONLY_OPTIONS = ("--gpu-warmup",)


def _option_value(args, name):
    """The value of `name` in an argument list (`--name V` or `--name=V`), or None."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def simulated_args(args):
    """A real run's arguments as the prediction's: without --check, --pageable (a simulated GPU models its link, and
    tessera refuses it there), the CUDA kernel options and --gpu-warmup (and their values), and without --gpu-kernel-depth where
    the simulated GPU queues one task anyway (one stream: tessera refuses a depth that changes nothing)."""
    drop = CUDA_KERNEL_OPTIONS + REAL_ONLY_OPTIONS
    try:
        one_stream = int(_option_value(args, "--gpu-streams") or 1) <= 1
    except ValueError:
        one_stream = False  # a bad value: tessera names it
    if one_stream:
        drop = drop + ("--gpu-kernel-depth",)
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in drop:
            skip = True
        elif a.split("=", 1)[0] in drop:
            pass  # --option=value
        elif a not in ("--check", "--pageable"):
            out.append(a)
    return out


CHOLESKY_KERNELS = ("potf2p", "trsm", "gsmm", "gsmm_diag")
QR_KERNELS = ("geqrt", "larfb", "tsqrt", "ssrfb", "ttqrt", "ttmqr")


def _family(key):
    """The factorization a kernel key (base/kernel_table.cpp) belongs to."""
    return "cholesky" if key in CHOLESKY_KERNELS else "qr" if key in QR_KERNELS else \
        "lu" if key.startswith("lu_") else ""


def number_field(x):
    """A machine file's number, written bare or as {"value": x, "source": ...} as tessera reads it
    (base/json_fields.hpp, JsonFields::number); None when it is neither."""
    if isinstance(x, dict) and "value" in x:
        x = x["value"]
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def gpu_first_call_precisions(machine):
    """The (factorization, precision) pairs, such as ("cholesky", "d"), whose kernels the machine file's GPU model
    charges first calls for (first_call_s): tessera refuses a cold simulated run of any other."""
    try:
        fc = machine["kernel_models"][machine["node"]["gpus"]["model"]].get("first_call_s") or {}
    except (KeyError, TypeError, AttributeError):
        return set()
    return {(_family(k), p) for k, per in fc.items() if k != "source" and isinstance(per, dict)
            for p, x in per.items() if (number_field(x) or 0) > 0}


def first_calls(real, sim_args, modeled):
    """How the prediction of a real run treats its GPUs' first calls: "warmed" (the run warmed its GPUs before the
    clock), "paid" (a cold run, predicted cold: the model has first-call costs of its factorization's kernels in its
    precision) or "paid, not modeled" (a cold run predicted as a warm one)."""
    if isinstance(real.get("gpu_warmup"), dict):
        return "warmed"
    key = (_option_value(sim_args, "--algo") or "cholesky", _option_value(sim_args, "--precision") or "d")
    return "paid" if key in modeled else "paid, not modeled"


def _strings(v):
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def check_manifest(path, manifest):
    """A runs.json (or bench_manifest()'s) as this reads it, else UsageError naming the file."""
    def bad(what):
        raise UsageError("runs.json %s: %s (see gpu_node.sh ooc's manifest)" % (path, what))
    if not isinstance(manifest, dict) or not isinstance(manifest.get("runs"), list):
        bad("no \"runs\" list")
    if not isinstance(manifest.get("machine_file") or "", str) or not isinstance(manifest.get("threads") or 1, int):
        bad("machine_file must be a file name, threads a number")
    for i, r in enumerate(manifest["runs"]):
        if not (isinstance(r, dict) and isinstance(r.get("name"), str) and isinstance(r.get("file"), str)
                and _strings(r.get("args")) and isinstance(r.get("trace", ""), str)):
            bad("runs[%d] is not {\"name\", \"file\", \"args\": [...]}: %s" % (i, json.dumps(r)[:60]))
    return manifest


def real_time(result):
    """A run result's time_s when it is a positive finite number, else None."""
    t = result.get("time_s") if isinstance(result, dict) else None
    return t if isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and t > 0 else None


def bench_manifest(directory):
    """The manifest of a folder that `gpu_node.sh run ... bench` wrote (bench.json, bench/rowI_P_tessera_rR.json):
    per row and precision its median run, with the row's arguments; the folder's node.json, if any, as the machine.
    Each run without a readable result with a positive time_s is named on stderr; a row without any is listed in
    "left_out" (name, why), which predict() counts as a run left out."""
    path = os.path.join(directory, "bench.json")
    bench = outputs.load_json("bench.json", path)
    rows = bench.get("rows") if isinstance(bench, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("algo"), str) and
                                             isinstance(r.get("precision"), str) and _strings(r.get("args"))
                                             for r in rows) \
            or not isinstance(bench.get("n"), int) or not isinstance(bench.get("reps"), int):
        raise UsageError("bench.json %s: not bench_gpu.py's --json (n, reps and rows of algo, precision, args)" % path)
    runs, left = [], []
    for i, row in enumerate(bench["rows"]):
        prec = row["precision"]
        # Rows are numbered per precision in the order given (bench_gpu.py), so count this row's index in its precision.
        index = sum(1 for r in bench["rows"][:i] if r["precision"] == prec)
        label = "%s_%s_row%d" % (row["algo"], prec, index)
        found = []
        for r in range(bench["reps"]):
            name = os.path.join("bench", "row%d_%s_tessera_r%d.json" % (index, prec, r))
            path = os.path.join(directory, name)
            try:
                t = real_time(outputs.load_json("result", path))
                if t is None:
                    raise UsageError("result %s: no positive time_s" % path)
                found.append((t, name))
            except UsageError as e:  # a run that failed left no result, or a broken one
                print("gpu_predict.py: %s: %s" % (label, "result %s: missing (the run failed?)" % path
                                                 if not os.path.exists(path) else e), file=sys.stderr)
        if not found:
            left.append((label, "no result of its %d run(s) in %s" % (bench["reps"], os.path.join(directory, "bench"))))
            continue
        found.sort()  # the median run; of an even number, the faster of the middle two
        runs.append({"name": label, "file": found[(len(found) - 1) // 2][1],
                     "args": ["--algo", row["algo"], "--n", str(bench["n"]), "--precision", prec, *row["args"]]})
    machine = "node.json" if os.path.isfile(os.path.join(directory, "node.json")) else None
    return {"machine_file": machine, "note": "from bench.json: each row's median run", "runs": runs,
            "threads": bench.get("threads"), "left_out": left}


def gpu_model(machine, path):
    """The calibrated GPU model's medians by (kernel, precision, m, n, k, ib), ib 0 where a measurement has none (as
    tessera reads it: a shape calibrated at two inner blockings is two entries); UsageError naming the file without
    one, or with a median that is no number."""
    try:
        name = machine["node"]["gpus"]["model"]
        out = {}
        for i, e in enumerate(machine["kernel_models"][name]["measurements"]):
            median = number_field(e["median_s"])
            if median is None:
                raise UsageError("machine file %s: kernel_models.%s.measurements[%d].median_s %s: not a number or "
                                 "{\"value\": number}" % (path, name, i, json.dumps(e["median_s"])[:40]))
            out[(e["kernel"], e["precision"], e["m"], e["n"], e.get("k", 0), e.get("ib", 0))] = median
    except (KeyError, TypeError, AttributeError) as e:
        raise UsageError("machine file %s: no GPU kernel model (node.gpus.model and its kernel_models measurements: "
                         "missing %s), not a GPU node's calibration (tessera calibrate --device cuda)" % (path, e))
    return out


def trace_by_kernel(path, model):
    """Per GPU kernel and shape: tasks, their real seconds in the trace, the model's seconds, the seconds the GPU
    itself spent in their kernels (the trace's gpu_span_us, where the device measured it; NaN where not), and the
    real seconds and the number of the tasks that were their GPU's first of the kernel in the precision (whatever the
    shape: a kernel's first call on a GPU pays the libraries' module loading and set-up unless the run warmed its
    GPUs, experiments/gpu_warmup.hpp)."""
    _, events = trace_summary.load(path)  # TraceError (a ValueError) naming the file that is no tessera trace
    threads = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    rows = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0])
    first = {}  # (GPU thread, kernel, precision) -> (start, row key, seconds)
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "task" or not threads.get(e["tid"], "").startswith("gpu"):
            continue
        a = e["args"]
        key = (model_key(e["name"]), a["precision"], a["m"], a["n"], a["kdim"], a.get("ib", 0))
        r = rows[key]
        r[0] += 1
        r[1] += e["dur"] * 1e-6
        r[2] += model.get(key, float("nan"))
        r[3] += a["gpu_span_us"] * 1e-6 if "gpu_span_us" in a else float("nan")
        gpu = (e["tid"], e["name"], a["precision"])
        if gpu not in first or e["ts"] < first[gpu][0]:
            first[gpu] = (e["ts"], key, e["dur"] * 1e-6)
    for _, key, seconds in first.values():
        rows[key][4] += seconds
        rows[key][5] += 1
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--binary", default=os.path.join(BUILD, "tessera"),
                    help="the tessera binary (default: this checkout's build/tessera)")
    ap.add_argument("--machine", default=None,
                    help="predict from this machine file instead of the manifest's (another calibration of the node)")
    ap.add_argument("--threads", type=int, default=None,
                    help="the runs' compute threads (default: a bench folder's, else 13)")
    ap.add_argument("--json", default=None, help="write the tables' values here")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    try:
        manifest, machine_path, model, modeled = inputs(args)
    except UsageError as e:
        print("gpu_predict.py: %s" % e, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tessera-gpu-predict-") as tmp:
        return predict(args, manifest, machine_path, model, modeled, os.path.join(tmp, "predicted.json"))


def inputs(args):
    """(manifest, machine file, its GPU model) after every option and input file is checked: UsageError otherwise."""
    if not os.path.isfile(args.binary) or not os.access(args.binary, os.X_OK):
        raise UsageError("--binary %s: not an executable (build it: cmake --build build --target tessera)"
                         % args.binary)
    if args.threads is not None and args.threads < 1:
        raise UsageError("--threads %d: must be >= 1" % args.threads)
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        raise UsageError("--timeout %s: must be a positive number of seconds" % args.timeout)
    if args.json:
        why = outputs.file_problem(args.json)
        if why:
            raise UsageError("--json %s: %s" % (args.json, why))
    runs_json = os.path.join(args.dir, "runs.json")
    if os.path.isfile(runs_json):
        manifest = check_manifest(runs_json, outputs.load_json("runs.json", runs_json))
        read = [runs_json]
    elif os.path.isfile(os.path.join(args.dir, "bench.json")):
        manifest = bench_manifest(args.dir)
        bench = os.path.join(args.dir, "bench")
        read = [os.path.join(args.dir, "bench.json")] + ([os.path.join(bench, f) for f in os.listdir(bench)]
                                                         if os.path.isdir(bench) else [])
    else:
        raise UsageError("%s has neither runs.json nor bench.json" % args.dir)
    if not args.machine and not manifest.get("machine_file"):
        raise UsageError("%s names no calibration (no node.json, or no machine_file in runs.json): give the "
                         "node's calibration with --machine" % args.dir)
    if args.threads is None:
        args.threads = manifest.get("threads") or 13
    machine_path = args.machine or os.path.join(args.dir, manifest["machine_file"])
    if args.json:  # the output must not be one of the files this reads (the manifest, the calibration, the runs)
        read += [machine_path] + [os.path.join(args.dir, r[k]) for r in manifest["runs"] for k in ("file", "trace")
                                  if k in r]
        why = outputs.output_problem(args.json, read)
        if why:
            raise UsageError("--json %s: %s" % (args.json, why))
    machine = outputs.load_json("--machine" if args.machine else "machine file", machine_path)
    return manifest, machine_path, gpu_model(machine, machine_path), gpu_first_call_precisions(machine)


def left_out(name, why):
    print("gpu_predict.py: %s: %s; left out" % (name, why), file=sys.stderr)


def bytes_in(result, what):
    """GB copied in over a result's GPUs, or UsageError naming `what` when gpu_stats is not a list of GPUs with a
    numeric bytes_in."""
    stats = result.get("gpu_stats", [])
    if not isinstance(stats, list) or not all(isinstance(g, dict) and isinstance(g.get("bytes_in"), (int, float))
                                              and not isinstance(g.get("bytes_in"), bool) for g in stats):
        raise UsageError("%s: gpu_stats %s is not a list of GPUs with bytes_in" % (what, json.dumps(stats)[:60]))
    return sum(g["bytes_in"] for g in stats) / 1e9


def predict(args, manifest, machine_path, model, modeled, tmp):
    """The two tables (and --json) of every run of the manifest; 1 when a run was left out, else 0. `modeled`: the
    precisions whose GPU first calls the machine file charges."""
    out = {"dir": args.dir, "machine_file": machine_path, "runs": [], "kernels": {}}
    print(f"Real runs in {args.dir} against `tessera run ... --backend sim --machine {machine_path}` (phantom).")
    print("| run | tessera run options | eviction | GPU first calls | real s | predicted s | error | real GB in "
          "| predicted GB in |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    failed = 0
    for name, why in manifest.get("left_out", []):
        left_out(name, why)
        failed += 1
    for run in manifest["runs"]:
        result_path = os.path.join(args.dir, run["file"])
        try:
            real = outputs.load_json("result", result_path)
            if real_time(real) is None:
                raise UsageError("result %s: no positive time_s" % result_path)
            real_in = bytes_in(real, "result %s" % result_path)
        except UsageError as e:
            left_out(run["name"], e)
            failed += 1
            continue
        sim_args = simulated_args(run["args"])
        # The GPU's memory as the real run had it: a CUDA GPU keeps library memory per compute stream
        # (--gpu-streams), which the machine file's one-stream capacity does not know.
        capacities = [g["capacity_bytes"] for g in real.get("gpu_stats", []) if isinstance(g.get("capacity_bytes"), (int, float)) and not isinstance(g.get("capacity_bytes"), bool)
                      and g["capacity_bytes"] > 0]
        if capacities and not any(a.split("=", 1)[0] == "--gpu-memory" for a in sim_args):
            sim_args += ["--gpu-memory", str(int(min(capacities)))]
        cold = first_calls(real, sim_args, modeled)
        if cold == "paid":
            sim_args += ["--gpu-warmup", "off"]
        eviction = run.get("eviction")
        # A run that named its eviction is predicted with it; one the manifest marks as run under
        # least recently used (before next use was the default) with both.
        explicit = _option_value(sim_args, "--eviction")
        policies = [explicit] if explicit else ["lru", "next-use"] if eviction == "least recently used" else ["next-use"]
        for policy in policies:
            cmd = [args.binary, "run", *sim_args, "--backend", "sim", "--machine", machine_path, "--gpus", "1",
                   "--threads", str(args.threads), *([] if explicit else ["--eviction", policy]), "--json", tmp]
            pred = run_json(f"{run['name']} ({policy})", cmd, tmp, args.timeout)
            try:
                if pred is None:
                    raise UsageError("the simulation gave no result (above)")
                if real_time(pred) is None:
                    raise UsageError("the simulation's result has no positive time_s")
                pred_in = bytes_in(pred, "the simulation's result")
            except UsageError as e:
                left_out("%s (%s)" % (run["name"], policy), e)
                failed += 1
                continue
            is_real_policy = policy == "lru" if eviction and not explicit else True
            err = (pred["time_s"] - real["time_s"]) / real["time_s"] if is_real_policy else None
            print(f"| {run['name']} | `{' '.join(sim_args)}` | {policy}{'' if is_real_policy else ' (not run)'} | "
                  f"{cold} | {real['time_s']:.3f} | {pred['time_s']:.3f} | "
                  f"{'%+.1f%%' % (100 * err) if err is not None else '-'} | {real_in:.1f} | {pred_in:.1f} |")
            out["runs"].append({"name": run["name"], "args": sim_args, "eviction": policy, "real_s": real["time_s"],
                                "predicted_s": pred["time_s"], "error": err, "real_gb_in": real_in,
                                "predicted_gb_in": pred_in, "measured_policy": is_real_policy,
                                "gpu_first_calls": cold})
    print()
    print("Per GPU kernel (runs with a trace): real seconds of its tasks in the run against the calibrated model; first "
          "s: its GPU's first task of the kernel (any shape); the rest: the others' against the model's for as many.")
    print("| run | kernel | prec | shape | tasks | real s | first s | model s | real / model | the rest: real / model "
          "| GPU span s (the device's own) |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for run in manifest["runs"]:
        if "trace" not in run:
            continue
        path = os.path.join(args.dir, run["trace"])
        try:
            rows = trace_by_kernel(path, model)
        except trace_summary.TraceError as e:  # names the file
            left_out(run["name"], str(e))
            failed += 1
            continue
        except (KeyError, TypeError, AttributeError) as e:
            left_out(run["name"], "trace %s: %s" % (path, "missing %s" % e if isinstance(e, KeyError) else e))
            failed += 1
            continue
        total = [0.0, 0.0, 0.0, 0.0]  # real, model, first, the rest's model: over the shapes the model has
        unmodeled = []
        for key, (n, real_s, model_s, span_s, first_s, firsts) in sorted(rows.items()):
            k, p, m, nn, kk, ib = key
            shape = f"{m}x{nn}x{kk}" + (f" ib={ib}" if ib else "")
            span = "-" if span_s != span_s else "%.4f" % span_s  # NaN: the trace has no spans
            modeled = model_s == model_s  # NaN: a shape the calibration did not measure
            rest_model = model_s * (n - firsts) / n if modeled else None
            rest = "%.2f" % ((real_s - first_s) / rest_model) if rest_model else "-"
            print(f"| {run['name']} | {k} | {p} | {shape} | {n} | {real_s:.4f} | {first_s:.4f} | "
                  f"{'%.4f' % model_s if modeled else 'not modeled'} | "
                  f"{'%.2f' % (real_s / model_s) if modeled and model_s else '-'} | {rest} | {span} |")
            if modeled:
                total[0] += real_s
                total[1] += model_s
                total[2] += first_s
                total[3] += rest_model
            else:
                unmodeled.append(f"{k} {p} {shape}")
            out["kernels"].setdefault(run["name"], []).append(
                {"kernel": k, "precision": p, "m": m, "n": nn, "k": kk, "ib": ib, "tasks": n, "real_s": real_s,
                 "first_s": first_s, "first_tasks": firsts, "model_s": model_s if modeled else None,
                 "gpu_span_s": None if span_s != span_s else span_s})
        rest_all = "%.2f" % ((total[0] - total[2]) / total[3]) if total[3] else "-"
        print(f"| {run['name']} | all{' modeled' if unmodeled else ''} | | | | {total[0]:.4f} | {total[2]:.4f} | "
              f"{total[1]:.4f} | {'%.2f' % (total[0] / total[1]) if total[1] else '-'} | {rest_all} | |")
        if unmodeled:
            print(f"| {run['name']} | not in the GPU model, left out of 'all': {', '.join(unmodeled)} | | | | | | | | | |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    outputs.run_main(main)
