#!/usr/bin/python3
"""The Python tools' outputs on a write that fails part-way (a full disk).

    test_write_failures.py

Each output (`experiment report --output`, a sweep's meta.json and runs.csv,
explore's results.csv, the figures) is written through a temporary file
beside it and renamed over it (runner/outputs.replace_file): a write that
fails leaves the previous file as it was and no temporary, and the tool says
so in one line naming the file (exit 2), not a traceback. The failures are
real ones: a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: a write past it
fails with EFBIG, as one on a full disk with ENOSPC) and /dev/full. The runs
are a stand-in for tessera that writes its result at once.
"""
import contextlib
import errno
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
import explore  # noqa: E402
from runner import definition, execute, outputs  # noqa: E402

RUNNER = os.path.join(ROOT, "experiments", "experiment.py")
WORK = None


@contextlib.contextmanager
def size_limit(limit):
    """Files of this process may not grow past `limit` bytes (a write beyond fails with EFBIG)."""
    old_sig = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_sig)


def tool(*args, limit=None):
    """(exit status, stdout, stderr) of a tool run with /usr/bin/python3, its files limited to `limit` bytes."""
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    p = subprocess.run(["/usr/bin/python3"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120, preexec_fn=preexec if limit else None)
    return p.returncode, p.stdout, p.stderr


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Failures(unittest.TestCase):
    def assert_one_line(self, rc, err, path, why="File too large"):
        self.assertEqual(rc, 2, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(path, err)
        self.assertIn(why, err)

    def assert_kept(self, folder, before):
        """Every file of `folder` as `before` ({name: bytes}): the previous outputs whole, no temporary."""
        self.assertEqual({n: read(os.path.join(folder, n)) for n in os.listdir(folder)
                          if os.path.isfile(os.path.join(folder, n))}, before)

    def snapshot(self, folder):
        return {n: read(os.path.join(folder, n)) for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n))}

    def test_replace_file(self):
        folder = os.path.join(WORK, "replace")
        os.makedirs(folder)
        path = os.path.join(folder, "out.txt")
        outputs.replace_file(path, lambda f: f.write("previous\n"))
        os.chmod(path, 0o640)

        def fails(f):
            f.write("half of the new")
            f.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        with self.assertRaises(outputs.WriteError) as e:
            outputs.replace_file(path, fails)
        self.assertEqual(str(e.exception), "%s: cannot write it (No space left on device)" % path)
        with self.assertRaises(KeyError):  # any error: the temporary goes, the error goes on
            outputs.replace_file(path, lambda f: {}["x"])
        self.assert_kept(folder, {"out.txt": b"previous\n"})
        outputs.replace_file(path, lambda f: f.write(b"new\n"), binary=True)
        self.assertEqual((read(path), os.stat(path).st_mode & 0o777), (b"new\n", 0o640))
        with self.assertRaises(outputs.WriteError) as e:  # a device is written in place, not replaced
            outputs.replace_file("/dev/full", lambda f: f.write("x" * 10000))
        self.assertIn("/dev/full: cannot write it (No space left on device)", str(e.exception))
        self.assertFalse(os.path.isfile("/dev/full"))

    def test_report_output(self):
        # `experiment report --output` truncated the previous report, then a traceback.
        folder = os.path.join(WORK, "report")
        results = os.path.join(WORK, "no_results")
        os.makedirs(folder)
        os.makedirs(results)
        path = os.path.join(folder, "REPRODUCTION.md")
        with open(path, "w") as f:
            f.write("the previous report\n")
        rc, _, err = tool(RUNNER, "report", "--output", path, "--results", results, limit=200)
        self.assert_one_line(rc, err, path)
        self.assert_kept(folder, {"REPRODUCTION.md": b"the previous report\n"})
        rc, _, err = tool(RUNNER, "report", "--output", "/dev/full", "--results", results)
        self.assert_one_line(rc, err, "/dev/full", "No space left on device")
        rc, _, err = tool(RUNNER, "report", "--output", path, "--results", results)
        self.assertEqual(rc, 0, err)
        self.assertIn(b"Definitions without results", read(path))

    def sweep(self):
        """(definition file, results folder) of a two-point sweep of a stand-in for tessera, run and plotted."""
        fake = os.path.join(WORK, "fake_tessera")
        with open(fake, "w") as f:
            f.write("#!/usr/bin/python3\nimport json, sys\na = sys.argv\n"
                    "json.dump({'gflops': float(a[a.index('--n') + 1]), 'time_s': 1.0}, open(a[a.index('--json') + 1], 'w'))\n")
        os.chmod(fake, 0o755)
        doc = {"name": "writes", "title": "writes", "paper": {"id": "test", "figure": "none"},
               "machine": "platform/machines/keeneland.json", "backend": "sim", "fixed": {"algo": "cholesky", "B": 128},
               "sweep": [{"n": [1, 2]}], "metrics": {"tflops": "gflops / 1000"},
               "plots": [{"file": "t", "kind": "lines", "title": "t", "x": "n", "y": "tflops", "xlabel": "N",
                          "ylabel": "TFlop/s"}]}
        path = os.path.join(WORK, "writes.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        out = os.path.join(WORK, "writes")
        for args in (["run", path], ["plot", path]):
            rc, _, err = tool(RUNNER, "--tessera", fake, *args, "--out", out)
            self.assertEqual(rc, 0, err)
        return fake, path, out

    def test_sweep_outputs(self):
        fake, path, out = self.sweep()
        before = self.snapshot(out)
        self.assertEqual(sorted(before), ["meta.json", "runs.csv", "runs.jsonl"])
        # meta.json (written first) was truncated in place, then a traceback.
        rc, _, err = tool(RUNNER, "--tessera", fake, "run", path, "--out", out, "--force", limit=300)
        self.assert_one_line(rc, err, os.path.join(out, "meta.json"))
        self.assert_kept(out, before)
        # The figures: savefig wrote over the last ones.
        figures = os.path.join(out, "figures")
        shown = self.snapshot(figures)
        self.assertEqual(sorted(shown), ["t.pdf", "t.png"])
        rc, _, err = tool(RUNNER, "plot", path, "--out", out, limit=1000)
        self.assert_one_line(rc, err, os.path.join(figures, "t.png"))
        self.assert_kept(figures, shown)
        rc, _, err = tool(os.path.join(ROOT, "analysis", "plot_experiment.py"), out, limit=1000)
        self.assert_one_line(rc, err, os.path.join(figures, "t.png"))
        self.assert_kept(figures, shown)
        # runs.csv: its runs.csv.tmp was left behind.
        defn = definition.load(path)
        with size_limit(100):
            with self.assertRaises(outputs.WriteError) as e:
                execute.write_csv(out, defn)
        self.assertIn(os.path.join(out, "runs.csv") + ": cannot write it (File too large)", str(e.exception))
        self.assert_kept(out, before)

    def test_explore_results(self):
        folder = os.path.join(WORK, "explore")
        os.makedirs(folder)
        path = os.path.join(folder, "results.csv")
        rows = [{"rank": 1, "status": "ok", "time_s": 1.0, "config_id": "c" * 12, "error": "x" * 300}]
        explore.write_results(path, rows, [])
        before = self.snapshot(folder)
        with size_limit(200):
            with self.assertRaises(outputs.WriteError) as e:
                explore.write_results(path, rows * 2, [])
        self.assertIn(path + ": cannot write it (File too large)", str(e.exception))
        self.assert_kept(folder, before)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="tessera-write-failures-") as WORK:
        ok = unittest.main(argv=sys.argv, verbosity=1, exit=False).result.wasSuccessful()
    sys.exit(0 if ok else 1)
