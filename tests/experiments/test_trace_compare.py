#!/usr/bin/python3
"""The critical path of a trace (analysis/trace_critical_path.py) and trace_compare.py's JSON and figure.

Hand-made event lists with a known DAG check the rebuilt dependencies and the
longest path (tiles without a mode read and written, a zero-length writer
ordered before the reader that starts as it ends, zero-length tasks of one
instant giving the same path whatever the file's order, each node's makespan
from its own first task); the per-kernel quartiles stay within the calls'
durations, a ratio of 0 is printed as 0, a node given twice and a --figure
format Matplotlib does not write are refused, and a reader that goes (| head)
ends the scripts quietly; then a real and a simulated Cholesky (N=512) go
through trace_compare.py --json FILE --figure FILE.png.

    test_trace_compare.py TESSERA_BINARY WORK_DIR
"""
import json
import os
import shutil
import random
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ANALYSIS = os.path.join(ROOT, "analysis")
sys.path.insert(0, ANALYSIS)
import trace_compare  # noqa: E402
import trace_critical_path as tcp  # noqa: E402
import trace_summary  # noqa: E402

TESSERA = WORK = None


def task(name, ts, dur, tiles, pid=0, tid=0):
    """A task event as the trace writes it; tiles: [(i, j, mode)]."""
    return {"name": name, "cat": "task", "ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": {"k": 0, "i": 0, "j": 0, "tiles": [{"i": i, "j": j, "mode": m} for i, j, m in tiles]}}


def diamond():
    """W1 writes X; R1 (long) and R2 read X; W2 overwrites X (write-after-read on both); T reads X.

    Critical path W1 -> R1 -> W2 -> T = 1 + 50 + 1 + 30 = 82 us. Without the
    write-after-read edges it would be W1 -> R1 = 51 us.
    """
    return [task("W1", 0, 1, [(0, 0, "rw")]),
            task("R1", 1, 50, [(0, 0, "r"), (1, 0, "rw")], tid=0),
            task("R2", 1, 5, [(0, 0, "r"), (2, 0, "rw")], tid=1),
            task("W2", 51, 1, [(0, 0, "w")]),
            task("T", 52, 30, [(0, 0, "r"), (3, 0, "rw")])]


class CriticalPath(unittest.TestCase):
    def test_chain_and_independent_task(self):
        # A -> B (B reads A's tile): 10 + 20 = 30 us; C alone is 25 us.
        events = [task("A", 0, 10, [(0, 0, "rw")]),
                  task("C", 0, 25, [(5, 5, "rw")], tid=1),
                  task("B", 10, 20, [(0, 0, "r"), (1, 0, "rw")])]
        c = tcp.critical_path(events)
        self.assertAlmostEqual(c["critical_path_s"], 30e-6, delta=1e-12)
        self.assertEqual(c["tasks"], 2)
        self.assertEqual(c["kernels"], {"A": 1, "B": 1})
        self.assertAlmostEqual(c["makespan_s"], 30e-6, delta=1e-12)
        self.assertAlmostEqual(c["ratio"], 1.0)

    def test_independent_task_longer_than_chain(self):
        events = [task("A", 0, 10, [(0, 0, "rw")]), task("B", 10, 20, [(0, 0, "r"), (1, 0, "rw")]),
                  task("C", 0, 45, [(5, 5, "rw")], tid=1)]
        c = tcp.critical_path(events)
        self.assertAlmostEqual(c["critical_path_s"], 45e-6, delta=1e-12)
        self.assertEqual(c["tasks"], 1)

    def test_diamond_write_after_read(self):
        events = diamond()
        order = sorted(tcp.task_events(events), key=lambda e: e["ts"])
        preds = tcp.predecessors(order)
        names = [e["name"] for e in order]
        self.assertEqual(sorted(names[p] for p in preds[names.index("W2")]), ["R1", "R2", "W1"])
        self.assertEqual([names[p] for p in preds[names.index("T")]], ["W2"])
        c = tcp.critical_path(events)
        self.assertAlmostEqual(c["critical_path_s"], 82e-6, delta=1e-12)
        self.assertEqual(c["tasks"], 4)
        self.assertEqual(c["kernels"], {"W1": 1, "R1": 1, "W2": 1, "T": 1})

    def test_readers_do_not_depend_on_each_other(self):
        # Two readers of one tile, then nothing writes it: the path is the writer and the longer reader.
        events = [task("W", 0, 3, [(0, 0, "rw")]), task("R1", 3, 7, [(0, 0, "r")]),
                  task("R2", 10, 4, [(0, 0, "r")])]
        c = tcp.critical_path(events)
        self.assertAlmostEqual(c["critical_path_s"], 10e-6, delta=1e-12)
        self.assertEqual(c["tasks"], 2)

    def test_nodes_are_separate_dags(self):
        # The same tile on two nodes is two data: node 1's path (40 us) is the longest, not 10 + 40.
        events = [task("A", 0, 10, [(0, 0, "rw")], pid=0), task("B", 10, 40, [(0, 0, "rw")], pid=1)]
        c = tcp.critical_path(events)
        self.assertAlmostEqual(c["critical_path_s"], 40e-6, delta=1e-12)
        self.assertEqual((c["node"], c["tasks"]), (1, 1))
        self.assertEqual([n["node"] for n in c["nodes"]], [0, 1])
        self.assertAlmostEqual(c["makespan_s"], 50e-6, delta=1e-12)

    def test_tile_without_mode_is_read_write(self):
        # A tile listed without "mode" is read and written (the default accesses() and the docstring give), so B,
        # on A's tile, waits for A: 10 + 20 = 30 us over 2 tasks. Were it read-only, B would not depend on A (20 us).
        events = [task("A", 0, 10, []), task("B", 10, 20, [])]
        events[0]["args"]["tiles"] = [{"i": 0, "j": 0}]
        events[1]["args"]["tiles"] = [{"i": 0, "j": 0}]
        c = tcp.critical_path(events)
        self.assertAlmostEqual(c["critical_path_s"], 30e-6, delta=1e-12)
        self.assertEqual((c["tasks"], c["kernels"]), (2, {"A": 1, "B": 1}))

    def test_zero_length_writer_before_reader_starting_with_it(self):
        # W takes 0 s (a simulated LU's row move can) and R starts when W ends, both at 10 us: W's write must come
        # first in the order (ties by end time), so R reads W's version: P -> W -> R, 3 tasks, 15 us. Ordered
        # longest first, R would precede W (R -> W a write-after-read edge) and the path be P -> R, 2 tasks.
        events = [task("P", 0, 10, [(0, 0, "rw")]), task("R", 10, 5, [(0, 0, "r"), (1, 0, "rw")]),
                  task("W", 10, 0, [(0, 0, "rw")], tid=1)]
        c = tcp.critical_path(events)
        self.assertAlmostEqual(c["critical_path_s"], 15e-6, delta=1e-12)
        self.assertEqual((c["tasks"], c["kernels"]), (3, {"P": 1, "W": 1, "R": 1}))

    def test_node_makespan_from_its_first_task(self):
        # Node 0 runs 100..140 us, node 1 200..210 us: each node's makespan is from its own first task's start
        # (40 and 10 us, each node's path fills it: ratio 1), as the trace's is from the first start (110 us).
        events = [task("A", 100, 10, [(0, 0, "rw")]), task("B", 110, 30, [(0, 0, "rw")]),
                  task("C", 200, 10, [(0, 0, "rw")], pid=1)]
        c = tcp.critical_path(events)
        self.assertAlmostEqual(c["makespan_s"], 110e-6, delta=1e-12)
        self.assertEqual([n["node"] for n in c["nodes"]], [0, 1])
        for n, span in zip(c["nodes"], (40e-6, 10e-6)):
            self.assertAlmostEqual(n["makespan_s"], span, delta=1e-12)
            self.assertAlmostEqual(n["ratio"], 1.0)

    def test_zero_length_ties_do_not_follow_the_files_order(self):
        # PIVOTS and SWAP take no time at PANEL's end, SWAP reading what PIVOTS writes; GEMM then starts there too.
        # Listed SWAP first, the path was GEMM alone (100 us, 1 task): now PANEL, PIVOTS, SWAP, GEMM in any order.
        events = [task("PANEL", 0, 100, [(0, 0, "rw")]),
                  dict(task("PIVOTS", 100, 0, [(0, 0, "r")]), args={"tiles": [{"i": 0, "j": 0, "mode": "r"},
                                                                               {"panel": 1, "mode": "w"}]}),
                  dict(task("SWAP", 100, 0, [(1, 1, "rw")]), args={"tiles": [{"panel": 1, "mode": "r"},
                                                                             {"i": 1, "j": 1, "mode": "rw"}]}),
                  task("GEMM", 100, 50, [(1, 1, "rw")])]
        rng = random.Random(7)
        for n in range(12):
            order = events[::-1] if n == 0 else rng.sample(events, len(events))
            c = tcp.critical_path(order)
            self.assertEqual((round(c["critical_path_s"] * 1e6, 6), c["tasks"]), (150.0, 4), [e["name"] for e in order])

    def test_empty_trace(self):
        c = tcp.critical_path([{"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "node 0"}}])
        self.assertEqual((c["critical_path_s"], c["tasks"], c["ratio"]), (0.0, 0, None))


def transfer(kind, ts, dur, nbytes):
    return {"name": "copy", "cat": "transfer", "ph": "X", "pid": 0, "tid": 9, "ts": ts, "dur": dur,
            "args": {"kind": kind, "bytes": nbytes}}


def write_trace(name, events):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        json.dump({"otherData": {"format": "tessera-trace", "version": 1, "run": name}, "traceEvents": events}, f)
    return path


class Numbers(unittest.TestCase):
    """trace_summary's and trace_compare's numbers on hand-made traces, where each is known."""

    def test_summary(self):
        # Tasks from 100 to 140 us: the makespan is 40 us (not 140), each worker busy 20 of them;
        # two host-to-device copies of 100 and 300 bytes.
        events = [task("A", 100, 10, [], tid=0), task("B", 105, 20, [], tid=1), task("C", 130, 10, [], tid=0),
                  transfer("h2d", 100, 4, 100), transfer("h2d", 110, 6, 300), transfer("d2h", 120, 1, 50)]
        s = trace_summary.summarize({"backend": "native"}, events)
        self.assertEqual((s["tasks"], s["makespan_us"]), (3, 40))
        self.assertEqual([(w["count"], w["busy_us"], w["busy_fraction"]) for w in s["workers"].values()],
                         [(2, 20.0, 0.5), (1, 20.0, 0.5)])
        self.assertEqual(s["transfers"]["h2d"], {"count": 2, "total_us": 10.0, "bytes": 400})
        self.assertEqual(s["transfers"]["d2h"]["bytes"], 50)

    def test_transfers_without_tasks(self):
        # A trace of copies and messages alone kept neither its transfer table nor its run line.
        s = trace_summary.summarize({"backend": "sim", "run": "r"}, [transfer("node", 0, 5, 4096)])
        self.assertEqual((s["tasks"], s["run"], s["transfers"]["node"]), (0, "r", {"count": 1, "total_us": 5, "bytes": 4096}))

    def test_kernel_statistics(self):
        # Durations 10, 20, 30, 40 us: mean 25; quartiles 17.5 and 32.5 (statistics.quantiles, inclusive), spread 15.
        k = trace_compare.kernel_stats([task("K", 0, d, []) for d in (40, 10, 30, 20)])["K"]
        self.assertEqual((k["count"], k["mean_us"], k["total_us"]), (4, 25.0, 100))
        self.assertEqual((k["q1_us"], k["q3_us"], k["spread_us"]), (17.5, 32.5, 15.0))
        # Two calls, 8 and 116 us: the exclusive method put q1 at -19 us; the quartiles stay between the calls.
        k = trace_compare.kernel_stats([task("K", 0, d, []) for d in (116, 8)])["K"]
        self.assertEqual((k["q1_us"], k["q3_us"]), (35.0, 89.0))

    def test_a_ratio_of_zero_is_printed(self):
        a = write_trace("zero_a.json", [task("SWAP", 0, 10, [])])
        b = write_trace("zero_b.json", [task("SWAP", 0, 0, [])])
        c = trace_compare.compare([a], [b])
        self.assertEqual((c["kernels"][0]["mean_ratio"], c["kernels"][0]["total_ratio"]), (0.0, 0.0))
        out = subprocess.run(["/usr/bin/python3", os.path.join(ANALYSIS, "trace_compare.py"), a, b],
                             stdout=subprocess.PIPE, text=True).stdout
        (row,) = [line for line in out.splitlines() if line.startswith("SWAP")]
        self.assertEqual(row.split()[-2:], ["0.000", "0.000"])

    def test_a_node_given_twice_is_refused(self):
        a = write_trace("twice.json", [task("K", 0, 10, [])])
        b = os.path.join(WORK, "twice_copy.json")  # a copy: the same run's summary line
        shutil.copyfile(a, b)
        for paths, needle in (([a, a], "(the same file twice)"), ([a, b], "(two runs' files, or one run's file twice)")):
            with self.assertRaises(trace_summary.TraceError) as e:
                trace_summary.load_all(paths)
            self.assertEqual(str(e.exception), "%s and %s are both node 0 %s: give each node's file once" % (
                paths[0], paths[1], needle))
        c = write_trace("twice_other_run.json", [task("K", 1, 10, [])])  # node 1, of a run of another summary line
        with self.assertRaises(trace_summary.TraceError) as e:
            trace_summary.load_all([a, c])
        self.assertEqual(str(e.exception), '%s (otherData.run "twice.json") and %s ("twice_other_run.json") are traces '
                                           'of two runs: give the files of one run' % (a, c))
        for script in ("trace_summary.py", "trace_devices.py", "trace_critical_path.py"):
            p = subprocess.run(["/usr/bin/python3", os.path.join(ANALYSIS, script), a, a], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            self.assertEqual((p.returncode, p.stdout), (2, ""), script)
            self.assertIn("are both node 0", p.stderr)

    def test_figure_format_checked_first(self):
        a = write_trace("fmt.json", [task("K", 0, 10, [])])
        out = os.path.join(WORK, "fmt_out.json")
        if os.path.exists(out):
            os.remove(out)
        p = subprocess.run(["/usr/bin/python3", os.path.join(ANALYSIS, "trace_compare.py"), a, a, "--json", out,
                            "--figure", os.path.join(WORK, "f.xyz")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--figure %s: no format Matplotlib writes has the extension 'xyz'" % os.path.join(WORK, "f.xyz"),
                      p.stderr)
        self.assertFalse(os.path.exists(out), "--json was written before --figure was refused")

    def test_a_reader_that_goes_ends_quietly(self):
        a = write_trace("pipe.json", [task("K", t, 1, [(0, 0, "rw")]) for t in range(200)])
        for script in ("trace_summary.py", "trace_devices.py", "trace_critical_path.py", "trace_compare.py"):
            p = subprocess.Popen(["/usr/bin/python3", os.path.join(ANALYSIS, script), a] + (
                [a] if script == "trace_compare.py" else []), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            p.stdout.close()  # as `| head -0` does
            err = p.stderr.read().decode()
            self.assertEqual((p.wait(), err), (0, ""), script)

    def test_compare(self):
        # B's K takes twice A's: ratio B / A = 2 (mean), 3 (total: B ran K three times, A twice),
        # and the two traces do not hold the same tasks.
        a = write_trace("num_a.json", [task("K", 0, 10, [(0, 0, "rw")]), task("K", 10, 10, [(0, 0, "rw")])])
        b = write_trace("num_b.json", [task("K", 0, 20, [(0, 0, "rw")]), task("K", 20, 20, [(0, 0, "rw")]),
                                       task("K", 40, 20, [(0, 0, "rw")])])
        c = trace_compare.compare([a], [b])
        (row,) = c["kernels"]
        self.assertEqual((row["mean_ratio"], row["total_ratio"]), (2.0, 3.0))
        self.assertFalse(c["same_tasks"], "2 K tasks against 3")
        self.assertTrue(trace_compare.compare([a], [a])["same_tasks"])
        self.assertAlmostEqual(c["critical_path"]["ratio"], 60.0 / 20.0)

    def test_kernels_of_equal_total_by_name(self):
        # LU's row moves take 0 s in a model: equal totals are listed by name, not in a set's hash order (which
        # changes from one process to the next; with eight names a chance order is 1 in 40,320).
        names = ["SWAP", "GATHER", "PIVOTS", "EXCHANGE", "SCATTER", "ROWS", "MOVE", "APPLY"]
        t = write_trace("ties.json", [task("BIG", 0, 5, [])] + [task(n, 5, 0, []) for n in names])
        self.assertEqual([r["kernel"] for r in trace_compare.compare([t], [t])["kernels"]], ["BIG"] + sorted(names))

def tessera_run(trace, *extra):
    args = [TESSERA, "run", "--algo", "cholesky", "--n", "512", "--B", "128", "--threads", "2", "--trace", trace]
    subprocess.run(args + list(extra), check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


class CompareRealSim(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.real, cls.sim = os.path.join(WORK, "real.json"), os.path.join(WORK, "sim.json")
        cls.out, cls.png = os.path.join(WORK, "out.json"), os.path.join(WORK, "f.png")
        for path in (cls.out, cls.png):
            if os.path.exists(path):
                os.remove(path)
        tessera_run(cls.real)
        tessera_run(cls.sim, "--backend", "sim", "--machine", "platform/machines/local.json")
        cls.proc = subprocess.run(["/usr/bin/python3", os.path.join(ANALYSIS, "trace_compare.py"), cls.real, cls.sim,
                                   "--json", cls.out, "--figure", cls.png], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)

    def test_exit_and_text(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertIn("crit path s", self.proc.stdout)
        self.assertIn("critical path B / A", self.proc.stdout)

    def test_critical_paths_within_makespans(self):
        with open(self.out) as f:
            c = json.load(f)
        self.assertTrue(c["same_tasks"])
        cp = c["critical_path"]
        for side in ("a", "b"):
            r = cp[side]
            self.assertGreater(r["critical_path_s"], 0)
            self.assertGreaterEqual(r["tasks"], 1)
            # Durations and starts are printed to 1 ns; allow that much per task on the path.
            self.assertLessEqual(r["critical_path_s"], r["makespan_s"] + 1e-9 * (r["tasks"] + 2))
            self.assertAlmostEqual(r["ratio"], r["critical_path_s"] / r["makespan_s"])
            self.assertEqual(r["nodes"][0]["dag_tasks"], 20)  # 4x4 tiles: 4 POTF2, 6 TRSM, 6 SYRK, 4 GEMM
        self.assertAlmostEqual(cp["ratio"], cp["b"]["critical_path_s"] / cp["a"]["critical_path_s"])

    def test_figure(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertGreater(os.path.getsize(self.png), 0)
        with open(self.png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    TESSERA, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=sys.argv[:1], verbosity=1)
