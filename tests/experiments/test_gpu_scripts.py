#!/usr/bin/python3
"""The GPU-node scripts on a machine without a GPU (CI's): what they can be
checked for here is their handling of bad input and of failing runs.

    test_gpu_scripts.py TESSERA_BINARY WORK_DIR

experiments/gpu_node.sh: no mode prints its usage and exits 2; an unknown step,
a missing archive and a build folder without the programs exit 2 naming them,
before anything is unpacked or run. experiments/bench_gpu.py: a bad --rows,
--precisions, --timeout, --out or --json exits 2 naming it before the first
run; with no GPU every run fails, each failure is
reported with its reason, the sweep goes on to the end, prints its four tables with
every row, writes its JSON, and exits 1. experiments/gpu_predict.py on the
committed H200 runs (results/gpu-node/2026-11-25-h200): every run gets its
prediction; the runs that went out of core under least recently used are
predicted with it and move exactly the bytes the real runs moved (the
simulated GPU plans its memory as the real one does), and next-use eviction
moves less; QR at N = 32,768 is predicted within 10% (the calibrated model's
GEMM-class kernels match the run's). bench_cuda_kernels without a GPU exits 2
saying why. A prediction keeps --gpu-streams and drops the CUDA kernel options.
The H100's runs of 2026-11-26 likewise: every run's bytes, QR and
LU with its panels on the GPU within 12%; and of 2026-11-27: every run's bytes,
QR at the default ib and the N = 65,536 runs within 10%. The H200's cold runs
with first calls from their double-precision traces (calibrate --from-traces)
are predicted cold: Cholesky within 6%, held out too. A bench folder
without a manifest (each row's median run) gives that day's rows and errors.
gpu_predict.py refuses a --json that is one of its inputs, and names and
leaves out a result whose gpu_stats it cannot read and a bench row without
a result (exit 1). gpu_node.sh: a STEP_FILTER that is no
regular expression, a STEP_TIMEOUT that is no number, a BENCH_TIMEOUT, an
MPI_THREADS or an MPI_N that is no positive number exit 2 naming them.
gpu_predict's model keys a shape by its ib too (one shape calibrated at two
inner blockings is two entries, each trace task matched to its own), reads a
number written {"value": x, "source": ...} as tessera does, and reads traces
through trace_summary.load (another format refused by name).
"""
import gzip
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU_NODE = os.path.join(ROOT, "experiments", "gpu_node.sh")
BENCH = os.path.join(ROOT, "experiments", "bench_gpu.py")
PREDICT = os.path.join(ROOT, "experiments", "gpu_predict.py")
H200 = os.path.join(ROOT, "results", "gpu-node", "2026-11-25-h200")


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, cwd=ROOT,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def gpu_present():
    """Whether nvidia-smi lists a GPU (as tests/CMakeLists.txt decides): asked apart from the program under test,
    so that a benchmark that wrongly exits 0 without a GPU cannot pass for one that found a GPU."""
    try:
        p = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0 and re.search(r"GPU [0-9]", p.stdout) is not None


def expect(cond, what, out=""):
    if not cond:
        print("FAIL: %s\n%s" % (what, out))
        sys.exit(1)

def bytes_now(r):
    """The bytes this binary copies in for a QR run in core that a binary of 2026-11-25..27 ran: those also
    copied in every write-only output before its GPU task overwrote it (QR's panel copies: for each tile column
    its head's V and T, B x B + ib x B elements), which a GPU now gets as a buffer alone. None where that
    difference has no closed form (out of core, where a panel copy may be evicted and come back; LU's pivot
    plans, a few KB)."""
    a = r["args"]
    opt = lambda name, default: a[a.index(name) + 1] if name in a else default
    if opt("--algo", "") != "qr" or ("--gpu-memory" in a and float(opt("--gpu-memory", 0)) < 8e10):
        return None
    n, B, ib = int(opt("--n", 0)), int(opt("--B", 0)), int(opt("--ib", 32))
    word = 8 if opt("--precision", "d") == "d" else 4
    return r["real_gb_in"] - -(-n // B) * (B * B + ib * B) * word / 1e9


def expect_real_bytes(r, out):
    """Cholesky's runs moved exactly what this binary moves, QR's in core exactly that and their panel copies,
    the others more (out of core an evicted panel copy was written back, and perhaps copied in again: 113.3 GB
    for the H200's QR in two thirds of its bytes under LRU, 93.2 now), but not twice as much."""
    if r["args"][r["args"].index("--algo") + 1] == "cholesky":
        expect(abs(r["predicted_gb_in"] - r["real_gb_in"]) < 1e-6, "%s: the real bytes in" % r["name"], out)
        return
    now = bytes_now(r)
    if now is not None:
        expect(abs(r["predicted_gb_in"] - now) < 1e-6, "%s: the real bytes in less QR's panel copies" % r["name"],
               out)
    else:
        expect(0.5 * r["real_gb_in"] < r["predicted_gb_in"] < r["real_gb_in"],
               "%s: fewer bytes in than the real run (its write-only outputs), not half" % r["name"], out)


def main():
    tessera, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)

    rc, out, err = run(["bash", GPU_NODE])
    expect(rc == 2 and "gpu_node.sh pack" in err and "gpu_node.sh run" in err, "usage without a mode", err)
    rc, out, err = run(["bash", GPU_NODE, "run", work, os.path.join(work, "out"), "tests,bogus"])
    expect(rc == 2 and "unknown step 'bogus'" in err, "an unknown step", err)
    expect(not os.path.exists(os.path.join(work, "out")), "nothing written for a refused command")
    rc, out, err = run(["bash", GPU_NODE, "run", os.path.join(work, "nothing-here")])
    expect(rc == 2 and "nothing-here/gpu_node.tar.xz is missing" in err, "a missing archive", err)
    # A filter or a limit that is not one would skip or stop every step unnoticed.
    archive = os.path.join(work, "archive")
    os.makedirs(archive, exist_ok=True)
    open(os.path.join(archive, "gpu_node.tar.xz"), "w").close()
    for var, value in (("STEP_FILTER", "(tests"), ("STEP_TIMEOUT", "ten"), ("BENCH_TIMEOUT", "-5"),
                       ("BENCH_TIMEOUT", "0"), ("MPI_THREADS", "0"), ("MPI_THREADS", "3x"), ("MPI_N", "16k")):
        rc, out, err = run(["bash", GPU_NODE, "run", archive, os.path.join(work, "out"), "tests"], env={var: value})
        expect(rc == 2 and "%s '%s'" % (var, value) in err, "a bad %s" % var, err)
        expect(not os.path.exists(os.path.join(work, "out")), "nothing written for a bad %s" % var)
    rc, out, err = run(["bash", GPU_NODE, "pack", os.path.join(work, "pack")], env={"TESSERA_BUILD": work})
    expect(rc == 2 and work + "/tessera is missing" in err, "a build folder without tessera", err)

    rc, out, err = run([sys.executable, BENCH, "--binary", tessera, "--rows", "svd:--B 64"])
    expect(rc == 2 and "--rows: 'svd:--B 64'" in err, "a bad --rows", err)
    rc, out, err = run([sys.executable, BENCH, "--binary", tessera, "--precisions", "d,z"])
    expect(rc == 2 and "--precisions: 'z'" in err, "a bad --precisions", err)
    # Refused before the first run (the sweep's --json was checked after it, minutes of a lease later; --out a
    # file, a timeout that is no positive number and a --precisions naming none ended in a traceback or no rows).
    a_file = os.path.join(work, "a_file")
    open(a_file, "w").close()
    for args, needle in ((["--json", os.path.join(work, "nowhere", "x.json")], "--json %s/nowhere/x.json" % work),
                         (["--out", a_file], "--out %s: is a file" % a_file), (["--timeout", "nan"], "--timeout nan"),
                         (["--timeout", "-1"], "--timeout -1.0"), (["--timeout", "inf"], "--timeout inf"),
                         (["--precisions", ","], "--precisions ',': names no precision")):
        runs = os.path.join(work, "refused_runs")
        rc, out, err = run([sys.executable, BENCH, "--binary", tessera, "--n", "64", "--reps", "1", "--rows",
                            "cholesky:--B 32", *(args if args[0] == "--out" else args + ["--out", runs])])
        expect(rc == 2 and needle in err and "Traceback" not in err and out == "", "bench_gpu.py %s" % args, err)
        expect(not os.path.exists(runs), "nothing run for bench_gpu.py %s" % args)

    js = os.path.join(work, "bench.json")
    rc, out, err = run([sys.executable, BENCH, "--binary", tessera, "--n", "256", "--reps", "2", "--rows",
                        "cholesky:--B 64", "lu:--B 64 --d 1", "--out", os.path.join(work, "runs"), "--json", js])
    expect(rc == 1, "exit 1 when the runs fail (no GPU), got %d" % rc, out + err)
    # 2 reps x (2 peers + 2 tessera runs), each reported with the program's own reason.
    failures = [l for l in err.splitlines() if ": exit 2: tessera: error:" in l]
    expect(len(failures) == 8, "every failing run reported (8), got %d" % len(failures), err)
    expect(any("--impl cusolver" in l or "CUDA" in l for l in failures), "the reason named", err)
    rows = [l for l in out.splitlines() if l.startswith("| cholesky") or l.startswith("| lu")]
    expect(len(rows) == 8 and all("| - |" in l for l in rows),
           "the four tables (rates, copies, the GPU's time, the warm-ups) have both rows, without values", out)
    with open(js) as f:
        data = json.load(f)
    expect(len(data["rows"]) == 2 and data["rows"][0]["tessera_gflops"] == [], "the JSON has both rows", str(data))

    # A prediction keeps --gpu-streams (a simulated GPU has streams) and drops what only a CUDA GPU's kernels take.
    sys.path.insert(0, os.path.dirname(PREDICT))
    from gpu_predict import model_key, simulated_args
    # A trace names a kernel; the machine file keys its model: every kernel of the table (base/kernel_table.cpp,
    # its {id, "NAME", "key", ...} rows) maps to its key, LU's too (their rows read "model s nan" before).
    with open(os.path.join(ROOT, "base", "kernel_table.cpp"), encoding="utf-8") as f:
        table = re.findall(r'\{k\w+, "([A-Z0-9_\']+)", "([a-z0-9_]+)"', f.read())
    expect(len(table) >= 25 and ("LU_PANEL", "lu_panel") in table, "the kernel table's rows read", str(table))
    wrong = [(name, key, model_key(name)) for name, key in table if model_key(name) != key]
    expect(not wrong, "each trace name gives its model key: %s" % wrong)
    got = simulated_args(["--algo", "qr", "--gpu-qr-panel", "cholqr", "--gpu-streams", "3", "--check",
                          "--gpu-trsm-inverse", "256", "--gpu-qr-panel=cholqr", "--B", "4096", "--gpu-qr-group", "512"])
    expect(got == ["--algo", "qr", "--gpu-streams", "3", "--B", "4096"], "simulated_args: %s" % got)
    # --gpu-kernel-depth stays with several streams (it bounds the tasks queued) and goes with one, where a
    # simulated GPU queues one task anyway and tessera refuses a depth that changes nothing.
    got = simulated_args(["--algo", "qr", "--gpu-kernel-depth", "2", "--gpu-streams=3"])
    expect(got == ["--algo", "qr", "--gpu-kernel-depth", "2", "--gpu-streams=3"], "simulated_args: %s" % got)
    got = simulated_args(["--algo", "cholesky", "--B", "2048", "--gpu-kernel-depth", "1"])
    expect(got == ["--algo", "cholesky", "--B", "2048"], "simulated_args: %s" % got)
    got = simulated_args(["--algo", "cholesky", "--pageable", "--B", "2048"])  # tessera refuses it on simulated GPUs
    expect(got == ["--algo", "cholesky", "--B", "2048"], "simulated_args: %s" % got)
    got = simulated_args(["--algo", "cholesky", "--gpu-warmup", "off", "--B", "2048", "--gpu-warmup=on"])  # and this
    expect(got == ["--algo", "cholesky", "--B", "2048"], "simulated_args: %s" % got)

    js = os.path.join(work, "predict.json")
    rc, out, err = run([sys.executable, PREDICT, H200, "--binary", tessera, "--json", js])
    expect(rc == 0, "gpu_predict.py exit 0, got %d" % rc, out + err)
    with open(js) as f:
        runs = json.load(f)["runs"]
    with open(os.path.join(H200, "runs.json"), encoding="utf-8") as f:
        manifest = json.load(f)["runs"]
    expect(len(runs) == len(manifest) + sum(1 for r in manifest if "eviction" in r), "one row per run and policy",
           out)
    for r in runs:
        if r["eviction"] == "lru":
            expect_real_bytes(r, out)
            nu = [x for x in runs if x["name"] == r["name"] and x["eviction"] == "next-use"]
            expect(nu and nu[0]["predicted_gb_in"] < r["real_gb_in"], "%s: next-use moves less" % r["name"], out)
    qr = [r for r in runs if r["name"] == "qr_d"]
    expect(qr and abs(qr[0]["error"]) < 0.10, "QR d at 32,768 within 10%", out)
    expect("| cholesky_d | trsm | d |" in out, "the per-kernel table", out)
    # Its first calls (experiments/gpu_warmup.hpp): the H200's cold Cholesky spent 70 ms on its first TRSM, against
    # 0.9 ms for each of the others, and without each kernel's first task the run's tasks took what the model says.
    with open(js) as f:
        kernels = {k["kernel"]: k for k in json.load(f)["kernels"]["cholesky_d"]}
    trsm = kernels["trsm"]
    expect(0.06 < trsm["first_s"] < 0.08, "the first TRSM's 70 ms", str(trsm))
    real = sum(k["real_s"] - k["first_s"] for k in kernels.values())
    model = sum(k["model_s"] * (k["tasks"] - k["first_tasks"]) / k["tasks"] for k in kernels.values())
    expect(abs(real / model - 1) < 0.03, "the other tasks within 3%% of the model: %.3f" % (real / model), out)
    # The table's 'the rest: real / model', per kernel (the model's time for the tasks but the first) and over all.
    cells = [l.split("|") for l in out.splitlines() if l.startswith("| cholesky_d |")]
    rows = {c[2].strip(): c[10].strip() for c in cells}
    for k in kernels.values():
        rest = (k["real_s"] - k["first_s"]) / (k["model_s"] * (k["tasks"] - k["first_tasks"]) / k["tasks"])
        expect(rows.get(k["kernel"]) == "%.2f" % rest, "%s: the rest's ratio %.2f" % (k["kernel"], rest), out)
    expect(rows.get("all") == "%.2f" % (real / model), "the rest's ratio over every kernel", out)
    warm = {(r["name"], r["eviction"]): r for r in runs}
    expect(all(r["gpu_first_calls"] == "paid, not modeled" for r in runs), "every H200 run was cold", out)

    # Those first calls as the GPU model's first_call_s (tessera calibrate --from-traces, models/cold_start.hpp),
    # from the double-precision traces at N = 32,768: with them the cold runs are predicted cold
    # (--gpu-warmup off). Cholesky at 32,768 (its own trace) within 6% instead of -22.8%; held out, the N = 65,536
    # and N = 16,384 Cholesky runs within 6% and closer than predicted warm; single precision, whose traces were
    # not given, stays predicted warm and says so.
    traces = []
    for name in ("cholesky_d", "qr_d"):
        plain = os.path.join(work, name + ".trace.json")
        with gzip.open(os.path.join(H200, "runs", name + ".trace.json.gz"), "rb") as f, open(plain, "wb") as g:
            g.write(f.read())
        traces.append(plain)
    cold_node = os.path.join(work, "h200-cold.json")
    rc, out, err = run([tessera, "calibrate", "--from-traces", ",".join(traces), "--base",
                        os.path.join(H200, "node.json"), "--out", cold_node])
    expect(rc == 0 and "first calls of 8 GPU kernel(s) from 2 cold trace(s)" in out, "first calls from the traces",
           out + err)
    js = os.path.join(work, "predict-cold.json")
    rc, out, err = run([sys.executable, PREDICT, H200, "--binary", tessera, "--machine", cold_node, "--json", js])
    expect(rc == 0, "gpu_predict.py with first calls exit 0, got %d" % rc, out + err)
    with open(js) as f:
        cold = {(r["name"], r["eviction"]): r for r in json.load(f)["runs"]}
    for key in (("cholesky_d", "next-use"), ("in_chol", "next-use"), ("ooc_chk_chol", "lru")):
        expect(cold[key]["gpu_first_calls"] == "paid" and abs(cold[key]["error"]) < 0.06
               and abs(cold[key]["error"]) < abs(warm[key]["error"]), "%s predicted cold, within 6%%" % key[0], out)
    expect(cold[("cholesky_s", "next-use")]["gpu_first_calls"] == "paid, not modeled"
           and cold[("cholesky_s", "next-use")]["predicted_s"] == warm[("cholesky_s", "next-use")]["predicted_s"],
           "single precision predicted warm", out)

    # The H100's runs of 2026-11-26 against its calibration (lent-h100-node.json's source):
    # LU with its panels on the GPU (--d 0) at B = 2048 and QR within 12% in every run, each
    # run's bytes copied in as expect_real_bytes says (double only, as the calibration).
    h100 = os.path.join(ROOT, "results", "gpu-node", "2026-11-26-h100")
    js = os.path.join(work, "predict-h100.json")
    rc, out, err = run([sys.executable, PREDICT, h100, "--binary", tessera, "--json", js])
    expect(rc == 0, "gpu_predict.py on the H100 exit 0, got %d" % rc, out + err)
    with open(js) as f:
        runs = json.load(f)["runs"]
    for r in runs:
        expect_real_bytes(r, out)
    close = [r for r in runs if r["name"].startswith(("qr_d_", "lu_d__B2048"))]
    expect(len(close) == 6 and all(abs(r["error"]) < 0.12 for r in close), "QR and LU B = 2048 within 12%", out)

    # The H100's runs of 2026-11-27 against the calibration of the same lease (QR's kernels at
    # ib = 32): every run's bytes as expect_real_bytes says, QR at the runtime's default ib and the N = 65,536 runs
    # (Cholesky and QR, in core and out of core) within 10%.
    h100 = os.path.join(ROOT, "results", "gpu-node", "2026-11-27-h100", "pred")
    js = os.path.join(work, "predict-h100-27.json")
    rc, out, err = run([sys.executable, PREDICT, h100, "--binary", tessera, "--json", js])
    expect(rc == 0, "gpu_predict.py on the 2026-11-27 H100 exit 0, got %d" % rc, out + err)
    with open(js) as f:
        runs = json.load(f)["runs"]
    expect(len(runs) == 11, "11 runs predicted", out)
    for r in runs:
        expect_real_bytes(r, out)
    close = [r for r in runs if r["name"] in ("qr_d_o_row1", "qr_in", "qr_nextuse", "chol_in", "chol_nextuse")]
    expect(len(close) == 5 and all(abs(r["error"]) < 0.10 for r in close), "QR and N = 65,536 within 10%", out)

    # A bench folder without a manifest: each row's median run against the calibration given (the same
    # three rows and errors as that day's manifest: -19.2%, -5.1%, +8.6%); without one, exit 2 saying so.
    bench_dir = os.path.join(ROOT, "results", "gpu-node", "2026-11-27-h100", "o")
    node = os.path.join(ROOT, "results", "gpu-node", "2026-11-27-h100", "o2", "node.json")
    js = os.path.join(work, "predict-bench.json")
    rc, out, err = run([sys.executable, PREDICT, bench_dir, "--binary", tessera, "--machine", node, "--json", js])
    expect(rc == 0, "gpu_predict.py on a bench folder exit 0, got %d" % rc, out + err)
    with open(js) as f:
        runs = {r["name"]: r for r in json.load(f)["runs"]}
    expect(sorted(runs) == ["cholesky_d_row0", "qr_d_row1", "qr_d_row2"], "the bench's three rows", out)
    expect(abs(runs["qr_d_row1"]["error"] + 0.051) < 0.005 and abs(runs["cholesky_d_row0"]["error"] + 0.192) < 0.005,
           "the bench rows' errors as that day's manifest gave them", out)
    rc, out, err = run([sys.executable, PREDICT, bench_dir, "--binary", tessera])
    expect(rc == 2 and "no node.json" in err and "--machine" in err, "a bench folder without a calibration", err)
    sys.path.insert(0, os.path.dirname(PREDICT))
    from gpu_predict import bench_manifest
    expect(bench_manifest(bench_dir)["threads"] == 13, "a bench folder's compute threads are the predictions'", "")

    # Hand-made folders, nothing simulated: --json over an input is refused (it replaced runs.json or the
    # calibration); a result whose gpu_stats are not GPUs with byte counts, and a bench row none of whose runs left
    # a result with a positive time_s, are each named and left out (exit 1), not a traceback or a silent gap.
    def folder(name, files):
        d = os.path.join(work, "predict-" + name)
        os.makedirs(os.path.join(d, "bench"), exist_ok=True)
        for f, content in files.items():
            with open(os.path.join(d, f), "w") as g:
                g.write(content if isinstance(content, str) else json.dumps(content))
        return d
    node = {"node": {"gpus": {"model": "G"}}, "kernel_models": {"G": {"measurements": []}}}
    manifest = {"machine_file": "node.json", "runs": [{"name": "a", "file": "r.json", "args": ["--algo", "qr"]}]}
    d = folder("inputs", {"runs.json": manifest, "node.json": node, "r.json": {"time_s": 1.0, "gpu_stats": []}})
    for name in ("runs.json", "node.json", "r.json"):
        with open(os.path.join(d, name)) as f:
            before = f.read()
        rc, out, err = run([sys.executable, PREDICT, d, "--binary", tessera, "--json", os.path.join(d, name)])
        expect(rc == 2 and "--json %s: is an input" % os.path.join(d, name) in err and out == "",
               "gpu_predict.py --json over its %s refused" % name, out + err)
        with open(os.path.join(d, name)) as f:
            expect(f.read() == before, "%s kept" % name)
    for name, stats, needle in (("null", None, "gpu_stats null is not a list"),
                                ("nobytes", [{"capacity_bytes": 1e9}],
                                 'gpu_stats [{"capacity_bytes": 1000000000.0}] is not a list of GPUs with bytes_in')):
        d = folder(name, {"runs.json": manifest, "node.json": node, "r.json": {"time_s": 1.0, "gpu_stats": stats}})
        rc, out, err = run([sys.executable, PREDICT, d, "--binary", tessera])
        expect(rc == 1 and "a: result %s: %s" % (os.path.join(d, "r.json"), needle) in err and "Traceback" not in err,
               "a result with gpu_stats %s left out" % name, out + err)
    bench_json = {"n": 2048, "threads": 2, "reps": 3, "rows": [{"algo": "cholesky", "precision": "d", "args": []}]}
    d = folder("bench-none", {"bench.json": bench_json, "node.json": node, "bench/row0_d_tessera_r0.json": {"time_s": None},
                              "bench/row0_d_tessera_r1.json": [1]})
    rc, out, err = run([sys.executable, PREDICT, d, "--binary", tessera])
    expect(rc == 1 and "Traceback" not in err, "a bench row without a result: exit 1", out + err)
    for needle in ("row0_d_tessera_r0.json: no positive time_s", "row0_d_tessera_r1.json: no positive time_s",
                   "row0_d_tessera_r2.json: missing", "cholesky_d_row0: no result of its 3 run(s)"):
        expect(needle in err, "the bench row's runs named: %s" % needle, err)

    bench = os.path.join(os.path.dirname(tessera), "bench_cuda_kernels")
    if os.path.exists(bench):  # built with the benchmarks
        rc, out, err = run([bench])
        if gpu_present():
            expect(rc == 0, "bench_cuda_kernels with a GPU: exit 0, got %d" % rc, out + err)
        else:
            expect(rc == 2 and "bench_cuda_kernels: no CUDA GPU to measure:" in err,
                   "bench_cuda_kernels without a GPU: exit 2 and why, got %d" % rc, out + err)
    model_keys(work)
    print("ok")


def model_keys(work):
    """gpu_model and trace_by_kernel on a machine file and a trace made here."""
    import gpu_predict
    wrapped = {"value": 0.5, "source": "made here"}
    machine = {"node": {"gpus": {"model": "G"}}, "kernel_models": {"G": {
        "first_call_s": {"trsm": {"d": {"value": 0.07, "source": "a trace"}}, "ssrfb": {"s": 0.1}},
        "measurements": [{"kernel": "ssrfb", "precision": "d", "m": 64, "n": 64, "k": 64, "ib": 16, "median_s": 1.0},
                         {"kernel": "ssrfb", "precision": "d", "m": 64, "n": 64, "k": 64, "ib": 32, "median_s": 3.0},
                         {"kernel": "gsmm", "precision": "d", "m": 64, "n": 64, "k": 64, "median_s": wrapped}]}}}
    model = gpu_predict.gpu_model(machine, "m.json")
    expect(model == {("ssrfb", "d", 64, 64, 64, 16): 1.0, ("ssrfb", "d", 64, 64, 64, 32): 3.0,
                     ("gsmm", "d", 64, 64, 64, 0): 0.5}, "one entry per ib; a {value} median read", str(model))
    got = gpu_predict.gpu_first_call_precisions(machine)
    expect(got == {("cholesky", "d"), ("qr", "s")}, "first calls written {value} count", str(got))

    def task(name, ts, ib):
        return {"ph": "X", "cat": "task", "name": name, "pid": 0, "tid": 1, "ts": ts, "dur": 1e6,
                "args": {"precision": "d", "m": 64, "n": 64, "kdim": 64, "ib": ib}}
    events = [{"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "gpu0"}},
              task("SSRFB", 0, 16), task("SSRFB", 2e6, 32), task("SSRFB", 4e6, 32), task("GSMM", 6e6, 0)]
    path = os.path.join(work, "ib.trace.json.gz")
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump({"otherData": {"format": "tessera-trace", "version": 1}, "traceEvents": events}, f)
    rows = gpu_predict.trace_by_kernel(path, model)
    got = {k: (r[0], r[2]) for k, r in rows.items()}
    expect(got == {("ssrfb", "d", 64, 64, 64, 16): (1, 1.0), ("ssrfb", "d", 64, 64, 64, 32): (2, 6.0),
                   ("gsmm", "d", 64, 64, 64, 0): (1, 0.5)}, "each task against its own ib's model", str(got))
    import trace_summary  # on the path gpu_predict reads traces through
    other = os.path.join(work, "other.trace.json")
    with open(other, "w", encoding="utf-8") as f:
        json.dump({"otherData": {"format": "another"}, "traceEvents": events}, f)
    try:
        gpu_predict.trace_by_kernel(other, model)
        expect(False, "a trace of another format refused")
    except trace_summary.TraceError as e:
        expect(str(e).startswith(other + ": "), "the refusal names the file", str(e))


if __name__ == "__main__":
    main()
