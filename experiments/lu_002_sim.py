#!/usr/bin/python3
"""Tables and the cross-run figures of the simulated paper-002 LU experiments.

Reads the results folders of the four definitions (run them first, one at a
time: `tessera experiment run NAME --jobs 1`)

    002-fig5-d-sweep        002 Fig. 5: d sweep, 12 cores + 1 GPU, N = 10,112, B = 128/256/512
    002-fig6-7-model-d      002 Fig. 6-7: --d auto's and --d eq1's d against the best d, P = 4 ... 48
    002-fig10-scalability   002 Fig. 10: cores only, then + 1 GPU
    002-fig11-tall-skinny   002 Fig. 11a: n = 1,024, m = 2,000 ... 100,000

and prints the Markdown tables of experiments/README.md ("LU (paper 002) in
simulation"), then draws what the runner's per-point plots cannot: the d/N of
--d auto and --d eq1 against the measured best d/N (results/experiments/
002-fig6-7-model-d/figures/fig6-d-fraction.png, .pdf) and the d sweeps of
every tile size on one plot, with both estimates and the partial-pivoting
baseline (results/experiments/002-fig5-d-sweep/figures/fig5-d-sweep-all-B.png,
.pdf).

The two estimates of d (the d each chose is the run's JSON "d", with
"d_source"), both with the machine file's GEMM models at the tile size B:
  --d auto            the whole run's flop balance (models::cpu_block_columns_
                      whole_run): the constant d that balances the CPU side's
                      total flops at P·g1 against the GPU side's at g2 over all
                      steps of the tile algorithm (whole_run_balance_d below
                      recomputes it; the script checks that they agree)
  --d eq1             002's eq. (1) (models::cpu_block_columns): one step's
                      balance with N block columns; Alg. 2 keeps d fixed as
                      the trailing matrix shrinks, so the CPU's share of all
                      flops is larger than d/N (see cpu_flop_share)
Also shown: eq. (1) at peaks, 002 §5.2's convention, 80% / 90% of the Table 1
peaks (8.4 GFlop/s per core, 504 the GPU): what 002 Fig. 6 plots.

    /usr/bin/python3 experiments/lu_002_sim.py [--results results/experiments] [--no-figures]

A results folder that is missing, unreadable or lacks a run the tables need
(an interrupted sweep) stops the script with one line naming it and exit
status 2; so does a failed run that a table's best d, or a value it prints,
would need (naming the point and how it failed: a best d over the points
that happened to run is not the sweep's). A variant of the Fig. 10 table
whose run failed shows "failed (exit N)" in its cell.
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)  # runner, under PYTHONSAFEPATH too
sys.path.insert(0, os.path.join(ROOT, "analysis"))
from experiment_results import Results, ResultsError  # noqa: E402

FIG5, FIG67, FIG10, FIG11 = "002-fig5-d-sweep", "002-fig6-7-model-d", "002-fig10-scalability", "002-fig11-tall-skinny"
CORE_PEAK, GPU_PEAK = 8.4, 504.0  # 002 Table 1, GFlop/s (d) per core and per GPU
CPU_FRACTION, GPU_FRACTION = 0.8, 0.9  # 002 §5.2


# ---------------------------------------------------------------- the models

def efficiency(curve, size):
    """The machine file's piecewise-linear efficiency at `size`, constant beyond its ends
    (models/kernel_model.cpp EfficiencyCurve::at)."""
    if size <= curve[0][0]:
        return curve[0][1]
    for (a, ea), (b, eb) in zip(curve, curve[1:]):
        if size <= b:
            return ea + (eb - ea) * (size - a) / (b - a)
    return curve[-1][1]


def gemm_speeds(machine, B):
    """(g1, g2): one core's and the GPU's double-precision GEMM speed at a B x B x B tile, GFlop/s."""
    km = machine["kernel_models"]
    core, gpu = km[machine["node"]["cores"]["model"]], km[machine["node"]["gpus"]["model"]]
    g1 = core["peak_gflops"]["gsmm"]["d"] * efficiency(core["efficiency"]["d"], B)
    g2 = gpu["peak_gflops"]["gsmm"]["d"] * efficiency(gpu["efficiency"]["d"], B)
    return g1, g2


def eq1_d(q, P, g1, g2):
    """models::cpu_block_columns: floor(q P g1 / (P g1 + g2)), clamped to [1, q - 1]."""
    d = math.floor(q * P * g1 / (P * g1 + g2) * (1 + 1e-9))
    return 1 if q == 1 else min(max(d, 1), q - 1)


def side_flops(p, q, d):
    """(CPU, GPU) flops of the tile LU with p x q tiles (square tiles, unit b^3) when the CPU side holds
    columns [k, k + d) at step k: the panel (GETRF of the M_K-tile panel, M_K - 1/3) on the CPU; each
    trailing column j a TRSM (1) and M_K - 1 GEMMs (2 each) on its side. Interchanges and the
    tournament's extra flops are left out."""
    cpu = gpu = 0.0
    for k in range(q):
        mk = p - k
        cpu += mk - 1.0 / 3.0
        for j in range(k + 1, q):
            u = 1.0 + 2.0 * (mk - 1)
            if j < k + d:
                cpu += u
            else:
                gpu += u
    return cpu, gpu


def cpu_flop_share(p, q, d):
    cpu, gpu = side_flops(p, q, d)
    return cpu / (cpu + gpu)


def whole_run_balance_d(p, q, P, g1, g2):
    """The d in [1, q - 1] minimizing max(CPU flops / (P g1), GPU flops / g2) over the whole run."""
    best = None
    for d in range(1, max(2, q)):
        cpu, gpu = side_flops(p, q, d)
        t = max(cpu / (P * g1), gpu / g2)
        if best is None or t < best[0]:
            best = (t, d)
    return best[1]


# ---------------------------------------------------------------- results

def load(results_dir, name):
    """The results of one definition, with at least one successful run; ResultsError naming the folder otherwise."""
    path = os.path.join(results_dir, name)
    if not os.path.isfile(os.path.join(path, "meta.json")):
        raise ResultsError("%s: no results (run: build/tessera experiment run %s --jobs 1)" % (path, name))
    res = Results(path)
    if not any(p.ok for p in res.points()):
        raise ResultsError("%s: no successful run in runs.jsonl (run: build/tessera experiment run %s --jobs 1)" % (
            path, name))
    return res


class PointFailed(LookupError):
    """A point the tables need whose runs all failed: (its parameters, how its first run ended)."""


def failure(res, **where):
    """How the point matching `where` failed ('exit 4: ...', 'timeout: ...') when none of its runs succeeded, else None."""
    return next((p.failure() for p in res.points(where) if p.failure()), None)


def refuse_failed(res, **where):
    """PointFailed for the first point matching `where` whose runs all failed (a table's best over these points would be
    the best of the survivors, not of the sweep)."""
    for p in res.points(where):
        if p.failure():
            raise PointFailed(p.params, p.failure())


def cell(res, **where):
    """'failed (exit N)' / 'failed (timeout)' for a point whose runs failed, else '—' (not run)."""
    why = failure(res, **where)
    return "failed (%s)" % why.split(":")[0] if why else "—"


def complete(res, table, *args):
    """table(res, *args), or ResultsError naming the results folder when it lacks a run or field the table needs."""
    try:
        return table(res, *args)
    except BrokenPipeError:
        raise  # the reader of stdout has gone (| head): not a fault of the results
    except PointFailed as e:
        params, why = e.args
        shown = " ".join("%s=%s" % kv for kv in sorted(params.items()) if kv[0] not in ("backend",))
        raise ResultsError("%s: the run of %s failed (%s); the tables need it: rerun it with build/tessera experiment "
                           "run %s --retry-failed --jobs 1" % (res.dir, shown, why, os.path.basename(res.dir)))
    except (LookupError, TypeError, ValueError, ZeroDivisionError, OSError) as e:
        what = "no %s" % e if isinstance(e, KeyError) else str(e)
        raise ResultsError("%s: incomplete results (%s); finish the sweep: build/tessera experiment run %s --jobs 1" % (
            res.dir, what, os.path.basename(res.dir)))


def rows(res, **where):
    """(params, result JSON, metrics) of every successful run matching `where`."""
    out = []
    for p in res.points(where):
        for r in p.ok:
            out.append((r["params"], r["result"], r.get("metrics") or {}))
    return out


def one(res, **where):
    got = rows(res, **where)
    if not got:
        refuse_failed(res, **where)
    if len(got) != 1:
        raise LookupError("%d runs for %s" % (len(got), where))
    return got[0]


def tiles(res_json):
    B = res_json["B"]
    return math.ceil(res_json["m"] / B), math.ceil(res_json["n"] / B)


def pct(a, b):
    return "%+.1f%%" % (100.0 * (a / b - 1))


def machine_of(res):
    with open(os.path.join(ROOT, res.meta["machine"]), encoding="utf-8") as f:
        return json.load(f)


# ---------------------------------------------------------------- tables

def table_fig5(res):
    print("### Fig. 5: d sweep, 12 cores + 1 GPU, N = 10,112 (GFlop/s; time in s)\n")
    Bs = sorted({p.params["B"] for p in res.points()})
    ds = sorted({p.params["d"] for p in res.points() if isinstance(p.params["d"], int)})
    print("| B | variant | " + " | ".join("d = %d" % d for d in ds) + " | --d auto (d) | --d eq1 (d) | best d | best GFlop/s "
          "| best vs gepp d=1 | auto time vs best | eq1 time vs best |")
    print("|---:|---|" + "---:|" * len(ds) + "---:|---:|---:|---:|---:|---:|---:|")
    summary = {}
    for B in Bs:
        base = one(res, B=B, pivot="partial", d=1)[1]
        for variant, pivot in (("calu_async", "tournament"), ("gepp_async", "partial")):
            cells, runs = [], {}
            for d in ds:
                got = rows(res, B=B, pivot=pivot, d=d)
                if got:
                    runs[d] = got[0][1]
                    cells.append("%.1f" % got[0][1]["gflops"])
                else:
                    cells.append(cell(res, B=B, pivot=pivot, d=d))
            refuse_failed(res, B=B, pivot=pivot)  # the best d over the swept d: every d must have run
            auto = one(res, B=B, pivot=pivot, d="auto")[1]
            eq1 = one(res, B=B, pivot=pivot, d="eq1")[1]
            bd = min(runs, key=lambda d: runs[d]["time_s"])
            best = runs[bd]
            summary[(B, pivot)] = (bd, best, auto, eq1, base)
            print("| %d | %s | %s | %.1f (%d) | %.1f (%d) | %d | %.1f (%.3f s) | %s | %s | %s |" % (
                B, variant, " | ".join(cells), auto["gflops"], auto["d"], eq1["gflops"], eq1["d"], bd, best["gflops"],
                best["time_s"], pct(best["gflops"], base["gflops"]), pct(auto["time_s"], best["time_s"]),
                pct(eq1["time_s"], best["time_s"])))
    print("\nbest d: over the swept d; 'best vs gepp d=1': GFlop/s against --pivot partial --d 1 (the magma_dgetrf "
          "stand-in) at the same B; 'auto / eq1 time vs best': the --d auto (whole-run balance) / --d eq1 (002 eq. (1)) "
          "run's time against the best swept run's (negative: faster than every swept d).\n")
    return summary


def table_fig67(res):
    machine = machine_of(res)
    print("### Fig. 6-7: --d auto and --d eq1 against the best d, N = 10,112, CALU, P cores + 1 GPU\n")
    Ps = sorted({p.params["threads"] for p in res.points()})
    B = res.points()[0].params["B"]
    print("| P | --d auto: d (d/N) | --d eq1: d (d/N) | eq. (1) at peaks: d (d/N) | best d (d/N) | d within 5% of best time "
          "| best GFlop/s | auto GFlop/s | auto time vs best | eq1 GFlop/s | eq1 time vs best | d = 8 | d = 16 "
          "| CPU flop share at auto d / eq1 d |")
    print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    out = []
    g1, g2 = gemm_speeds(machine, B)
    mismatches = []
    for P in Ps:
        refuse_failed(res, threads=P)  # the best d over the swept d: every d must have run
        runs = {pr["d"]: rj for pr, rj, _ in rows(res, threads=P)}
        auto = runs.pop("auto")
        eq1 = runs.pop("eq1")
        p, q = tiles(auto)
        d_peak = eq1_d(q, P, CPU_FRACTION * CORE_PEAK, GPU_FRACTION * GPU_PEAK)
        if whole_run_balance_d(p, q, P, g1, g2) != auto["d"] or eq1_d(q, P, g1, g2) != eq1["d"]:
            mismatches.append(P)
        bd = min(runs, key=lambda d: runs[d]["time_s"])
        best = runs[bd]
        near = sorted(d for d in runs if runs[d]["time_s"] <= 1.05 * best["time_s"])
        out.append({"P": P, "q": q, "auto_d": auto["d"], "eq1_d": eq1["d"], "peak_d": d_peak, "best_d": bd,
                    "near": near, "auto": auto, "eq1": eq1, "best": best})
        print("| %d | %d (%.3f) | %d (%.3f) | %d (%.3f) | %d (%.3f) | %s | %.1f | %.1f | %s | %.1f | %s | %.1f | %.1f "
              "| %.2f / %.2f |" % (
                  P, auto["d"], auto["d"] / q, eq1["d"], eq1["d"] / q, d_peak, d_peak / q, bd, bd / q,
                  ", ".join(map(str, near)), best["gflops"], auto["gflops"], pct(auto["time_s"], best["time_s"]),
                  eq1["gflops"], pct(eq1["time_s"], best["time_s"]), runs[8]["gflops"], runs[16]["gflops"],
                  cpu_flop_share(p, q, auto["d"]), cpu_flop_share(p, q, eq1["d"])))
    print("\nB = %d, N = %d block columns; g1 = %.2f, g2 = %.1f GFlop/s (the machine file's GEMM at B); "
          "at peaks: g1 = %.2f, g2 = %.1f. 'time vs best': against the best swept d (negative: faster than every "
          "swept d). %s\n" % (B, out[0]["q"], g1, g2, CPU_FRACTION * CORE_PEAK, GPU_FRACTION * GPU_PEAK,
                              "whole_run_balance_d and eq1_d here give the runs' d at every P." if not mismatches else
                              "MISMATCH between this script's models and the runs' d at P = %s." % mismatches))
    return out


def table_fig10(res, fig67=None):
    print("### Fig. 10: scalability, N = 10,112, B = 256 (GFlop/s; the d that auto / eq1 chose in brackets)\n")
    Ps = sorted({p.params["threads"] for p in res.points()})
    variants = ["calu cores", "gepp cores", "gepp d=1", "gepp_async", "gepp_async eq1", "calu_async", "calu_async eq1"]
    best = {r["P"]: r for r in (fig67 or [])}
    print("| P | " + " | ".join(variants) + " | calu, best d (002-fig6-7) | calu_async / calu cores | calu_async / gepp d=1 |")
    print("|---:|" + "---:|" * (len(variants) + 3))
    for P in Ps:
        vals = {}
        cells = []
        for v in variants:
            got = rows(res, threads=P, variant=v)
            if not got:
                cells.append(cell(res, threads=P, variant=v))
                continue
            rj = got[0][1]
            vals[v] = rj
            chosen = got[0][0].get("d") in ("auto", "eq1")
            cells.append("%.1f" % rj["gflops"] + (" (%d)" % rj["d"] if chosen else ""))
        b = best.get(P)
        bcell = "%.1f (d = %d)" % (b["best"]["gflops"], b["best_d"]) if b else "—"
        def ratio(a, b):  # "—" beside a failed run's cell; a run not in the results stops the script
            if any(v not in vals and failure(res, threads=P, variant=v) for v in (a, b)):
                return "—"
            return "%.2fx" % (vals[a]["gflops"] / vals[b]["gflops"])
        print("| %d | %s | %s | %s | %s |" % (P, " | ".join(cells), bcell, ratio("calu_async", "calu cores"),
                                              ratio("calu_async", "gepp d=1")))
    print("\ncalu_async, gepp_async: --d auto (whole-run balance); '... eq1': --d eq1 (002 eq. (1)).\n")


def table_fig11(res):
    print("### Fig. 11a: tall-skinny, n = 1,024, 12 cores + 1 GPU (GFlop/s; the d that auto / eq1 chose in brackets)\n")
    variants = ["calu_async", "calu_async eq1", "calu_sync", "gepp d=1", "gepp_async", "gepp_async eq1"]
    print("| B | m | " + " | ".join(variants) + " | calu_async / gepp d=1 | calu_async / calu_sync | gepp d=1: cores busy |")
    print("|---:|---:|" + "---:|" * (len(variants) + 3))
    for B in sorted({p.params["B"] for p in res.points()}):
        for m in sorted({p.params["m"] for p in res.points()}):
            vals, cells, busy = {}, [], None
            for v in variants:
                pr, rj, met = one(res, B=B, m=m, variant=v)
                vals[v] = rj
                cells.append("%.1f" % rj["gflops"] + (" (%d)" % rj["d"] if pr["d"] in ("auto", "eq1") else ""))
                if v == "gepp d=1":
                    busy = met.get("cores_busy")
            print("| %d | %d | %s | %.2fx | %.2fx | %.2f |" % (B, m, " | ".join(cells),
                                                            vals["calu_async"]["gflops"] / vals["gepp d=1"]["gflops"],
                                                            vals["calu_async"]["gflops"] / vals["calu_sync"]["gflops"], busy))
    print()


# ---------------------------------------------------------------- figures

def figures(res5, res67, fig67):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from runner.outputs import save_figure

    written = []

    def save(fig, res, stem):
        d = os.path.join(res.dir, "figures")
        os.makedirs(d, exist_ok=True)
        for ext in ("png", "pdf"):
            path = os.path.join(d, "%s.%s" % (stem, ext))
            save_figure(fig, path)
            written.append(os.path.relpath(path, ROOT))
        plt.close(fig)

    # d/N: eq. (1) at B, eq. (1) at 002's peaks, the d of --d auto and --d eq1, the measured best.
    machine = machine_of(res67)
    B = fig67[0]["best"]["B"]
    q = fig67[0]["q"]
    g1, g2 = gemm_speeds(machine, B)
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=100)
    Ps = [r["P"] for r in fig67]
    grid = list(range(1, 49))
    ax.plot(grid, [P * g1 / (P * g1 + g2) for P in grid], color="#1f77b4",
            label="eq. (1) at B = %d (machine file: g1 = %.2f, g2 = %.0f)" % (B, g1, g2))
    ax.plot(grid, [P * CPU_FRACTION * CORE_PEAK / (P * CPU_FRACTION * CORE_PEAK + GPU_FRACTION * GPU_PEAK) for P in grid],
            color="black", linestyle="--", label="eq. (1) at 80%/90% of peak (002 Fig. 6, Opteron 6172)")
    ax.plot(Ps, [r["eq1_d"] / q for r in fig67], "o", color="#1f77b4", markerfacecolor="none",
            label="--d eq1: d chosen (floor of eq. (1) at B) / N")
    ax.plot(Ps, [r["auto_d"] / q for r in fig67], "s", color="#2ca02c", markersize=7, markerfacecolor="none",
            label="--d auto: d chosen (whole-run flop balance) / N")
    lo = [r["best_d"] / q - min(r["near"]) / q for r in fig67]
    hi = [max(r["near"]) / q - r["best_d"] / q for r in fig67]
    ax.errorbar(Ps, [r["best_d"] / q for r in fig67], yerr=[lo, hi], fmt="D", color="#d62728", markersize=4, capsize=3,
                label="measured best swept d / N (bar: d within 5% of the best time)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(Ps)
    ax.set_xticklabels([str(P) for P in Ps])
    ax.set_xlabel("P (CPU cores) + 1 GPU")
    ax.set_ylabel("d / N (share of the block columns on the CPU side)")
    ax.set_title("002 Fig. 6 (sim): d / N of --d auto, --d eq1 and measured, N = 10,112, B = %d (N = %d)" % (B, q),
                 fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, res67, "fig6-d-fraction")

    # Fig. 5 for every B: GFlop/s against d, CALU and GEPP, the baseline as a line.
    fig, ax = plt.subplots(figsize=(9.0, 4.6), dpi=100)
    colors = {128: "#1f77b4", 256: "#ff7f0e", 512: "#2ca02c"}
    for B in sorted({p.params["B"] for p in res5.points()}):
        for pivot, style in (("tournament", "-"), ("partial", ":")):
            pts = sorted((pr["d"], rj["gflops"]) for pr, rj, _ in rows(res5, B=B, pivot=pivot) if isinstance(pr["d"], int))
            ax.plot([d for d, _ in pts], [g for _, g in pts], style, marker="o", markersize=3, color=colors.get(B),
                    label="B = %d, %s" % (B, "calu_async" if pivot == "tournament" else "gepp_async"))
            short = "calu" if pivot == "tournament" else "gepp"
            auto = one(res5, B=B, pivot=pivot, d="auto")[1]
            ax.plot([auto["d"]], [auto["gflops"]], "*" if pivot == "tournament" else "x", markersize=10, color=colors.get(B),
                    label="B = %d, %s --d auto (d = %d)" % (B, short, auto["d"]))
            eq1 = one(res5, B=B, pivot=pivot, d="eq1")[1]
            ax.plot([eq1["d"]], [eq1["gflops"]], "^" if pivot == "tournament" else "+", markersize=8,
                    markerfacecolor="none", color=colors.get(B),
                    label="B = %d, %s --d eq1 (d = %d)" % (B, short, eq1["d"]))
        base = one(res5, B=B, pivot="partial", d=1)[1]
        ax.axhline(base["gflops"], color=colors.get(B), linewidth=0.8, alpha=0.6)
    ax.set_xscale("log", base=2)
    ds = sorted({p.params["d"] for p in res5.points() if isinstance(p.params["d"], int)})
    ax.set_xticks(ds)
    ax.set_xticklabels([str(d) for d in ds])
    ax.set_xlabel("d (block columns on the CPU side); auto: whole-run balance, eq1: 002 eq. (1); "
                  "thin lines: gepp d = 1 (magma_dgetrf stand-in)", fontsize=8)
    ax.set_ylabel("GFlop/s")
    ax.set_title("002 Fig. 5 (sim): N = 10,112, 12 cores + 1 GPU, every tile size", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    save(fig, res5, "fig5-d-sweep-all-B")
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "results", "experiments"),
                    help="the folder holding the four results folders (default results/experiments)")
    ap.add_argument("--no-figures", action="store_true", help="print the tables only")
    a = ap.parse_args()
    try:
        if not os.path.isdir(a.results):
            raise ResultsError("--results %s: no such folder" % a.results)
        res5, res67, res10, res11 = (load(a.results, n) for n in (FIG5, FIG67, FIG10, FIG11))
        complete(res5, table_fig5)
        fig67 = complete(res67, table_fig67)
        complete(res10, table_fig10, fig67)
        complete(res11, table_fig11)
        if not a.no_figures:
            for path in complete(res5, figures, res67, fig67):
                print(path)
    except ResultsError as e:
        print("lu_002_sim.py: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    from runner.outputs import run_main
    run_main(main)
