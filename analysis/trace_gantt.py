#!/usr/bin/python3
"""Gantt chart of a tessera trace: one lane per worker and per copy stream / message lane, PNG.

Every task is a bar on its worker's lane (CPU compute threads `cpuK`, GPU
managers `gpuK`) coloured by kernel; host/GPU copies are bars on their GPU's
`h2d`/`d2h` lanes and received messages on `messages in`, in grey. A
distributed run's per-node files give one block of lanes per node. Time is
the trace's clock (simulated seconds for a simulated run), from the first
event. A chart holds at most MAX_LANES lanes (about 2,000: Matplotlib's
largest image at a readable lane height); more, or a --from/--to window
that misses every event, is refused with one line naming them, exit 2.

    /usr/bin/python3 analysis/trace_gantt.py TRACE.json [TRACE.node1.json ...] --out gantt.png [--from S --to S]
"""
import argparse
import collections
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # its siblings, under PYTHONSAFEPATH too
from trace_summary import TraceError, fail, load_all, output_problem, run_main  # noqa: E402
from trace_devices import thread_names, _order  # noqa: E402

MAX_LANES = 2000  # 0.28 inch a lane at 100 dpi: Matplotlib refuses an image taller than 2**16 pixels (~2,330 lanes)
KERNEL_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]


def lanes(events):
    """(ordered lane keys, {lane: [(start_us, dur_us, name)]}) of tasks and transfers."""
    names = thread_names(events)
    bars = collections.defaultdict(list)
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("task", "transfer"):
            continue
        lane = (e["pid"], names.get((e["pid"], e["tid"]), "tid %d" % e["tid"]), e["tid"])
        bars[lane].append((e["ts"], e["dur"], e["name"] if e["cat"] == "task" else "transfer"))
    order = sorted(bars, key=lambda k: (k[0], k[2] >= 1000, not k[1].startswith("gpu"), _order(k[1]), k[2]))
    return order, bars


def draw(paths, out, t_from=None, t_to=None):
    """Writes the chart of the trace files to `out` (PNG, whatever its extension); returns the number of bars drawn."""
    info, events = load_all(paths)
    order, bars = lanes(events)
    if not order:
        raise TraceError("%s: no task or transfer events" % paths[0])
    if len(order) > MAX_LANES:
        raise TraceError("%s: %d lanes (workers, copy streams and message lanes of %d node(s)): too many for one chart "
                         "(at most %d); give fewer node files at a time" % (
                             ", ".join(paths) if len(paths) <= 3 else "%s ... (%d files)" % (paths[0], len(paths)),
                             len(order), len({k[0] for k in order}), MAX_LANES))
    t0 = min(s for lane in order for s, _, _ in bars[lane])
    span = max(s + d for lane in order for s, d, _ in bars[lane]) - t0
    if (t_from is not None and t_from > span / 1e6) or (t_to is not None and t_to < 0):
        raise TraceError("--from %s --to %s: the window misses the trace, which lasts %.6g s from its first event" % (
            "-" if t_from is None else "%g" % t_from, "-" if t_to is None else "%g" % t_to, span / 1e6))
    kernels = sorted({n for lane in order for _, _, n in bars[lane] if n != "transfer"})
    color = {k: KERNEL_COLORS[i % len(KERNEL_COLORS)] for i, k in enumerate(kernels)}
    color["transfer"] = "#999999"
    fig, ax = plt.subplots(figsize=(11, 0.28 * len(order) + 1.6), dpi=100)
    drawn = 0
    for y, lane in enumerate(order):
        by_name = collections.defaultdict(list)
        for s, d, n in bars[lane]:
            a, b = (s - t0) / 1e6, (s - t0 + d) / 1e6
            if (t_from is not None and b < t_from) or (t_to is not None and a > t_to):
                continue
            by_name[n].append((a, max(b - a, 1e-9)))
        for n, spans in by_name.items():
            ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=color[n], linewidth=0)
            drawn += len(spans)
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(["node %d %s" % (p, n) for p, n, _ in order], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time since the first event (s)")
    if t_from is not None or t_to is not None:
        ax.set_xlim(left=t_from, right=t_to)
    handles = [plt.Rectangle((0, 0), 1, 1, color=color[k]) for k in kernels + ["transfer"]]
    ax.legend(handles, kernels + ["copy / message"], fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(str(info.get("run") or os.path.basename(paths[0]))[:140], fontsize=8)
    fig.tight_layout()
    fig.savefig(out, format="png")
    plt.close(fig)
    return drawn


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="+", help="trace files: one, or every node's of a distributed run")
    ap.add_argument("--out", required=True, help="PNG file to write")
    ap.add_argument("--from", dest="t_from", type=float, help="start of the window shown (s)")
    ap.add_argument("--to", dest="t_to", type=float, help="end of the window shown (s)")
    a = ap.parse_args()
    for option, v in (("--from", a.t_from), ("--to", a.t_to)):
        if v is not None and not math.isfinite(v):
            return fail("trace_gantt.py", "%s %s: must be a number of seconds" % (option, v))
    if a.t_from is not None and a.t_to is not None and a.t_from >= a.t_to:
        return fail("trace_gantt.py", "--from %g --to %g: the window's start must be before its end" % (
            a.t_from, a.t_to))
    why = output_problem(a.out, a.trace)
    if why:
        return fail("trace_gantt.py", "--out %s: %s" % (a.out, why))
    try:
        n = draw(a.trace, a.out, a.t_from, a.t_to)
    except (TraceError, OSError) as e:
        return fail("trace_gantt.py", e)
    print("%s: %d bars" % (a.out, n))
    return 0


if __name__ == "__main__":
    run_main(main)
