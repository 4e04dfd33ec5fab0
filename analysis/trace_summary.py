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
"""
import argparse
import collections
import json
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    info = doc.get("otherData", {}) if isinstance(doc, dict) else {}
    return info, events


def summarize(info, events):
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    tasks = [e for e in events if e.get("ph") == "X" and e.get("cat") == "task"]
    transfers = [e for e in events if e.get("ph") == "X" and e.get("cat") == "transfer"]
    if not tasks:
        return {"backend": info.get("backend"), "tasks": 0, "makespan_us": 0, "kernels": {}, "workers": {}, "transfers": {}}
    start = min(e["ts"] for e in tasks)
    end = max(e["ts"] + e["dur"] for e in tasks)
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
    all_us = sum(k["total_us"] for k in s["kernels"].values()) or 1.0
    print("\n%-10s %8s %12s %10s %7s" % ("kernel", "count", "total ms", "mean us", "share"), file=out)
    for name, k in sorted(s["kernels"].items(), key=lambda kv: -kv[1]["total_us"]):
        print("%-10s %8d %12.3f %10.1f %6.1f%%" % (name, k["count"], k["total_us"] / 1e3, k["total_us"] / k["count"],
                                                   100 * k["total_us"] / all_us), file=out)
    print("\n%-5s %-10s %8s %12s %6s" % ("node", "worker", "tasks", "busy ms", "busy"), file=out)
    for (pid, tid), w in s["workers"].items():
        print("%-5d %-10s %8d %12.3f %5.1f%%" % (pid, w["name"], w["count"], w["busy_us"] / 1e3,
                                               100 * w["busy_fraction"]), file=out)
    if s["transfers"]:
        print("\n%-8s %8s %12s %14s" % ("transfer", "count", "total ms", "bytes"), file=out)
        for kind, x in s["transfers"].items():
            print("%-8s %8d %12.3f %14d" % (kind, x["count"], x["total_us"] / 1e3, x["bytes"]), file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="+", help="trace files: one, or every node's of a distributed run")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON instead of tables")
    a = ap.parse_args()
    info, events = load(a.trace[0])
    for path in a.trace[1:]:
        events = events + load(path)[1]
    s = summarize(info, events)
    if a.json:
        s["workers"] = {"%d/%d" % k: v for k, v in s["workers"].items()}
        print(json.dumps(s, indent=1))
    else:
        print_text(s)


if __name__ == "__main__":
    main()
