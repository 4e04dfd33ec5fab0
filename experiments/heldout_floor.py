#!/usr/bin/python3
"""The machine against itself: how well one sweep's real runs predict the next sweep's.

validate_prediction scores a model by the error of its predicted time
against the best of --repeat real runs. No prediction made at one moment can
be closer to a later sweep's runs than the machine's own runs are to each
other, so the floor of that error on a given machine is measured by letting
an earlier sweep's real runs "predict" a later sweep's: for two --json files
A and B of the same sweep (validate_prediction --json; the held-out sweep's
rows are matched by algorithm, precision, m, n, threads and s), per row the
error (best of A - best of B) / best of B, then the median and worst |error|
over the rows both ran, the same statistics as issue 16 point 4's target
(median <= 3%, worst <= 6%). Beside them: the same after the pair's common
shift (the median signed error) is taken out, which leaves what differs from
row to row, and the model's own errors in B (its error_vs_min_pct) over the
same rows. A row whose simulation failed still has its real runs and counts
for the floor; one whose real runs failed is left out.

Give the sweeps in the order they ran; each is compared with the one before
it. Only sweeps of the same CPU code compare (a kernel change between them is
a real difference, not noise): the script cannot see that, its caller must.

    /usr/bin/python3 experiments/heldout_floor.py A.json B.json [C.json ...] [--markdown] [--json FILE]

Exit status: 0, or 2 for a bad option or input file (one line naming it), or
when two consecutive sweeps share no row.
"""
import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import outputs  # noqa: E402
from runner.outputs import UsageError  # noqa: E402


def row_key(r):
    return (r["algo"], r["precision"], r["m"], r["n"], r["threads"], r["s"])


def label(key):
    algo, prec, m, n, t, s = key
    size = "%dx%d" % (m, n) if m != n else str(n)
    return "%s %s %s, %d thread%s%s" % (algo, prec, size, t, "" if t == 1 else "s", ", s = %d" % s if s > 1 else "")


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def load_sweep(path):
    """The rows of a validate_prediction --json FILE with real runs, by row_key: each row's best real time and,
    where its simulation ran too, the model's error. A row whose real runs failed is left out."""
    doc = outputs.load_json("sweep", path, "a --json FILE of validate_prediction")
    rows = doc.get("rows") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        raise UsageError("sweep %s: no \"rows\" list (not a --json FILE of validate_prediction)" % path)
    out, failed = {}, 0
    for i, r in enumerate(rows):
        def bad(why):
            raise UsageError("sweep %s: rows[%d] %s: %s" % (path, i, why, json.dumps(r)[:120]))
        if not isinstance(r, dict):
            bad("is not a row of validate_prediction")
        if not all(isinstance(r.get(k), str) for k in ("algo", "precision")) or not all(
                isinstance(r.get(k), int) and not isinstance(r.get(k), bool) and r[k] >= 1
                for k in ("m", "n", "threads", "s")):
            bad("is not a row of validate_prediction (algo, precision, m, n, threads, s)")
        runs = r.get("real_runs_s")
        if "real_min_s" in r:
            best = r["real_min_s"]
        elif isinstance(runs, list) and runs and all(_number(x) for x in runs):
            best = min(runs)  # a row whose simulation failed keeps its real runs
        elif r.get("status", "ok") != "ok":
            failed += 1
            continue  # its real runs failed
        else:
            bad("has no real_min_s")
        if not (_number(best) and best > 0):
            bad("has real_min_s %r, not a time" % (best,))
        model = None
        if r.get("status", "ok") == "ok":
            pred = r.get("predicted_s")
            if not (_number(pred) and pred > 0):
                bad("has predicted_s %r, not a time" % (pred,))
            model = 100.0 * (pred - best) / best
        key = row_key(r)
        if key in out:
            bad("repeats the configuration of an earlier row")
        out[key] = {"best": best, "model_error_pct": model}
    if not out and failed:  # not "share no row" with the other sweep: this one has nothing to share
        raise UsageError("sweep %s: no row with real runs (%d row(s) failed)" % (path, failed))
    return out


def worst(errors):
    """(|error|, signed error, key) of the row with the largest |error|."""
    key = max(errors, key=lambda k: abs(errors[k]))
    return abs(errors[key]), errors[key], key


def compare(a, b, a_path, b_path):
    """The floor of pair (A, B): A's best runs as predictions of B's, beside the model's errors in B."""
    keys = sorted(k for k in b if k in a)
    if not keys:
        raise UsageError("sweeps %s and %s share no row (not the same sweep)" % (a_path, b_path))
    floor = {k: 100.0 * (a[k]["best"] - b[k]["best"]) / b[k]["best"] for k in keys}
    shift = statistics.median(floor.values())
    model = {k: b[k]["model_error_pct"] for k in keys if b[k]["model_error_pct"] is not None}

    def stats(errors):
        if not errors:
            return None
        w, signed, key = worst(errors)
        return {"median_abs_pct": statistics.median(abs(e) for e in errors.values()), "worst_abs_pct": w,
                "worst_pct": signed, "worst_row": label(key), "rows": len(errors)}

    return {"a": a_path, "b": b_path, "rows": len(keys), "shift_pct": shift, "floor": stats(floor),
            "floor_shift_out": stats({k: e - shift for k, e in floor.items()}), "model": stats(model)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweeps", nargs="+", metavar="SWEEP.json", help="validate_prediction --json files, in time order")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--json", help="also write the comparison as JSON to FILE")
    a = ap.parse_args()
    try:
        if len(a.sweeps) < 2:
            raise UsageError("give at least two sweeps (got %d: %s)" % (len(a.sweeps), a.sweeps[0]))
        why = a.json and outputs.output_problem(a.json, a.sweeps)
        if why:
            raise UsageError("--json %s: %s" % (a.json, why))
        sweeps = [load_sweep(p) for p in a.sweeps]
        pairs = [compare(sweeps[i - 1], sweeps[i], a.sweeps[i - 1], a.sweeps[i]) for i in range(1, len(sweeps))]
    except UsageError as e:
        print("heldout_floor: %s" % e, file=sys.stderr)
        return 2
    name = os.path.basename
    if a.markdown:
        print("| A | B | rows | common shift (A - B) / B | floor: median, worst | worst row | shift out: median, worst | "
              "model in B: median, worst | model's worst row |")
        print("|---|---|---:|---:|---:|---|---:|---:|---|")
        for p in pairs:
            f, s, m = p["floor"], p["floor_shift_out"], p["model"]
            model = ("%.1f%%, %.1f%% | %s (%+.1f%%)" % (m["median_abs_pct"], m["worst_abs_pct"], m["worst_row"],
                                                     m["worst_pct"]) if m else "no simulation ran | ")
            print("| %s | %s | %d | %+.1f%% | %.1f%%, %.1f%% | %s (%+.1f%%) | %.1f%%, %.1f%% | %s |"
                  % (name(p["a"]), name(p["b"]), p["rows"], p["shift_pct"], f["median_abs_pct"], f["worst_abs_pct"],
                     f["worst_row"], f["worst_pct"], s["median_abs_pct"], s["worst_abs_pct"], model))
    else:
        for p in pairs:
            f, s, m = p["floor"], p["floor_shift_out"], p["model"]
            model = ("%.1f%%, %.1f%% (%s, %+.1f%%)" % (m["median_abs_pct"], m["worst_abs_pct"], m["worst_row"],
                                                     m["worst_pct"]) if m else "no simulation ran")
            print("%s -> %s (%d rows): the machine's own floor: median |error| %.1f%%, worst %.1f%% (%s, %+.1f%%); "
                  "with the common shift (%+.1f%%) out: %.1f%%, %.1f%%; the model in %s: %s"
                  % (name(p["a"]), name(p["b"]), p["rows"], f["median_abs_pct"], f["worst_abs_pct"], f["worst_row"],
                     f["worst_pct"], p["shift_pct"], s["median_abs_pct"], s["worst_abs_pct"], name(p["b"]), model))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"pairs": pairs}, f, indent=1)
    return 0


if __name__ == "__main__":
    outputs.run_main(main)
