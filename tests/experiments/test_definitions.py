#!/usr/bin/python3
"""Every experiment definition parses, and the figure definitions expand to the configurations they state; an
empty sweep factor and a plot naming no metric are refused before any run."""
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "experiments"))

from runner import definition, execute, expr  # noqa: E402


def params(configs, *keys):
    """Sorted tuples of the given parameters of a list of configs."""
    return sorted(tuple(c.params.get(k) for k in keys) for c in configs)


class EveryDefinition(unittest.TestCase):
    def test_each_parses_and_expands(self):
        names = definition.all_names()
        self.assertGreaterEqual(len(names), 9, names)
        for name in names:
            with self.subTest(name=name):
                d = definition.load(name)
                full, skipped = d.expand(False)
                quick, _ = d.expand(True)
                self.assertTrue(full and quick)
                self.assertLessEqual(len(quick), len(full) + len(skipped))
                ids = [c.id for c in full]
                self.assertEqual(len(ids), len(set(ids)), "configuration ids must be unique")
                for c in full + quick:
                    cmd = execute.command(d, c, "tessera", "run.json")
                    self.assertIn("--algo", cmd)
                    if c.backend == "sim":
                        self.assertEqual(cmd[cmd.index("--machine") + 1], d.machine)
                for p in d.plots:
                    self.assertTrue(p.get("xlabel") is not None and p.get("ylabel"), "%s: axes need labels" % p["file"])

    def test_paper_figures_present(self):
        shown = ["%s %s" % (d.paper["id"], d.paper["figure"]) for d in map(definition.load, definition.all_names())]
        for want in ("000 Fig. 6", "000 Fig. 7", "000 Fig. 8", "001 Fig. 8", "001 Fig. 9", "001 Fig. 10", "001 Fig. 11",
                     "000 App. A.2"):
            self.assertTrue(any(s == want or s.startswith(want + "a") or s.startswith(want + " ") or s.startswith(want + ",")
                                for s in shown), "%s: no definition (have %s)" % (want, shown))


class CommittedReport(unittest.TestCase):
    def test_report_links_name_committed_results(self):
        """Every figure and results file experiments/REPRODUCTION.md links is in the repository: results/ is
        git-ignored, so a sweep's results must be added with `git add -f`; once one definition's were not, and the
        report showed a figure a clone did not have."""
        report = os.path.join(ROOT, "experiments", "REPRODUCTION.md")
        with open(report, encoding="utf-8") as f:
            links = sorted(set(re.findall(r"\]\((\.\./results/[^)#\s]+)\)", f.read())))
        self.assertTrue(links, "the report links no results")
        paths = [os.path.normpath(os.path.join(ROOT, "experiments", link)) for link in links]
        missing = [p for p in paths if not os.path.isfile(p)]
        self.assertEqual(missing, [], "linked from REPRODUCTION.md but absent")
        git = subprocess.run(["git", "-C", ROOT, "ls-files", "--", "results"], capture_output=True, text=True)
        if git.returncode != 0:
            self.skipTest("not a git checkout: presence checked only")
        tracked = {os.path.normpath(os.path.join(ROOT, line)) for line in git.stdout.splitlines()}
        self.assertEqual([p for p in paths if p not in tracked], [], "linked from REPRODUCTION.md but not committed "
                         "(results/ is ignored: git add -f)")

    def test_report_under_the_c_locale(self):
        """The definitions, results and report are UTF-8 whatever the locale: under LC_ALL=C without UTF-8 mode,
        Python's default encoding is ASCII, and the report once stopped at the first definition's '§'."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIOENCODING"))}
        env.update(LC_ALL="C", PYTHONUTF8="0")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "REPRODUCTION.md")
            p = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "experiment.py"), "report",
                                "--output", out], capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, encoding="utf-8") as f:
                self.assertIn("§", f.read())


class FigureSweeps(unittest.TestCase):
    def test_fig6_weak_scaling(self):
        d = definition.load("000-fig6-weak-gpu")
        full, skipped = d.expand(False)
        nodes = (1, 2, 4, 8, 16, 32, 64, 100)  # every point of the paper's, since 100 nodes simulate in minutes
        self.assertEqual(params(full, "algo", "qr_tree", "nodes"), [("cholesky", None, k) for k in nodes] +
                         [("qr", "binary", k) for k in nodes] + [("qr", "flat", k) for k in nodes])
        self.assertEqual(skipped, [])
        cholesky = execute.command(d, full[0], "tessera", "r.json")
        self.assertNotIn("--qr-tree", cholesky)  # null in the zipped factor: left out
        self.assertIn("--qr-tree binary", " ".join(execute.command(d, full[-1], "tessera", "r.json")))
        for c in full:
            self.assertEqual(c.params["n"], round(34560 * math.sqrt(c.params["nodes"])))
            pr, pc = map(int, c.params["grid"].split("x"))
            self.assertEqual(pr * pc, c.params["nodes"])
            self.assertLessEqual(pr, pc)
            self.assertEqual((c.params["gpus"], c.params["B"], c.params["s"], c.params["b"]), (3, 1152, 2, "auto"))
        self.assertEqual(params([c for c in full if c.params["nodes"] == 4], "grid"), [("2x2",)] * 3)
        self.assertEqual(params([c for c in full if c.params["nodes"] == 32], "grid"), [("4x8",)] * 3)
        cmd = execute.command(d, [c for c in full if c.params["nodes"] == 2][0], "tessera", "r.json")
        self.assertIn("--grid", cmd)
        self.assertNotIn("--nodes", cmd)  # the grid says how many

    def test_fig7_threads(self):
        full, _ = definition.load("000-fig7-weak-cpu").expand(False)
        for c in full:
            self.assertEqual(c.params["threads"], 12 if c.params["nodes"] == 1 else 11)
            self.assertNotIn("gpus", c.params)

    def test_001_fig8_points(self):
        full, _ = definition.load("001-fig8-weak-node").expand(False)
        self.assertEqual(len(full), 48)
        d = [c for c in full if c.params["algo"] == "cholesky" and c.params["precision"] == "d"]
        self.assertEqual(params(d, "threads", "gpus", "n")[-3:], [(9, 1, 20000), (9, 2, 25000), (9, 3, 34000)])
        s = [c for c in full if c.params["algo"] == "qr" and c.params["precision"] == "s"]
        self.assertEqual(params(s, "threads", "gpus", "n")[-3:], [(9, 1, 30000), (9, 2, 38000), (9, 3, 46000)])
        cpu = [c for c in full if c.params["gpus"] == 0][0]
        cmd = execute.command(definition.load("001-fig8-weak-node"), cpu, "tessera", "r.json")
        self.assertNotIn("--B", cmd)  # CPU-only points: tessera's default tiles
        gpu = [c for c in full if c.params["gpus"] == 3][0]
        self.assertEqual(gpu.params["B"], 1152)

    def test_001_fig9_points(self):
        full, _ = definition.load("001-fig9-strong").expand(False)
        self.assertEqual(len(full), 2 * 9 * 15)
        self.assertEqual(sorted({c.params["n"] for c in full if c.params["precision"] == "s"}),
                         [5760, 11520, 17280, 23040, 28800])
        self.assertEqual(sorted({(c.params["threads"], c.params["gpus"]) for c in full if c.params["step"] > 12}),
                         [(9, 3), (10, 2), (11, 1)])

    def test_fig11_sizes(self):
        full, _ = definition.load("001-fig11-imbalance").expand(False)
        self.assertEqual(len(full), 60)
        for c in full:
            self.assertEqual(c.params["n"], 1152 * c.params["gpus"] * c.params["tiles_per_gpu"])
            self.assertEqual(c.params["threads"], 3 * c.params["gpus"])

    def test_validation_sweeps(self):
        comm, _ = definition.load("validate-comm").expand(False)
        self.assertEqual(len(comm), 54)
        pred = definition.load("validate-prediction")
        full, _ = pred.expand(False)
        self.assertEqual(len(full), 2 * 24)
        self.assertEqual(sum(c.repeats for c in full), 24 * 3 + 24)  # real runs 3 times, simulations once
        native = [c for c in full if c.backend == "native"][0]
        self.assertNotIn("--machine", execute.command(pred, native, "tessera", "r.json"))


class Expressions(unittest.TestCase):
    def test_allowed(self):
        self.assertEqual(expr.evaluate("grid_of(nodes)", {"nodes": 8}), "2x4")
        self.assertEqual(expr.evaluate("grid_of(7)", {}), "1x7")
        self.assertEqual(expr.evaluate("a.b[1] if x > 1 else 0", {"a": {"b": [4, 5]}, "x": 2}), 5)
        self.assertEqual(expr.evaluate("'%dc+%dg' % (t, g)", {"t": 9, "g": 3}), "9c+3g")
        self.assertEqual(expr.evaluate("get(k, 'X', 0)", {"k": {}}), 0)

    def test_refused(self):
        for text in ("__import__('os')", "(lambda: 1)()", "[x for x in y]", "a._secret", "open('f')"):
            with self.subTest(text=text):
                with self.assertRaises(expr.ExprError):
                    expr.evaluate(text, {"a": {}, "y": []})
        with self.assertRaises(expr.ExprError):
            expr.evaluate("missing + 1", {})

    # Operations whose result would take minutes or gigabytes to make: each refused at once, naming the expression.
    HUGE = ("9 ** 9 ** 9", "10 ** 400", "(10 ** 300) * (10 ** 300)", "'x' * 10 ** 9", "[0] * 10 ** 9",
            "'%999999999d' % 1", "'%*d' % (10 ** 9, 1)", "round(5, -10 ** 9)", "grid_of(10 ** 18)",
            "sum([[0] * 1000] * 1000, [])")

    def test_bounded(self):
        # In a child process with a time limit: unbounded, the first of these would hang this test.
        code = ("import sys; sys.path.insert(0, %r)\nfrom runner import expr\nfor t in %r:\n"
                "    try:\n        expr.evaluate(t, {}); print('evaluated: ' + t)\n"
                "    except expr.ExprError as e:\n        print(e)\n") % (os.path.join(ROOT, "experiments"), self.HUGE)
        try:
            p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=20)
        except subprocess.TimeoutExpired:
            self.fail("an expression of %s took over 20 s" % (self.HUGE,))
        lines = p.stdout.strip().splitlines()
        self.assertEqual(len(lines), len(self.HUGE), p.stdout)
        # Each line a refusal (ExprError's message), not "evaluated: ...", which also names the expression.
        for text, line in zip(self.HUGE, lines):
            with self.subTest(text=text):
                self.assertFalse(line.startswith("evaluated: "), line)
                if text.startswith("grid_of"):  # names the value, the bound refused it
                    self.assertEqual(line, "grid_of(%d): nodes must be from 1 to %d" % (10 ** 18, expr.MAX_GRID_NODES))
                else:
                    self.assertTrue(line.startswith(repr(text) + " failed: "), line)
        self.assertEqual(expr.evaluate("2 ** 1023 // 2 ** 1022 + len('%5d' % 3)", {}), 7)

    def test_bounded_in_a_definition(self):
        """`tessera experiment run DEF --dry-run` with a derived "B": "9 ** 9 ** 9": exit 2 naming it, no hang."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "huge.json")
            with open(path, "w") as f:
                json.dump({"name": "huge", "title": "t", "paper": {"id": "t", "figure": "none"},
                           "machine": "platform/machines/local.json", "backend": "sim",
                           "fixed": {"algo": "cholesky", "n": 256}, "sweep": [{"threads": [1]}],
                           "derived": {"B": "9 ** 9 ** 9"}}, f)
            try:
                p = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "experiment.py"), "run", path,
                                    "--dry-run"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
            except subprocess.TimeoutExpired:
                self.fail("a dry run of derived B = 9 ** 9 ** 9 took over 30 s")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("derived.B", p.stderr)
        self.assertIn("9 ** 9 ** 9", p.stderr)


class ExpansionRules(unittest.TestCase):
    """How a definition becomes runs, on one made by hand: zipped lists pair up and factors cross; derived
    values follow the point; --quick takes its own fixed, derived and sweep values; a skip entry leaves out
    the full sweep's points that match every key it names."""

    DOC = {"name": "rules", "title": "t", "paper": {"id": "t", "figure": "none"},
           "machine": "platform/machines/local.json", "backend": "sim",
           "fixed": {"algo": "cholesky", "threads": 2},
           "sweep": [{"n": [1024, 2048], "B": [128, 256]}, {"nodes": [1, 4, 6]}],
           "derived": {"grid": "grid_of(nodes)", "s": "1"},
           "skip": [{"where": {"n": 2048, "nodes": 6}, "reason": "too large"}],
           "quick": {"fixed": {"threads": 1}, "derived": {"s": "2"}, "sweep": [{"n": [512], "B": [64]}, {"nodes": [4]}]}}

    def expand(self, quick):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rules.json")
            with open(path, "w") as f:
                json.dump(self.DOC, f)
            return definition.load(path).expand(quick)

    def test_full_sweep(self):
        full, skipped = self.expand(False)
        self.assertEqual(params(full, "n", "B", "nodes", "grid", "threads", "s"),
                         [(1024, 128, 1, "1x1", 2, 1), (1024, 128, 4, "2x2", 2, 1), (1024, 128, 6, "2x3", 2, 1),
                          (2048, 256, 1, "1x1", 2, 1), (2048, 256, 4, "2x2", 2, 1)])
        self.assertEqual([(c.params["n"], c.params["nodes"], why) for c, why in skipped], [(2048, 6, "too large")])

    def test_quick_sweep(self):
        quick, skipped = self.expand(True)
        self.assertEqual(params(quick, "n", "B", "nodes", "grid", "threads", "s"), [(512, 64, 4, "2x2", 1, 2)])
        self.assertEqual(skipped, [])

    def test_refused_before_any_run(self):
        # An empty factor crossed the sweep into no run at all (exit 0, "0 run(s) ok"); a breakdown's category or a
        # scatter pair naming no metric drew an empty figure.
        bd = {"file": "b", "kind": "breakdown", "title": "b", "categories": [{"label": "k", "metric": "nosuch"}]}
        sc = {"file": "s", "kind": "scatter", "title": "s", "pair": {"param": "nodes", "x": 1, "y": 4, "value": "x"}}
        for over, needle in (({"sweep": [{"n": [1024]}, {}]}, "sweep[1]: value {} must name at least one parameter"),
                             ({"plots": [bd]}, 'plots[0].categories[0].metric: value "nosuch"'),
                             ({"plots": [sc]}, 'plots[0].pair.value: value "x"')):
            with self.subTest(needle=needle), tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "rules.json")
                with open(path, "w") as f:
                    json.dump(dict(self.DOC, **over), f)
                with self.assertRaises(definition.DefinitionError) as e:
                    definition.load(path)
                self.assertIn(needle, str(e.exception))


if __name__ == "__main__":
    unittest.main(verbosity=1)
