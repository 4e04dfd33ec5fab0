#!/usr/bin/python3
"""Compare two traces of one configuration, e.g. a real run and its simulation, kernel by kernel.

Per kernel, for each trace: the count, the mean and the spread (interquartile
range: 25th to 75th percentile, statistics.quantiles' inclusive method, which
interpolates between the calls' durations and so stays within the shortest
and the longest call) of one call, and the total; then sim/real of the mean
and the total (0 when B's calls take no time, as a model's row moves do).
Per worker (device): its makespan, kernel time, copy time (total and with no
kernel running) and idle time in each trace (analysis/trace_devices.py).
The critical path of each trace (analysis/trace_critical_path.py: the longest
chain of dependent tasks, rebuilt from the tiles the tasks access, each task
weighted by its own duration; a distributed run's longest node): its length,
its task count, the makespan and CP/makespan, then sim/real of the length.
The critical path depends on the DAG and the task durations only, not on the
workers or the scheduler: makespans that differ with equal critical paths
point at the scheduling, critical paths that differ at the durations of the
tasks on the path (e.g. a kernel's first calls).
Counts that differ mean the two traces are not of the same configuration;
the script says so and exits 1.

--json alone prints the comparison as JSON instead of the tables; --json FILE
writes it to FILE (keys a, b, same_tasks, kernels, workers, critical_path with
a, b: trace_critical_path.critical_path() of each, and ratio: B / A) and
prints the tables. --figure FILE.png draws two panels: per kernel, the mean
duration of one call in A and B (error bars: the IQR, 25th to 75th percentile);
per worker, its kernel, exposed copy and idle time in A and B (stacked bars).
Both output paths, and --figure's format, are checked before anything is
read or written; the same trace (node) given twice is refused.

    build/tessera run --algo qr --n 4096 --threads 2 --trace real.json
    build/tessera run --algo qr --n 4096 --threads 2 --trace sim.json --backend sim --machine platform/machines/local.json
    /usr/bin/python3 analysis/trace_compare.py real.json sim.json [--json [FILE]] [--figure FILE.png]
"""
import argparse
import collections
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # its siblings, under PYTHONSAFEPATH too
from trace_summary import fail, load_all, output_problem, run_main  # noqa: E402
import trace_critical_path  # noqa: E402
import trace_devices  # noqa: E402


def kernel_stats(events):
    """kernel -> {count, mean_us, spread_us (IQR = q3_us - q1_us), q1_us, q3_us, total_us} of the trace's task events."""
    durs = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "task":
            durs[e["name"]].append(e["dur"])
    out = {}
    for name, d in durs.items():
        d.sort()
        q = statistics.quantiles(d, n=4, method="inclusive") if len(d) >= 2 else [d[0], d[0], d[0]]
        out[name] = {"count": len(d), "mean_us": statistics.fmean(d), "spread_us": q[2] - q[0], "q1_us": q[0],
                     "q3_us": q[2], "total_us": sum(d)}
    return out


def compare(a_paths, b_paths):
    """The comparison of trace A (e.g. real) and B (e.g. simulated) as a JSON-ready dict."""
    a_info, a_events = load_all(a_paths)
    b_info, b_events = load_all(b_paths)
    ka, kb = kernel_stats(a_events), kernel_stats(b_events)
    kernels = []
    # Largest total first; equal totals (LU's row moves take 0 s in a model) by name, not by the set's hash order.
    for name in sorted(set(ka) | set(kb), key=lambda n: (-(ka.get(n, kb.get(n))["total_us"]), n)):
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
    return {"a": {"files": a_paths, "run": a_info.get("run")}, "b": {"files": b_paths, "run": b_info.get("run")},
            "same_tasks": same, "kernels": kernels, "workers": workers,
            "critical_path": compare_critical_paths(a_events, b_events)}


def compare_critical_paths(a_events, b_events):
    """{a, b: the critical path of each trace, ratio: B's length / A's} (trace_critical_path.py)."""
    ca, cb = trace_critical_path.critical_path(a_events), trace_critical_path.critical_path(b_events)
    ratio = cb["critical_path_s"] / ca["critical_path_s"] if ca["critical_path_s"] > 0 else None
    return {"a": ca, "b": cb, "ratio": ratio}


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
            "%.3f" % r["mean_ratio"] if r.get("mean_ratio") is not None else "-",
            "%.3f" % r["total_ratio"] if r.get("total_ratio") is not None else "-"), file=out)
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
    print_critical_paths(c["critical_path"], out)
    if not c["same_tasks"]:
        print("\nthe traces ran different tasks (kernel counts differ): not the same configuration", file=out)


def print_critical_paths(cp, out=sys.stdout):
    """The critical path of A and B: length, tasks on it, makespan, CP/makespan; then B / A of the length."""
    print("\n%-5s %12s %7s %12s %12s" % ("trace", "crit path s", "tasks", "makespan s", "CP/makespan"), file=out)
    for side in ("a", "b"):
        r = cp[side]
        print("%-5s %12.6f %7d %12.6f %12s" % (side.upper(), r["critical_path_s"], r["tasks"], r["makespan_s"],
                                              "%.3f" % r["ratio"] if r["ratio"] is not None else "-"), file=out)
    print("(critical path B / A: %s)" % ("%.3f" % cp["ratio"] if cp["ratio"] is not None else "-"), file=out)


def kernel_panel(ax, c):
    """Grouped bars: per kernel, the mean duration of one call in A and B; error bars span the IQR (q1 to q3)."""
    names = [r["kernel"] for r in c["kernels"]]
    width = 0.38
    for n, label in enumerate(("A", "B")):
        rows = [r[label.lower()] or {} for r in c["kernels"]]
        xs = [k + (n - 0.5) * width for k in range(len(names))]
        ax.bar(xs, [r.get("mean_us", 0.0) for r in rows], width, label=label)
        ax.errorbar(xs, [(r.get("q1_us", 0.0) + r.get("q3_us", 0.0)) / 2 for r in rows],
                    yerr=[r.get("spread_us", 0.0) / 2 for r in rows], fmt="none", ecolor="black", capsize=3)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_ylabel("mean duration of one call (us)")
    ax.set_title("per kernel (error bars: interquartile range, 25th to 75th percentile)", fontsize=9)
    ax.legend(fontsize=8)


def worker_panel(ax, c):
    """Per worker, two stacked bars (A, B): kernel time, copy time with no kernel running, idle time."""
    labels = ["n%d %s" % (w["node"], w["worker"]) for w in c["workers"]]
    width = 0.38
    parts = (("kernel_s", "busy (kernels)", "tab:blue"), ("transfer_exposed_s", "copies, no kernel", "tab:orange"),
             ("idle_s", "idle", "tab:gray"))
    for n, side in enumerate(("a", "b")):
        xs = [k + (n - 0.5) * width for k in range(len(labels))]
        bottom = [0.0] * len(labels)
        for key, name, color in parts:
            h = [(w[side] or {}).get(key, 0.0) for w in c["workers"]]
            ax.bar(xs, h, width, bottom=bottom, color=color, edgecolor="black", linewidth=0.4,
                   hatch="//" if side == "b" else None, label=name if n == 0 else None)
            bottom = [b + y for b, y in zip(bottom, h)]
        for x, top in zip(xs, bottom):
            ax.text(x, top, "AB"[n], ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_ylabel("time (s)")
    ax.set_title("per worker over its node's makespan: left bar A, right bar B (hatched)", fontsize=9)
    ax.margins(y=0.15)
    ax.legend(fontsize=8, loc="upper center", ncol=3)


def write_figure(c, path):
    """The two panels (kernel_panel, worker_panel) as a PNG at path, titled with each trace's run line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.5))
    kernel_panel(left, c)
    worker_panel(right, c)
    cp = c["critical_path"]
    fig.suptitle("A: %s\nB: %s\ncritical path A %.4f s, B %.4f s" % (
        c["a"]["run"] or ", ".join(c["a"]["files"]), c["b"]["run"] or ", ".join(c["b"]["files"]),
        cp["a"]["critical_path_s"], cp["b"]["critical_path_s"]), fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="trace A (e.g. the real run); a distributed run's node files comma-separated: run.json,run.node1.json,... (FILE.json -> FILE.nodeK.json)")
    ap.add_argument("b", help="trace B (e.g. the simulated run), same form")
    ap.add_argument("--json", nargs="?", const="-", metavar="FILE",
                    help="the comparison as JSON: printed instead of the tables, or written to FILE")
    ap.add_argument("--figure", metavar="FILE.png", help="write the per-kernel and per-worker figure")
    x = ap.parse_args()
    inputs = x.a.split(",") + x.b.split(",")
    outs = [(o, p) for o, p in (("--json", x.json), ("--figure", x.figure)) if p and p != "-"]
    for option, path in outs:
        why = output_problem(path, inputs + [p for o, p in outs if o != option])
        if why:
            return fail("trace_compare.py", "%s %s: %s" % (option, path, why))
    if x.figure:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.figure import Figure
        kinds = Figure().canvas.get_supported_filetypes()
        ext = os.path.splitext(x.figure)[1][1:].lower()
        if ext and ext not in kinds:
            return fail("trace_compare.py", "--figure %s: no format Matplotlib writes has the extension %r (%s)" % (
                x.figure, ext, ", ".join(sorted(kinds))))
    try:
        c = compare(x.a.split(","), x.b.split(","))
        if x.json and x.json != "-":
            with open(x.json, "w", encoding="utf-8") as f:
                json.dump(c, f, indent=1)
        if x.figure:
            write_figure(c, x.figure)
    except (OSError, ValueError) as e:  # TraceError, or a --figure extension Matplotlib does not write
        return fail("trace_compare.py", e)
    if x.json == "-":
        print(json.dumps(c, indent=1))
    else:
        print_text(c)
    return 0 if c["same_tasks"] else 1


if __name__ == "__main__":
    run_main(main)
