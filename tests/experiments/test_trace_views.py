#!/usr/bin/python3
"""Trace views: the Gantt chart (PNG) and the real-versus-simulated comparison of two traces.

The Gantt chart's lanes (one block per node) and window (bars crossing its
edges kept; one that misses the trace refused) are checked on a two-node
trace made by hand, and a trace of more lanes than one chart can hold is
refused with one line. The analysis scripts (and lu_002_sim.py) find their
sibling modules under PYTHONSAFEPATH=1, which leaves the script's folder off
sys.path. A gzipped trace (results/gpu-node/'s) is read as it is, a cut one
refused by name. An earlier run's node files beside a later run's trace are
refused (two runs' summary lines), not summed with it.

    test_trace_views.py TESSERA_BINARY WORK_DIR
"""
import json
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ANALYSIS = os.path.join(ROOT, "analysis")
sys.path.insert(0, ANALYSIS)
import trace_devices  # noqa: E402
import trace_gantt  # noqa: E402
import trace_summary  # noqa: E402

TESSERA = WORK = None


def tessera_run(trace, *extra):
    args = [TESSERA, "run", "--algo", "qr", "--n", "768", "--B", "128", "--threads", "2", "--trace", trace] + list(extra)
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def script(name, *args):
    p = subprocess.run(["/usr/bin/python3", os.path.join(ANALYSIS, name)] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


class TraceViews(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.real = os.path.join(WORK, "real.json")
        cls.sim = os.path.join(WORK, "sim.json")
        cls.gpu = os.path.join(WORK, "gpu.json")
        tessera_run(cls.real)
        tessera_run(cls.sim, "--backend", "sim", "--machine", "platform/machines/local.json")
        subprocess.run([TESSERA, "run", "--algo", "cholesky", "--n", "4608", "--B", "1152", "--s", "2", "--b", "auto",
                        "--gpus", "3", "--threads", "9", "--backend", "sim", "--machine",
                        "platform/machines/keeneland.json", "--trace", cls.gpu], check=True, stdout=subprocess.DEVNULL,
                       cwd=ROOT)

    def test_gantt_png(self):
        out = os.path.join(WORK, "gantt.png")
        rc, stdout, err = script("trace_gantt.py", self.gpu, "--out", out)
        self.assertEqual(rc, 0, err)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(out), 5000)
        with open(self.gpu) as f:
            tasks = sum(1 for e in json.load(f)["traceEvents"] if e.get("ph") == "X")
        self.assertIn("%d bars" % tasks, stdout)

    def test_compare_same_configuration(self):
        rc, stdout, err = script("trace_compare.py", self.real, self.sim, "--json")
        self.assertEqual(rc, 0, err)
        c = json.loads(stdout)
        self.assertTrue(c["same_tasks"])
        names = {k["kernel"] for k in c["kernels"]}
        self.assertEqual(names, {"GEQRT", "LARFB", "TSQRT", "SSRFB"})
        for k in c["kernels"]:
            self.assertEqual(k["a"]["count"], k["b"]["count"])
            self.assertAlmostEqual(k["b"]["total_us"], k["b"]["mean_us"] * k["b"]["count"], delta=1e-6 * k["b"]["total_us"])
            self.assertGreater(k["mean_ratio"], 0)
        self.assertEqual(sorted(w["worker"] for w in c["workers"]), ["cpu0", "cpu1"])
        rc, text, _ = script("trace_compare.py", self.real, self.sim)
        self.assertIn("SSRFB", text)
        self.assertIn("idle A s", text)

    def test_compare_different_configurations(self):
        rc, stdout, _ = script("trace_compare.py", self.real, self.gpu)
        self.assertEqual(rc, 1)
        self.assertIn("not the same configuration", stdout)

    def test_device_breakdown_adds_up(self):
        rows = trace_devices.breakdown([self.gpu])
        gpus = [r for r in rows if r["worker"].startswith("gpu")]
        self.assertEqual([r["worker"] for r in gpus], ["gpu1", "gpu2", "gpu3"])
        for r in rows:
            total = r["kernel_s"] + r["transfer_exposed_s"] + r["idle_s"]
            self.assertAlmostEqual(total, r["makespan_s"], delta=1e-9 + 1e-6 * r["makespan_s"])
            self.assertLessEqual(r["transfer_exposed_s"], r["transfer_total_s"] + 1e-12)
        self.assertTrue(any(r["transfer_total_s"] > 0 for r in gpus))

    def test_interval_arithmetic(self):
        a = trace_devices.union([(0, 2), (1, 3), (5, 6)])
        self.assertEqual(a, [[0, 3], [5, 6]])
        self.assertEqual(trace_devices.subtract(a, [[1, 2], [5.5, 7]]), [[0, 1], [2, 3], [5, 5.5]])
        self.assertEqual(trace_devices.length(a), 4)
        # An interval inside the one before it (a short copy during a long one) adds nothing, takes nothing.
        self.assertEqual(trace_devices.union([(0, 10), (1, 3), (2, 12), (20, 21), (20.5, 20.7)]), [[0, 12], [20, 21]])


class GanttHandMade(unittest.TestCase):
    """trace_gantt.py's lanes and window on a two-node trace made by hand (no tessera run)."""

    @classmethod
    def setUpClass(cls):
        def task(name, pid, ts, dur):
            return {"name": name, "cat": "task", "ph": "X", "pid": pid, "tid": 0, "ts": ts, "dur": dur,
                    "args": {"tiles": [{"i": 0, "j": 0, "mode": "rw"}]}}
        cls.events = [{"ph": "M", "pid": p, "tid": 0, "name": "thread_name", "args": {"name": "cpu0"}}
                      for p in (0, 1)]
        # Node 0's cpu0: A 0-10 us, B 10-15 us; node 1's cpu0: C 20-30 us.
        cls.events += [task("A", 0, 0.0, 10.0), task("B", 0, 10.0, 5.0), task("C", 1, 20.0, 10.0)]
        cls.trace = os.path.join(WORK, "two_nodes.json")
        with open(cls.trace, "w") as f:
            json.dump({"otherData": {"format": "tessera-trace", "version": 1, "run": "two nodes"},
                       "traceEvents": cls.events}, f)

    def test_each_node_has_its_lanes(self):
        # Both nodes name their thread 0 cpu0, but they are two workers: one lane each, keyed by node first, node 0's
        # block before node 1's, each holding only its own node's bars.
        order, bars = trace_gantt.lanes(self.events)
        self.assertEqual(order, [(0, "cpu0", 0), (1, "cpu0", 0)])
        self.assertEqual([[n for _, _, n in bars[k]] for k in order], [["A", "B"], ["C"]])

    def test_window_keeps_bars_crossing_its_edges(self):
        # A window shows every bar that overlaps it: from 12 us, B (10-15 us, running at 12) stays and only A
        # (ended at 10) goes; up to 25 us, C (20-30 us) stays as well. Times count from the first event (A's, 0).
        out = os.path.join(WORK, "window.png")
        self.assertEqual(trace_gantt.draw([self.trace], out), 3)
        self.assertEqual(trace_gantt.draw([self.trace], out, 12e-6), 2)
        self.assertEqual(trace_gantt.draw([self.trace], out, 12e-6, 25e-6), 2)
        self.assertEqual(trace_gantt.draw([self.trace], out, None, 12e-6), 2)  # A, B
        # A window after the trace's end (or wholly before its start) drew an empty chart: now refused.
        with self.assertRaises(trace_summary.TraceError) as e:
            trace_gantt.draw([self.trace], out, 5, 6)
        self.assertIn("--from 5 --to 6: the window misses the trace, which lasts 3e-05 s", str(e.exception))

    def test_too_many_lanes_refused(self):
        # 2,001 workers: the figure would pass Matplotlib's largest image (2**16 pixels) and end in a traceback.
        events = [{"name": "K", "cat": "task", "ph": "X", "pid": 0, "tid": t, "ts": 0.0, "dur": 1.0, "args": {}}
                  for t in range(trace_gantt.MAX_LANES + 1)]
        wide = os.path.join(WORK, "wide.json")
        with open(wide, "w") as f:
            json.dump({"otherData": {"format": "tessera-trace", "version": 1}, "traceEvents": events}, f)
        out = os.path.join(WORK, "wide.png")
        p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "analysis", "trace_gantt.py"), wide, "--out", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr, "trace_gantt.py: %s: 2001 lanes (workers, copy streams and message lanes of 1 "
                                   "node(s)): too many for one chart (at most 2000); give fewer node files at a time\n"
                         % wide)
        self.assertFalse(os.path.exists(out))


class Gzipped(unittest.TestCase):
    def test_committed_gzipped_trace_read_as_it_is(self):
        # "binary data, not a tessera trace" before, though results/gpu-node/ keeps its traces gzipped.
        path = os.path.join(ROOT, "results", "gpu-node", "2026-11-25-h200", "runs", "cholesky_s.trace.json.gz")
        info, events = trace_summary.load(path)
        self.assertEqual(info["format"], "tessera-trace")
        self.assertEqual(sum(1 for e in events if e.get("ph") == "X" and e.get("cat") == "task"), 816)
        rc, out, err = script("trace_summary.py", path)
        self.assertEqual(rc, 0, err)
        self.assertIn("tasks: 816", out)
        with open(path, "rb") as f:
            cut = os.path.join(WORK, "cut.json.gz")
            with open(cut, "wb") as g:
                g.write(f.read()[:200])
        with self.assertRaisesRegex(trace_summary.TraceError, "cut.json.gz: gzip data that does not unpack"):
            trace_summary.load(cut)


class SummaryOrder(unittest.TestCase):
    def test_the_files_order_changes_no_line(self):
        # The transfer table followed the order in which the files' kinds first came, and equal kernel totals the
        # order of their first event: the same traces given in another order printed other text.
        import io

        def text(transfers, kernels):
            s = {"backend": "sim", "run": "", "tasks": 2, "makespan_us": 10.0, "workers": {},
                 "kernels": dict(kernels), "transfers": dict(transfers)}
            out = io.StringIO()
            trace_summary.print_text(s, out)
            return out.getvalue()
        node = ("node", {"count": 1, "total_us": 5.0, "bytes": 8})
        h2d = ("h2d", {"count": 2, "total_us": 3.0, "bytes": 16})
        a, b = ("A", {"count": 1, "total_us": 4.0}), ("B", {"count": 1, "total_us": 4.0})
        self.assertEqual(text([node, h2d], [a, b]), text([h2d, node], [b, a]))


class TwoRunsNodeFiles(unittest.TestCase):
    def test_an_earlier_runs_node_files_are_refused(self):
        # A --grid 2x2 run, then a --grid 1x2 run to the same --trace: t.node2.json and t.node3.json are the first
        # run's, and `t.json t.node*.json` summed both runs (exit 0). Every node's otherData holds its run's summary
        # line: the analysis scripts refuse files whose lines differ, naming both files.
        folder = os.path.join(WORK, "two_runs")
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            os.remove(os.path.join(folder, name))
        t = os.path.join(folder, "t.json")
        for grid in ("2x2", "1x2"):
            subprocess.run([TESSERA, "run", "--backend", "sim", "--machine", "platform/machines/keeneland.json", "--algo",
                            "cholesky", "--n", "1000", "--B", "250", "--threads", "2", "--grid", grid, "--trace", t],
                           check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        nodes = [os.path.join(folder, "t.node%d.json" % k) for k in (1, 2, 3)]
        self.assertTrue(all(os.path.isfile(p) for p in nodes))
        png = os.path.join(folder, "g.png")
        for name, args in (("trace_summary.py", [t] + nodes), ("trace_critical_path.py", [t] + nodes),
                           ("trace_devices.py", [t] + nodes), ("trace_gantt.py", [t] + nodes + ["--out", png]),
                           ("trace_compare.py", [",".join([t] + nodes), t])):
            with self.subTest(script=name):
                rc, stdout, err = script(name, *args)
                self.assertEqual((rc, stdout), (2, ""), err)
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertIn("%s (otherData.run " % t, err)
                self.assertIn(") and %s (" % nodes[1], err)
                self.assertIn("grid=2x2", err)
                self.assertIn("are traces of two runs", err)
        self.assertFalse(os.path.exists(png))
        rc, stdout, err = script("trace_summary.py", t, nodes[0])  # the second run's own files
        self.assertEqual(rc, 0, err)
        self.assertIn("grid=1x2", stdout)


class SafePath(unittest.TestCase):
    def test_scripts_find_their_siblings(self):
        # Each inserts its own folder (and experiments/ where it uses the runner): a ModuleNotFoundError before.
        scripts = ["analysis/" + n for n in ("trace_compare.py", "trace_critical_path.py", "trace_devices.py",
                                              "trace_gantt.py", "figure_kinds.py", "plot_experiment.py",
                                              "trace_summary.py", "gpu_clocks.py")] + ["experiments/lu_002_sim.py"]
        for name in scripts:
            with self.subTest(script=name):
                p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, name), "--help"], capture_output=True,
                                   text=True, cwd="/", env=dict(os.environ, PYTHONSAFEPATH="1"))
                self.assertEqual((p.returncode, p.stderr), (0, ""))


if __name__ == "__main__":
    TESSERA, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=sys.argv[:1] + sys.argv[3:], verbosity=1)  # then test names, if any
