"""The figure of `tessera explore`: a heatmap of predicted time, the best configuration marked.

Columns are the tile sizes (or, with one tile size, the last other parameter that varies),
rows every combination of the other parameters that vary (machine overrides first); a cell
holds the predicted time in seconds, a failed configuration an "x" and its exit status
("x 4"), or "x timeout" for a run killed at --timeout.
"""
import os
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import LogNorm, Normalize  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from runner.outputs import save_figure  # noqa: E402  (explore.py put experiments/ on sys.path)

AXES = ("grid", "dist", "v", "qr_tree", "gpu_streams", "node_noise", "kernel_noise", "s", "b_arg", "B")


def _key(v):
    """Numbers by value, grids PrxPc by Pr then Pc, other text alphabetically."""
    try:
        return (0, float(v), 0, "")
    except (TypeError, ValueError):
        pr, _, pc = str(v).partition("x")
        if pr.isdigit() and pc.isdigit():
            return (1, int(pr), int(pc), "")
        return (2, 0, 0, str(v))


def _short(v):
    return "%g" % v if isinstance(v, float) else str(v)


def _name(key):
    """An axis by its option: an override by its last field, --b's column (b_arg) as b."""
    return "b" if key == "b_arg" else key.split(".")[-1]


def _value(key, value):
    return "default" if key == "b_arg" and value == "" else _short(value)


def _tick(key, value):
    return "%s=%s" % (_name(key), _value(key, value))


def draw(rows, set_paths, path, title):
    keys = list(set_paths) + list(AXES)
    values = {k: sorted({r.get(k, "") for r in rows}, key=_key) for k in keys}
    varying = [k for k in keys if len(values[k]) > 1]
    col_key = "B" if "B" in varying else (varying[-1] if varying else "B")
    row_keys = [k for k in varying if k != col_key]
    cols = values[col_key]
    row_ids = sorted({tuple(r.get(k, "") for k in row_keys) for r in rows}, key=lambda t: [_key(x) for x in t])
    cell = {}
    for r in rows:
        cell[(tuple(r.get(k, "") for k in row_keys), r.get(col_key, ""))] = r
    times = [r["time_s"] for r in rows if r["status"] == "ok"]
    best = min((r for r in rows if r["status"] == "ok"), key=lambda r: r["time_s"], default=None)

    grid = [[float("nan")] * len(cols) for _ in row_ids]
    for i, rid in enumerate(row_ids):
        for j, c in enumerate(cols):
            r = cell.get((rid, c))
            if r is not None and r["status"] == "ok":
                grid[i][j] = r["time_s"]
    width = min(16.0, max(7.0, 3.5 + 1.1 * len(cols)))
    height = min(30.0, 2.2 + 0.32 * len(row_ids))
    fig, ax = plt.subplots(figsize=(width, height))
    norm = None
    if times:
        lo, hi = min(times), max(times)
        norm = LogNorm(lo, hi) if hi > 10 * lo else Normalize(lo, hi if hi > lo else lo * 1.01)
    im = ax.imshow(grid, cmap="viridis_r", norm=norm, aspect="auto", interpolation="nearest")
    fig.colorbar(im, ax=ax, label="predicted time (s), lower is better")
    small = len(row_ids) * len(cols) <= 300
    for i, rid in enumerate(row_ids):
        for j, c in enumerate(cols):
            r = cell.get((rid, c))
            if r is None:
                continue
            if r["status"] != "ok":
                why = r["exit_status"] if r.get("exit_status") not in (None, "") else r["status"]
                ax.text(j, i, "x %s" % why, ha="center", va="center", fontsize=7, color="crimson")
            elif small:
                ax.text(j, i, "%.3g" % r["time_s"], ha="center", va="center", fontsize=7,
                        color="white" if norm and norm(r["time_s"]) > 0.6 else "black")
            if r is best:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5))
                ax.plot([j + 0.38], [i - 0.3], marker="*", color="red", markersize=11)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([_value(col_key, c) for c in cols])
    ax.set_xlabel(_name(col_key) + {"B": " (tile size)", "b_arg": " (narrow column width)"}.get(col_key, ""))
    ax.set_yticks(range(len(row_ids)))
    ax.set_yticklabels([" ".join(_tick(k, v) for k, v in zip(row_keys, rid)) or "-" for rid in row_ids], fontsize=8)
    label = "best: %s, %.4g s" % (best["label"], best["time_s"]) if best else "no configuration succeeded"
    ax.set_title("\n".join([title] + textwrap.wrap(label, int(width * 11))), fontsize=9)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return path
