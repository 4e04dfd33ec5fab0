#!/usr/bin/python3
"""The report's numbers for statements the papers make across runs.

Many of the papers' claims compare runs ("35% faster than magma_dgetrf",
"the best d is 8", "a dip of 1/12 from one node to two"), so a reported
entry can give our side as a ratio against other points of the sweep
(`relative_to`) or as the parameter value of the best point (`best_of`).
These tests build a small results folder by hand, so every expected number
is known, and hold the report to it; and they check that a definition that
asks for a comparison the results cannot give is refused with its key. An
aggregate (max, median, best_of, ratios) over points some of which failed
says how many failed and why, and a metric that failed is named in place of
"no result".
"""
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
sys.path.insert(0, os.path.join(ROOT, "analysis"))

from runner import definition, report  # noqa: E402
from experiment_results import Results  # noqa: E402


# The results folders made by hand, in one folder removed at exit (TemporaryDirectory's finalizer).
TMP = tempfile.TemporaryDirectory(prefix="tessera-report-values-")


def run(cid, params, gflops, status="ok", metric_errors=None):
    r = {"config_id": cid, "repeat": 0, "params": params, "status": status, "metrics": {}}
    if metric_errors:
        r["metric_errors"] = metric_errors
    if status == "ok":
        r["result"] = {"gflops": gflops} if gflops is not None else {}
    else:
        r["stderr"] = "tessera: error: something named"
        r["exit_status"] = 2
    return r


def results(runs, derived=None, skipped=None):
    """A results folder holding `runs` (n derived from nodes, as the Fig. 6/7 definitions derive it)."""
    folder = tempfile.mkdtemp(prefix="report-values-", dir=TMP.name)
    meta = {"definition": {"derived": derived or {}, "plots": []}, "skipped": skipped or []}
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(folder, "runs.jsonl"), "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    return Results(folder)


# A d sweep of two pivotings (zipped variant/pivot, as 002-fig5-d-sweep) plus an automatic d.
SWEEP = [run("t1", {"variant": "calu", "pivot": "tournament", "d": 1}, 100.0),
         run("t2", {"variant": "calu", "pivot": "tournament", "d": 2}, 150.0),
         run("t4", {"variant": "calu", "pivot": "tournament", "d": 4}, 120.0),
         run("ta", {"variant": "calu", "pivot": "tournament", "d": "auto"}, 170.0),
         run("p1", {"variant": "gepp", "pivot": "partial", "d": 1}, 80.0),
         run("p2", {"variant": "gepp", "pivot": "partial", "d": 2}, 90.0)]


class RelativeTo(unittest.TestCase):
    def test_ratio_against_the_point_with_the_named_parameters_changed(self):
        res = results(SWEEP)
        entry = {"where": {"variant": "calu", "d": 2}, "metric": "gflops",
                 "relative_to": {"variant": "gepp", "pivot": "partial", "d": 1}}
        value, how = report.ours(res, entry)
        self.assertAlmostEqual(value, 150.0 / 80.0)
        self.assertIn("against", how)
        self.assertIn("variant = gepp", how)

    def test_each_point_paired_then_aggregated(self):
        # Against the same pivoting's d = 1: 150/100, 120/100; d = 1 is its own reference and left out, not a 1.0.
        res = results(SWEEP)
        entry = {"where": {"variant": "calu", "d": [1, 2, 4]}, "metric": "gflops", "relative_to": {"d": 1},
                 "aggregate": "max"}
        self.assertAlmostEqual(report.ours(res, entry)[0], 1.5)
        entry["aggregate"] = "min"
        value, how = report.ours(res, entry)
        self.assertAlmostEqual(value, 1.2)
        self.assertIn("min of 2 points", how)
        # Pairs are made within a point's own other parameters: gepp d = 2 against gepp d = 1 only.
        entry = {"where": {"variant": "gepp", "d": 2}, "metric": "gflops", "relative_to": {"d": 1}}
        self.assertAlmostEqual(report.ours(res, entry)[0], 90.0 / 80.0)

    def test_pairs_follow_the_parameters_where_leaves_open(self):
        # where pins only the variant: each tile size's point pairs with the same tile size's baseline
        # (a key built from where alone would take every baseline as a reference).
        runs = [run("c1", {"B": 128, "variant": "calu"}, 100.0), run("g1", {"B": 128, "variant": "gepp"}, 50.0),
                run("c2", {"B": 256, "variant": "calu"}, 90.0), run("g2", {"B": 256, "variant": "gepp"}, 60.0)]
        res = results(runs)
        entry = {"where": {"variant": "calu"}, "metric": "gflops", "relative_to": {"variant": "gepp"},
                 "aggregate": "min"}
        self.assertAlmostEqual(report.ours(res, entry)[0], 1.5)
        entry["aggregate"] = "max"
        self.assertAlmostEqual(report.ours(res, entry)[0], 2.0)

    def test_a_list_of_references_takes_the_best(self):
        res = results(SWEEP)
        entry = {"where": {"d": "auto"}, "metric": "gflops", "relative_to": {"d": [1, 2, 4]}}
        value, how = report.ours(res, entry)
        self.assertAlmostEqual(value, 170.0 / 150.0)
        self.assertIn("the best of 3 values of d", how)

    def test_missing_references_in_a_list_are_said(self):
        res = results(SWEEP)
        value, how = report.ours(res, {"where": {"d": "auto"}, "metric": "gflops", "relative_to": {"d": [1, 2, 8]}})
        self.assertAlmostEqual(value, 170.0 / 150.0)
        self.assertIn("2 of 3 references ran", how)

    def test_the_shortfall_is_the_point_with_the_fewest_references(self):
        # Two automatic-d points: calu's has references at d = 1, 2, 4 (all 3 ran), gepp's at d = 1 and 2
        # only: the note names the fewer (a point with all its references must not hide one without).
        runs = SWEEP + [run("pa", {"variant": "gepp", "pivot": "partial", "d": "auto"}, 95.0)]
        value, how = report.ours(results(runs), {"where": {"d": "auto"}, "metric": "gflops",
                                                 "relative_to": {"d": [1, 2, 4]}, "aggregate": "min"})
        self.assertAlmostEqual(value, 95.0 / 90.0)
        self.assertIn("2 of 3 references ran", how)

    def test_quick_derived_parameters_follow_too(self):
        runs = [run("a", {"nodes": 1, "n": 100}, 10.0), run("b", {"nodes": 4, "n": 200}, 36.0)]
        folder = results(runs).dir
        with open(os.path.join(folder, "meta.json"), "w") as f:
            json.dump({"definition": {"quick": {"derived": {"n": "100 * sqrt(nodes)"}}, "plots": []}}, f)
        entry = {"where": {"nodes": 4}, "metric": "gflops", "relative_to": {"nodes": 1}}
        self.assertAlmostEqual(report.ours(Results(folder), entry)[0], 3.6)

    def test_derived_parameters_follow_the_swept_one(self):
        # n is derived from nodes: a 2-node point pairs with the 1-node point whatever their n.
        runs = [run("a", {"algo": "cholesky", "nodes": 1, "n": 1000}, 120.0),
                run("b", {"algo": "cholesky", "nodes": 2, "n": 1414}, 220.0),
                run("c", {"algo": "qr", "nodes": 1, "n": 1000}, 100.0)]
        res = results(runs, derived={"n": "round(1000 * sqrt(nodes))"})
        entry = {"where": {"algo": "cholesky", "nodes": 2}, "metric": "gflops", "relative_to": {"nodes": 1}}
        self.assertAlmostEqual(report.ours(res, entry)[0], 220.0 / 120.0)

    def test_no_reference_no_number(self):
        runs = SWEEP + [run("p4", {"variant": "gepp", "pivot": "partial", "d": 4}, 0.0, status="failed")]
        res = results(runs, skipped=[{"params": {"variant": "gepp", "pivot": "partial", "d": 8}, "reason": "cost"}])
        value, how = report.ours(res, {"where": {"variant": "calu", "d": 4}, "metric": "gflops",
                                       "relative_to": {"variant": "gepp", "pivot": "partial"}})
        self.assertIsNone(value)
        self.assertIn("reference run failed", how)
        value, how = report.ours(res, {"where": {"variant": "calu", "d": 2}, "metric": "gflops",
                                       "relative_to": {"variant": "gepp", "pivot": "partial", "d": 99}})
        self.assertIsNone(value)
        self.assertIn("no reference run for", how)
        self.assertIn("99", how)
        # A numerator that failed says so.
        value, how = report.ours(res, {"where": {"variant": "gepp", "d": 4}, "metric": "gflops",
                                       "relative_to": {"d": 1}})
        self.assertIsNone(value)
        self.assertIn("run failed", how)


class Aggregate(unittest.TestCase):
    def test_several_points_default_to_their_median(self):
        # Three points of calu at d = 1, 2, 4 (100, 150, 120): the median is 120 (the mean would be 123.3).
        res = results(SWEEP)
        value, how = report.ours(res, {"where": {"variant": "calu", "d": [1, 2, 4]}, "metric": "gflops"})
        self.assertEqual(value, 120.0)
        self.assertIn("median of 3 points", how)
        value, how = report.ours(res, {"where": {"variant": "calu", "d": 2}, "metric": "gflops"})
        self.assertEqual((value, how), (150.0, None))


    def test_a_failed_point_is_said_beside_the_survivors_aggregate(self):
        # max over d = 1, 2, 4 with d = 2 (the largest) failed: the survivors' max (120) is not the sweep's, and the
        # cell says so instead of "max of 2 points".
        runs = [r for r in SWEEP if r["config_id"] != "t2"] + [run("t2", SWEEP[1]["params"], None, status="failed")]
        value, how = report.ours(results(runs), {"where": {"variant": "calu", "d": [1, 2, 4]}, "metric": "gflops",
                                                 "aggregate": "max"})
        self.assertEqual(value, 120.0)
        self.assertIn("max of 2 of 3 points; 1 failed: exit 2: tessera: error: something named", how)

    def test_a_metric_that_failed_is_named(self):
        runs = [run("a", {"d": 1}, None, metric_errors={"gflops": "'x / 0' failed: ZeroDivisionError"})]
        value, how = report.ours(results(runs), {"where": {"d": 1}, "metric": "gflops"})
        self.assertIsNone(value)
        self.assertEqual(how, "metric gflops failed: 'x / 0' failed: ZeroDivisionError")
        self.assertEqual(report.metric_failed(results(runs).points()[0].runs),
                         ["Metric failed (1 run(s)): `gflops: 'x / 0' failed: ZeroDivisionError`. Runs: a.", ""])

    def test_a_reference_of_zero_is_no_missing_run(self):
        runs = [run("a", {"d": 1}, 0.0), run("b", {"d": 2}, 5.0)]
        value, how = report.ours(results(runs), {"where": {"d": 2}, "metric": "gflops", "relative_to": {"d": 1}})
        self.assertIsNone(value)
        self.assertIn("reference value 0", how)


class BestOf(unittest.TestCase):
    def test_a_failed_point_is_said(self):
        runs = [r for r in SWEEP if r["config_id"] != "t2"] + [run("t2", SWEEP[1]["params"], None, status="failed")]
        value, how = report.ours(results(runs), {"where": {"variant": "calu"}, "metric": "gflops", "best_of": "d"})
        self.assertEqual(value, 4)
        self.assertIn("among the 2 of 3 points that gave one", how)
        self.assertIn("1 failed: exit 2", how)

    def test_the_parameter_at_the_largest_metric(self):
        res = results(SWEEP)
        value, how = report.ours(res, {"where": {"variant": "calu"}, "metric": "gflops", "best_of": "d"})
        # d = auto is faster (170) but not a number: the best numeric d is 2.
        self.assertEqual(value, 2)
        self.assertIn("150", how)
        value, _ = report.ours(res, {"where": {"variant": "gepp"}, "metric": "gflops", "best_of": "d"})
        self.assertEqual(value, 2)

    def test_no_numeric_point(self):
        res = results(SWEEP)
        value, how = report.ours(res, {"where": {"d": "auto"}, "metric": "gflops", "best_of": "d"})
        self.assertIsNone(value)
        self.assertIn("has a numeric d", how)
        value, how = report.ours(res, {"where": {"d": 64}, "metric": "gflops", "best_of": "d"})
        self.assertIsNone(value)
        self.assertIn("no result", how)


class Rows(unittest.TestCase):
    def test_a_statement_without_a_number_shows_ours(self):
        """A paper's words without a number still get our number when the entry names a metric."""
        res = results(SWEEP)
        defn = type("D", (), {"notes": {}, "plots": []})()
        entry = {"id": "scales", "where": {"variant": "calu", "d": 4}, "metric": "gflops", "relative_to": {"d": 1},
                 "source": "test", "text": "scales"}
        causes = []
        row = report.entry_row("x", defn, res, entry, causes, res.dir)
        cells = [c.strip() for c in row.split("|")]
        self.assertTrue(cells[4].startswith("1.2 (against d = 1"), row)
        self.assertEqual(cells[5], "—")
        self.assertEqual(causes, [("scales", "the paper gives no number here")])

    def row(self, ours_value, paper, notes=None):
        res = results([run("a", {"d": 1}, ours_value)])
        defn = type("D", (), {"notes": notes or {}, "plots": [], "path": "experiments/definitions/x.json"})()
        entry = {"id": "rate", "where": {"d": 1}, "metric": "gflops", "value": paper, "source": "Fig. 1",
                 "text": "rate"}
        causes = []
        cells = [c.strip() for c in report.entry_row("x", defn, res, entry, causes, res.dir).split("|")]
        return cells, causes

    def test_ours_over_the_papers(self):
        # 150 against the paper's 100: the column says 1.50 (ours / paper), and a difference of 50% asks
        # for a cause.
        cells, causes = self.row(150.0, 100.0)
        self.assertEqual(cells[3:6], ["100 (Fig. 1)", "150", "1.50"])
        self.assertEqual(len(causes), 1)
        self.assertIn("**no cause recorded**", causes[0][1])

    def test_a_shortfall_needs_a_cause_as_an_excess_does(self):
        # 120 against 200 (0.60) needs a cause as much as 1.40 does; within 15% (0.90) none.
        cells, causes = self.row(120.0, 200.0)
        self.assertEqual(cells[5], "0.60")
        self.assertEqual([c[0] for c in causes], ["rate"])
        self.assertIn("**no cause recorded**: add notes.rate", causes[0][1])
        cells, causes = self.row(120.0, 200.0, notes={"rate": "measured: the link is slower"})
        self.assertEqual(causes, [("rate", "measured: the link is slower")])
        cells, causes = self.row(180.0, 200.0)
        self.assertEqual((cells[5], causes), ("0.90", []))


class Validation(unittest.TestCase):
    def doc(self, **entry):
        e = {"id": "r", "metric": "gflops", "value": 1.2, "source": "test", "where": {"d": 2}}
        e.update(entry)
        e = {k: v for k, v in e.items() if v is not None}
        return {"name": "v", "title": "t", "paper": {"id": "test", "figure": "none"}, "backend": "sim",
                "machine": "platform/machines/keeneland.json", "fixed": {"algo": "lu", "n": 512},
                "variables": {"variant": "v"}, "derived": {"threads": "2 * d"},
                "sweep": [{"d": [1, 2]}], "reported": [e]}

    def expect(self, key, needle, **entry):
        with self.assertRaises(definition.DefinitionError) as cm:
            definition._validate("v.json", self.doc(**entry))
        self.assertIn(key, str(cm.exception))
        self.assertIn(needle, str(cm.exception))

    def test_good(self):
        definition._validate("v.json", self.doc(relative_to={"d": 1}))
        definition._validate("v.json", self.doc(best_of="d", value=2))

    def test_refused(self):
        self.expect("reported[0].relative_to.gpu", "not a parameter", relative_to={"gpu": 1})
        self.expect("reported[0].relative_to", "non-empty object", relative_to={})
        self.expect("reported[0].relative_to", "non-empty object", relative_to=[1])
        self.expect("reported[0].relative_to.threads", "derived", relative_to={"threads": 2})
        self.expect("reported[0].best_of", "not a parameter", best_of="gflops")
        self.expect("reported[0].best_of", "cannot be combined", best_of="d", relative_to={"d": 1})
        self.expect("reported[0].metric", "missing", best_of="d", value=None, metric=None, text="words")
        self.expect("reported[0].relative_to.d", "names no reference", relative_to={"d": []})
        self.expect("reported[0].aggregate", "does not apply", best_of="d", aggregate="max")
        self.expect("reported[0].metric", "must be a name", metric=["gflops"])
        self.expect("reported[0].id", "must be a non-empty string", id=[1])
        self.expect("reported[0].source", "must be a non-empty string", source=5)
        self.expect("reported[0].text", "must be a non-empty string", text=7)
        self.expect("reported[0].plot", "must be a plot's file name", plot=["t"])


if __name__ == "__main__":
    unittest.main()
