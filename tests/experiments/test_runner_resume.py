#!/usr/bin/python3
"""What a resumed sweep keeps, on small definitions written here.

    test_runner_resume.py TESSERA_BINARY WORK_DIR

A rerun of a sweep skips the runs recorded (test_runner.py) except those that
no longer stand for a run of this sweep: a simulation whose machine file's
figures changed since (prose does not count), a real run recorded on another
host; and the figures read the repeats the last sweep ran, not an older
sweep's extra ones. A second sweep into a folder another is writing is refused
(exit 2, naming the folder, nothing run).
"""
import fcntl
import json
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_runner as tr  # noqa: E402  (its definitions and the way it runs the runner)

sys.path.insert(0, os.path.join(tr.ROOT, "analysis"))
import experiment_results  # noqa: E402


class Resume(unittest.TestCase):
    def native_sweep(self, name, repeats):
        """Runs a one-point real sweep (a Cholesky of order 64) into a fresh folder: (definition, its file, folder)."""
        doc = tr.good_definition(name, backend="native", sweep=[{"n": [64]}],
                                 fixed={"algo": "cholesky", "B": 32, "threads": 1}, reported=[], repeats=repeats)
        del doc["machine"]
        path = tr.write(name, doc)
        out = os.path.join(tr.WORK, name)
        shutil.rmtree(out, ignore_errors=True)
        rc, _, err = tr.run("run", path, "--out", out)
        self.assertEqual(rc, 0, err)
        return doc, path, out

    def test_resume_reruns_a_simulation_whose_machine_changed(self):
        # A resumed sweep keeps a simulated record only while its machine file holds the figures it ran on: a new
        # number (a recalibration, an edit) runs it again, so one figure never mixes two models; prose does not.
        machine = os.path.join(tr.WORK, "machine-resume.json")
        with open(os.path.join(tr.ROOT, "platform", "machines", "keeneland.json")) as f:
            doc = json.load(f)
        with open(machine, "w") as f:
            json.dump(doc, f)
        path = tr.write("machine-resume", tr.good_definition("machine-resume", machine=machine, sweep=[{"gpus": [3]}],
                                                             reported=[]))
        out = os.path.join(tr.WORK, "machine-resume")
        shutil.rmtree(out, ignore_errors=True)
        rc, _, err = tr.run("run", path, "--out", out)
        self.assertEqual(rc, 0, err)
        first = tr.lines(out)[0]
        self.assertRegex(first["machine_digest"], "^[0-9a-f]{12}$")
        doc["description"] = "the same node, described again"
        with open(machine, "w") as f:
            json.dump(doc, f)
        rc, stdout, err = tr.run("run", path, "--out", out)
        self.assertEqual(rc, 0, err)
        self.assertIn("0 run(s) ok, 0 failed, 1 already done", stdout)
        doc["network"]["latency_s"]["value"] *= 2
        with open(machine, "w") as f:
            json.dump(doc, f)
        rc, stdout, err = tr.run("run", path, "--out", out)
        self.assertEqual(rc, 0, err)
        self.assertIn("1 run(s) ok, 0 failed, 0 already done", stdout)
        self.assertIn("was simulated on other figures of %s (digest %s then, " % (machine, first["machine_digest"]), err)
        second = tr.lines(out)[-1]
        self.assertNotEqual(second["machine_digest"], first["machine_digest"])
        rc, stdout, _ = tr.run("run", path, "--out", out)  # the new record is the run's: kept
        self.assertIn("0 run(s) ok, 0 failed, 1 already done", stdout)
        del second["machine_digest"]  # a record from before digests were kept is kept
        with open(os.path.join(out, "runs.jsonl"), "a") as f:
            f.write(json.dumps(second) + "\n")
        rc, stdout, _ = tr.run("run", path, "--out", out)
        self.assertIn("0 run(s) ok, 0 failed, 1 already done", stdout)

    def test_resume_reruns_a_real_run_of_another_host(self):
        # A real run's record stands for a run on the host that made it: a results folder copied from another
        # machine and resumed here runs its real runs again rather than mixing two machines' speeds.
        doc, path, out = self.native_sweep("host-resume", repeats=1)
        rec = tr.lines(out)[0]
        self.assertNotIn("machine_digest", rec)
        rc, stdout, _ = tr.run("run", path, "--out", out)
        self.assertIn("0 run(s) ok, 0 failed, 1 already done", stdout)
        rec["host"] = "another-host"
        with open(os.path.join(out, "runs.jsonl"), "a") as f:
            f.write(json.dumps(rec) + "\n")
        rc, stdout, err = tr.run("run", path, "--out", out)
        self.assertEqual(rc, 0, err)
        self.assertIn("1 run(s) ok, 0 failed, 0 already done", stdout)
        self.assertIn("ran on host another-host, not this one", err)

    def test_fewer_repeats_leave_the_extra_runs_out(self):
        # A point's value is the median of the repeats the last sweep ran: after a definition goes from 2 repeats
        # to 1, the resumed sweep's figures and report read one run, not the older sweep's second as well.
        doc, path, out = self.native_sweep("repeats-fewer", repeats=2)
        self.assertEqual(len(experiment_results.Results(out).points()[0].ok), 2)
        doc["repeats"] = 1
        path = tr.write("repeats-fewer", doc)
        rc, stdout, err = tr.run("run", path, "--out", out)
        self.assertIn("0 run(s) ok, 0 failed, 1 already done", stdout)
        self.assertEqual(len(experiment_results.Results(out).points()[0].ok), 1)


    def test_a_second_sweep_into_the_folder_is_refused(self):
        # Started twice by mistake, two sweeps into one folder would run every pending run twice, the real ones
        # timing each other: while one holds the folder (here the test holds its lock), another exits 2 at once.
        doc, path, out = self.native_sweep("busy-folder", repeats=1)
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            rc, stdout, err = tr.run("run", path, "--out", out, "--force")
        finally:
            os.close(fd)
        self.assertEqual(rc, 2, stdout + err)
        self.assertIn("busy-folder: another sweep is writing this folder", err)
        self.assertEqual(len(tr.lines(out)), 1)
        rc, stdout, err = tr.run("run", path, "--out", out, "--force")  # the lock went with its holder
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(tr.lines(out)), 2)

if __name__ == "__main__":
    tr.TESSERA, tr.WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(tr.WORK, exist_ok=True)
    unittest.main(argv=sys.argv[:1] + sys.argv[3:], verbosity=1)
