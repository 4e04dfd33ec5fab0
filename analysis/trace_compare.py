#!/usr/bin/python3
"""Compare two traces of one configuration, e.g. a real run and its simulation, kernel by kernel.

Per kernel, for each trace: the count, the mean and the spread (interquartile
range) of one call, and the total; then sim/real of the mean and the total.
Per worker (device): its makespan, kernel time, copy time (total and with no
kernel running) and idle time in each trace (analysis/trace_devices.py).
Counts that differ mean the two traces are not of the same configuration;
the script says so and exits 1.

    build/tessera run --algo qr --n 4096 --threads 2 --trace real.json
    build/tessera run --algo qr --n 4096 --threads 2 --trace sim.json --backend sim --machine platform/machines/local.json
    /usr/bin/python3 analysis/trace_compare.py real.json sim.json [--json]
"""
import argparse
import collections
import json
import statistics
import sys

from trace_summary import load
import trace_devices


def kernel_stats(events):
    """kernel -> {count, mean_us, spread_us (IQR), total_us} of the trace's task events."""
    durs = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "task":
            durs[e["name"]].append(e["dur"])
    out = {}
    for name, d in durs.items():
        d.sort()
        q = statistics.quantiles(d, n=4) if len(d) >= 2 else [d[0], d[0], d[0]]
        out[name] = {"count": len(d), "mean_us": statistics.fmean(d), "spread_us": q[2] - q[0], "total_us": sum(d)}
    return out


def compare(a_paths, b_paths):
    """The comparison of trace A (e.g. real) and B (e.g. simulated) as a JSON-ready dict."""
    a_events = [e for p in a_paths for e in load(p)[1]]
    b_events = [e for p in b_paths for e in load(p)[1]]
    ka, kb = kernel_stats(a_events), kernel_stats(b_events)
    kernels = []
    for name in sorted(set(ka) | set(kb), key=lambda n: -(ka.get(n, kb.get(n))["total_us"])):
        x, y = ka.get(name), kb.get(name)
        row = {"kernel": name, "a": x, "b": y}
        if x and y:
            row["mean_ratio"] = y["mean_us"] / x["mean_us"] if x["mean_us"] else None
            row["total_ratio"] = y["total_us"] / x["total_us"] if x["total_us"] else None
        kernels.append(row)
    da = {(r["node"], r["worker"]): r for r in trace_devices.devices(a_events).values()}
    db = {(r["node"], r["worker"]): r for r in trace_devices.devices(b_events).values()}
    workers = [{"node": k[0], "worker": k[1], "a": da.get(k), "b": db.get(k)} for k in list(da) + [k for k in db if k not in da]]
    same = set(ka) == set(kb) and all(ka[n]["count"] == kb[n]["count"] for n in ka)
    return {"a": {"files": a_paths, "run": load(a_paths[0])[0].get("run")},
            "b": {"files": b_paths, "run": load(b_paths[0])[0].get("run")},
            "same_tasks": same, "kernels": kernels, "workers": workers}


def print_text(c, out=sys.stdout):
    """Two tables: per kernel, per worker."""
    print("A: %s\n   %s\nB: %s\n   %s" % (", ".join(c["a"]["files"]), c["a"]["run"], ", ".join(c["b"]["files"]),
                                         c["b"]["run"]), file=out)
    print("\n%-10s %7s %7s | %10s %10s %10s %10s | %11s %11s | %6s %6s" % (
        "kernel", "count A", "count B", "mean A us", "mean B us", "IQR A us", "IQR B us", "total A ms", "total B ms",
        "mean", "total"), file=out)
    for r in c["kernels"]:
        a, b = r["a"] or {}, r["b"] or {}

        def g(d, k, scale=1.0, f="%10.1f"):
            return f % (d[k] / scale) if k in d else "%10s" % "-"
        print("%-10s %7s %7s | %s %s %s %s | %s %s | %6s %6s" % (
            r["kernel"], a.get("count", "-"), b.get("count", "-"), g(a, "mean_us"), g(b, "mean_us"), g(a, "spread_us"),
            g(b, "spread_us"), g(a, "total_us", 1e3, "%11.3f"), g(b, "total_us", 1e3, "%11.3f"),
            "%.3f" % r["mean_ratio"] if r.get("mean_ratio") else "-",
            "%.3f" % r["total_ratio"] if r.get("total_ratio") else "-"), file=out)
    print("(mean, total: B / A)\n", file=out)
    print("%-4s %-6s | %9s %9s | %9s %9s | %9s %9s | %9s %9s | %9s %9s" % (
        "node", "worker", "span A s", "span B s", "kern A s", "kern B s", "xfer A s", "xfer B s", "exp A s", "exp B s",
        "idle A s", "idle B s"), file=out)
    for w in c["workers"]:
        a, b = w["a"] or {}, w["b"] or {}

        def v(d, k):
            return "%9.4f" % d[k] if k in d else "%9s" % "-"
        print("%-4d %-6s | %s %s | %s %s | %s %s | %s %s | %s %s" % (
            w["node"], w["worker"], v(a, "makespan_s"), v(b, "makespan_s"), v(a, "kernel_s"), v(b, "kernel_s"),
            v(a, "transfer_total_s"), v(b, "transfer_total_s"), v(a, "transfer_exposed_s"), v(b, "transfer_exposed_s"),
            v(a, "idle_s"), v(b, "idle_s")), file=out)
    if not c["same_tasks"]:
        print("\nthe traces ran different tasks (kernel counts differ): not the same configuration", file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="trace A (e.g. the real run); a distributed run's node files: A,A.node1.json,...")
    ap.add_argument("b", help="trace B (e.g. the simulated run), same form")
    ap.add_argument("--json", action="store_true", help="print the comparison as JSON")
    x = ap.parse_args()
    try:
        c = compare(x.a.split(","), x.b.split(","))
    except (OSError, ValueError, KeyError) as e:
        print("trace_compare.py: %s" % e, file=sys.stderr)
        return 2
    if x.json:
        print(json.dumps(c, indent=1))
    else:
        print_text(c)
    return 0 if c["same_tasks"] else 1


if __name__ == "__main__":
    sys.exit(main())
