#!/usr/bin/python3
"""Reading a results folder (analysis/experiment_results.py), which every
figure, the report and `tessera experiment` tables are drawn from.

A results folder built by hand, so that each rule decides a number: a
configuration run again keeps its last record; a point's value is the median
of its successful repeats (1, 2 and 10 s: 2, where the mean would be 4.33),
a failed repeat's numbers count for nothing; the last sweep's configurations
(meta.json "configs") are the only points; a run's measured value wins over
a parameter of the same name; a point fails only when no repeat succeeded,
and says how its first failed run ended; points and runs.csv follow the
sweep's order, not the order parallel runs finished in. runs.csv is written
whole (a record without run_wall_s gets an empty cell, not a crash that left
the header only) and carries an ok run's failed metrics in its error column;
a point whose metric failed says so; plot_experiment.py checks meta.json's
definition and refuses a folder without runs, one line each, and a runs.jsonl
line nested too deeply is a bad line, not a RecursionError. A distributed
run recorded when its tasks and imbalance_ratio were node 0's alone (before
d7aacef: comm.per_node without tasks) has neither, in values and runs.csv,
and a resumed sweep runs it again.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "analysis"))

from experiment_results import Results, read_runs  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "experiments"))
from runner import definition, execute  # noqa: E402


# The results folders made by hand, in one folder removed at exit (TemporaryDirectory's finalizer).
TMP = tempfile.TemporaryDirectory(prefix="tessera-results-reading-")


def record(cid, repeat, time_s=None, status="ok", params=None, **extra):
    r = {"config_id": cid, "repeat": repeat, "params": dict(params or {"n": 1000}), "status": status}
    if time_s is not None:
        r["result"] = {"time_s": time_s}
    r.update(extra)
    return r


def folder(records, configs=None):
    path = tempfile.mkdtemp(prefix="results-reading-", dir=TMP.name)
    meta = {"definition": {"plots": []}}
    if configs is not None:
        meta["configs"] = configs
    with open(os.path.join(path, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(path, "runs.jsonl"), "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    return path


def point(results, cid):
    (p,) = [p for p in results.points() if p.runs[0]["config_id"] == cid]
    return p


class ResultsReading(unittest.TestCase):
    def test_a_configuration_run_again_keeps_its_last_record(self):
        path = folder([record("a", 0, 5.0), record("a", 1, 6.0), record("a", 0, 3.0)])
        runs = read_runs(path)
        self.assertEqual(list(runs), [("a", 0), ("a", 1)], "in order of first appearance")
        self.assertEqual(runs[("a", 0)]["result"]["time_s"], 3.0, "the rerun's record, not the first")
        self.assertEqual(point(Results(path), "a").values("time_s"), [3.0, 6.0])

    def test_a_points_value_is_the_median_of_its_successful_repeats(self):
        path = folder([record("a", 0, 1.0), record("a", 1, 2.0), record("a", 2, 10.0),
                       record("a", 3, 0.5, status="failed", exit_status=3, stderr="tessera: error: broke\n")])
        p = point(Results(path), "a")
        self.assertEqual(p.values("time_s"), [1.0, 2.0, 10.0], "a failed repeat's numbers count for nothing")
        self.assertEqual(p.value("time_s"), 2.0, "the median of 1, 2 and 10 s, not their mean")
        self.assertIsNone(p.failure(), "three repeats succeeded: the point did not fail")

    def test_only_the_last_sweeps_configurations_are_points(self):
        path = folder([record("old", 0, 1.0), record("a", 0, 2.0), record("b", 0, 3.0)], configs=["a", "b"])
        self.assertEqual(sorted(p.runs[0]["config_id"] for p in Results(path).points()), ["a", "b"])
        # Without a list (an older meta.json), every configuration is one.
        self.assertEqual(len(Results(folder([record("old", 0, 1.0), record("a", 0, 2.0)])).points()), 2)

    def test_a_measured_value_wins_over_a_parameter_of_its_name(self):
        # A definition may sweep --b while the run reports the b it chose (--b auto).
        r = record("a", 0, 1.0, params={"n": 1000, "b": "auto"}, metrics={"b": 48})
        r["result"]["gflops"] = 70.0
        p = point(Results(folder([r])), "a")
        self.assertEqual(p.value("b"), 48)
        self.assertEqual(p.value("gflops"), 70.0)
        self.assertEqual(p.value("n"), 1000, "a parameter no run reports is the parameter")

    def test_a_point_fails_only_when_no_repeat_succeeded(self):
        failed = record("f", 0, status="failed", exit_status=4, stderr="starting\ntessera: error: GPU 1: out of memory\n")
        late = record("t", 0, status="timeout", stderr="")
        res = Results(folder([failed, record("f", 1, status="failed", exit_status=2, stderr="other\n"), late,
                              record("m", 0, 1.0), record("m", 1, status="failed", exit_status=3, stderr="x\n")]))
        self.assertEqual(point(res, "f").failure(), "exit 4: tessera: error: GPU 1: out of memory",
                         "the first failed run's status and last stderr line")
        self.assertEqual(point(res, "t").failure(), "timeout: ")
        self.assertIsNone(point(res, "m").failure(), "one repeat succeeded")
        self.assertIsNone(point(res, "f").value("time_s"))


    def test_points_and_runs_csv_follow_the_sweep_not_the_finishing_order(self):
        # With --jobs 2 the runs of a sweep (a, b, c; two repeats each) end, and are appended, in any order.
        finished = [record("c", 1, 6.0), record("b", 0, 3.0), record("c", 0, 5.0), record("a", 1, 2.0),
                    record("b", 1, 4.0), record("a", 0, 1.0)]
        path = folder(finished, configs=["a", "b", "c"])
        res = Results(path)
        self.assertEqual([p.runs[0]["config_id"] for p in res.points()], ["a", "b", "c"])
        self.assertEqual([[r["repeat"] for r in p.runs] for p in res.points()], [[0, 1]] * 3)
        execute.write_csv(path, types.SimpleNamespace(metrics={}), ["a", "b", "c"])
        with open(os.path.join(path, "runs.csv")) as f:
            rows = [(r["config_id"], r["repeat"]) for r in csv.DictReader(f)]
        self.assertEqual(rows, [("a", "0"), ("a", "1"), ("b", "0"), ("b", "1"), ("c", "0"), ("c", "1")])
        # A configuration the list lacks (a run of an earlier sweep) comes after the sweep's.
        execute.write_csv(path, types.SimpleNamespace(metrics={}), ["b", "a"])
        with open(os.path.join(path, "runs.csv")) as f:
            self.assertEqual([r["config_id"] for r in csv.DictReader(f)], ["b", "b", "a", "a", "c", "c"])

    def test_runs_csv_is_written_whole(self):
        path = folder([record("a", 0, 1.0, run_wall_s=None), record("b", 0, 2.0, run_wall_s=2.5,
                                                                        metric_errors={"m": "division by zero"})])
        with open(os.path.join(path, "runs.csv"), "w") as f:
            f.write("the last sweep's table\n")
        execute.write_csv(path, types.SimpleNamespace(metrics={"m": "1 / 0"}), ["a", "b"])
        with open(os.path.join(path, "runs.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([(r["config_id"], r["run_wall_s"], r["error"]) for r in rows],
                         [("a", "", ""), ("b", "2.500", "metric m failed: division by zero")])
        self.assertEqual(sorted(os.listdir(path)), ["meta.json", "runs.csv", "runs.jsonl"])
        self.assertEqual(point(Results(path), "b").metric_error("m"), "metric m failed: division by zero")
        self.assertIsNone(point(Results(path), "b").metric_error("time_s"), "time_s has a value")

    def test_node_0_fields_of_older_distributed_runs_are_absent(self):
        def run(cid, nodes, per_node):
            result = {"time_s": 2.0, "tasks": 100, "imbalance_ratio": 1.5, "nodes": nodes}
            if per_node is not None:
                result["comm"] = {"per_node": per_node}
            return record(cid, 0, result=result, params={"n": 1000, "nodes": nodes})
        old = run("old", 4, [{"messages_sent": 3}] * 4)  # node 0's tasks and imbalance under the run's keys
        new = run("new", 4, [{"messages_sent": 3, "tasks": 25}] * 4)
        one = run("one", 1, None)
        path = folder([old, new, one], configs=["old", "new", "one"])
        res = Results(path)
        for cid, want in (("old", None), ("new", 100), ("one", 100)):
            with self.subTest(cid=cid):
                self.assertEqual(point(res, cid).value("tasks"), want)
                self.assertEqual(point(res, cid).value("imbalance_ratio"), want and 1.5)
                self.assertEqual(point(res, cid).value("time_s"), 2.0)
        execute.write_csv(path, types.SimpleNamespace(metrics={}), ["old", "new", "one"])
        with open(os.path.join(path, "runs.csv"), encoding="utf-8") as f:
            rows = [(r["config_id"], r["result_tasks"], r["result_imbalance_ratio"], r["result_time_s"])
                    for r in csv.DictReader(f)]
        self.assertEqual(rows, [("old", "", "", "2.0"), ("new", "100", "1.5", "2.0"), ("one", "100", "1.5", "2.0")])
        defn = definition.load("validate-comm")
        self.assertIn("node 0's tasks and imbalance_ratio", defn.record_problem(old))
        self.assertIsNone(defn.record_problem(new))
        self.assertIsNone(defn.record_problem(one))

    def test_a_line_nested_too_deeply_is_a_bad_line(self):
        path = folder([record("a", 0, 1.0)])
        with open(os.path.join(path, "runs.jsonl"), "a") as f:
            f.write("[" * 100000 + "\n")
        bad = []
        self.assertEqual(list(read_runs(path, lambda p, n, why: bad.append((n, why)))), [("a", 0)])
        self.assertEqual(bad, [(2, "JSON nested too deeply, not a run record")])

    def test_plot_experiment_checks_meta_json(self):
        plot = {"file": "f", "kind": "lines", "title": "t", "x": "n", "y": "time_s"}
        cases = [({"plots": [dict(plot, kind="pie")]}, 'definition.plots[0].kind: value "pie"'),
                 ({"plots": [{k: v for k, v in plot.items() if k != "title"}]}, "definition.plots[0].title: missing"),
                 ({"plots": ["x"]}, 'definition.plots[0]: value "x" must be an object'),
                 ({"plots": [plot], "reported": [{"id": [1], "source": "s", "text": "t"}]},
                  "definition.reported[0].id: value [1]")]
        for definition_doc, needle in cases:
            with self.subTest(needle=needle):
                path = folder([record("a", 0, 1.0)])
                with open(os.path.join(path, "meta.json"), "w") as f:
                    json.dump({"definition": definition_doc}, f)
                p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "analysis", "plot_experiment.py"), path],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
                self.assertIn(os.path.join(path, "meta.json") + ": " + needle, p.stderr)
                self.assertFalse(os.path.exists(os.path.join(path, "figures")))
        path = folder([])
        p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "analysis", "plot_experiment.py"), path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual((p.returncode, p.stderr.strip()), (2, "plot_experiment.py: %s: no run recorded (runs.jsonl "
                                                               "missing or empty, or none of meta.json's configs): "
                                                               "nothing to draw" % path))

if __name__ == "__main__":
    unittest.main()
