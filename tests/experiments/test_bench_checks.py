#!/usr/bin/python3
"""The benchmarks count only checked answers, of the same matrix, against a peer run beside them.

    test_bench_checks.py WORK_DIR

A stand-in answers for tessera, scalapack_peer and starpu_peer (and one for
mpirun runs its program once): it logs each call, writes the JSON a run
writes, with check_passed true when it was given --check, and, for a call
matching $FAIL_CHECK, check_passed false and exit 1 as the real programs do
after a failed check; for a call matching $NO_CHECK it ignores --check
(check_passed null, exit 0).

- bench_cpu.py, bench_mpi.py, bench_starpu.py and bench_gpu.py give --check to
  every run of both sides (--check every, the default), to each side's first
  rep only with --check first, to none with --check none, and say which on
  their output; a run whose check failed, or that was asked to check and did
  not, is left out of the medians and named, and a failed check makes the
  exit status 1 (bench_mpi.py tolerates a failing tessera run, not a wrong
  one);
- bench_cpu.py gives --tile-args' --matrix, --seed and --input to the LAPACKE
  runs too, so that both sides factor the same matrix;
- bench_gpu.py runs the cuSOLVER peer before each block of consecutive rows
  of one algorithm and compares those rows with that block's peer runs only.
"""
import os
import shutil
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = None

STAND_IN = r'''#!/usr/bin/python3
import json, os, re, sys
args = sys.argv[1:]
line = os.path.basename(sys.argv[0]) + " " + " ".join(args)
with open(os.environ["STAND_IN_LOG"], "a") as f:
    f.write(line + "\n")
opt = lambda name, default: args[args.index(name) + 1] if name in args else default
fail = os.environ.get("FAIL_CHECK") and re.search(os.environ["FAIL_CHECK"], line)
ignore = os.environ.get("NO_CHECK") and re.search(os.environ["NO_CHECK"], line)
checked = "--check" in args and not ignore
rates = json.loads(os.environ.get("RATES", "{}"))
gflops = next((v for k, v in rates.items() if re.search(k, line)), 10.0)
result = {"algo": opt("--algo", "cholesky"), "n": int(opt("--n", "64")), "time_s": 1.0, "copy_s": 0.0,
          "gflops": gflops, "blas_core": "Stand-in", "threads": int(opt("--threads", "1")),
          "sched": opt("--sched", None), "tasks": int(os.environ.get("TASKS", "0")), "gpu_stats": [],
          "residual": (1e3 if fail else 0.5) if checked else None,
          "check_passed": (not fail) if checked else None}
if "--json" in args:
    with open(opt("--json", ""), "w") as f:
        json.dump(result, f)
sys.exit(1 if checked and fail else 0)
'''

MPIRUN = r'''#!/usr/bin/python3
import subprocess, sys
args = sys.argv[1:]
np = args.index("-np")
sys.exit(subprocess.call(args[np + 2:]))
'''


def write(path, text, mode=0o755):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


class Bench(unittest.TestCase):
    def setUp(self):
        self.dir = os.path.join(WORK, self.id().split(".")[-1])
        shutil.rmtree(self.dir, ignore_errors=True)
        self.build = os.path.join(self.dir, "build")
        os.makedirs(self.build)
        for program in ("tessera", "scalapack_peer", "starpu_peer"):
            write(os.path.join(self.build, program), STAND_IN)
        path = os.path.join(self.dir, "path")
        os.makedirs(path)
        write(os.path.join(path, "mpirun"), MPIRUN)
        self.log = os.path.join(self.dir, "calls.log")
        self.env = {"STAND_IN_LOG": self.log, "PATH": path + os.pathsep + os.environ["PATH"]}

    def bench(self, script, *args, **env):
        if os.path.exists(self.log):
            os.remove(self.log)
        where = ["--build", self.build] if script in ("bench_mpi.py", "bench_starpu.py") else \
            ["--binary", os.path.join(self.build, "tessera")]
        p = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", script), *where, *args,
                            "--out", os.path.join(self.dir, "runs")], capture_output=True, text=True, timeout=120,
                           cwd=ROOT, env=dict(os.environ, **self.env, **env))
        self.assertNotIn("Traceback", p.stderr)
        calls = []  # none when the script refused its arguments
        if os.path.exists(self.log):
            with open(self.log) as f:
                calls = f.read().splitlines()
        return p.returncode, p.stdout, p.stderr, calls

    def assert_checks(self, calls, checked, what):
        """Which of the calls (the timed runs, probes aside) got --check."""
        self.assertEqual(["--check" in c.split() for c in calls], checked, what + ":\n" + "\n".join(calls))

    def test_bench_cpu(self):
        cpu = ("bench_cpu.py", "--threads", "1", "--reps", "2", "--sweep", "lu",
               "--tile-args", "--B 64")
        rc, out, err, calls = self.bench(*cpu, RATES='{"impl tile": 20.0}')  # 2.00x: every target met
        self.assertEqual(rc, 0, out + err)
        self.assertIn("Checks: every run of both sides checked", out)
        self.assert_checks(calls, [True] * len(calls), "every run checked")
        # LAPACKE's second rep of the first row fails its check: left out (the median of one), named, exit 1.
        rc, out, err, calls = self.bench(*cpu, FAIL_CHECK=r"--impl lapack .*_r1\.json", RATES='{"impl lapack": 5.0}')
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(err.count("lapack rep 2: exit 1"), 7, err)
        # A tessera that ignores --check is not taken at its word.
        rc, out, err, calls = self.bench(*cpu, NO_CHECK="--impl tile")
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(err.count("says check_passed null"), 14, err)
        self.assertTrue(all(" failed " in l for l in out.splitlines() if l.startswith("lu ")), out)
        rc, out, err, calls = self.bench(*cpu[:-2], "--check", "first")
        self.assert_checks(calls, ["_r0.json" in c for c in calls], "each side's first rep only")
        self.assertIn("only each side's first run of a row checked", out)

    def test_bench_cpu_same_matrix(self):
        rc, out, err, calls = self.bench("bench_cpu.py", "--threads", "1", "--reps", "1", "--quick", "--tile-args",
                                         "--matrix graded --seed=7 --B 64")
        lapack = [c for c in calls if "--impl lapack" in c]
        self.assertEqual(len(lapack), 4, calls)
        for c in lapack:  # the same matrix as tessera's, not tessera's tiles
            self.assertIn(" --matrix graded --seed=7 ", c + " ")
            self.assertNotIn("--B 64", c)

    def test_bench_mpi_same_matrix(self):
        rc, out, err, calls = self.bench("bench_mpi.py", "--grid", "1x1", "--reps", "1", "--algos", "lu", "--n", "64",
                                         "--tile-args", "--pivot partial --matrix graded --seed=7")
        self.assertEqual(rc, 0, out + err)
        peer = [c for c in calls if c.startswith("scalapack_peer")]
        self.assertEqual(len(peer), 1, calls)
        self.assertIn(" --matrix graded --seed=7 ", peer[0] + " ")  # the peer generates tessera's matrices
        self.assertNotIn("--pivot", peer[0])
        rc, out, err, calls = self.bench("bench_mpi.py", "--tile-args", "--input a.mtx")
        self.assertEqual(rc, 2, out + err)
        self.assertIn("--input reaches tessera only", err)
        self.assertEqual(calls, [])

    def test_bench_mpi(self):
        mpi = ("bench_mpi.py", "--grid", "1x1", "--reps", "2", "--algos", "cholesky,qr", "--n", "64")
        rc, out, err, calls = self.bench(*mpi, RATES='{"scalapack": 10.0, "tessera": 35.0}')
        self.assertEqual(rc, 0, out + err)
        self.assertIn("Checks: every run of both sides checked", out)
        self.assert_checks(calls, [True] * 8, "both sides, every rep")
        # A tessera run with a wrong answer is not 'unfinished': left out and exit 1; ScaLAPACK's the same.
        for side in ("tessera", "scalapack_peer"):
            with self.subTest(side=side):
                rc, out, err, calls = self.bench(*mpi, FAIL_CHECK="^%s .*qr.*_r1" % side)
                self.assertEqual(rc, 1, out + err)
                self.assertIn("1 run(s) failed their check", err)
        # A ScaLAPACK that ignores --check is not taken at its word: no reference value, exit 1.
        rc, out, err, calls = self.bench(*mpi, NO_CHECK="^scalapack_peer")
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(err.count("asked to --check, its JSON says check_passed null; left out"), 4, err)
        rc, out, err, calls = self.bench(*mpi, "--check", "none")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("results NOT checked", out)
        self.assert_checks(calls, [False] * 8, "--check none")

    def test_bench_starpu(self):
        starpu = ("bench_starpu.py", "--configs", "640:64", "--reps", "2", "--threads", "2", "--sched", "lws")
        rc, out, err, calls = self.bench(*starpu, TASKS="220")
        self.assertEqual(rc, 0, out + err)
        self.assert_checks(calls[1:], [True] * 4, "every run after the probe")
        rc, out, err, calls = self.bench(*starpu, TASKS="220", FAIL_CHECK="^starpu_peer .*_r0")
        self.assertEqual(rc, 1, out + err)
        self.assertIn("1 run(s) failed their check", err)
        # tessera's two runs, StarPU's one that passed its check
        self.assertTrue(any(l.startswith("         640") and l.endswith("10.0, 10.0 / 10.0") for l in out.splitlines()),
                        out)


    def test_bench_gpu(self):
        gpu = ("bench_gpu.py", "--n", "64", "--reps", "2", "--rows", "cholesky:--B 64", "qr:--B 64")
        rc, out, err, calls = self.bench(*gpu)
        self.assertEqual(rc, 0, out + err)
        self.assert_checks(calls, [True] * 8, "every run of both sides")
        rc, out, err, calls = self.bench(*gpu, "--check", "none")
        self.assertIn("results NOT checked", out)
        self.assert_checks(calls, [False] * 8, "--check none")
        rc, out, err, calls = self.bench(*gpu, FAIL_CHECK="--algo qr .*impl cusolver .*_r0")
        self.assertEqual(rc, 1, out + err)
        self.assertIn("1 run(s) failed their check: cuSOLVER qr d rep 0", err)
        self.assertIn("| qr | d | `--B 64` | 0.01 | 0.01 | 0.01 | 1.00 | 1.00 | 0.01, 0.01 | 0.01 |", out)


    def test_bench_gpu_peer_beside_its_rows(self):
        rows = ["--rows", "cholesky:--B 64", "qr:--B 64", "cholesky:--B 128"]
        # The first Cholesky block's peer at 10, the second's at 40; tessera at 20: row 2 is 0.50x its own peer's.
        rc, out, err, calls = self.bench("bench_gpu.py", "--n", "64", "--reps", "2", *rows,
                                         RATES='{"cusolver .*row0_": 10.0, "cusolver .*row2_": 40.0, '
                                               '"cusolver": 30.0, "cuda": 20.0}')
        self.assertEqual(rc, 0, out + err)
        order = [("cusolver" if "--impl cusolver" in c else "tessera") + " " + c.split()[3] for c in calls]
        self.assertEqual(order, ["cusolver cholesky", "tessera cholesky", "cusolver qr", "tessera qr",
                                 "cusolver cholesky", "tessera cholesky"] * 2, calls)
        table = [l for l in out.splitlines() if l.startswith("| cholesky") or l.startswith("| qr")][:3]
        self.assertEqual([l.split("|")[7:9] for l in table], [[" 2.00 ", " 2.00 "], [" 0.67 ", " 0.67 "],
                                                              [" 0.50 ", " 0.50 "]], out)


if __name__ == "__main__":
    WORK = os.path.abspath(sys.argv[1])
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=sys.argv[:1], verbosity=1)
