#!/usr/bin/python3
"""experiments/validate_prediction's real runs come in passes over the whole
sweep (one run of every configuration per pass), so that a slow spell of the
machine costs each configuration one run rather than all of them.

    test_validate_prediction.py WORK_DIR

A stand-in for tessera logs every call and takes 1.5 s instead of 1 s for the
real runs that fall in a slow spell (the 4th to the 9th of 12); the simulated
runs take 1 s. The log must show the configurations in sweep order, once per
pass, and every configuration's best of 3 must be 1 s (error 0): run
consecutively, the second configuration's three runs would all fall in the
spell.

The drift check: with a machine file that records an in-run calibration's
runs, each pass also runs those of the smallest N with s = 1 once, after the
sweep's configurations (not the larger N nor s = 2), and the report's drift
is, per reference, the best run now over the recorded time: here 1 s against
0.8 s (+25%) and 1 s (0%), median for the one thread count +12.5%, "NOT
quiet"; with that drift taken out the rows' error (0 without) is +12.5%.
--reuse-real with another machine file takes that sweep's reference runs
against the new file's times (1 s and 0.5 s: 0% and +100%, median +50%), and
says so when the new file's references were not run.

A configuration the stand-in refuses (--n 0: exit 2) is a failed row, run
once, and the sweep goes on (exit 1; 2 when every row failed so); bad options
and input files exit 2 with one line naming them, before any run. No run
leaves its temporary folder (tessera-validate-*) behind.
"""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FAKE = r'''#!/usr/bin/python3
import json, os, sys
args = sys.argv[1:]
work = os.environ["FAKE_WORK"]
sim = "--backend" in args
with open(os.path.join(work, "calls.log"), "a") as f:
    f.write(("sim " if sim else "real ") + " ".join(args[args.index("--algo") + 1:args.index("--algo") + 4]) + "\n")
if args[args.index("--n") + 1] == "0":
    print("tessera: error: --n 0 must be >= 1", file=sys.stderr)
    sys.exit(2)
t = 1.0
if not sim:
    counter = os.path.join(work, "real_calls")
    k = int(open(counter).read()) if os.path.exists(counter) else 0
    open(counter, "w").write(str(k + 1))
    if 3 <= k < 9 and os.environ.get("FAKE_SPELL", "1") == "1":
        t = 1.5
out = args[args.index("--json") + 1]
json.dump({"time_s": t, "cpu_s": t, "B": 256, "gflops": 1.0}, open(out, "w"))
'''


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    tmp = os.path.join(work, "tmp")  # TMPDIR of every validate_prediction run: its temporaries must all go
    os.makedirs(tmp, exist_ok=True)
    for name in os.listdir(tmp):
        shutil.rmtree(os.path.join(tmp, name))
    status = checks(work)
    left = os.listdir(tmp)
    if left:
        print("FAIL: validate_prediction left its temporary folders: %s" % ", ".join(sorted(left)))
        return 1
    return status


def checks(work):
    for f in ("calls.log", "real_calls"):
        if os.path.exists(os.path.join(work, f)):
            os.remove(os.path.join(work, f))
    fake = os.path.join(work, "fake_tessera")
    with open(fake, "w") as f:
        f.write(FAKE)
    os.chmod(fake, 0o755)
    machine = os.path.join(work, "machine.json")
    open(machine, "w").write("{}")
    out = os.path.join(work, "out.json")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "validate_prediction"), "--tessera", fake,
                        "--machine", machine, "--algos", "cholesky,qr", "--precisions", "d", "--n", "2048,4096",
                        "--threads", "1", "--repeat", "3", "--json", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                       env=dict(os.environ, FAKE_WORK=work, TMPDIR=os.path.join(work, "tmp")))
    if p.returncode != 0:
        print("FAIL: validate_prediction exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
        return 1
    real = [l.split(" ", 1)[1] for l in open(os.path.join(work, "calls.log")).read().splitlines() if l.startswith("real")]
    configs = ["cholesky --n 2048", "cholesky --n 4096", "qr --n 2048", "qr --n 4096"]
    if real != configs * 3:
        print("FAIL: the real runs are not in passes over the sweep:\n" + "\n".join(real))
        return 1
    rows = json.load(open(out))["rows"]
    if len(rows) != 4 or any(r["real_min_s"] != 1.0 or r["error_vs_min_pct"] != 0.0 for r in rows):
        print("FAIL: a configuration's best of 3 fell in the slow spell:\n" + json.dumps(rows, indent=1))
        return 1
    if sorted(len(r["real_runs_s"]) for r in rows) != [3, 3, 3, 3] or sum(r["real_runs_s"].count(1.5) for r in rows) != 6:
        print("FAIL: the runs kept per configuration:\n" + json.dumps(rows, indent=1))
        return 1
    return check_drift(work, fake)


def check_drift(work, fake):
    os.remove(os.path.join(work, "calls.log"))
    machine = os.path.join(work, "inrun.json")
    runs = [{"algo": "cholesky", "precision": "d", "n": 4096, "s": 1, "threads": 1, "time_s": 0.8},
            {"algo": "qr", "precision": "d", "n": 4096, "s": 1, "threads": 1, "time_s": 1.0},
            {"algo": "cholesky", "precision": "d", "n": 4096, "s": 2, "threads": 1, "time_s": 0.5},
            {"algo": "cholesky", "precision": "d", "n": 8192, "s": 1, "threads": 1, "time_s": 5.0}]
    json.dump({"calibration": {"in_run": {"runs": runs}}}, open(machine, "w"))
    out = os.path.join(work, "drift.json")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "validate_prediction"), "--tessera", fake,
                        "--machine", machine, "--algos", "cholesky,qr", "--precisions", "d", "--n", "2048",
                        "--threads", "1", "--repeat", "2", "--json", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                       env=dict(os.environ, FAKE_WORK=work, FAKE_SPELL="0", TMPDIR=os.path.join(work, "tmp")))
    if p.returncode != 0:
        print("FAIL: validate_prediction (drift) exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
        return 1
    real = [l.split(" ", 1)[1] for l in open(os.path.join(work, "calls.log")).read().splitlines() if l.startswith("real")]
    if real != ["cholesky --n 2048", "qr --n 2048", "cholesky --n 4096", "qr --n 4096"] * 2:
        print("FAIL: the references do not follow each pass:\n" + "\n".join(real))
        return 1
    drift = json.load(open(out))["drift"]
    got = [(r["algo"], round(r["drift_pct"], 6)) for r in drift["references"]]
    if got != [("cholesky", 25.0), ("qr", 0.0)] or abs(drift["median_pct"] - 12.5) > 1e-9:
        print("FAIL: the drift:\n" + json.dumps(drift, indent=1))
        return 1
    if drift["by_threads_pct"] != {"1": 12.5}:
        print("FAIL: the drift per thread count:\n" + json.dumps(drift, indent=1))
        return 1
    rows = json.load(open(out))["rows"]
    if [round(r["error_vs_min_drift_out_pct"], 6) for r in rows] != [12.5, 12.5]:
        print("FAIL: the errors with the drift taken out:\n" + json.dumps(rows, indent=1))
        return 1
    if "1 thread(s) +12.5%" not in p.stdout or "NOT quiet" not in p.stdout:
        print("FAIL: the drift line:\n" + p.stdout)
        return 1
    return check_reuse(work, fake, out, runs)


def check_reuse(work, fake, earlier, runs):
    def reuse(runs):
        machine = os.path.join(work, "other.json")
        json.dump({"calibration": {"in_run": {"runs": runs}}}, open(machine, "w"))
        out = os.path.join(work, "reused.json")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "validate_prediction"), "--tessera",
                            fake, "--machine", machine, "--reuse-real", earlier, "--algos", "cholesky,qr",
                            "--precisions", "d", "--n", "2048", "--threads", "1", "--json", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                           env=dict(os.environ, FAKE_WORK=work, FAKE_SPELL="0", TMPDIR=os.path.join(work, "tmp")))
        if p.returncode != 0:
            print("FAIL: --reuse-real exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
            return None, None
        return json.load(open(out))["drift"], p.stdout
    other = [dict(r) for r in runs]
    other[0]["time_s"], other[1]["time_s"] = 1.0, 0.5
    drift, text = reuse(other)
    if drift is None or drift["by_threads_pct"] != {"1": 50.0}:
        print("FAIL: the reused sweep's drift against the other file:\n%s\n%s" % (json.dumps(drift, indent=1), text))
        return 1
    other[1]["precision"] = "s"  # a reference the earlier sweep never ran
    drift, text = reuse(other)
    if text is None or drift is not None or "did not run this machine file's references" not in text:
        print("FAIL: a reference the reused sweep lacks:\n%s\n%s" % (json.dumps(drift, indent=1), text))
        return 1
    return check_failing_runs(work, fake, machine=os.path.join(work, "machine.json"))


def validate(work, fake, *args):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "validate_prediction"), "--tessera", fake]
                       + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                       env=dict(os.environ, FAKE_WORK=work, FAKE_SPELL="0", TMPDIR=os.path.join(work, "tmp")))
    return p.returncode, p.stdout, p.stderr


def check_failing_runs(work, fake, machine):
    """A configuration tessera refuses is recorded as a failed row; the others run to the end."""
    os.remove(os.path.join(work, "calls.log"))
    out = os.path.join(work, "failing.json")
    rc, stdout, err = validate(work, fake, "--machine", machine, "--algos", "cholesky", "--precisions", "d",
                               "--n", "0,2048", "--threads", "1", "--repeat", "2", "--json", out)
    calls = open(os.path.join(work, "calls.log")).read().splitlines()
    if rc != 1 or calls != ["real cholesky --n 0", "real cholesky --n 2048", "real cholesky --n 2048",
                            "sim cholesky --n 2048"]:
        print("FAIL: a failing configuration (exit %d, want 1; the calls):\n%s\n%s%s" % (rc, "\n".join(calls), stdout, err))
        return 1
    rows = json.load(open(out))["rows"]
    bad, good = rows
    if (bad["status"], bad["exit_status"], bad["stage"], bad["error"]) != (
            "failed", 2, "real run", "tessera: error: --n 0 must be >= 1") or good["status"] != "ok" \
            or good["real_runs_s"] != [1.0, 1.0]:
        print("FAIL: the rows of a sweep with a failing configuration:\n" + json.dumps(rows, indent=1))
        return 1
    if "--n 0 must be >= 1" not in err or "Traceback" in err:
        print("FAIL: the failure's message on stderr:\n" + err)
        return 1
    rc, stdout, err = validate(work, fake, "--machine", machine, "--algos", "cholesky", "--precisions", "d",
                               "--n", "0", "--threads", "1", "--repeat", "1")
    if rc != 2:
        print("FAIL: every row refused as bad input: exit %d, want 2\n%s%s" % (rc, stdout, err))
        return 1
    return check_bad_input(work, fake, machine)


def check_bad_input(work, fake, machine):
    """Bad options and input files: exit 2, one line naming the option and the value, nothing run."""
    empty, array, norows = (os.path.join(work, f) for f in ("empty.json", "array.json", "norows.json"))
    open(empty, "w").close()
    json.dump([1], open(array, "w"))
    json.dump({"machine": machine}, open(norows, "w"))
    sweep = ["--algos", "cholesky", "--precisions", "d", "--n", "2048", "--threads", "1"]
    cases = [(["--n", "abc"], "--n abc"), (["--n", "256,"], "--n 256,"), (["--threads", "abc"], "--threads abc"),
             (["--machine", empty], "--machine " + empty), (["--machine", array], "--machine " + array),
             (["--reuse-real", os.path.join(work, "missing.json")], "--reuse-real " + os.path.join(work, "missing.json")),
             (["--reuse-real", empty], "--reuse-real " + empty), (["--reuse-real", norows], "--reuse-real " + norows),
             (["--sim-args", "'x"], "--sim-args 'x"), (["--tessera", "/nonexistent"], "--tessera /nonexistent"),
             (["--repeat", "0"], "--repeat 0"), (["--repeat", "-3"], "--repeat -3"), (["--passes", "0"], "--passes 0"),
             (["--json", "/proc/x/y.json"], "--json /proc/x/y.json")]
    for extra, needle in cases:
        if os.path.exists(os.path.join(work, "calls.log")):
            os.remove(os.path.join(work, "calls.log"))
        # Later options win: each case's own --machine, --n or --threads replaces the sweep's.
        rc, stdout, err = validate(work, fake, *(["--machine", machine] + sweep + extra))
        if rc != 2 or len(err.strip().splitlines()) != 1 or needle not in err or "Traceback" in err:
            print("FAIL: %s: exit %d (want 2), stderr (want one line naming %r):\n%s" % (extra, rc, needle, err))
            return 1
        if os.path.exists(os.path.join(work, "calls.log")):
            print("FAIL: %s: runs made before the option was refused" % extra)
            return 1
    # A reader that goes (`validate_prediction --help | head -0`): exit 0 and nothing on stderr, as a Unix filter
    # ends (a BrokenPipeError traceback, exit 1, before).
    p = subprocess.Popen([sys.executable, os.path.join(ROOT, "experiments", "validate_prediction"), "--help"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read().decode()
    if (p.wait(), err) != (0, ""):
        print("FAIL: --help into a closed pipe: exit %d, stderr:\n%s" % (p.returncode, err))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
