#!/usr/bin/python3
"""experiments/heldout_floor.py: an earlier sweep's best real runs as the
predictions of a later sweep's, the machine's own floor of point 4's error.

    test_heldout_floor.py WORK_DIR

Three rows by hand. A's best runs are 1.00, 2.00 and 4.40 s, B's 1.00, 2.10
and 4.00 s: the errors (A - B) / B are 0, -4.76% and +10%, so the floor's
median |error| is 4.76% and its worst 10% (the third row, signed +10%); the
common shift is the median signed error, 0, so taking it out changes
nothing; C's best runs are 1.05, 2.10 and 4.62 s, so B -> C has errors
-4.76%, 0 and -13.42%, the shift -4.76%, and after the shift 0, +4.76% and
-8.66%. The model's errors are B's own error_vs_min_pct, recomputed from its
predicted_s (1.03, 2.10, 3.80 s: +3%, 0, -5%). A row of B whose real runs
failed is skipped, a row A lacks is not compared, and a row whose simulation
failed (C's N = 4000, runs of 2.2 and 2.0 s against A's 2.2 s: +10%) counts
for the floor and not for the model. Bad input exits 2 with one line naming
it: one sweep, a file that is not JSON, a file without rows, a row without
times, a row whose sizes are not integers, an infinite time, a configuration
twice, two sweeps without a common row, a sweep whose every row failed (named
as such, not as "no common row"), JSON nested too deeply, --json over an input.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "experiments", "heldout_floor.py")


def row(n, best, pred, threads=2, s=1, status="ok"):
    r = {"algo": "cholesky", "precision": "d", "m": n, "n": n, "threads": threads, "s": s, "status": status}
    if status == "ok":
        r.update(real_min_s=best, predicted_s=pred, error_vs_min_pct=100.0 * (pred - best) / best)
    return r


def write(work, name, rows):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump({"rows": rows}, f)
    return path


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def close(x, y, what):
    if abs(x - y) > 1e-9:
        raise AssertionError("%s: %r, expected %r" % (what, x, y))


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    a = write(work, "a.json", [row(1000, 1.00, 1.0), row(2000, 2.00, 2.0), row(3000, 4.40, 4.4), row(9000, 7.0, 7.0),
                               row(4000, 2.2, 2.2)])
    b = write(work, "b.json", [row(1000, 1.00, 1.03), row(2000, 2.10, 2.10), row(3000, 4.00, 3.80),
                               row(5000, 0, 0, status="failed")])
    sim_failed = dict(row(4000, 0, 0, status="failed"), stage="simulated run", real_runs_s=[2.2, 2.0])
    c = write(work, "c.json", [row(1000, 1.05, 1.0), row(2000, 2.10, 2.0), row(3000, 4.62, 4.4), sim_failed])
    out = os.path.join(work, "floor.json")
    rc, stdout, stderr = run(a, b, c, "--json", out, "--markdown")
    assert rc == 0, (rc, stdout, stderr)
    pairs = json.load(open(out))["pairs"]
    assert len(pairs) == 2, pairs
    ab, bc = pairs
    assert ab["rows"] == 3, pairs  # B's failed row and A's extra rows are not compared
    assert bc["rows"] == 3 and bc["model"]["rows"] == 3, pairs  # B lacks N = 4000
    close(ab["floor"]["median_abs_pct"], 100.0 * 0.1 / 2.1, "A->B median")
    close(ab["floor"]["worst_abs_pct"], 10.0, "A->B worst")
    close(ab["floor"]["worst_pct"], 10.0, "A->B worst signed")
    assert ab["floor"]["worst_row"] == "cholesky d 3000, 2 threads", ab
    close(ab["shift_pct"], 0.0, "A->B shift")
    close(ab["floor_shift_out"]["worst_abs_pct"], 10.0, "A->B worst, shift out")
    close(ab["model"]["median_abs_pct"], 3.0, "model median in B")
    close(ab["model"]["worst_pct"], -5.0, "model worst in B")
    shift = 100.0 * (1.00 - 1.05) / 1.05
    close(bc["shift_pct"], shift, "B->C shift")
    close(bc["floor"]["worst_pct"], 100.0 * (4.00 - 4.62) / 4.62, "B->C worst")
    close(bc["floor_shift_out"]["median_abs_pct"], -shift, "B->C median, shift out")
    close(bc["floor_shift_out"]["worst_pct"], 100.0 * (4.00 - 4.62) / 4.62 - shift, "B->C worst, shift out")
    assert "| a.json | b.json | 3 | +0.0% | 4.8%, 10.0% | cholesky d 3000, 2 threads (+10.0%) |" in stdout, stdout
    # A -> C: N = 4000's simulation failed in C; its real runs count for the floor (worst +10%), not for the model.
    rc, stdout, stderr = run(a, c, "--json", out)
    ac = json.load(open(out))["pairs"][0]
    assert rc == 0 and ac["rows"] == 4 and ac["model"]["rows"] == 3, (rc, ac, stderr)
    close(ac["floor"]["worst_pct"], 10.0, "A->C worst (the row whose simulation failed)")
    assert ac["floor"]["worst_row"] == "cholesky d 4000, 2 threads", ac

    bad_json = os.path.join(work, "bad.json")
    open(bad_json, "w").write("{")
    no_rows = write(work, "norows.json", None)
    no_times = os.path.join(work, "notimes.json")
    json.dump({"rows": [{"algo": "qr", "precision": "d", "m": 1, "n": 1, "threads": 1, "s": 1}]}, open(no_times, "w"))
    other = write(work, "other.json", [row(777, 1.0, 1.0)])
    not_int = write(work, "notint.json", [dict(row(1000, 1.0, 1.0), m=None)])
    infinite = os.path.join(work, "inf.json")
    open(infinite, "w").write(json.dumps({"rows": [row(1000, 1.0, 1.0)]}).replace("1.0", "Infinity", 1))
    twice = write(work, "twice.json", [row(1000, 1.0, 1.0), row(1000, 3.0, 3.0)])
    all_failed = write(work, "allfail.json", [row(1000, 0, 0, status="failed"), row(2000, 0, 0, status="failed")])
    deep = os.path.join(work, "deep.json")
    open(deep, "w").write("[" * 100000)
    for args, says in (([a], "at least two sweeps"), ([a, bad_json], "sweep %s: not JSON" % bad_json),
                       ([a, no_rows], "sweep %s: no \"rows\" list" % no_rows),
                       ([a, no_times], "sweep %s: rows[0] has no real_min_s" % no_times),
                       ([a, not_int], "sweep %s: rows[0] is not a row" % not_int),
                       ([a, infinite], "sweep %s: rows[0] has real_min_s inf" % infinite),
                       ([a, twice], "sweep %s: rows[1] repeats the configuration" % twice),
                       ([a, other], "share no row"), ([a, b, "--json", a], "--json %s: is an input" % a),
                       ([a, all_failed], "sweep %s: no row with real runs (2 row(s) failed)" % all_failed),
                       ([a, deep], "sweep %s: not JSON (nested too deeply" % deep),
                       ([a, work], "sweep %s: is a directory" % work)):
        rc, stdout, stderr = run(*args)
        lines = stderr.strip().splitlines()
        assert rc == 2 and len(lines) == 1 and says in lines[0], (args, rc, stdout, stderr)
    print("heldout_floor: ok")


if __name__ == "__main__":
    main()
