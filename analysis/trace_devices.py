#!/usr/bin/python3
"""Where each worker's time goes in a tessera trace: kernels, copies, idle (001 §5.4, Fig. 10).

For every worker of a trace (a CPU compute thread `cpuK` or a GPU manager
`gpuK`) over the node's makespan (its first task's start to its last task's
end), in seconds and as shares of the makespan:

  kernels           time in each kernel (the task events on the worker's lane);
  transfer_total    time the GPU's copy streams (`gpuK h2d`, `gpuK d2h`) were
                    copying, overlapping or not (the union of their events);
  transfer_exposed  copy time during which the GPU ran no kernel: the part of
                    the copies the GPU waited through;
  idle              the rest: makespan - kernel time - transfer_exposed.

kernels + transfer_exposed + idle = the makespan, so the shares add to 100%.
001 Fig. 10 shows one GPU's time as kernels, communication and idle; its
copies ran on the GPU's manager thread, ours on streams of their own that
overlap kernels, hence both transfer columns.

    /usr/bin/python3 analysis/trace_devices.py TRACE.json [TRACE.node1.json ...] [--json]
"""
import argparse
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # its siblings, under PYTHONSAFEPATH too
from trace_summary import TraceError, fail, load_all, run_main  # noqa: E402


def union(intervals):
    """Sorted, merged (start, end) intervals."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(intervals):
    """Total length of merged intervals."""
    return sum(e - s for s, e in intervals)


def subtract(a, b):
    """Merged intervals a minus merged intervals b."""
    out, j = [], 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append([cur, b[k][0]])
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append([cur, e])
    return out


def thread_names(events):
    """(pid, tid) -> thread name from the trace's metadata events."""
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def devices(events):
    """Per (node, worker name): kernel times, transfer times and idle time, in seconds."""
    names = thread_names(events)
    tasks = [e for e in events if e.get("ph") == "X" and e.get("cat") == "task"]
    copies = [e for e in events if e.get("ph") == "X" and e.get("cat") == "transfer"
              and e.get("args", {}).get("kind") in ("h2d", "d2h")]
    span = {}
    for e in tasks:
        lo, hi = span.get(e["pid"], (e["ts"], e["ts"] + e["dur"]))
        span[e["pid"]] = (min(lo, e["ts"]), max(hi, e["ts"] + e["dur"]))
    lanes = collections.defaultdict(list)
    for e in tasks:
        lanes[(e["pid"], names.get((e["pid"], e["tid"]), "tid %d" % e["tid"]))].append(e)
    stream_of = collections.defaultdict(list)
    for e in copies:
        lane = names.get((e["pid"], e["tid"]), "")
        m = re.match(r"(gpu\d+) (h2d|d2h)$", lane)
        if m:
            stream_of[(e["pid"], m.group(1))].append((e["ts"], e["ts"] + e["dur"]))
    out = collections.OrderedDict()
    for key in sorted(lanes, key=lambda k: (k[0], not k[1].startswith("gpu"), _order(k[1]))):
        lo, hi = span[key[0]]
        makespan = (hi - lo) / 1e6
        kernels = collections.Counter()
        for e in lanes[key]:
            kernels[e["name"]] += e["dur"] / 1e6
        busy = union((e["ts"], e["ts"] + e["dur"]) for e in lanes[key])
        xfer = union(stream_of.get(key, []))
        exposed = length(subtract(xfer, busy)) / 1e6
        kernel_s = sum(kernels.values())
        out[key] = {"node": key[0], "worker": key[1], "makespan_s": makespan,
                    "kernels_s": dict(sorted(kernels.items(), key=lambda kv: -kv[1])),
                    "kernel_s": kernel_s, "transfer_total_s": length(xfer) / 1e6, "transfer_exposed_s": exposed,
                    "idle_s": max(0.0, makespan - kernel_s - exposed), "tasks": len(lanes[key])}
    return out


def _order(name):
    m = re.search(r"(\d+)$", name)
    return (re.sub(r"\d+$", "", name), int(m.group(1)) if m else 0)


def breakdown(paths):
    """devices() of one trace or of a distributed run's per-node files (each node once), as a JSON-ready list."""
    return list(devices(load_all(paths)[1]).values())


def print_text(rows, out=sys.stdout):
    """One line per worker: makespan, its top kernels' shares, transfers and idle."""
    print("%-4s %-6s %10s  %-46s %9s %9s %7s" % ("node", "worker", "span s", "kernels (share of span)",
                                                "xfer tot", "xfer exp", "idle"), file=out)
    for r in rows:
        span = r["makespan_s"] or 1.0
        ks = ", ".join("%s %.1f%%" % (k, 100 * v / span) for k, v in list(r["kernels_s"].items())[:4])
        print("%-4d %-6s %10.4f  %-46s %8.1f%% %8.1f%% %6.1f%%" % (
            r["node"], r["worker"], r["makespan_s"], ks, 100 * r["transfer_total_s"] / span,
            100 * r["transfer_exposed_s"] / span, 100 * r["idle_s"] / span), file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="+", help="trace files: one, or every node's of a distributed run")
    ap.add_argument("--json", action="store_true", help="print the breakdown as JSON")
    a = ap.parse_args()
    try:
        rows = breakdown(a.trace)
    except TraceError as e:
        return fail("trace_devices.py", e)
    if a.json:
        print(json.dumps(rows, indent=1))
    else:
        print_text(rows)
    return 0


if __name__ == "__main__":
    run_main(main)
