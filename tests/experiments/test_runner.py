#!/usr/bin/python3
"""The experiment runner end to end on small definitions written here.

    test_runner.py TESSERA_BINARY WORK_DIR

Bad definitions exit 2 with one line naming the file, the key and the value
(mpirun_args and the plots' keys checked for their types before any run);
a failing run (a simulated GPU out of memory, exit 4) is recorded and the
sweep goes on, and `run` exits 1; a rerun skips recorded runs (but see
test_runner_resume.py), --retry-failed
reruns the failed one, --force all; --jobs 2 runs simulations in parallel; a
run past --timeout is killed and recorded, with every process it started
(its process group: mpirun's ranks), as are the runs in progress when the
runner gets SIGTERM or SIGHUP, or is killed, or cannot write a record (which
stops the sweep at once, one line naming runs.jsonl); an attachment that cannot be had for a
run (comm_derived of a one-node run) is recorded as an error and the sweep
goes on, the metrics reading it failing by name (stderr, runs.csv, exit 1);
a record without run_wall_s still makes runs.csv; the progress bar; plots
from a copied results folder.
"""
import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
from runner import definition  # noqa: E402
from runner.progress import Progress  # noqa: E402

TESSERA = WORK = None
RUNNER = os.path.join(ROOT, "experiments", "experiment.py")


def good_definition(name, **over):
    """A two-point definition: one run that succeeds, one that tessera refuses (4 GPUs on a 3-GPU node: exit 2)."""
    doc = {
        "name": name, "title": "runner test", "paper": {"id": "test", "figure": "none"},
        "machine": "platform/machines/keeneland.json", "backend": "sim",
        "fixed": {"algo": "qr", "B": 1152, "s": 2, "b": "auto", "n": 2304},
        "sweep": [{"gpus": [3, 4]}],
        "metrics": {"tflops": "gflops / 1000"},
        "plots": [{"file": "t", "kind": "lines", "title": "t", "x": "n", "y": "tflops", "xlabel": "N", "ylabel": "TFlop/s"}],
        "reported": [{"id": "r", "plot": "t", "where": {"gpus": 3}, "metric": "tflops", "value": 0.1, "source": "test"}],
    }
    doc.update(over)
    return doc


def write(name, doc):
    folder = os.path.join(WORK, "defs")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def run(*args, binary=False, tessera=None, env=None):
    """Runs the runner (through `tessera experiment` when binary) and returns (rc, stdout, stderr)."""
    cmd = ([TESSERA, "experiment"] if binary else ["/usr/bin/python3", RUNNER, "--tessera", tessera or TESSERA]) + list(args)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def lines(out):
    with open(os.path.join(out, "runs.jsonl")) as f:
        return [json.loads(x) for x in f if x.strip()]



def assert_ends(test, pid, failure):
    """Fails `test` with `failure` % pid (and kills the process) unless process `pid` ends within 5 s: gone, or a
    zombie (an orphan is reaped by init once killed)."""
    for _ in range(50):
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return
        except FileNotFoundError:
            return
        time.sleep(0.1)
    os.kill(pid, 9)
    test.fail(failure % pid)

class BadDefinitions(unittest.TestCase):
    def expect_error(self, name, doc, *needles):
        path = write(name, doc)
        rc, out, err = run("run", path, "--out", os.path.join(WORK, "bad"))
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        for needle in (os.path.basename(path),) + needles:
            self.assertIn(needle, err)

    def test_unknown_top_key(self):
        self.expect_error("bad-key", good_definition("bad-key", colour="red"), "colour", "unknown key")

    def test_unknown_sweep_key(self):
        self.expect_error("bad-sweep-key", good_definition("bad-sweep-key", sweep=[{"thread": [1]}]), "sweep[0].thread")

    def test_missing_machine(self):
        self.expect_error("bad-machine", good_definition("bad-machine", machine="platform/machines/nowhere.json"),
                          "machine", "nowhere.json")

    def test_bad_sweep_value(self):
        self.expect_error("bad-value", good_definition("bad-value", sweep=[{"gpus": [-1]}]), "sweep.gpus", "value -1")
        self.expect_error("bad-algo", good_definition("bad-algo", fixed={"algo": "svd"}, sweep=[{"n": [64]}], reported=[]),
                          "algo", '"svd"')
        self.expect_error("bad-tree", good_definition("bad-tree", sweep=[{"qr_tree": ["ternary"]}]), "sweep.qr_tree",
                          '"ternary"')

    def test_bad_expression(self):
        doc = good_definition("bad-expr", derived={"B": "__import__('os')"})
        self.expect_error("bad-expr", doc, "derived.B", "__import__")

    def test_name_must_match_file(self):
        self.expect_error("bad-name", good_definition("other"), "name", '"other"')

    def test_bad_timeout_and_out(self):
        # Refused before any run: a timeout that would kill every run at once, a results folder that cannot be made.
        path = write("bad-options", good_definition("bad-options"))
        cases = [(["--timeout", "-1"], "--timeout -1"), (["--timeout", "0"], "--timeout 0"),
                 (["--out", "/proc/x/y"], "--out /proc/x/y"), (["--out", path], "--out " + path)]
        for extra, needle in cases:
            with self.subTest(extra=extra):
                rc, out, err = run("run", path, *(["--out", os.path.join(WORK, "bad")] + extra))
                self.assertEqual(rc, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn(needle, err)
                self.assertNotIn("Traceback", err)

    def test_wrong_types(self):
        # Each passed validation and then failed mid-run or in `plot` (or was drawn wrong) before it was checked.
        plot = good_definition("x")["plots"][0]
        cases = [({"mpirun_args": 5}, "mpirun_args", "value 5"),
                 ({"mpirun_args": "--oversubscribe"}, "mpirun_args", '"--oversubscribe"'),
                 ({"title": 7}, "title", "value 7"), ({"notes": 5}, "notes", "value 5"),
                 ({"notes": {"r": 3}}, "notes.r", "value 3"),
                 ({"plots": [dict(plot, hline=5)]}, "plots[0].hline", "value 5"),
                 ({"plots": [dict(plot, where="n")]}, "plots[0].where", '"n"'),
                 ({"plots": [dict(plot, where={"bogus": 1})]}, "plots[0].where.bogus", "not a parameter"),
                 ({"plots": [dict(plot, logx="yes")]}, "plots[0].logx", '"yes"'),
                 ({"plots": [dict(plot, series="n")]}, "plots[0].series", '"n"'),
                 ({"plots": [dict(plot, series=["tflops"])]}, "plots[0].series", "tflops"),
                 ({"plots": [dict(plot, title=["t"])]}, "plots[0].title", '["t"]'),
                 ({"plots": [{k: v for k, v in plot.items() if k != "x"}]}, "plots[0].x", "missing"),
                 ({"reported": [dict(good_definition("x")["reported"][0], where="gpus")]}, "reported[0].where",
                  '"gpus"')]
        for over, key, value in cases:
            with self.subTest(over=over):
                self.expect_error("bad-types", good_definition("bad-types", **over), key + ":", value)

    def test_unknown_definition_name(self):
        rc, _, err = run("run", "no-such-definition")
        self.assertEqual(rc, 2)
        self.assertIn("no-such-definition.json", err)


class Sweep(unittest.TestCase):
    def test_failure_recorded_resume_retry_force(self):
        path = write("fails", good_definition("fails"))
        out = os.path.join(WORK, "fails")
        shutil.rmtree(out, ignore_errors=True)
        rc, stdout, err = run("run", path, "--out", out, binary=True)
        self.assertEqual(rc, 1, err)  # every run recorded, and the status says one failed
        self.assertIn("1 run(s) ok, 1 failed", stdout)
        recs = {r["params"]["gpus"]: r for r in lines(out)}
        self.assertEqual(recs[3]["status"], "ok")
        self.assertEqual(recs[3]["result"]["n"], 2304)
        self.assertAlmostEqual(recs[3]["metrics"]["tflops"], recs[3]["result"]["gflops"] / 1000)
        self.assertEqual(recs[4]["status"], "failed")
        self.assertEqual(recs[4]["exit_status"], 2)
        self.assertIn("--gpus", recs[4]["stderr"])
        for r in recs.values():
            self.assertEqual(len(r["tessera_commit"]), 40)
            self.assertEqual(r["machine"], "platform/machines/keeneland.json")
            self.assertTrue(r["date"].startswith("20"))
        with open(os.path.join(out, "runs.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(sorted(r["status"] for r in rows), ["failed", "ok"])
        self.assertIn("--gpus", [r for r in rows if r["status"] == "failed"][0]["error"])
        # Resume: nothing to do.
        rc, stdout, _ = run("run", path, "--out", out)
        self.assertIn("0 run(s) ok, 0 failed, 2 already done", stdout)
        self.assertEqual(rc, 0)
        self.assertEqual(len(lines(out)), 2)
        rc, stdout, _ = run("run", path, "--out", out, "--retry-failed")
        self.assertIn("0 run(s) ok, 1 failed, 1 already done", stdout)
        self.assertEqual((rc, len(lines(out))), (1, 3))
        rc, stdout, _ = run("run", path, "--out", out, "--force")
        self.assertIn("1 run(s) ok, 1 failed, 0 already done", stdout)
        self.assertEqual(rc, 1)
        self.assertEqual(len(lines(out)), 5)
        # Plots from a copy of the folder, elsewhere.
        copy = os.path.join(WORK, "copied")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(out, copy)
        p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "analysis", "plot_experiment.py"), copy],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        for ext in ("png", "pdf"):
            self.assertGreater(os.path.getsize(os.path.join(copy, "figures", "t." + ext)), 2000)

    def test_parallel_jobs_and_dry_run(self):
        doc = good_definition("parallel", sweep=[{"n": [1152, 2304, 3456]}],
                              fixed={"algo": "cholesky", "threads": 2, "gpus": 3, "B": 1152}, reported=[])
        path = write("parallel", doc)
        out = os.path.join(WORK, "parallel")
        shutil.rmtree(out, ignore_errors=True)
        rc, stdout, _ = run("run", path, "--dry-run")
        self.assertEqual(rc, 0)
        self.assertEqual(len(stdout.strip().splitlines()), 3)
        self.assertIn("--backend sim --machine platform/machines/keeneland.json", stdout)
        rc, stdout, err = run("run", path, "--out", out, "--jobs", "2")
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(r["result"]["n"] for r in lines(out)), [1152, 2304, 3456])

    def test_qr_tree_sweep(self):
        # QR's reduction tree is a sweep parameter: on two node rows the binary
        # tree's run records its variant, the flat one none.
        doc = good_definition("qrtree", fixed={"algo": "qr", "B": 1152, "s": 2, "b": "auto", "n": 4608, "gpus": 3,
                                               "grid": "2x1", "qr_domain": None},
                              sweep=[{"qr_tree": ["flat", "binary"]}], reported=[])
        path = write("qrtree", doc)
        out = os.path.join(WORK, "qrtree")
        shutil.rmtree(out, ignore_errors=True)
        rc, stdout, _ = run("run", path, "--dry-run")
        self.assertEqual(rc, 0)
        self.assertIn("--qr-tree binary", stdout)
        self.assertNotIn("--qr-domain", stdout)
        rc, stdout, err = run("run", path, "--out", out)
        self.assertEqual(rc, 0, err)
        recs = {r["params"]["qr_tree"]: r for r in lines(out)}
        self.assertEqual(sorted(recs), ["binary", "flat"])
        for r in recs.values():
            self.assertEqual(r["status"], "ok", r.get("stderr"))
        self.assertEqual(recs["binary"]["result"].get("variant"), "tree=binary")
        self.assertNotIn("tree", recs["flat"]["result"].get("variant", ""))

    def test_comm_attachments_follow_the_qr_tree(self):
        # A binary-tree QR's comm_model is tessera's count of that tree at the run's ib (A.2.2's flat count
        # before), and it has no derived counts nor a model at the paper's v (the flat tree's, applied before),
        # each saying why; the flat tree's run keeps all three, its derived counts exact.
        doc = good_definition("commtree", fixed={"algo": "qr", "B": 256, "s": 1, "n": 2048, "threads": 2,
                                                 "grid": "2x2"},
                              sweep=[{"qr_tree": ["flat", "binary"]}], attach=["comm_model", "comm_derived"],
                              metrics={"model_msgs": "comm_model.tessera.messages_summation"}, plots=[], reported=[])
        out = os.path.join(WORK, "commtree")
        shutil.rmtree(out, ignore_errors=True)
        rc, _, err = run("run", write("commtree", doc), "--out", out)
        self.assertEqual(rc, 0, err)
        att = {r["params"]["qr_tree"]: r["attached"] for r in lines(out)}
        model = os.path.join(WORK, "commtree-model.json")
        subprocess.run([TESSERA, "model", "comm", "--algo", "qr", "--n", "2048", "--B", "256", "--s", "1", "--grid",
                        "2x2", "--v", "1", "--qr-tree", "binary", "--ib", "32", "--json", model],
                       check=True, stdout=subprocess.DEVNULL)
        with open(model) as f:
            want = json.load(f)["tessera"]
        self.assertEqual(att["binary"]["comm_model"]["tessera"], want)
        self.assertNotEqual(att["flat"]["comm_model"]["tessera"], want)
        self.assertIn("binary tree", att["binary"]["comm_derived"]["error"])
        self.assertIn("binary tree", att["binary"]["comm_model_paper_v"]["error"])
        self.assertTrue(att["flat"]["comm_derived"]["every_node_exact"], att["flat"]["comm_derived"])
        self.assertIn("tessera", att["flat"]["comm_model_paper_v"])

    def test_no_git_on_the_path(self):
        # Without git the runs are recorded without their commit: a FileNotFoundError traceback before.
        path = write("nogit", good_definition("nogit", sweep=[{"gpus": [3]}], reported=[]))
        out = os.path.join(WORK, "nogit")
        shutil.rmtree(out, ignore_errors=True)
        rc, _, err = run("run", path, "--out", out, env={"PATH": "/nonexistent"})
        self.assertEqual(rc, 0, err)
        [r] = lines(out)
        self.assertEqual((r["status"], r["tessera_commit"], r["tessera_dirty"]), ("ok", None, None))

    def test_timeout_recorded(self):
        doc = good_definition("slow", fixed={"algo": "qr", "threads": 11}, sweep=[{"n": [69120]}, {"grid": ["2x2"]}],
                              reported=[])
        path = write("slow", doc)
        out = os.path.join(WORK, "slow")
        shutil.rmtree(out, ignore_errors=True)
        rc, stdout, err = run("run", path, "--out", out, "--timeout", "1")
        self.assertEqual(rc, 1, err)
        (rec,) = lines(out)
        self.assertEqual(rec["status"], "timeout")
        self.assertIn("timeout", rec["stderr"])


    def hanging_run(self):
        """(runner arguments, results folder, pid file) of a one-run sweep of a stand-in for mpirun: it starts a
        child (a rank) that would outlive it, writes the child's pid, then hangs."""
        fake = os.path.join(WORK, "fake_mpirun")
        with open(fake, "w") as f:
            f.write("#!/usr/bin/python3\nimport os, subprocess, sys, time\n"
                    "rank = subprocess.Popen(['sleep', '60'])\n"
                    "open(os.environ['RANK_PID'], 'w').write(str(rank.pid))\ntime.sleep(60)\n")
        os.chmod(fake, 0o755)
        pid_file = os.path.join(WORK, "rank.pid")
        if os.path.exists(pid_file):
            os.remove(pid_file)
        path = write("hangs", good_definition("hangs", backend="native", fixed={"algo": "cholesky", "n": 64},
                                              sweep=[{"threads": [1]}], reported=[]))
        out = os.path.join(WORK, "hangs")
        shutil.rmtree(out, ignore_errors=True)
        return ["/usr/bin/python3", RUNNER, "--tessera", fake, "run", path, "--out", out], out, pid_file

    def assert_gone(self, pid_file):
        with open(pid_file) as f:
            assert_ends(self, int(f.read()), "the run's child %d outlived the runner's signal")

    def test_timeout_kills_the_process_group(self):
        # The timeout's signal goes to the run's whole process group: the rank goes too.
        args, out, pid_file = self.hanging_run()
        t0 = time.monotonic()
        p = subprocess.run(args + ["--timeout", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=60, env=dict(os.environ, RANK_PID=pid_file))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertLess(time.monotonic() - t0, 20)
        (rec,) = lines(out)
        self.assertEqual(rec["status"], "timeout")
        self.assert_gone(pid_file)

    def signal_the_runner(self, sig):
        """Starts a hanging run, sends `sig` to its runner once the run's child is up, and checks that the runner
        ended it (exit 130, as after Ctrl-C: 'interrupted') and that the child is gone."""
        args, out, pid_file = self.hanging_run()
        p = subprocess.Popen(args + ["--timeout", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, RANK_PID=pid_file))
        for _ in range(100):
            if os.path.exists(pid_file) and os.path.getsize(pid_file):
                break
            time.sleep(0.05)
        p.send_signal(sig)
        _, err = p.communicate(timeout=30)
        self.assert_gone(pid_file)
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("interrupted", err)

    def test_sigterm_to_the_runner_ends_its_runs(self):
        # Each run is a session of its own, which a signal to the runner's group no longer reaches: the runner
        # ends the runs in progress itself (exit 130, as after Ctrl-C).
        self.signal_the_runner(signal.SIGTERM)

    def test_sighup_to_the_runner_ends_its_runs(self):
        # A closed terminal's SIGHUP ended the runner (exit 129) and left its runs, sessions of their own, running.
        self.signal_the_runner(signal.SIGHUP)

    def test_a_killed_runner_takes_its_runs_with_it(self):
        # SIGKILL leaves the runner no chance to end its runs: each dies with it (PR_SET_PDEATHSIG).
        args, out, pids = self.slow_sweep("killed")
        tmp = os.path.join(WORK, "killed-tmp")  # the killed runner's temporaries (tessera-exp-*), not /tmp's
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        p = subprocess.Popen(["/usr/bin/python3", RUNNER] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=dict(os.environ, PIDS=pids, TMPDIR=tmp))
        for _ in range(200):
            if len(os.listdir(pids)) >= 4:  # the two quick runs, then two that sleep
                break
            time.sleep(0.05)
        p.kill()
        p.wait()
        self.assertGreaterEqual(len(os.listdir(pids)), 4)
        self.assert_runs_gone(pids)

    def slow_sweep(self, name, runs=6):
        """(runner arguments, results folder, pid folder) of a `runs`-point simulated sweep of a stand-in for tessera:
        the first two points' runs end at once, every other sleeps 60 s; each writes its pid into the pid folder."""
        fake = os.path.join(WORK, "fake_slow_tessera")
        with open(fake, "w") as f:
            f.write("#!/usr/bin/python3\nimport json, os, sys, time\n"
                    "open(os.path.join(os.environ['PIDS'], str(os.getpid())), 'w').close()\n"
                    "a = sys.argv\nif int(a[a.index('--n') + 1]) > 2: time.sleep(60)\n"
                    "json.dump({'gflops': 1.0, 'time_s': 1.0}, open(a[a.index('--json') + 1], 'w'))\n")
        os.chmod(fake, 0o755)
        pids = os.path.join(WORK, name + "-pids")
        shutil.rmtree(pids, ignore_errors=True)
        os.makedirs(pids)
        path = write(name, good_definition(name, fixed={"algo": "cholesky", "B": 128}, sweep=[{"n": list(range(1, runs + 1))}],
                                           reported=[]))
        out = os.path.join(WORK, name)
        shutil.rmtree(out, ignore_errors=True)
        return ["--tessera", fake, "run", path, "--out", out, "--jobs", "2"], out, pids

    def assert_runs_gone(self, pids):
        for pid in map(int, os.listdir(pids)):
            assert_ends(self, pid, "run %d outlived the runner")

    def test_a_record_that_cannot_be_written_stops_the_sweep(self):
        # runs.jsonl full after its first record (ENOSPC): the exception waited in the pool's exit for every other
        # run (60 s each here), then a traceback. Now: one line naming runs.jsonl, at once, the runs in progress killed.
        args, out, pids = self.slow_sweep("nospace")
        code = ("import errno, os, sys\nsys.path.insert(0, %r)\nimport experiment\nfrom runner import execute\n"
                "real, calls = execute.append_line, []\n"
                "def full(path, text):\n"
                "    if calls: raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
                "    calls.append(path); real(path, text)\n"
                "execute.append_line = full\nsys.exit(experiment.main(sys.argv[1:]))\n" % os.path.join(ROOT, "experiments"))
        t0 = time.monotonic()
        p = subprocess.run(["/usr/bin/python3", "-c", code] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=200, env=dict(os.environ, PIDS=pids))
        self.assertLess(time.monotonic() - t0, 20, p.stderr)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        err = [x for x in p.stderr.splitlines() if x.strip()]
        self.assertEqual(len(err), 1, p.stderr)
        self.assertIn(os.path.join(out, "runs.jsonl"), err[0])
        self.assertIn("No space left on device", err[0])
        self.assertEqual(len(lines(out)), 1)
        self.assert_runs_gone(pids)

    def test_attachment_error_recorded_and_sweep_goes_on(self):
        # comm_derived of a one-node run (no comm section in its result) raised KeyError and ended the sweep; now
        # the attachment is {"error"}, the metric reading it fails by name, the next point runs, and `run` exits 1.
        doc = good_definition("attach", fixed={"algo": "cholesky", "n": 512, "B": 128, "s": 1, "threads": 2},
                              sweep=[{"grid": ["1x2", "1x1", "2x1"]}], attach=["comm_model", "comm_derived"],
                              metrics={"msgs": "comm_derived.max_messages_sent"}, reported=[],
                              plots=[{"file": "m", "kind": "lines", "title": "m", "x": "grid", "y": "msgs"}])
        path = write("attach", doc)
        out = os.path.join(WORK, "attach")
        shutil.rmtree(out, ignore_errors=True)
        rc, stdout, err = run("run", path, "--out", out)
        self.assertEqual(rc, 1, stdout + err)
        self.assertNotIn("Traceback", err)
        self.assertIn("3 run(s) ok (1 with a metric that failed", stdout)
        recs = {r["params"]["grid"]: r for r in lines(out)}
        self.assertEqual(sorted(recs), ["1x1", "1x2", "2x1"])
        self.assertEqual({r["status"] for r in recs.values()}, {"ok"})
        self.assertIn("no comm section", recs["1x1"]["attached"]["comm_derived"]["error"])
        self.assertIn("msgs", recs["1x1"]["metric_errors"])
        self.assertEqual(recs["2x1"]["metrics"]["msgs"], recs["2x1"]["attached"]["comm_derived"]["max_messages_sent"])
        self.assertEqual(err.count("metric msgs failed"), 1, err)
        with open(os.path.join(out, "runs.csv")) as f:
            rows = {r["grid"]: r for r in csv.DictReader(f)}
        self.assertIn("metric msgs failed", rows["1x1"]["error"])
        self.assertEqual(rows["2x1"]["error"], "")
        # A record whose run_wall_s is null (a record made elsewhere) crashed write_csv and left runs.csv with its
        # header only: now its cell is empty and every row is written.
        with open(os.path.join(out, "runs.jsonl")) as f:
            recs = [json.loads(x) for x in f]
        recs[0]["run_wall_s"] = None
        with open(os.path.join(out, "runs.jsonl"), "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in recs))
        rc, stdout, err = run("run", path, "--out", out)
        self.assertEqual(rc, 0, stdout + err)
        with open(os.path.join(out, "runs.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([r["run_wall_s"] == "" for r in rows], [True, False, False])
        self.assertFalse(os.path.exists(os.path.join(out, "runs.csv.tmp")))


class List(unittest.TestCase):
    def test_columns_count_runs_not_configurations(self):
        # `list`'s full and quick columns are runs: a configuration repeated three times (validate-prediction's
        # real runs) counts three; skip counts configurations left out.
        rc, out, err = run("list")
        self.assertEqual(rc, 0, err)
        rows = {line.split()[0]: line for line in out.splitlines()[1:]}
        repeated = 0
        for name in definition.all_names():
            d = definition.load(name)
            full, skipped = d.expand(False)
            quick, _ = d.expand(True)
            counts = re.search(r" (\d+) +(\d+) +(\d+)  ", rows[name])
            self.assertIsNotNone(counts, rows[name])
            self.assertEqual(tuple(int(x) for x in counts.groups()),
                             (sum(c.repeats for c in full), len(skipped), sum(c.repeats for c in quick)), name)
            repeated += any(c.repeats > 1 for c in full)
        self.assertGreater(repeated, 0, "no shipped definition repeats its runs: the test would not tell")


class ProgressBar(unittest.TestCase):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    def test_terminal(self):
        s = self.Tty()
        p = Progress(3, stream=s, title="x")
        p.update(True, "first")
        p.update(False, "second")
        text = s.getvalue()
        self.assertIn("2/3", text)
        self.assertIn("elapsed", text)
        self.assertIn("ETA", text)
        self.assertIn("failed 1", text)
        p.finish()

    def test_quiet_elsewhere(self):
        s = io.StringIO()
        p = Progress(3, stream=s)
        p.update(True)
        p.finish()
        self.assertEqual(s.getvalue(), "")


if __name__ == "__main__":
    TESSERA, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=sys.argv[:1] + sys.argv[3:], verbosity=1)  # then test names, if any
