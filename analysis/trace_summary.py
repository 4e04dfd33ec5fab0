#!/usr/bin/python3
"""Summarize a tessera trace (Chrome trace-event JSON from `tessera run --trace FILE`).

Prints, per kernel, the task count, total and mean time and share of all task
time; per worker (node, thread), the task count, busy time and busy fraction of
the makespan (first task start to last task end); and, when the trace has
any, the same totals for transfer events. Several files (a distributed run's
per-node traces: run.json, run.node1.json, ...: the extension follows the node number) are summarized together; each
node's times count from its own start of the run (a common start, after
every node built its input).

    /usr/bin/python3 analysis/trace_summary.py TRACE.json [TRACE.node1.json ...] [--json]

load() is every analysis script's reader of traces: a file that is not a
tessera trace of this version (otherData.format "tessera-trace", version 1),
or an event without the fields the scripts read, stops a script with one
line naming the file and what is wrong, exit status 2; so does load_all()
for files that are not distinct nodes of one run: files of two runs (their
otherData's summary line, which holds the grid, or tile counts differ, such
as an earlier run's node files left beside a later one's and picked up by a
glob), or two files of the same node (one file given twice). A gzipped trace (TRACE.json.gz, as results/gpu-node/ keeps them) is
read as it is, told by its gzip magic number whatever its name.
"""
import argparse
import collections
import gzip
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments"))
from runner.outputs import output_problem, run_main  # noqa: E402,F401  (output paths are checked as the runner checks them)

FORMAT, VERSION = "tessera-trace", 1  # otherData of the traces this reads (runtime/trace.hpp)


class TraceError(ValueError):
    """A file that is not a tessera trace this can read; the message names the file and what is wrong."""


def load(path):
    """(otherData, traceEvents) of a tessera trace (gzipped or not), checked: a TraceError naming the file when it
    is unreadable, not JSON, not a tessera trace of this version, or holds an event without its fields."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceError("%s: cannot read it (%s)" % (path, e.strerror or e))
    if data[:2] == b"\x1f\x8b":  # gzip's magic number
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, ValueError) as e:
            raise TraceError("%s: gzip data that does not unpack (%s), not a tessera trace" % (path, e))
    if not data.strip():
        raise TraceError("%s: empty, not a tessera trace" % path)
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise TraceError("%s: binary data, not a tessera trace (JSON text)" % path)
    except ValueError as e:
        raise TraceError("%s: not JSON, or cut short (%s)" % (path, e))
    except RecursionError:
        raise TraceError("%s: JSON nested too deeply, not a tessera trace" % path)
    info = doc.get("otherData") if isinstance(doc, dict) else None
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        what = ("a Chrome trace of format %s" % json.dumps(info.get("format")) if isinstance(info, dict) else
                "a Chrome trace without otherData" if isinstance(doc, dict) and "traceEvents" in doc else
                "JSON %s" % ("object" if isinstance(doc, dict) else json.dumps(doc)[:40]))
        raise TraceError("%s: %s, not a tessera trace (otherData.format \"%s\")" % (path, what, FORMAT))
    if info.get("version") != VERSION:
        raise TraceError("%s: tessera trace version %s; this reads version %d" % (
            path, json.dumps(info.get("version")), VERSION))
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        raise TraceError("%s: traceEvents %s is not a list of events" % (
            path, "missing" if events is None else json.dumps(events)[:40]))
    for n, e in enumerate(events):
        why = event_problem(e)
        if why:
            raise TraceError("%s: traceEvents[%d]: %s" % (path, n, why))
    return info, events


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _tile(t):
    """A task's datum: {"i", "j"} or {"panel"} with an access "mode" (text)."""
    return isinstance(t, dict) and isinstance(t.get("mode", ""), str) and all(
        isinstance(v, (int, str)) and not isinstance(v, bool) for v in t.values())


def event_problem(e):
    """Why one trace event lacks what the analysis scripts read of it (one phrase), or None."""
    if not isinstance(e, dict):
        return "%s is not an event object" % json.dumps(e)[:40]
    ph = e.get("ph")
    if ph not in ("X", "M"):
        return None  # other kinds are not read
    for k in ("pid", "tid") if ph == "X" or e.get("name") == "thread_name" else ("pid",):
        if not isinstance(e.get(k), int) or isinstance(e.get(k), bool):
            return "%s %s" % (k, "missing" if k not in e else "%s is not an integer" % json.dumps(e[k])[:40])
    if not isinstance(e.get("args", {}), dict):
        return "args %s is not an object" % json.dumps(e["args"])[:40]
    if ph == "M":
        name = e.get("args", {}).get("name")
        return None if e.get("name") != "thread_name" or isinstance(name, str) else "a thread_name without args.name"
    for k in ("ts", "dur"):
        if not _number(e.get(k)) or (k == "dur" and e[k] < 0):
            return "%s %s" % (k, "missing" if k not in e else "%s is not a %snumber" % (
                json.dumps(e[k])[:40], "non-negative " if k == "dur" else "finite "))
    if not isinstance(e.get("name"), str) or not isinstance(e.get("cat", ""), str):
        return "a complete event (ph X) without a name and category"
    args = e.get("args", {})
    tiles = args.get("tiles", [])
    if not isinstance(tiles, list) or not all(_tile(t) for t in tiles):
        return "args.tiles %s is not a list of tiles" % json.dumps(tiles)[:40]
    if not isinstance(args.get("kind", ""), str) or not _number(args.get("bytes", 0)):
        return "args.kind or args.bytes of the wrong type (%s)" % json.dumps(args)[:60]
    return None


RUN_KEYS = ("run", "backend", "tile_rows", "tile_cols")  # otherData every node of one run writes alike


def load_all(paths):
    """(the first file's otherData, every file's events): a distributed run's per-node traces together. The files
    must be of one run (every node's trace holds the run's summary line, with its grid, and its tile counts: a
    `--grid 2x2` run's node2 and node3 files left beside a later `--grid 1x2` run's are not that run's), and each
    must hold nodes (pids) no other file holds: a node counted twice doubles its tasks and busy time."""
    info, events = load(paths[0])
    owner = {}
    for n, p in enumerate(paths):
        mine = events
        if n:
            other, mine = load(p)
            differ = [k for k in RUN_KEYS if other.get(k) != info.get(k)]
            if differ:
                k = differ[0]
                raise TraceError("%s (otherData.%s %s) and %s (%s) are traces of two runs: give the files of one "
                                 "run" % (paths[0], k, json.dumps(info.get(k)), p, json.dumps(other.get(k))))
        for pid in sorted({e["pid"] for e in mine if isinstance(e, dict) and e.get("ph") in ("X", "M")}):
            if pid in owner:
                raise TraceError("%s and %s are both node %d (%s): give each node's file once" % (
                    owner[pid], p, pid, "the same file twice" if os.path.realpath(owner[pid]) == os.path.realpath(p)
                    else "two runs' files, or one run's file twice"))
            owner[pid] = p
        if n:
            events = events + mine
    return info, events


def fail(script, error):
    """The scripts' one line for input they cannot read: `script: message`, exit status 2."""
    print("%s: %s" % (script, error), file=sys.stderr)
    return 2


def summarize(info, events):
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    tasks = [e for e in events if e.get("ph") == "X" and e.get("cat") == "task"]
    transfers = [e for e in events if e.get("ph") == "X" and e.get("cat") == "transfer"]
    start = min((e["ts"] for e in tasks), default=0.0)
    end = max((e["ts"] + e["dur"] for e in tasks), default=0.0)
    makespan = end - start
    kernels = collections.OrderedDict()
    for e in tasks:
        k = kernels.setdefault(e["name"], {"count": 0, "total_us": 0.0})
        k["count"] += 1
        k["total_us"] += e["dur"]
    workers = collections.OrderedDict()
    for e in sorted(tasks, key=lambda e: (e["pid"], e["tid"])):
        key = (e["pid"], e["tid"])
        w = workers.setdefault(key, {"name": names.get(key, "tid %d" % e["tid"]), "count": 0, "busy_us": 0.0})
        w["count"] += 1
        w["busy_us"] += e["dur"]
    for w in workers.values():
        w["busy_fraction"] = w["busy_us"] / makespan if makespan > 0 else 0.0
    xfer = collections.OrderedDict()
    for e in transfers:
        kind = e.get("args", {}).get("kind", "?")
        x = xfer.setdefault(kind, {"count": 0, "total_us": 0.0, "bytes": 0})
        x["count"] += 1
        x["total_us"] += e["dur"]
        x["bytes"] += e.get("args", {}).get("bytes", 0)
    return {"backend": info.get("backend"), "run": info.get("run"), "tasks": len(tasks), "makespan_us": makespan,
            "kernels": kernels, "workers": workers, "transfers": xfer}


def print_text(s, out=sys.stdout):
    print("backend: %s   tasks: %d   makespan: %.3f ms" % (s["backend"], s["tasks"], s["makespan_us"] / 1e3), file=out)
    if s.get("run"):
        print("run: %s" % s["run"], file=out)
    if not s["tasks"]:
        print("(no task events)", file=out)
    all_us = sum(k["total_us"] for k in s["kernels"].values()) or 1.0
    print("\n%-10s %8s %12s %10s %7s" % ("kernel", "count", "total ms", "mean us", "share"), file=out)
    for name, k in sorted(s["kernels"].items(), key=lambda kv: (-kv[1]["total_us"], kv[0])):  # ties by name
        print("%-10s %8d %12.3f %10.1f %6.1f%%" % (name, k["count"], k["total_us"] / 1e3, k["total_us"] / k["count"],
                                                   100 * k["total_us"] / all_us), file=out)
    print("\n%-5s %-10s %8s %12s %6s" % ("node", "worker", "tasks", "busy ms", "busy"), file=out)
    for (pid, tid), w in s["workers"].items():
        print("%-5d %-10s %8d %12.3f %5.1f%%" % (pid, w["name"], w["count"], w["busy_us"] / 1e3,
                                               100 * w["busy_fraction"]), file=out)
    if s["transfers"]:
        print("\n%-8s %8s %12s %14s" % ("transfer", "count", "total ms", "bytes"), file=out)
        for kind, x in sorted(s["transfers"].items()):  # by kind, whatever order the files came in
            print("%-8s %8d %12.3f %14d" % (kind, x["count"], x["total_us"] / 1e3, x["bytes"]), file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="+", help="trace files: one, or every node's of a distributed run")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON instead of tables")
    a = ap.parse_args()
    try:
        info, events = load_all(a.trace)
    except TraceError as e:
        return fail("trace_summary.py", e)
    s = summarize(info, events)
    if a.json:
        s["workers"] = {"%d/%d" % k: v for k, v in s["workers"].items()}
        print(json.dumps(s, indent=1))
    else:
        print_text(s)
    return 0


if __name__ == "__main__":
    run_main(main)
