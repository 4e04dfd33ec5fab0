#!/usr/bin/python3
"""What the figure kinds draw (analysis/figure_kinds.py), read back from the axes.

The quick sweeps' test (check_quick.py) only sees that each PNG exists and is
not empty; a bar drawn beside its category or a stacked segment starting at
the wrong height would pass it. Here a results folder made by hand, so every
number is known, is drawn by each kind and the artists are read back:
grouped bars centred on their category with the paper's marker over its own
series' bar, stacked shares that sum to the bar's top, lines sorted by x and
broken at a failed run. A point whose runs failed or whose metric failed is
shown as such by every kind: a red cross (lines, bars), an empty hatched bar
(breakdown), a red note (scatter, which also counts the values <= 0 its log
axes cannot show).
"""
import json
import math
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "analysis"))

import figure_kinds  # noqa: E402
from experiment_results import Results  # noqa: E402


# The results folders made by hand, in one folder removed at exit (TemporaryDirectory's finalizer).
TMP = tempfile.TemporaryDirectory(prefix="tessera-figure-kinds-")


def run(cid, params, result=None, status="ok", metric_errors=None):
    r = {"config_id": cid, "repeat": 0, "params": params, "status": status, "metrics": {}}
    if metric_errors:
        r["metric_errors"] = metric_errors
    if status == "ok":
        r["result"] = result
    else:
        r["stderr"] = "tessera: error: GPU out of memory"
        r["exit_status"] = 4
    return r


def results(runs):
    folder = tempfile.mkdtemp(prefix="figure-kinds-", dir=TMP.name)
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump({"definition": {"plots": []}}, f)
    with open(os.path.join(folder, "runs.jsonl"), "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    return Results(folder)


def rectangles(fig):
    """(x centre, bottom, height) of every bar, in drawing order."""
    ax = fig.axes[0]
    return [(round(p.get_x() + p.get_width() / 2, 9), round(p.get_y(), 9), round(p.get_height(), 9))
            for p in ax.patches]


class Bars(unittest.TestCase):
    def test_grouped_bars_are_centred_on_their_category(self):
        # Two series (cholesky, qr) over two node counts: width 0.4 each, centres at category -0.2 and +0.2.
        res = results([run("c1", {"algo": "cholesky", "nodes": 1}, {"gflops": 10.0}),
                       run("c4", {"algo": "cholesky", "nodes": 4}, {"gflops": 40.0}),
                       run("q1", {"algo": "qr", "nodes": 1}, {"gflops": 8.0}),
                       run("q4", {"algo": "qr", "nodes": 4}, {"gflops": 30.0})])
        spec = {"title": "t", "file": "f", "x": "nodes", "y": "gflops", "series": ["algo"]}
        paper = [{"plot": "f", "value": 33.0, "source": "000 Fig. 6, text", "where": {"algo": "qr", "nodes": 4}}]
        fig = figure_kinds.bars(res, spec, paper)
        self.assertEqual(rectangles(fig), [(-0.2, 0.0, 10.0), (0.8, 0.0, 40.0), (0.2, 0.0, 8.0), (1.2, 0.0, 30.0)])
        self.assertEqual([t.get_text() for t in fig.axes[0].get_xticklabels()], ["1", "4"])
        marker = [ln for ln in fig.axes[0].lines if ln.get_label() == "paper (000 Fig. 6)"]
        self.assertEqual(len(marker), 1)
        self.assertEqual((round(marker[0].get_xdata()[0], 9), marker[0].get_ydata()[0]), (1.2, 33.0),
                         "the paper's QR value stands over the QR bar")

    def test_one_series_sits_on_its_tick(self):
        res = results([run("a", {"nodes": 1}, {"gflops": 5.0}), run("b", {"nodes": 2}, {"gflops": 9.0})])
        fig = figure_kinds.bars(res, {"title": "t", "file": "f", "x": "nodes", "y": "gflops"}, [])
        self.assertEqual(rectangles(fig), [(0.0, 0.0, 5.0), (1.0, 0.0, 9.0)])


class Breakdown(unittest.TestCase):
    def test_shares_stack_to_the_bars_top(self):
        # Shares 50 / 30 / 20 stack at 0, 50 and 80 and reach 100; the paper's bar (hatched) the same way.
        cats = [{"label": "kernels", "metric": "k"}, {"label": "copies", "metric": "c"},
                {"label": "idle", "metric": "i"}]
        res = results([run("a", {"gpus": 1}, {"k": 50.0, "c": 30.0, "i": 20.0})])
        paper = [{"plot": "f", "metric": m, "value": v, "source": "001 Fig. 10"}
                 for m, v in (("k", 70.0), ("c", 20.0), ("i", 10.0))]
        spec = {"title": "t", "file": "f", "categories": cats}
        fig = figure_kinds.breakdown(res, spec, paper)
        self.assertEqual(rectangles(fig), [(0.0, 0.0, 50.0), (0.0, 50.0, 30.0), (0.0, 80.0, 20.0),
                                           (1.0, 0.0, 70.0), (1.0, 70.0, 20.0), (1.0, 90.0, 10.0)])
        self.assertEqual([t.get_text() for t in fig.axes[0].get_xticklabels()], ["tessera", "paper (001 Fig. 10)"])


    def test_failed_points_are_empty_hatched_bars(self):
        # A failed run and a metric that failed each get a bar of their own saying why, not nothing.
        cats = [{"label": "kernels", "metric": "k"}, {"label": "idle", "metric": "i"}]
        res = results([run("a", {"gpus": 1}, {"k": 60.0, "i": 40.0}), run("b", {"gpus": 2}, status="failed"),
                       run("c", {"gpus": 3}, {"i": 10.0}, metric_errors={"k": "no item with worker = 'gpu1'"})])
        fig = figure_kinds.breakdown(res, {"title": "t", "file": "f", "categories": cats, "series": ["gpus"]}, [])
        ax = fig.axes[0]
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()],
                         ["tessera gpus=1", "tessera gpus=2", "tessera gpus=3"])
        self.assertEqual(rectangles(fig), [(0.0, 0.0, 60.0), (0.0, 60.0, 40.0), (1.0, 0.0, 100.0), (2.0, 0.0, 100.0)])
        self.assertEqual([p.get_hatch() for p in ax.patches][2:], ["xx", "xx"])
        self.assertEqual([t.get_text() for t in ax.texts if t.get_color() == "red"],
                         ["run failed (exit 4)", "metric k failed"])
        self.assertIn("kernels", [t.get_text() for t in ax.get_legend().get_texts()])


class Scatter(unittest.TestCase):
    def test_failed_and_nonpositive_points_are_named(self):
        res = results([run("a", {"n": 1}, {"x": 1.0, "y": 1.1}), run("b", {"n": 2}, {"x": 0.0, "y": 2.0}),
                       run("c", {"n": 3}, status="failed"),
                       run("d", {"n": 4}, {"x": 2.0}, metric_errors={"y": "division by zero"})])
        fig = figure_kinds.scatter(res, {"title": "t", "file": "f", "x": "x", "y": "y"}, [])
        ax = fig.axes[0]
        (note,) = [t.get_text() for t in ax.texts]
        self.assertIn("not drawn, 2 point(s): n=3 (run failed (exit 4)); n=4 (metric y failed)", note)
        self.assertIn("1 point(s) with a value <= 0", note)
        ours = [ln for ln in ax.lines if ln.get_label() == "tessera"]
        self.assertEqual(list(ours[0].get_xdata()), [1.0])


class Lines(unittest.TestCase):
    def test_a_failed_metric_is_a_red_cross(self):
        res = results([run("a", {"nodes": 1}, {"gflops": 10.0}),
                       run("b", {"nodes": 2}, {}, metric_errors={"gflops": "division by zero"})])
        fig = figure_kinds.lines(res, {"title": "t", "file": "f", "x": "nodes", "y": "gflops"}, [])
        (cross,) = [ln for ln in fig.axes[0].lines if ln.get_label() == "metric gflops failed"]
        self.assertEqual(list(cross.get_xdata()), [2])

    def test_sorted_by_x_and_broken_at_a_failed_run(self):
        res = results([run("c", {"nodes": 16}, {"gflops": 90.0}), run("a", {"nodes": 1}, {"gflops": 10.0}),
                       run("b", {"nodes": 4}, status="failed"), run("d", {"nodes": 2}, {"gflops": 19.0})])
        fig = figure_kinds.lines(res, {"title": "t", "file": "f", "x": "nodes", "y": "gflops"}, [])
        ours = [ln for ln in fig.axes[0].lines if ln.get_label() == "tessera"]
        self.assertEqual(len(ours), 1)
        self.assertEqual(list(ours[0].get_xdata()), [1, 2, 4, 16])
        ys = list(ours[0].get_ydata())
        self.assertEqual((ys[0], ys[1], ys[3]), (10.0, 19.0, 90.0))
        self.assertTrue(math.isnan(ys[2]), "no segment across the failed run")


class QuickSweep(unittest.TestCase):
    """A quick sweep's figure names what it ran: 000-fig6-weak-gpu's x label says N = 34,560 x sqrt(nodes), its quick
    sweep runs N = 11,520 x sqrt(nodes)."""

    def test_title_names_the_quick_sections_parameters(self):
        sys.path.insert(0, os.path.join(ROOT, "analysis"))
        import plot_experiment
        with open(os.path.join(ROOT, "experiments", "definitions", "000-fig6-weak-gpu.json"), encoding="utf-8") as f:
            doc = json.load(f)
        spec = doc["plots"][0]
        self.assertIs(plot_experiment.shown_spec(spec, {"quick": False, "definition": doc}), spec)
        quick = plot_experiment.shown_spec(spec, {"quick": True, "definition": doc})
        self.assertEqual(quick["title"], spec["title"] + " [quick sweep: n = %s]" % doc["quick"]["derived"]["n"])
        self.assertIn("11520", quick["title"])
        self.assertEqual(quick["xlabel"], spec["xlabel"])


if __name__ == "__main__":
    unittest.main()
