"""The figure kinds of experiment definitions (Matplotlib, Agg): lines, bars, breakdown, scatter.

Each function draws one plot spec of a definition (see
experiments/definitions/README.md, "plots") from a Results object onto a new
figure and returns it. The paper's reported values are drawn as black
reference markers labelled "paper (000 Fig. 6a)"; points whose runs all
failed, or whose metric could not be evaluated, are never left out silently:
lines and bars draw a red cross on the x axis labelled with the exit status
("run failed (exit 4)") or the metric ("metric tflops failed"), breakdown an
empty red-hatched bar with that label, scatter a red note listing them (and
how many values <= 0 its log axes leave off).
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # its siblings, under PYTHONSAFEPATH too
from experiment_results import series_key, series_label  # noqa: E402

PAPER_MARKERS = ["*", "D", "P", "X", "^", "v"]
SEGMENT_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
                  "#d62728", "#7f7f7f"]


def order(key):
    """Sort key of a series: numbers by value, then text."""
    return tuple((0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v)) for v in key)


def new_figure(spec):
    """A figure with the spec's title and axis labels."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=100)
    ax.set_title(spec["title"], fontsize=10)
    ax.set_xlabel(spec.get("xlabel", spec.get("x", "")))
    ax.set_ylabel(spec.get("ylabel", spec.get("y", "")))
    ax.grid(True, alpha=0.3)
    return fig, ax


def paper_label(entry):
    """'paper (000 Fig. 6a)' from a reported entry's source ('000 Fig. 6a, §7.1 text')."""
    return "paper (%s)" % entry["source"].split(",")[0].strip()


def references(spec, reported):
    """The reported entries with a number in the plot's unit that belong to this plot (not a ratio
    between points, relative_to, nor a parameter's value, best_of)."""
    return [r for r in reported if r.get("plot") == spec["file"] and r.get("value") is not None
            and "relative_to" not in r and "best_of" not in r]


def draw_references(ax, refs, xpos):
    """Black reference markers at xpos(entry) -> x; one marker style per distinct label."""
    styles = {}
    for r in refs:
        x = xpos(r)
        if x is None:
            continue
        label = paper_label(r)
        first = label not in styles
        styles.setdefault(label, PAPER_MARKERS[len(styles) % len(PAPER_MARKERS)])
        ax.plot([x], [r["value"]], linestyle="none", marker=styles[label], markersize=11, color="black",
                markerfacecolor="none" if len(styles) > 1 else "black", label=label if first else None, zorder=5)


def failure_label(text):
    """'run failed (exit 4)', 'run failed (timeout)' or 'metric NAME failed' from a Point's why_missing() text."""
    head = text.split(":")[0]
    return head if head.startswith("metric ") else "run failed (%s)" % head


def draw_failures(ax, failures):
    """Red crosses on the x axis for configurations whose runs all failed or whose metric failed."""
    if not failures:
        return
    low = ax.get_ylim()[0]
    seen = set()
    for x, text in failures:
        label = failure_label(text)
        ax.plot([x], [low], linestyle="none", marker="x", color="red", markersize=9, clip_on=False, zorder=6,
                label=None if label in seen else label)
        seen.add(label)


def _scales(ax, spec):
    if spec.get("logx"):
        ax.set_xscale("log", base=2 if spec.get("logx") == 2 else 10)
    if spec.get("logy"):
        ax.set_yscale("log")


def _hline(ax, spec):
    h = spec.get("hline")
    if h:
        ax.axhline(h["value"], color="gray", linestyle="--", linewidth=1, label=h.get("label"))


def lines(results, spec, reported):
    """y against x, one line per series; paper values as reference markers."""
    fig, ax = new_figure(spec)
    names = spec.get("series", [])
    groups, failures = {}, []
    for p in results.points(spec.get("where")):
        x, y = p.params.get(spec["x"]), p.value(spec["y"])
        if y is None and p.why_missing(spec["y"]):
            failures.append((x, p.why_missing(spec["y"])))
        # A point without a value breaks its line: no segment across a failed run.
        groups.setdefault(series_key(p.params, names), []).append((x, float("nan") if y is None else y))
    for key in sorted(groups, key=order):
        pts = sorted(groups[key], key=lambda xy: order((xy[0],)))
        ax.plot([a for a, _ in pts], [b for _, b in pts], marker="o", markersize=4,
                label="tessera %s" % series_label(names, key) if names else "tessera")
    _scales(ax, spec)
    _hline(ax, spec)
    draw_references(ax, references(spec, reported), lambda r: r.get("where", {}).get(spec["x"]))
    draw_failures(ax, failures)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def bars(results, spec, reported):
    """Grouped bars: x categories, one bar per series; paper values as markers over their category."""
    fig, ax = new_figure(spec)
    names = spec.get("series", [])
    pts = results.points(spec.get("where"))
    cats = sorted({p.params.get(spec["x"]) for p in pts}, key=lambda v: order((v,)))
    keys = sorted({series_key(p.params, names) for p in pts}, key=order)
    width = 0.8 / max(1, len(keys))
    failures = []
    for i, key in enumerate(keys):
        xs, ys = [], []
        for p in pts:
            if series_key(p.params, names) != key:
                continue
            pos = cats.index(p.params.get(spec["x"])) + (i - (len(keys) - 1) / 2) * width
            y = p.value(spec["y"])
            if y is None:
                if p.why_missing(spec["y"]):
                    failures.append((pos, p.why_missing(spec["y"])))
                continue
            xs.append(pos)
            ys.append(y)
        ax.bar(xs, ys, width=width * 0.95, label="tessera %s" % series_label(names, key) if names else "tessera")
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels([str(c) for c in cats])
    _hline(ax, spec)
    if spec.get("logy"):
        ax.set_yscale("log")
    if "ymin" in spec:
        ax.set_ylim(bottom=spec["ymin"])

    def ref_x(r):
        w = r.get("where", {})
        if w.get(spec["x"]) not in cats:
            return None
        key = series_key(w, names)
        shift = (keys.index(key) - (len(keys) - 1) / 2) * width if key in keys else 0.0
        return cats.index(w[spec["x"]]) + shift
    draw_references(ax, references(spec, reported), ref_x)
    draw_failures(ax, failures)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def breakdown(results, spec, reported):
    """Stacked bars of one device's time shares (spec 'categories': label + metric each),
    one bar per configuration and one for the paper's values; a configuration without
    every share (its runs failed, a metric failed) an empty red-hatched bar saying why."""
    fig, ax = new_figure(spec)
    cats = spec["categories"]
    names = spec.get("series", [])
    bars_ = []
    for p in results.points(spec.get("where")):
        label = "tessera %s" % series_label(names, series_key(p.params, names)) if names else "tessera"
        vals = [p.value(c["metric"]) for c in cats]
        if all(v is not None for v in vals):
            bars_.append((label, vals, None))
            continue
        gaps = [c["metric"] for c, v in zip(cats, vals) if v is None]
        why = next((p.why_missing(m) for m in gaps if p.why_missing(m)), None)
        bars_.append((label, None, failure_label(why) if why else "no value of %s" % gaps[0]))
    refs = {r["metric"]: r for r in references(spec, reported)}
    if refs:
        first = next(iter(refs.values()))
        bars_.append((paper_label(first), [refs[c["metric"]]["value"] if c["metric"] in refs else 0.0 for c in cats], "//"))
    labelled = set()
    for i, (label, vals, hatch) in enumerate(bars_):
        if vals is None:  # hatch holds why the bar is empty
            ax.bar([i], [100.0], fill=False, hatch="xx", edgecolor="red", linewidth=0.8,
                   label=None if hatch in labelled else hatch)
            ax.text(i, 50.0, hatch, rotation=90, ha="center", va="center", fontsize=7, color="red")
            labelled.add(hatch)
            continue
        bottom = 0.0
        for j, (c, v) in enumerate(zip(cats, vals)):
            ax.bar([i], [v], bottom=bottom, color=SEGMENT_COLORS[j % len(SEGMENT_COLORS)], hatch=hatch,
                   edgecolor="black" if hatch else None, label=None if c["label"] in labelled else c["label"])
            labelled.add(c["label"])
            if v >= 4:
                ax.text(i, bottom + v / 2, "%.0f%%" % v, ha="center", va="center", fontsize=7)
            bottom += v
    ax.set_xticks(range(len(bars_)))
    ax.set_xticklabels([b[0] for b in bars_], fontsize=7)
    ax.set_ylim(0, 105)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return fig


def _point_names(points):
    """A short name per point: its parameters that vary among `points` ('gpus=4'), else its label."""
    varying = sorted({k for p in points for k in p.params if len({str(q.params.get(k)) for q in points}) > 1})
    return {id(p): " ".join("%s=%s" % (k, p.params.get(k)) for k in varying) or p.runs[0].get("label", "the point")
            for p in points}


def scatter(results, spec, reported):
    """Model (x) against measured (y) with the y = x line; with 'pair', x and y are one value
    from two runs that differ only in one parameter (e.g. backend sim against native). Points
    without both values (a failed run or metric) are listed in a red note, as are the values
    <= 0 that the log axes cannot show."""
    fig, ax = new_figure(spec)
    names = spec.get("series", [])
    groups, missing = {}, []
    points = results.points(spec.get("where"))
    short = _point_names(points)
    if "pair" in spec:
        pair = spec["pair"]
        by_rest = {}
        for p in points:
            rest = tuple(sorted((k, str(v)) for k, v in p.params.items() if k != pair["param"]))
            by_rest.setdefault(rest, {})[p.params.get(pair["param"])] = p
        for two in by_rest.values():
            px, py = two.get(pair["x"]), two.get(pair["y"])
            if px and py and px.value(pair["value"]) is not None and py.value(pair["value"]) is not None:
                groups.setdefault(series_key(px.params, names), []).append((px.value(pair["value"]), py.value(pair["value"])))
                continue
            for q in (px, py):
                if q is not None and q.why_missing(pair["value"]):
                    missing.append("%s (%s)" % (short[id(q)], failure_label(q.why_missing(pair["value"]))))
    else:
        for p in points:
            x, y = p.value(spec["x"]), p.value(spec["y"])
            if x is not None and y is not None:
                groups.setdefault(series_key(p.params, names), []).append((x, y))
                continue
            why = p.why_missing(spec["x"] if x is None else spec["y"])
            if why:
                missing.append("%s (%s)" % (short[id(p)], failure_label(why)))
    nonpositive = sum(1 for pts in groups.values() for x, y in pts if x <= 0 or y <= 0)
    groups = {k: [(x, y) for x, y in pts if x > 0 and y > 0] for k, pts in groups.items()}
    allv = [v for pts in groups.values() for xy in pts for v in xy]
    for key in sorted(groups, key=order):
        if not groups[key]:
            continue
        ax.plot([a for a, _ in groups[key]], [b for _, b in groups[key]], linestyle="none", marker="o", markersize=5,
                alpha=0.8, label="tessera %s" % series_label(names, key) if names else "tessera")
    if allv:
        lo, hi = min(allv) / 1.3, max(allv) * 1.3
        ax.plot([lo, hi], [lo, hi], color="gray", linestyle="--", linewidth=1, label="y = x")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    ax.set_xscale("log")
    ax.set_yscale("log")
    notes = []
    if missing:
        shown = missing[:6] + (["and %d more" % (len(missing) - 6)] if len(missing) > 6 else [])
        notes.append("not drawn, %d point(s): %s" % (len(missing), "; ".join(shown)))
    if nonpositive:
        notes.append("not drawn: %d point(s) with a value <= 0 (log axes)" % nonpositive)
    if notes:
        ax.text(0.02, 0.98, "\n".join(notes), transform=ax.transAxes, ha="left", va="top", fontsize=7, color="red",
                wrap=True, bbox={"facecolor": "white", "edgecolor": "red", "alpha": 0.85})
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


KINDS = {"lines": lines, "bars": bars, "breakdown": breakdown, "scatter": scatter}
