#!/usr/bin/python3
"""The benchmarks' numbers, with a stand-in for tessera that answers each run
with a JSON chosen for it, so that every number of their tables is known.

    test_bench_numbers.py WORK_DIR

experiments/bench_gpu.py (issue 15 point 5's table: whether tessera beats
cuSOLVER on the lent GPU machine; no machine here has a GPU): cuSOLVER's three
reps at 1000, 2000 and 1500 GFlop/s for the factorization, with copies of
0.25, 0 and 0.5 s beside its 1 s (800, 2000 and 1000 GFlop/s counting
them); tessera's at 900, 1100 and 3000. So the medians are 1100 (tessera),
1000 (cuSOLVER with copies) and 1500 (without), the ratios 1.10 and 0.73;
tessera's copies in at 8, 6 and 10 GB/s (median 8), out at 4, 2 and 6 (4);
cuSOLVER's matrix in and out (2 N^2 x 8 bytes at N = 32,768) over 0.25 and
0.5 s, 68.7 and 34.4 GB/s (median 51.5); the GPU's time: runs of 2.0, 2.2
and 1.0 s, manager busy 1.5, 1.6 and 0.9 s, kernel spans 1.0, 1.2 and 0.5 s
(medians 2.0, 1.5, 1.0: the host's share 0.5). The runs alternate: the
peer, then tessera, per rep.

experiments/bench_cpu.py (tessera against LAPACKE on one node, issue 2's
targets): every row's tessera runs at 90, 110 and 300 GFlop/s, LAPACKE's at
100, 200 and 80: medians 110 and 100, 1.10x, which meets Cholesky N = 4096's
target of 1.1x exactly and misses QR's 1.2x (exit 1); tessera's runs are
--column-major, their conversions a tenth of their time: 1.00x with them.

experiments/tune_validate.py (`tessera tune`'s choice against a sweep of every
B and s): the stand-in's runs take 1 + |B - 384| / 640 s, plus 0.02 s left of
B = 384 and 0.15, 0 or 0.04 s for s = 1, 2, 3 (27 distinct times): the
fastest point is B=384 s=2 at 1.0 s, then B=384 s=3 at 1.04 and B=448 s=2 at
1.1; the slowest B=128 s=1 at 1.57. LAPACKE's run takes 2.6 s. A tuner
choosing B=576 s=2 (1.3 s) is 1.3x the best, 2.00x LAPACKE's speed: exit 1;
one choosing B=384 s=3 is 1.04x, within 5%: exit 0.

Without --binary (--build) the scripts use the build/ beside their own
experiments/ folder, whatever the cwd: copies of them in a tree whose build/
is empty, run from another folder, refuse its tessera by its full path
(bench_gpu.py before its sweep, not with one failed run per point).
"""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

STAND_IN = """#!/usr/bin/python3
import json, os, re, sys
a = sys.argv[1:]
out = a[a.index("--json") + 1]
name = os.path.basename(out)
with open(os.environ["BENCH_TABLE"]) as f:
    table = json.load(f)
if name in table:
    answer = table[name]
else:  # bench_cpu.py's ALGO_PREC_MxN_IMPL_VARIANT_rREP.json
    impl, rep = re.search(r"_(tile|lapack)_.*_r([0-9]+)[.]json$", name).groups()
    answer = {"gflops": table["cpu_" + impl][int(rep)], "blas_core": "Stand-in"}
    if "--column-major" in a:  # its conversions take a tenth of its time
        answer.update(time_s=1.0, convert_s=0.1)
answer = dict(answer, check_passed=True if "--check" in a else None)
with open(os.environ["BENCH_LOG"], "a") as f:
    f.write(name + "\\n")
with open(out, "w") as f:
    json.dump(answer, f)
"""

# tune_validate.py's tessera: `tune` writes the choice $TUNE_CHOICE ("B,s"); `run` writes a time_s that is a
# known function of the --B and --s it gets (or of the choice in its --tuned file), 2.6 s for LAPACKE's run.
TUNE_STAND_IN = """#!/usr/bin/python3
import json, os, sys
a = sys.argv[1:]
opt = lambda name: a[a.index(name) + 1]
if a[0] == "tune":
    B, s = (int(x) for x in os.environ["TUNE_CHOICE"].split(","))
    with open(opt("--out"), "w") as f:
        json.dump({"choice": {"B": B, "s": s, "decided_by": "stand-in"}, "seconds": 5.0}, f)
    sys.exit(0)
with open(os.environ["BENCH_LOG"], "a") as f:
    f.write(" ".join(a[a.index("--json") + 2:]) + "\\n")
if "--impl" in a:
    t = 2.6
else:
    if "--tuned" in a:
        with open(opt("--tuned")) as f:
            choice = json.load(f)["choice"]
        B, s = choice["B"], choice["s"]
    else:
        B, s = int(opt("--B")), int(opt("--s"))
    t = 1 + abs(B - 384) / 640 + (0.02 if B < 384 else 0) + {1: 0.15, 2: 0, 3: 0.04}[s]
with open(opt("--json"), "w") as f:
    json.dump({"time_s": t, "blas_core": "Stand-in"}, f)
"""


def peer(gflops, copy_s):
    return {"gflops": gflops, "time_s": 1.0, "copy_s": copy_s}


def tessera(gflops, time_s, gb_in, gb_out, busy, span):
    return {"gflops": gflops, "time_s": time_s,
            "gpu_stats": [{"bytes_in": gb_in * 1e9, "copy_in_s": 1.0, "bytes_out": gb_out * 1e9, "copy_out_s": 1.0,
                           "busy_s": busy, "kernel_span_s": span}]}


def bench(script, program, table, log, *args):
    """experiments/SCRIPT with the stand-in as its tessera, answering from `table`, logging its runs to `log`."""
    return subprocess.run([sys.executable, os.path.join(ROOT, "experiments", script), "--binary", program, *args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, cwd=ROOT,
                          env=dict(os.environ, BENCH_TABLE=table, BENCH_LOG=log))


def expect(cond, what, out=""):
    if not cond:
        print("FAIL: %s\n%s" % (what, out))
        sys.exit(1)


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    program, table, log = (os.path.join(work, n) for n in ("tessera", "table.json", "calls.log"))
    with open(program, "w") as f:
        f.write(STAND_IN)
    os.chmod(program, 0o755)
    answers = {}
    for r, (p, t) in enumerate(zip([peer(1000, 0.25), peer(2000, 0.0), peer(1500, 0.5)],
                                   [tessera(900, 2.0, 8, 4, 1.5, 1.0), tessera(1100, 2.2, 6, 2, 1.6, 1.2),
                                    tessera(3000, 1.0, 10, 6, 0.9, 0.5)])):
        answers["row0_d_cusolver_r%d.json" % r] = p
        answers["row0_d_tessera_r%d.json" % r] = t
    with open(table, "w") as f:
        json.dump(answers, f)
    if os.path.exists(log):
        os.remove(log)
    js = os.path.join(work, "bench.json")
    p = bench("bench_gpu.py", program, table, log, "--n", "32768", "--reps", "3", "--rows", "cholesky:--B 64", "--out",
              os.path.join(work, "runs"), "--json", js)
    out = p.stdout + p.stderr
    expect(p.returncode == 0, "exit 0, got %d" % p.returncode, out)
    with open(log) as f:
        calls = f.read().split()
    expect(calls == [n for r in range(3) for n in ("row0_d_cusolver_r%d.json" % r, "row0_d_tessera_r%d.json" % r)],
           "the peer and tessera alternate, rep by rep", str(calls))
    lines = p.stdout.splitlines()
    for want, what in (("| cholesky | d | `--B 64` | 1.10 | 1.00 | 1.50 | 1.10 | 0.73 | 0.90, 1.10, 3.00 | "
                        "0.80, 2.00, 1.00 |", "the rates: medians and their ratios"),
                       ("| cholesky | d | `--B 64` | 8.0 | 4.0 | 51.5 |", "the copies' rates"),
                       ("| cholesky | d | `--B 64` | 2.000 | 1.500 | 1.000 | 0.500 |", "the GPU's time")):
        expect(want in lines, what, p.stdout)
    with open(js) as f:
        row = json.load(f)["rows"][0]
    expect(row["cusolver_gflops_with_copies"] == [800.0, 2000.0, 1000.0] and
           row["cusolver_gflops_without_copies"] == [1000.0, 2000.0, 1500.0] and row["tessera_gflops"] == [900, 1100, 3000],
           "every rep's rate in the JSON", str(row))
    expect(abs(row["ratio_with_copies"] - 1.1) < 1e-12 and abs(row["ratio_without_copies"] - 1100 / 1500) < 1e-12,
           "the JSON's ratios", str(row))
    print("bench_gpu: medians, ratios, copy rates and the GPU's time of a stand-in's runs: ok")

    answers["cpu_tile"], answers["cpu_lapack"] = [90, 110, 300], [100, 200, 80]
    with open(table, "w") as f:
        json.dump(answers, f)
    p = bench("bench_cpu.py", program, table, log, "--threads", "1", "--reps", "3", "--out", os.path.join(work, "cpu"))
    rows = {tuple(l.split()[:3]): l.split()[3:] for l in p.stdout.splitlines() if l.startswith(("cholesky", "qr"))}
    expect(p.returncode == 1, "exit 1: QR's target missed, got %d" % p.returncode, p.stdout + p.stderr)
    # With conversions: 90, 110 and 300 over 1.1 s, median 100, 1.00x LAPACKE's 100 (the target is on the ratio).
    expect(rows.get(("cholesky", "d", "4096")) == ["110.0", "100.0", "1.10x", "1.00x", "1.1x", "yes"],
           "the medians, their ratio, with conversions, and 1.10x meeting a target of 1.1x", p.stdout)
    expect(rows.get(("qr", "d", "8192")) == ["110.0", "100.0", "1.10x", "1.00x", "1.2x", "NO"], "1.10x missing 1.2x",
           p.stdout)
    expect(len(rows) == 5 and "OpenBLAS kernels: Stand-in" in p.stdout, "every row, and the kernels named", p.stdout)
    print("bench_cpu: medians, ratios and targets of a stand-in's runs: ok")
    tune_validate(work)
    default_binaries(work)


def default_binaries(work):
    """Each script's default tessera (or build folder) is its checkout's, not the cwd's build/."""
    tree = os.path.join(work, "tree")
    shutil.rmtree(tree, ignore_errors=True)
    for sub in ("experiments", "analysis"):
        shutil.copytree(os.path.join(ROOT, sub), os.path.join(tree, sub), ignore=lambda d, names: [
            n for n in names if not n.endswith(".py") and n != "runner"])
    build, elsewhere = os.path.join(tree, "build"), os.path.join(work, "elsewhere")
    os.makedirs(build)
    os.makedirs(os.path.join(elsewhere, "build"), exist_ok=True)  # the cwd's build/, not the one to use
    for script, args, needle in (("bench_gpu.py", [], "--binary %s/tessera: not an executable"),
                                 ("bench_cpu.py", [], "--binary %s/tessera: not an executable"),
                                 ("tune_validate.py", ["--out", os.path.join(work, "tv")], "--binary %s/tessera: not an executable"),
                                 ("gpu_predict.py", [work], "--binary %s/tessera: not an executable"),
                                 ("bench_mpi.py", [], "--build %s: no scalapack_peer there"),
                                 ("bench_starpu.py", [], "--build %s: no starpu_peer there")):
        p = subprocess.run([sys.executable, os.path.join(tree, "experiments", script), *args], cwd=elsewhere,
                           capture_output=True, text=True, timeout=60)
        expect(p.returncode == 2 and needle % build in p.stderr,
               "%s: exit 2 naming %s, got %d" % (script, needle % build, p.returncode), p.stdout + p.stderr)
    print("bench_gpu, bench_cpu, tune_validate, gpu_predict, bench_mpi, bench_starpu: the checkout's build/: ok")


def tune_validate(work):
    """tune_validate.py's sweep, tune and confirm on one cell, with the stand-in's times known for every B and s."""
    program, log = os.path.join(work, "tune_tessera"), os.path.join(work, "tune_calls.log")
    with open(program, "w") as f:
        f.write(TUNE_STAND_IN)
    os.chmod(program, 0o755)
    # (the tuner's choice, tuned / best, LAPACKE / tuned, the confirmed grid points, exit status): the confirmed
    # points are the sweep's three fastest, less the tuned one (it runs once, as "tuned").
    for choice, ratio, speed, confirmed, rc in (("576,2", 1.3, 2.0, ["B384 s2", "B384 s3", "B448 s2"], 1),
                                                ("384,3", 1.04, 2.5, ["B384 s2", "B448 s2"], 0)):
        out = os.path.join(work, "tune_" + choice.replace(",", "_"))
        shutil.rmtree(out, ignore_errors=True)
        if os.path.exists(log):
            os.remove(log)
        p = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "tune_validate.py"), "--binary", program,
                            "--cells", "cholesky:d:64", "--reps", "1", "--threads", "1", "--out", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, cwd=ROOT,
                           env=dict(os.environ, TUNE_CHOICE=choice, BENCH_LOG=log))
        what = "tuner choosing B,s = %s: " % choice
        why = "exit %d (tuned / best %s 1.05), got %d" % (rc, ("<=", ">")[rc], p.returncode)
        expect(p.returncode == rc, what + why, p.stdout + p.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            row = json.load(f)[0]
        B, s = choice.split(",")
        expect(abs(row["tuned_over_best"] - ratio) < 1e-9 and abs(row["tuned_s"] - ratio) < 1e-9,
               what + "tuned / best %.2f (tuned %.2f s over the best 1.0 s)" % (ratio, ratio), str(row))
        expect(row["best"] == "B384 s2" and row["best_s"] == 1.0, what + "the best names the fastest point", str(row))
        expect(abs(row["lapack_over_tuned"] - speed) < 1e-9, what + "LAPACKE / tuned %.2f" % speed, str(row))
        expect(sorted(row["runs_s"]) == sorted(confirmed + ["lapack", "tuned"]),
               what + "the sweep's three fastest confirmed", str(sorted(row["runs_s"])))
        with open(log) as f:
            calls = f.read().splitlines()
        expect(len(calls) == 27 + len(confirmed) + 2 and calls[-len(confirmed) - 2:] ==
               ["--tuned " + os.path.join(out, "tuned_cholesky_d_64.json")] +
               ["--B %s --s %s" % (c[1:4], c[-1]) for c in confirmed] + ["--impl lapack"],
               what + "every grid point once, then the tuned, the confirmed points and LAPACKE", "\n".join(calls))
        expect(["cholesky", "d", "64", "B%s" % B, "s%s" % s, "B384", "s2", "%.3f" % ratio, "%.2fx" % speed]
               in [l.split() for l in p.stdout.splitlines()], what + "the table's row", p.stdout)
    print("tune_validate: tuned / best, the best and the three fastest of a stand-in's sweep: ok")


if __name__ == "__main__":
    main()
