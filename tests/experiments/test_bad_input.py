#!/usr/bin/python3
"""Hostile input to the Python tools: one line naming the input and exit 2, no traceback, nothing lost.

    test_bad_input.py WORK_DIR

No real tessera runs: FAKE, a small script, stands in for it (it writes the
--json a run writes, refuses --bogus and whatever $FAKE_FAIL names with exit
2, and logs its calls to $FAKE_LOG), so every case takes a fraction of a
second.

Experiment runner: a sweep whose runs failed exits 1 with every run recorded;
report's --output and --results are checked; a results folder with bad
runs.jsonl lines (not objects, no params, not UTF-8) is read by run, plot and
report with one warning per line; a bad meta.json or a `figures` that is a
file exits 2 naming it; a record appended after a line cut short is kept;
plot_experiment.py --definition refuses a missing, empty or another
experiment's definition (`experiment plot` too) and draws the plots of the
one given; a dry run makes no results folder. Traces: every analysis script refuses a file that
is not a tessera trace of version 1 (missing, a folder, empty, binary, cut
short, another JSON, events without ts or with dur "abc") naming it;
trace_critical_path.py takes --help; trace_compare.py will not overwrite an
input; trace_gantt.py writes --out as given and refuses an input (also under
another name, a hard link) and an empty or reversed window.
Scripts: bench_cpu.py, gpu_predict.py, tune_validate.py, bench_mpi.py,
lu_002_sim.py and validate_comm check their options and input files before
any run; a failing run is reported and the sweep goes on (exit 1; bench_mpi.py
exits 1 only when ScaLAPACK got no value or a run failed its check, and
starts Pr x Pc ranks, told by
a stand-in mpirun first on PATH);
gpu_node.sh checks OOC_N and TRACE_N and names an unknown mode; setup.sh
names an unknown command.
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "analysis"))
import experiment_results  # noqa: E402
import trace_summary  # noqa: E402

WORK = FAKE = None
PY = "/usr/bin/python3"

FAKE_SCRIPT = r'''#!/usr/bin/python3
import json, os, sys
args = sys.argv[1:]
if os.environ.get("FAKE_LOG"):
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write(" ".join(args) + "\n")
for bad in ["--bogus"] + [x for x in os.environ.get("FAKE_FAIL", "").split(";") if x]:
    if bad in " ".join(args):
        print("tessera: error: refused %s" % bad, file=sys.stderr)
        sys.exit(2)
opt = lambda name, default: args[args.index(name) + 1] if name in args else default
result = {"algo": opt("--algo", "cholesky"), "n": int(opt("--n", "64")), "B": 64, "s": 1, "time_s": 1.0,
          "gflops": float(os.environ.get("FAKE_GFLOPS_SCHED_" + str(opt("--sched", "")),
                                         os.environ.get("FAKE_GFLOPS_" + os.path.basename(sys.argv[0]), "10.0"))),
          "blas_core": "Fake", "gpu_stats": [], "threads": int(opt("--threads", "1")),
          "sched": os.environ.get("FAKE_SCHED", opt("--sched", None)), "tasks": int(os.environ.get("FAKE_TASKS", "0")),
          "check_passed": True if "--check" in args else None}
if "--json" in args:
    with open(opt("--json", ""), "w") as f:
        json.dump(result, f)
'''

# Stands in for mpirun: logs each run's rank count (-np) and program to $FAKE_MPIRUN_LOG, then runs it once.
FAKE_MPIRUN = r'''#!/usr/bin/python3
import os, subprocess, sys
args = sys.argv[1:]
np = args.index("-np")
with open(os.environ["FAKE_MPIRUN_LOG"], "a") as f:
    f.write("%s %s\n" % (args[np + 1], os.path.basename(args[np + 2])))
sys.exit(subprocess.call(args[np + 2:]))
'''


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, cwd=ROOT,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def py(script, *args, env=None):
    return run([PY, os.path.join(ROOT, script)] + list(args), env)


def experiment(*args, env=None):
    return py("experiments/experiment.py", "--tessera", FAKE, *args, env=env)


def write(path, content):
    """Writes bytes, text, or JSON (anything else); returns the path."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = content if isinstance(content, bytes) else (content if isinstance(content, str) else json.dumps(content))
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


def fresh(*parts):
    path = os.path.join(WORK, *parts)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


class Case(unittest.TestCase):
    def refused(self, result, *needles, rc=2, one_line=True):
        code, out, err = result
        self.assertEqual(code, rc, out + err)
        self.assertNotIn("Traceback", err)
        if one_line:
            self.assertEqual(len(err.strip().splitlines()), 1, err)
        for needle in needles:
            self.assertIn(needle, err)


def definition(name, **over):
    doc = {"name": name, "title": "bad input test", "paper": {"id": "test", "figure": "none"}, "backend": "native",
           "fixed": {"algo": "cholesky", "threads": 1}, "sweep": [{"n": [64, 128]}],
           "metrics": {"tflops": "gflops / 1000"},
           "plots": [{"file": "t", "kind": "lines", "title": "t", "x": "n", "y": "tflops"}]}
    doc.update(over)
    return write(os.path.join(WORK, "defs", name + ".json"), doc)


class Runner(Case):
    @classmethod
    def setUpClass(cls):
        cls.defn = definition("badin")
        cls.good = fresh("good")
        rc, out, err = experiment("run", cls.defn, "--out", cls.good)
        assert rc == 0, out + err

    def copy(self, name):
        path = os.path.join(WORK, name)
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(self.good, path)
        return path

    def test_failed_runs_exit_1(self):
        out = fresh("failing")
        rc, stdout, err = experiment("run", self.defn, "--out", out, env={"FAKE_FAIL": "--n"})
        self.assertEqual(rc, 1, stdout + err)
        self.assertIn("0 run(s) ok, 2 failed", stdout)
        self.assertEqual([r["status"] for r in experiment_results.read_runs(out).values()], ["failed", "failed"])

    def test_report_options(self):
        ok = os.path.join(WORK, "r.md")
        for args, needle in ((["--output", "/nonexistent/r.md"], "--output /nonexistent/r.md"),
                             (["--output", WORK], "--output " + WORK),
                             (["--output", ok, "--results", "/nonexistent"], "--results /nonexistent"),
                             (["--output", ok, "--results", self.defn], "--results " + self.defn)):
            with self.subTest(args=args):
                self.refused(experiment("report", *args), needle)

    def test_bad_runs_lines_warned_once(self):
        out = self.copy("badlines")
        bad = [b"[1, 2, 3]", b"42", b'{"config_id": "x", "repeat": 0}',
               b'{"config_id": "x", "repeat": 0, "params": "s", "status": "ok"}', b"\xff\xfe not text"]
        with open(os.path.join(out, "runs.jsonl"), "ab") as f:
            f.write(b"\n".join(bad) + b"\n")
        base = fresh("reports")
        shutil.copytree(out, os.path.join(base, "000-fig8-one-node"))
        for cmd in (["run", self.defn, "--out", out], ["plot", self.defn, "--out", out],
                    ["report", "--output", os.path.join(WORK, "r.md"), "--results", base]):
            with self.subTest(cmd=cmd[0]):
                rc, stdout, err = experiment(*cmd)
                self.assertEqual(rc, 0, stdout + err)
                self.assertNotIn("Traceback", err)
                for n in range(3, 3 + len(bad)):
                    self.assertEqual(err.count("runs.jsonl:%d:" % n), 1, err)

    def test_bad_meta_and_figures(self):
        out = self.copy("badmeta")
        base = fresh("badmeta_reports")
        for content in (b"", b"garbage", b"[1, 2]", b'{"definition": 5}', b"\xff\xfe"):
            with self.subTest(meta=content):
                write(os.path.join(out, "meta.json"), content)
                self.refused(experiment("plot", self.defn, "--out", out), "meta.json")
                shutil.rmtree(os.path.join(base, "000-fig8-one-node"), ignore_errors=True)
                shutil.copytree(out, os.path.join(base, "000-fig8-one-node"))
                self.refused(experiment("report", "--output", os.path.join(WORK, "r.md"), "--results", base),
                             "meta.json")
        out = self.copy("figures_file")
        write(os.path.join(out, "figures"), "a file")
        self.refused(experiment("plot", self.defn, "--out", out), os.path.join(out, "figures"))

    def test_record_after_a_cut_line_kept(self):
        out = self.copy("cut")
        with open(os.path.join(out, "runs.jsonl"), "rb") as f:
            first = f.readline()
        with open(os.path.join(out, "runs.jsonl"), "ab") as f:
            f.write(first[:len(first) // 2])  # a run killed while its record was written
        rc, stdout, err = experiment("run", self.defn, "--out", out, "--force")
        self.assertEqual(rc, 0, stdout + err)
        bad = []
        experiment_results.read_runs(out, lambda path, n, why: bad.append(n))
        with open(os.path.join(out, "runs.jsonl"), "rb") as f:
            self.assertEqual(len(f.read().splitlines()), 5)  # 2 + the cut one + 2 new
        self.assertEqual(bad, [3])

    def test_plot_definition_option(self):
        out = self.copy("plotdef")
        other = definition("other")
        cases = [(os.path.join(WORK, "nowhere.json"), "no such file"),
                 (write(os.path.join(WORK, "defs", "empty.json"), b""), "not valid JSON"),
                 (write(os.path.join(WORK, "defs", "junk.json"), b"\x00junk"), "not valid JSON"),
                 (other, "holds results of badin")]
        for path, needle in cases:
            with self.subTest(definition=path):
                self.refused(py("analysis/plot_experiment.py", out, "--definition", path), os.path.basename(path),
                             needle)
        # `experiment plot` hands plot_results() the definition itself: another experiment's is refused there too.
        self.refused(experiment("plot", other, "--out", out), "results of badin", "not of the definition given")
        # The definition given wins over meta.json's copy: its plot renamed t2 since the sweep is drawn as t2.
        with open(self.defn, encoding="utf-8") as f:
            doc = json.load(f)
        doc["plots"][0]["file"] = "t2"
        rc, stdout, err = py("analysis/plot_experiment.py", out, "--definition",
                             write(os.path.join(WORK, "defs2", "badin.json"), doc))
        self.assertEqual(rc, 0, stdout + err)
        drawn = [os.path.join(out, "figures", "t2." + ext) for ext in ("png", "pdf")]
        self.assertEqual(stdout.split(), drawn)
        self.assertTrue(all(os.path.getsize(path) > 0 for path in drawn))

    def test_dry_run_makes_no_folder(self):
        # A dry run only lists the runs: the results folder it names is checked, not made.
        out = os.path.join(WORK, "dry_run_out")
        shutil.rmtree(out, ignore_errors=True)
        rc, stdout, err = experiment("run", self.defn, "--out", out, "--dry-run")
        self.assertEqual(rc, 0, stdout + err)
        self.assertEqual(len(stdout.splitlines()), 2, stdout)  # n 64 and 128
        self.assertFalse(os.path.exists(out))


def trace_doc(events=None, **other):
    """A small tessera trace: two dependent tasks on one worker."""
    info = dict({"format": "tessera-trace", "version": 1, "backend": "native", "run": "test"}, **other)
    task = {"cat": "task", "ph": "X", "pid": 0, "tid": 0}
    return {"otherData": info, "traceEvents": events if events is not None else [
        {"ph": "M", "pid": 0, "tid": 0, "name": "thread_name", "args": {"name": "cpu0"}},
        dict(task, name="POTRF", ts=0.0, dur=10.0, args={"tiles": [{"i": 0, "j": 0, "mode": "rw"}]}),
        dict(task, name="TRSM", ts=10.0, dur=5.0, args={"tiles": [{"i": 0, "j": 0, "mode": "r"},
                                                                  {"i": 1, "j": 0, "mode": "rw"}]})]}


class Traces(Case):
    @classmethod
    def setUpClass(cls):
        d = fresh("traces")
        cls.good = write(os.path.join(d, "good.json"), trace_doc())
        text = json.dumps(trace_doc())
        event = trace_doc()["traceEvents"][1]
        cls.bad = {  # name -> (path, what the message says)
            "missing": (os.path.join(d, "missing.json"), "No such file"),
            "folder": (d, "cannot read"),
            "empty": (write(os.path.join(d, "empty.json"), b""), "empty"),
            "not JSON": (write(os.path.join(d, "text.json"), "hello"), "not JSON"),
            "cut short": (write(os.path.join(d, "cut.json"), text[:len(text) // 2]), "cut short"),
            "object": (write(os.path.join(d, "object.json"), {"a": 1}), "not a tessera trace"),
            "list": (write(os.path.join(d, "list.json"), [1, 2, 3]), "[1, 2, 3]"),
            "events x": (write(os.path.join(d, "x.json"), dict(trace_doc(), traceEvents="x")), "traceEvents"),
            "binary": (write(os.path.join(d, "bin.json"), b"\x89PNG\r\n\x1a\n\x00\xff"), "binary"),
            "no ts": (write(os.path.join(d, "nots.json"), trace_doc([{k: v for k, v in event.items() if k != "ts"}])),
                      "traceEvents[0]: ts missing"),
            "dur abc": (write(os.path.join(d, "dur.json"), trace_doc([dict(event, dur="abc")])), '"abc"'),
            "chrome": (write(os.path.join(d, "chrome.json"), trace_doc(format="chrome")), 'format "chrome"'),
            "bare chrome": (write(os.path.join(d, "bare.json"), {"traceEvents": []}), "without otherData"),
            "version 2": (write(os.path.join(d, "v2.json"), trace_doc(version=2)), "version 2"),
            "deep": (write(os.path.join(d, "deep.json"), "[" * 100000), "JSON nested too deeply"),
        }

    def test_loader_names_file_and_fault(self):
        for name, (path, needle) in self.bad.items():
            with self.subTest(trace=name):
                with self.assertRaises(trace_summary.TraceError) as e:
                    trace_summary.load(path)
                self.assertTrue(str(e.exception).startswith(path + ": "), e.exception)
                self.assertIn(needle, str(e.exception))

    def test_scripts_refuse(self):
        png = os.path.join(WORK, "traces_out.png")
        scripts = [("trace_summary.py",), ("trace_devices.py",), ("trace_critical_path.py",),
                   ("trace_gantt.py", "--out", png), ("trace_compare.py", self.good)]
        for name in ("missing", "chrome", "dur abc", "list", "deep"):
            path, needle = self.bad[name]
            for script in scripts:
                with self.subTest(script=script[0], trace=name):
                    self.refused(py("analysis/" + script[0], path, *script[1:]), script[0] + ": " + path, needle)

    def test_options(self):
        rc, out, err = py("analysis/trace_critical_path.py", "--help")
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("usage:", out)
        self.refused(py("analysis/trace_critical_path.py"), "the following arguments are required", one_line=False)
        rc, out, _ = py("analysis/trace_critical_path.py", self.good)
        self.assertEqual(rc, 0)
        self.assertIn("critical path 0.000015 s, 2 tasks", out)
        with open(self.good, "rb") as f:
            before = f.read()
        self.refused(py("analysis/trace_compare.py", self.good, self.good, "--json", self.good),
                     "--json " + self.good, "is an input")
        with open(self.good, "rb") as f:
            self.assertEqual(f.read(), before)
        self.refused(py("analysis/trace_gantt.py", self.good, "--out", WORK), "--out " + WORK)
        self.refused(py("analysis/trace_gantt.py", self.good, "--out", self.good), "is an input")
        png = os.path.join(WORK, "window.png")  # (in the work folder: a script that wrongly ran writes it there)
        self.refused(py("analysis/trace_gantt.py", self.good, "--out", png, "--from", "5", "--to", "1"),
                     "--from 5 --to 1")
        self.refused(py("analysis/trace_gantt.py", self.good, "--out", png, "--from", "5", "--to", "5"),
                     "--from 5 --to 5")  # an empty window shows nothing
        # An output that is a hard link to an input is that file under another name: refused, the input kept.
        link = os.path.join(os.path.dirname(self.good), "link.png")
        if os.path.exists(link):
            os.remove(link)
        os.link(self.good, link)
        self.refused(py("analysis/trace_gantt.py", self.good, "--out", link), "--out " + link, "is an input")
        with open(self.good, "rb") as f:
            self.assertEqual(f.read(), before)
        chart = os.path.join(fresh("gantt"), "chart")
        rc, out, err = py("analysis/trace_gantt.py", self.good, "--out", chart)
        self.assertEqual(rc, 0, err)
        self.assertEqual(os.listdir(os.path.dirname(chart)), ["chart"])
        self.assertTrue(out.startswith(chart + ": 2 bars"), out)


class Scripts(Case):
    def setUp(self):
        self.log = os.path.join(WORK, "fake.log")
        if os.path.exists(self.log):
            os.remove(self.log)

    def calls(self):
        return open(self.log).read().splitlines() if os.path.exists(self.log) else []

    def test_bench_cpu(self):
        bench = "experiments/bench_cpu.py"
        for args, needle in ((["--reps", "0"], "--reps 0"), (["--threads", "0"], "--threads 0"),
                             (["--binary", "/nonexistent"], "--binary /nonexistent"),
                             (["--out", "/proc/xx"], "--out /proc/xx"), (["--tile-args", "'--B"], "--tile-args")):
            with self.subTest(args=args):
                self.refused(py(bench, "--binary", FAKE, *args, env={"FAKE_LOG": self.log}), needle)
                self.assertEqual(self.calls(), [])
        out = fresh("bench_cpu")
        rc, stdout, err = py(bench, "--binary", FAKE, "--threads", "1", "--quick", "--out", out,
                             env={"FAKE_FAIL": "--precision s"})
        self.assertEqual(rc, 1, stdout + err)
        self.assertNotIn("Traceback", err)
        rows = [l for l in stdout.splitlines() if l.startswith(("cholesky", "qr"))]
        self.assertEqual(len(rows), 4, stdout)  # every row, the failed ones without values
        self.assertEqual(sum("failed" in r for r in rows), 2, stdout)
        self.assertEqual(err.count("exit 2: tessera: error: refused --precision s"), 4, err)
        rc, stdout, err = py(bench, "--binary", FAKE, "--threads", "1", "--quick", "--tile-args=--bogus")
        self.refused((rc, "", err.splitlines()[-1]), "refused every run", "--bogus")

    def test_gpu_predict(self):
        machine = {"node": {"gpus": {"model": "G"}}, "kernel_models": {"G": {"measurements": []}}}
        runs = {"machine_file": "node.json", "runs": [{"name": "a", "file": "a.json", "args": ["--algo", "qr"]},
                                                      {"name": "b", "file": "b.json", "args": ["--algo", "qr"]}]}

        def folder(name, **files):
            d = fresh("gpu_predict", name)
            for f, content in files.items():
                write(os.path.join(d, f.replace("_", ".")), content)
            return d
        good = dict(runs_json=runs, node_json=machine, a_json={"time_s": 2.0})
        cases = [(folder("empty", runs_json=b""), [], "runs.json"),
                 (folder("garbage", runs_json=b"garbage"), [], "runs.json"),
                 (folder("list", runs_json=[1]), [], "runs.json"),
                 (folder("nomachine", runs_json=runs), [], "node.json"),
                 (folder("nonode", runs_json=runs, node_json={}), [], "node.json"),
                 (folder("deep", runs_json=runs, node_json="[" * 100000), [], "nested too deeply"),
                 (folder("bench", bench_json=b"garbage"), [], "bench.json"),
                 (folder("norows", bench_json={"n": 64}), [], "bench.json"),
                 (folder("machine", **good), ["--machine", "/nonexistent"], "--machine /nonexistent"),
                 (folder("json", **good), ["--json", "/nonexistent/x.json"], "--json /nonexistent/x.json")]
        for d, args, needle in cases:
            with self.subTest(folder=os.path.basename(d)):
                self.refused(py("experiments/gpu_predict.py", d, "--binary", FAKE, *args, env={"FAKE_LOG": self.log}),
                             needle)
                self.assertEqual(self.calls(), [])  # refused before any simulation
        rc, out, err = py("experiments/gpu_predict.py", folder("missing_run", **good), "--binary", FAKE)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("| a | `--algo qr` |", out)
        self.refused((rc, out, err), "b: result", "b.json", "left out", rc=1)

    def test_tune_validate(self):
        tv, out = "experiments/tune_validate.py", fresh("tune_validate")
        cases = [(["--markdown", os.path.join(WORK, "none.json")], "--markdown"),
                 (["--markdown", write(os.path.join(out, "e.json"), b"")], "not JSON"),
                 (["--markdown", write(os.path.join(out, "w.json"), [{"algo": "qr"}])], "cell 0"),
                 (["--markdown", write(os.path.join(out, "d.json"), {"a": 1})], "not a summary.json"),
                 (["--markdown", write(os.path.join(out, "deep.json"), "[" * 100000)], "nested too deeply"),
                 (["--markdown", write(os.path.join(out, "none.json"), [])], "holds no cell"),
                 (["--out", "/proc/xx"], "--out /proc/xx"), (["--cells", "svd:d:64"], "'svd:d:64'"),
                 (["--cells", "cholesky:d:0"], "'cholesky:d:0'"), (["--threads", "0"], "--threads 0"), ([], "--out")]
        for args, needle in cases:
            with self.subTest(args=args):
                extra = [] if "--out" in args or "--markdown" in args or not args else ["--out", out]
                self.refused(py(tv, "--binary", FAKE, *(args + extra), env={"FAKE_LOG": self.log}), needle)
                self.assertEqual(self.calls(), [])

    def test_bench_mpi(self):
        build = fresh("bench_mpi_build")
        for program in ("tessera", "scalapack_peer"):
            shutil.copy(FAKE, os.path.join(build, program))
        for args, needle in ((["--timeout", "nan"], "--timeout nan"), (["--timeout", "-1"], "--timeout -1"),
                             (["--algos", ","], "--algos ','"), (["--out", "/proc/xx"], "--out /proc/xx"),
                             (["--build", WORK], "--build " + WORK)):
            with self.subTest(args=args):
                self.refused(py("experiments/bench_mpi.py", "--build", build, *args), needle)
        # A good sweep under mpirun, one rank: each side's GFlop/s (ScaLAPACK 10, tessera 35) and tessera over
        # ScaLAPACK, 3.50x, per algorithm.
        rc, stdout, err = py("experiments/bench_mpi.py", "--build", build, "--grid", "1x1", "--reps", "1",
                             "--algos", "cholesky,qr", "--n", "64",
                             env={"FAKE_GFLOPS_scalapack_peer": "10.0", "FAKE_GFLOPS_tessera": "35.0"})
        self.assertEqual(rc, 0, stdout + err)
        rows = [l.split() for l in stdout.splitlines() if l.split()[:1] in (["cholesky"], ["qr"])]
        self.assertEqual([r[:6] for r in rows], [["cholesky", "64", "1x1", "10.0", "35.0", "3.50x"],
                                                  ["qr", "64", "1x1", "10.0", "35.0", "3.50x"]], stdout)
        # The same sweep, reps 2, under the stand-in mpirun: each run of both peers asks Pr x Pc ranks (1x3: 3, 2x3: 6,
        # 1x1: 1; Pr + Pc would give 4, 5 and 2), and the header says as many.
        path = fresh("bench_mpi_path")
        os.chmod(write(os.path.join(path, "mpirun"), FAKE_MPIRUN), 0o755)
        mpi_log = os.path.join(WORK, "mpirun.log")

        def sweep(grid, fail=""):
            if os.path.exists(mpi_log):
                os.remove(mpi_log)
            rc, stdout, err = py("experiments/bench_mpi.py", "--build", build, "--grid", grid, "--reps", "2",
                                 "--algos", "cholesky,qr", "--n", "64", "--out", os.path.join(WORK, "bench_mpi_runs"),
                                 env={"PATH": path + os.pathsep + os.environ["PATH"], "FAKE_MPIRUN_LOG": mpi_log,
                                      "FAKE_FAIL": fail})
            self.assertNotIn("Traceback", err)
            rows = [l.split()[:6] for l in stdout.splitlines() if l.split()[:1] in (["cholesky"], ["qr"])]
            return rc, stdout, err, rows
        for grid, ranks in (("1x3", 3), ("2x3", 6), ("1x1", 1)):
            with self.subTest(grid=grid):
                rc, stdout, err, rows = sweep(grid)
                self.assertEqual(rc, 0, stdout + err)
                with open(mpi_log) as f:  # 2 algorithms x 2 reps, ScaLAPACK then tessera
                    self.assertEqual(f.read().splitlines(), ["%d scalapack_peer" % ranks, "%d tessera" % ranks] * 4)
                self.assertIn(" ranks=%d " % ranks, stdout)
        # ScaLAPACK fails every rep (only its runs get --nb): no reference, exit 1; each failure on stderr, its
        # column "failed", no ratio, tessera's value still shown.
        rc, stdout, err, rows = sweep("1x3", fail="--nb")
        self.assertEqual(rc, 1, stdout + err)
        self.assertEqual(err.count("exit 2: tessera: error: refused --nb"), 4, err)
        self.assertIn("scalapack qr rep 2: exit 2", err)
        self.assertEqual(rows, [[a, "64", "1x3", "failed", "10.0", "-"] for a in ("cholesky", "qr")], stdout)
        # ScaLAPACK fails for one algorithm only (Cholesky, the first): that algorithm has no reference, exit 1.
        rc, stdout, err, rows = sweep("1x3", fail="--algo cholesky --n 64 --nb")
        self.assertEqual(rc, 1, stdout + err)
        self.assertEqual(rows, [["cholesky", "64", "1x3", "failed", "10.0", "-"],
                                ["qr", "64", "1x3", "10.0", "10.0", "1.00x"]], stdout)
        # Only tessera fails (only its runs are `run --algo`): reported and tolerated (its side may be unfinished),
        # the reference is there: exit 0.
        rc, stdout, err, rows = sweep("1x3", fail="run --algo")
        self.assertEqual(rc, 0, stdout + err)
        self.assertEqual(err.count("exit 2: tessera: error: refused run --algo"), 4, err)
        self.assertIn("tessera qr rep 2: exit 2", err)
        self.assertEqual(rows, [[a, "64", "1x3", "10.0", "failed", "-"] for a in ("cholesky", "qr")], stdout)

    def test_bench_starpu(self):
        bench, build = "experiments/bench_starpu.py", fresh("bench_starpu_build")
        for program in ("tessera", "starpu_peer"):
            shutil.copy(FAKE, os.path.join(build, program))
        for args, needle in ((["--configs", "3840x320"], "--configs '3840x320'"), (["--configs", ","], "--configs ','"),
                             (["--configs", "0:64"], "'0:64'"), (["--sched", ","], "--sched ','"),
                             (["--sched", "lws;rm"], "--sched 'lws;rm'"), (["--precision", "z"], "--precision 'z'"),
                             (["--reps", "0"], "--reps 0"), (["--timeout", "nan"], "--timeout nan"),
                             (["--timeout", "inf"], "--timeout inf"),
                             (["--out", "/proc/xx"], "--out /proc/xx"), (["--build", WORK], "--build " + WORK)):
            with self.subTest(args=args):
                self.refused(py(bench, "--build", build, *args, env={"FAKE_LOG": self.log}), needle)
                self.assertEqual(self.calls(), [])
        # The 'prio' policy's runs fail (not its one-tile probe): each is reported, the row keeps tessera's and lws's.
        sweep = ["--build", build, "--configs", "640:64,1280:128", "--reps", "2", "--threads", "2", "--sched",
                 "lws,prio"]
        rc, stdout, err = py(bench, *sweep, env={"FAKE_FAIL": "--sched prio --json", "FAKE_LOG": self.log,
                                                 "FAKE_TASKS": "220"})
        self.assertEqual(rc, 0, stdout + err)
        self.assertEqual(err.count("exit 2: tessera: error: refused --sched prio --json"), 4, err)
        rows = [l.split() for l in stdout.splitlines() if l.split()[:1] in (["640"], ["1280"])]
        self.assertEqual([r[:7] for r in rows], [["640", "64", "220", "10.0", "10.0", "failed", "1.00x"],
                                                  ["1280", "128", "220", "10.0", "10.0", "failed", "1.00x"]], stdout)
        # 2 probes, then 2 configurations x 2 reps x (tessera, lws, prio), alternating.
        self.assertEqual(len(self.calls()), 14)
        # tessera against the better policy: 10 GFlop/s against lws's 8 and prio's 12.5 is 0.80x.
        rc, stdout, err = py(bench, *sweep, env={"FAKE_TASKS": "220", "FAKE_GFLOPS_SCHED_lws": "8",
                                                 "FAKE_GFLOPS_SCHED_prio": "12.5"})
        rows = [l.split() for l in stdout.splitlines() if l.split()[:1] in (["640"], ["1280"])]
        self.assertEqual([r[3:7] for r in rows], [["10.0", "8.0", "12.5", "0.80x"]] * 2, stdout + err)
        # A policy the peer refuses on its probe: exit 2 before the sweep, its message quoted.
        open(self.log, "w").close()
        self.refused(py(bench, *sweep, env={"FAKE_FAIL": "--sched prio", "FAKE_LOG": self.log}), "--sched prio",
                     "refused --sched prio")
        self.assertEqual(len(self.calls()), 2)
        # Every StarPU run fails: no reference, exit 1.
        rc, stdout, err = py(bench, *sweep, env={"FAKE_FAIL": "--precision d --sched", "FAKE_TASKS": "220"})
        self.assertEqual(rc, 1, stdout + err)
        self.assertNotIn("Traceback", err)
        # Runs of another graph (a task count other than tessera's, for both): each named, exit 1.
        rc, stdout, err = py(bench, *sweep, env={"FAKE_TASKS": "219"})
        self.assertEqual(rc, 1, stdout + err)
        self.assertEqual(err.count("ran something else: tasks 219 (asked 220)"), 12, err)
        # A peer that ran another policy than asked (as STARPU_SCHED would make it): its runs left out, exit 1.
        rc, stdout, err = py(bench, "--build", build, "--configs", "640:64", "--reps", "1", "--threads", "2",
                             "--sched", "lws", env={"FAKE_TASKS": "220", "FAKE_SCHED": "eager"})
        self.assertEqual(rc, 1, stdout + err)
        self.assertEqual(err.count("ran something else: sched eager (asked lws)"), 1, err)

    def test_lu_002_sim(self):
        names = ("002-fig5-d-sweep", "002-fig6-7-model-d", "002-fig10-scalability", "002-fig11-tall-skinny")
        rec = {"config_id": "c", "repeat": 0, "params": {"B": 128, "pivot": "partial", "d": 1, "threads": 12,
                                                         "m": 256, "variant": "calu_async"}, "status": "ok",
               "result": {"gflops": 1.0, "time_s": 1.0, "d": 1, "B": 128, "m": 256, "n": 256}}
        line = json.dumps(rec).encode() + b"\n"

        def results(name, runs=line, meta=None):
            base = fresh("lu_002", name)
            for n in names:
                write(os.path.join(base, n, "meta.json"), meta if meta is not None else {"experiment": n,
                                                                                         "definition": {"name": n}})
                write(os.path.join(base, n, "runs.jsonl"), runs)
            return base
        for base, needle, one in ((results("empty", runs=b""), "no successful run", True),
                                  (results("meta", meta=b""), "meta.json: not JSON", True),
                                  (results("list", meta=b"[1]"), "meta.json: the top level", True),
                                  (results("one"), "incomplete results", True),
                                  (results("cut", runs=line + line[:30]), "incomplete results", False),
                                  ("/nonexistent", "--results /nonexistent", True)):
            with self.subTest(needle=needle, base=base):
                self.refused(py("experiments/lu_002_sim.py", "--results", base, "--no-figures"), needle,
                             one_line=one)

    def test_validate_comm(self):
        vc = "experiments/validate_comm"
        for args, needle in ((["--grids", "2y2"], "--grids"), (["--n", "abc"], "--n"), (["--B", "0"], "--B 0"),
                             (["--json-out", WORK], "--json-out " + WORK),
                             (["--json-out", "/nonexistent/x.json"], "--json-out /nonexistent/x.json")):
            with self.subTest(args=args):
                self.refused(py(vc, "--tessera", FAKE, *args, env={"FAKE_LOG": self.log}), needle)
                self.assertEqual(self.calls(), [])
        tmp, js = fresh("validate_comm_tmp"), os.path.join(WORK, "vc.json")
        rc, out, err = py(vc, "--tessera", FAKE, "--grids", "1x2,2x1", "--n", "512", "--algos", "qr", "--json-out", js,
                          env={"FAKE_FAIL": "--grid", "TMPDIR": tmp})
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(out.count("| failed: run: exit 2: tessera: error: refused --grid"), 2, out)
        with open(js) as f:
            self.assertEqual(len(json.load(f)["failed"]), 2)
        self.assertEqual(os.listdir(tmp), [])  # its temporary folder removed

    def test_shell_scripts(self):
        archive = fresh("gpu_node_archive")
        write(os.path.join(archive, "gpu_node.tar.xz"), b"")
        out = os.path.join(WORK, "gpu_node_out")
        for env, needle in (({"OOC_N": "16k"}, "OOC_N '16k'"), ({"TRACE_N": "0"}, "TRACE_N '0'")):
            with self.subTest(env=env):
                self.refused(run(["bash", os.path.join(ROOT, "experiments", "gpu_node.sh"), "run", archive, out,
                                  "tests"], env), needle)
                self.assertFalse(os.path.exists(out))
        self.refused(run(["bash", os.path.join(ROOT, "experiments", "gpu_node.sh"), "bogus"]), "mode 'bogus'")
        self.refused(run([os.path.join(ROOT, "setup.sh"), "bogus"]), "setup.sh: unknown command 'bogus'")


if __name__ == "__main__":
    WORK = os.path.abspath(sys.argv[1])
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    FAKE = write(os.path.join(WORK, "fake_tessera"), FAKE_SCRIPT)
    os.chmod(FAKE, 0o755)
    unittest.main(argv=sys.argv[:1], verbosity=1)
