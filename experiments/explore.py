#!/usr/bin/python3
"""What-if sweeps of one factorization over a simulated machine: `tessera explore`.

    tessera explore --machine FILE --algo cholesky --n N [--nodes P | --grids 2x2,1x4]
                    [--dist multi-level,block-cyclic-2d,column-cyclic,gpu-columns] [--v 1,2] [--qr-tree flat,binary]
                    [--B 1152,2304] [--s 1,2] [--b 64,128,auto] [--gpu-streams 1,2,3]
                    [--node-noise 0,0.05] [--kernel-noise 0,0.05|auto] [--noise-seeds K]
                    [--gpus G] [--set FIELD=VALUES ...] [--jobs J] [--out DIR] [--dry-run]

Crosses machine-file overrides (`--set network.bandwidth_Bps=12.5e9,50e9`: any numeric
field by its dotted path; VALUES a number, a comma list or a range START:STOP:STEP, STOP
included) with distributions, QR's virtual tile heights and reduction trees, grid shapes, tile
sizes and widths, compute streams per GPU, and how unequal the nodes' speeds (--node-noise) or
the tasks' times (--kernel-noise) are, each such point simulated with --noise-seeds seeds and
ranked by the median of their predicted times; every point is one
`tessera run --backend sim ... --json` on a machine file derived from FILE (written to
DIR/machines/). The runs go through the experiment runner (experiments/runner/: parallel
processes, progress bar, DIR/runs.jsonl, resume: a rerun skips points already done).
Writes DIR/results.csv (ranked), DIR/explore.png and prints a recommendation last.
Exit status: 0 done (failed points are recorded, not an error), 2 a bad option or an output that could not
be written (one line naming the file), 1 when every point failed (2 when tessera refused every one as bad
input; the first one's message on stderr).
"""
import argparse
import copy
import csv
import hashlib
import itertools
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from explore_args import (DISTS, UsageError, check_options, check_out, fmt, lookup, machine_counts,  # noqa: E402
                          parse_sets, tessera_binary)
from runner import definition, execute, outputs  # noqa: E402
from runner.outputs import replace_file  # noqa: E402
from runner.definition import ROOT, display_path  # noqa: E402
from runner.progress import clock  # noqa: E402

# The run parameters that are axes of a sweep (results.csv's columns; noise_seed only until the seeds are merged).
# b_arg is the --b a point was given (a width or auto; empty where tessera chose, s = 1 among them); the column b
# is the width the run used.
AXIS_COLUMNS = ("grid", "dist", "v", "qr_tree", "gpu_streams", "node_noise", "kernel_noise", "noise_seed", "B", "s",
                "b_arg")
SET_PREFIX = "set:"


# ---------------------------------------------------------------- machine-file overrides

def derive(base, overrides):
    """A copy of the machine document with each (path, value) applied, each marked with its origin."""
    doc = copy.deepcopy(base)
    for path, value in overrides:
        parent, key, current = lookup(doc, path, "--set", "the machine file")
        parent[key] = value
        if key == "value":
            parent["source"] = "tessera explore --set %s=%s (the file says %s: %s)" % (
                path, fmt(value), fmt(current), parent.get("source", "no source"))
    if overrides:
        doc["explore_overrides"] = {p: v for p, v in overrides}
    return doc


# ---------------------------------------------------------------- the sweep as a definition

class ExploreConfig(definition.Config):
    """One point: run options plus the overrides (as `set:PATH` parameters) and its derived machine file."""

    def __init__(self, params, defn, machine_doc, out_dir):
        super().__init__(params, defn)
        text = json.dumps(machine_doc, sort_keys=True, indent=1)
        # Named by its figures, not its prose: editing a source note keeps the results.
        digest = definition.machine_digest(machine_doc)
        self.machine_text = text
        self.machine = os.path.join(out_dir, "machines", "machine-%s.json" % digest)
        key = json.dumps(params, sort_keys=True)
        self.id = hashlib.sha1((digest + "|" + key).encode()).hexdigest()[:12]

    def overrides(self):
        return {k[len(SET_PREFIX):]: v for k, v in self.params.items() if k.startswith(SET_PREFIX)}

    def label(self):
        p = self.params
        parts = ["grid=%s" % p["grid"], "dist=%s" % p["dist"]] + (["v=%d" % p["v"]] if "v" in p else [])
        parts += ["tree=%s" % p["qr_tree"]] if "qr_tree" in p else []
        parts += ["streams=%d" % p["gpu_streams"]] if "gpu_streams" in p else []
        parts += ["%s=%s" % (k, fmt(p[k])) for k in ("node_noise", "kernel_noise") if k in p]
        parts += ["B=%d" % p["B"], "s=%d" % p["s"]] + (["b=%s" % p["b"]] if "b" in p else [])
        parts += ["gpus=%d" % p["gpus"]] if p.get("gpus") else []
        parts += ["%s=%s" % (k, fmt(v)) for k, v in self.overrides().items()]
        return " ".join(parts)

    def write_machine(self):
        os.makedirs(os.path.dirname(self.machine), exist_ok=True)
        if not os.path.isfile(self.machine):
            replace_file(self.machine, lambda f: f.write(self.machine_text + "\n"))


class Exploration(definition.Definition):
    """The sweep of one `tessera explore` command, in the shape the experiment runner runs."""

    def __init__(self, a, base, sets, out_dir):
        doc = {"name": "explore", "title": "tessera explore", "paper": {"id": "none", "figure": "none"},
               "machine": a.machine, "backend": "sim", "sweep": [], "timeout_s": a.timeout,
               "explore": {k: v for k, v in vars(a).items() if k not in ("tessera",)}}
        super().__init__(os.path.abspath(a.machine), doc)
        self.a, self.base, self.sets, self.out_dir = a, base, sets, out_dir
        self.configs, self.invalid = self._points()

    def expand(self, quick=False):
        return list(self.configs), []

    def record_problem(self, record):
        """An ok record is kept on a rerun only with a predicted time to rank (a record written by hand, or cut
        short, lacks it): else it runs again."""
        return super().record_problem(record) or result_problem(record.get("result"))

    def _points(self):
        a = self.a
        configs, invalid, seen = [], [], set()
        set_axes = [[(p, v) for v in vals] for p, vals in self.sets]
        for combo in itertools.product(*set_axes):
            machine = derive(self.base, list(combo))
            nodes_here, gpus_here = machine_counts(machine, self.a.machine)
            gpus = gpus_here if a.gpus is None else a.gpus
            for grid, dist, v, tree, streams, B, s, b, node_noise, kernel_noise in itertools.product(
                    a.grids, a.dist, a.v or [None], a.qr_tree or [None], a.gpu_streams or [None], a.B, a.s,
                    a.b or [None], a.node_noise or [None], a.kernel_noise or [None]):
                params = {"backend": "sim", "algo": a.algo, "n": a.n, "grid": grid, "dist": dist, "B": B, "s": s,
                          "gpus": gpus}
                for k in ("m", "precision", "threads"):
                    if getattr(a, k) is not None:
                        params[k] = getattr(a, k)
                if b is not None and s > 1:
                    # b sizes the narrow columns of s > 1 (tessera refuses it, auto too, with s = 1): the widths
                    # of an s = 1 point are one point, run once
                    params["b"] = b
                if v is not None:
                    params["v"] = v
                if tree is not None:
                    params["qr_tree"] = tree
                if streams is not None:
                    params["gpu_streams"] = streams
                for key, value in (("node_noise", node_noise), ("kernel_noise", kernel_noise)):
                    if value is not None:
                        params[key] = value
                for path, value in combo:
                    params[SET_PREFIX + path] = value
                reason = _invalid(params, nodes_here, gpus_here)
                if reason:
                    key = json.dumps(params, sort_keys=True)  # (s = 1 is one point whatever the widths)
                    if key not in seen:
                        seen.add(key)
                        invalid.append((params, reason))
                    continue
                # A point with variation runs once per seed (noise_seed), a point without it once.
                noisy = node_noise not in (None, 0) or kernel_noise not in (None, 0)
                for seed in (range(1, a.noise_seeds + 1) if noisy and a.noise_seeds > 1 else [None]):
                    point = dict(params, noise_seed=seed) if seed is not None else params
                    c = ExploreConfig(point, self, machine, self.out_dir)
                    if c.id not in seen:
                        seen.add(c.id)
                        configs.append(c)
        return configs, invalid


def _invalid(p, nodes, gpus):
    """Why tessera would refuse this combination on a machine of `nodes` nodes of `gpus` GPUs (None when valid)."""
    pr, pc = (int(x) for x in p["grid"].split("x"))
    if pr * pc > nodes:
        return "%d nodes, the machine has %d" % (pr * pc, nodes)
    if p["gpus"] > gpus:
        return "%d GPUs per node, the machine has %d" % (p["gpus"], gpus)
    if p["dist"] == "block-cyclic-2d" and p["gpus"] > 0:
        return "block-cyclic-2d is host only (refused with --gpus)"
    if p["dist"] == "column-cyclic" and pr * pc > 1:
        return "column-cyclic is for one node only"
    if p["dist"] == "gpu-columns":
        if p["gpus"] == 0:
            return "gpu-columns puts every column on the GPUs: this point has none"
        if p["s"] == 1:
            return "gpu-columns with s = 1 is multi-level, tile for tile"
        if p.get("algo") == "lu":
            return "LU's --d decides which device works on a column"
        if p.get("b") == "auto":
            return "b auto balances the host's narrow columns, and gpu-columns gives the host none"
    if p["s"] > p["B"]:
        return "s > B"
    b = p.get("b")
    if b == "auto" and p["gpus"] == 0:
        return "b auto balances the host against GPUs: this point has none"
    if p["s"] > 1 and b not in (None, "auto") and (p["s"] - 1) * int(b) >= p["B"]:
        return "(s-1)*b = %d leaves no remainder column in B = %d" % ((p["s"] - 1) * int(b), p["B"])
    if p.get("v") is not None and pr == 1:
        return "one node row: the virtual tile height changes nothing"
    if p.get("qr_tree") == "binary" and pr == 1:
        return "one node row: the binary tree is the flat one, task for task"
    if p.get("gpu_streams", 1) > 1 and p["gpus"] == 0:
        return "compute streams are a GPU's: this point has no GPU"
    return None


# ---------------------------------------------------------------- results

def result_problem(result):
    """Why a run's result cannot be ranked (no positive finite time_s, or no gflops), or None."""
    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    if not isinstance(result, dict):
        return "has no result"
    if not number(result.get("time_s")) or result["time_s"] <= 0:
        return "has no positive time_s in its result (%s)" % json.dumps(result.get("time_s"))
    if not number(result.get("gflops")):
        return "has no gflops in its result (%s)" % json.dumps(result.get("gflops"))
    return None


def ranked_rows(exploration, records):
    """One dict per configuration of this sweep: ok rows by predicted time, then the others."""
    rows = []
    for c in exploration.configs:
        r = records.get((c.id, 0))
        res = (r or {}).get("result") or {}
        status = r["status"] if r else "not run"
        err = ""
        if r and status != "ok":
            lines = [l for l in (r.get("stderr") or "").strip().splitlines() if not l.startswith("Run with --help")]
            err = (lines or [""])[-1]  # the message, not the option parser's hint after it
        elif r and result_problem(res):  # nothing to rank it by: a failed point, saying why
            status, err = "failed", "the run " + result_problem(res)
        exit_status = "" if not r or r.get("exit_status") is None else r["exit_status"]
        row = {"status": status, "exit_status": "timeout" if status == "timeout" else exit_status,
               "time_s": res.get("time_s", "") if status == "ok" else "", "gflops": res.get("gflops", "")}
        row.update({k: fmt(v) for k, v in c.overrides().items()})
        row.update({k: c.params.get(k, "") for k in AXIS_COLUMNS if k != "b_arg"})
        row["b_arg"] = c.params.get("b", "")
        row.update({"b": res.get("b", c.params.get("b", "")), "gpus": c.params.get("gpus", ""),
                    "threads": res.get("threads", c.params.get("threads", "")), "algo": c.params["algo"],
                    "n": c.params["n"], "config_id": c.id, "machine_file": os.path.relpath(c.machine, exploration.out_dir), "error": err,
                    "label": c.label()})
        rows.append(row)
    return _ranked(_median_over_seeds(rows))


def _ranked(rows):
    """The successful rows fastest first, numbered (equal times in the order of their labels, not of the values on
    the command line), then the others."""
    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: (r["time_s"], r["label"]))
    for i, r in enumerate(ok, 1):
        r["rank"] = i
    return ok + [r for r in rows if r["status"] != "ok"]


def _median_over_seeds(rows):
    """One row per point for the seeds of a point with variation: the median time (and rate) of its seeds, their
    range in time_min_s / time_max_s; a seed that failed makes the point failed (its first error)."""
    groups = {}
    for r in rows:
        groups.setdefault(r["label"] + "|" + r["machine_file"], []).append(r)
    out = []
    for rs in groups.values():
        if len(rs) == 1 and rs[0]["noise_seed"] == "":
            out.append(dict(rs[0], seeds=""))
            continue
        bad = [r for r in rs if r["status"] != "ok"]
        row = dict(bad[0] if bad else rs[0], seeds=len(rs), noise_seed="")
        if not bad:
            times = sorted(r["time_s"] for r in rs)
            row.update(time_s=statistics.median(times), gflops=statistics.median(r["gflops"] for r in rs),
                       time_min_s=times[0], time_max_s=times[-1])
        out.append(row)
    return out


def write_results(path, rows, set_paths):
    head = (["rank", "status", "exit_status", "time_s", "gflops", "seeds", "time_min_s", "time_max_s"] +
            list(set_paths) + [k for k in AXIS_COLUMNS if k != "noise_seed"] +
            ["b", "gpus", "threads", "algo", "n", "config_id", "machine_file", "error"])
    replace_file(path, lambda f: csv.writer(f).writerows([head] + [[r.get(k, "") for k in head] for r in rows]),
                 newline="")


def _pct(a, b):
    return 100.0 * (b - a) / a


def recommendation(rows, prefix="recommendation"):
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        return "%s: none (no configuration succeeded; see results.csv)" % prefix
    best = ok[0]
    text = "%s: %s: predicted %.4g s (%.1f TFlop/s)" % (prefix, best["label"], best["time_s"], best["gflops"] / 1e3)
    tied = [r for r in ok[1:] if r["time_s"] == best["time_s"]]
    if tied:
        text += ", tied with %s" % "; ".join(r["label"] for r in tied)
    elif len(ok) > 1:
        second = ok[1]
        text += ", %.1f%% faster than the second best (%s: %.4g s)" % (_pct(best["time_s"], second["time_s"]),
                                                                       second["label"], second["time_s"])
    else:
        text += " (the only configuration that succeeded)"
    return text


def variant_lines(rows, set_paths):
    """With several machine variants: the best of each, one line per variant."""
    variants = {}
    for r in rows:
        if r["status"] == "ok":
            variants.setdefault(tuple(r.get(p) for p in set_paths), []).append(r)
    if len(variants) < 2:
        return []
    out = []
    for key, rs in variants.items():
        pairs = ["%s=%s" % (p, fmt(v)) for p, v in zip(set_paths, key)]
        # The line names the variant once, before the labels, which leave it out.
        rs = [dict(r, label=" ".join(t for t in r["label"].split(" ") if t not in pairs)) for r in rs]
        out.append(recommendation(rs, "best with %s" % ", ".join(pairs)))
    return out


# ---------------------------------------------------------------- the command

def parser():
    ap = argparse.ArgumentParser(prog="tessera explore", description=__doc__.splitlines()[0])
    ap.add_argument("--tessera", help="the tessera binary (default $TESSERA_BIN or build/tessera)")
    ap.add_argument("--machine", required=True, help="the machine file the overrides apply to")
    ap.add_argument("--algo", required=True, choices=("cholesky", "qr", "lu"))
    ap.add_argument("--n", required=True, type=int, help="matrix order")
    ap.add_argument("--m", type=int, help="rows (QR, LU of a tall matrix)")
    ap.add_argument("--precision", choices=("d", "s"))
    ap.add_argument("--nodes", type=int, help="node count: every grid PrxPc with Pr*Pc = P (default the machine's nodes)")
    ap.add_argument("--grids", help="comma list of grids PrxPc instead of --nodes")
    ap.add_argument("--dist", default="multi-level", help="comma list of " + ", ".join(DISTS) + " (default multi-level)")
    ap.add_argument("--v", help="QR: comma list of virtual tile heights (default tessera's)")
    ap.add_argument("--qr-tree", help="QR: comma list of reduction trees across node rows, flat and/or binary "
                    "(default tessera's, flat)")
    ap.add_argument("--B", default="1152", help="comma list of tile sizes (default 1152)")
    ap.add_argument("--s", default="1", help="comma list of tile columns per top-level tile (default 1)")
    ap.add_argument("--b", metavar="b|auto", help="comma list of narrow column widths and/or auto, for the points "
                    "of s > 1 (default tessera's)")
    ap.add_argument("--gpu-streams", help="comma list of compute streams per GPU (a simulated GPU runs the tasks of "
                    "different streams side by side, sharing it; default 1)")
    ap.add_argument("--node-noise", help="comma list of sigmas of the nodes' speeds (tessera run --node-noise: one "
                    "lognormal factor per node); default none")
    ap.add_argument("--kernel-noise", help="comma list of sigmas of each task's time (tessera run --kernel-noise), or "
                    "auto (from a calibrated machine file); default none")
    ap.add_argument("--noise-seeds", type=int, default=1, help="seeds per point with variation, ranked by the median "
                    "of their predicted times (default 1)")
    ap.add_argument("--gpus", type=int, help="GPUs per node (default every GPU of the (overridden) machine)")
    ap.add_argument("--threads", type=int, help="CPU threads per node (default tessera's)")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUES",
                    help="override a numeric machine-file field (dotted path); VALUES: X, X,Y,Z or START:STOP:STEP")
    ap.add_argument("--jobs", type=int, default=1, help="simulations run in parallel")
    ap.add_argument("--out", help="results folder (default results/explore/MACHINE-ALGO-N/)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds before a run is killed (default 600)")
    ap.add_argument("--force", action="store_true", help="rerun points whose results exist")
    ap.add_argument("--retry-failed", action="store_true", help="rerun points recorded as failed")
    ap.add_argument("--dry-run", action="store_true", help="list the configurations and their commands, run nothing")
    return ap


def main(argv=None):
    a = parser().parse_args(argv)
    try:
        return explore(a)
    except (UsageError, definition.DefinitionError, execute.CannotStart) as e:
        print("tessera explore: %s" % e, file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as e:  # an output that could not be written (a full disk): the file and why, the sweep stopped
        print("tessera explore: %s" % outputs.os_error_line(e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tessera explore: interrupted (finished runs are kept; run again to resume)", file=sys.stderr)
        return 130


def explore(a):
    base = check_options(a)
    sets = parse_sets(a.set, base, a.machine)
    name = "%s-%s-%d" % (os.path.splitext(os.path.basename(a.machine))[0], a.algo, a.n)
    out = os.path.abspath(a.out) if a.out else os.path.join(ROOT, "results", "explore", name)
    ex = Exploration(a, base, sets, out)
    if not ex.configs:
        reasons = sorted({r for _, r in ex.invalid})
        raise UsageError("no valid configuration (--dist %s, grids %s: %s)" % (
            ",".join(a.dist), ",".join(a.grids), "; ".join(reasons) or "none"))
    check_out(out, a.out or display_path(out), a.dry_run)
    if a.dry_run:
        done = {} if a.force else execute.load_records(out)
        for c in ex.configs:
            state = "done" if (c.id, 0) in done and done[(c.id, 0)]["status"] == "ok" else "todo"
            print("%s %s  %s" % (c.id, state, " ".join(execute.command(ex, c, a.tessera or "tessera", "run.json"))))
        for params, reason in ex.invalid:
            sets = "".join(" %s=%s" % (k[len(SET_PREFIX):], fmt(v)) for k, v in params.items() if k.startswith(SET_PREFIX))
            tree = " tree=%s" % params["qr_tree"] if "qr_tree" in params else ""
            tree += " streams=%d" % params["gpu_streams"] if "gpu_streams" in params else ""
            b = " b=%s" % params["b"] if "b" in params else ""
            print("left out: grid=%s dist=%s%s B=%s s=%s%s%s: %s" % (params["grid"], params["dist"], tree, params["B"],
                                                                    params["s"], b, sets, reason))
        print("explore: %d configuration(s), %d combination(s) left out as invalid -> %s" % (
            len(ex.configs), len(ex.invalid), display_path(out)))
        return 0
    runner = execute.Runner(ex, out, tessera_binary(a.tessera), jobs=a.jobs, force=a.force,
                            retry_failed=a.retry_failed, timeout_s=a.timeout)
    for c in ex.configs:
        c.write_machine()
    t0 = time.monotonic()
    ok, failed, kept, _ = runner.run()
    rows = ranked_rows(ex, execute.load_records(out))
    set_paths = [p for p, _ in sets]
    write_results(os.path.join(out, "results.csv"), rows, set_paths)
    import explore_plot  # matplotlib only when there is something to draw
    png = explore_plot.draw(rows, set_paths, os.path.join(out, "explore.png"),
                            "%s N=%d on %s" % (a.algo, a.n, os.path.basename(a.machine)))
    print("explore: %d run(s) ok, %d failed, %d already done (kept), %d combination(s) left out as invalid, in %s" % (
        ok, failed, kept, len(ex.invalid), clock(time.monotonic() - t0)))
    print("results: %s" % display_path(os.path.join(out, "results.csv")))
    print("figure: %s" % display_path(png))
    # Noise levels describe the machine, as overrides do: the best of each is a line of its own.
    for line in variant_lines(rows, set_paths + [k for k in ("node_noise", "kernel_noise") if getattr(a, k)]):
        print(line)
    print(recommendation(rows))
    return all_failed_status(rows)


def all_failed_status(rows):
    """0 when a configuration succeeded; else 2 when tessera refused every one as bad input (exit 2), else 1,
    the first failure's message on stderr."""
    if any(r["status"] == "ok" for r in rows) or not rows:
        return 0
    bad_input = all(str(r["exit_status"]) == "2" for r in rows)
    print("tessera explore: every configuration failed%s; the first: %s" % (
        " on bad input (tessera exit 2)" if bad_input else "", rows[0]["error"] or rows[0]["status"]), file=sys.stderr)
    return 2 if bad_input else 1


if __name__ == "__main__":
    sys.exit(main())
