#!/usr/bin/python3
"""One definition's --quick sweep through `tessera experiment`, its figures, and a resumed rerun.

    check_quick.py TESSERA_BINARY NAME OUT_DIR

Every run of the quick sweep must be recorded (status, parameters, commit,
machine, date) with the run's JSON; the runs that fail must carry their exit
status and error; plots must write non-empty PNG and PDF files; a rerun must
run nothing and leave runs.jsonl as it was.
"""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
from runner import definition  # noqa: E402


def fail(msg):
    print("check_quick: " + msg, file=sys.stderr)
    sys.exit(1)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def tessera(binary, *args):
    p = subprocess.run([binary, "experiment"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail("tessera experiment %s: exit %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p.stdout


def main():
    binary, name, out = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    shutil.rmtree(out, ignore_errors=True)
    d = definition.load(name)
    configs, _ = d.expand(quick=True)
    expected = sum(c.repeats for c in configs)
    print(tessera(binary, "run", name, "--quick", "--out", out, "--jobs", "2").strip())
    with open(os.path.join(out, "runs.jsonl"), encoding="utf-8") as f:
        recs = [json.loads(x) for x in f if x.strip()]
    if len(recs) != expected:
        fail("%d records for %d runs" % (len(recs), expected))
    if {(r["config_id"], r["repeat"]) for r in recs} != {(c.id, k) for c in configs for k in range(c.repeats)}:
        fail("records do not match the sweep's configurations")
    for r in recs:
        for key in ("params", "status", "exit_status", "tessera_commit", "date", "machine", "command"):
            if key not in r:
                fail("record of %s lacks %s" % (r["label"], key))
        if r["status"] == "ok":
            if not r["result"] or r["result"]["algo"] != r["params"]["algo"] or r["result"]["n"] != r["params"]["n"]:
                fail("%s: the result is not the run's (%s)" % (r["label"], r["result"]))
            if r.get("metric_errors"):
                fail("%s: metrics failed: %s" % (r["label"], r["metric_errors"]))
        elif r["exit_status"] == 0 or not r["stderr"]:
            fail("%s: failed without an exit status and error" % r["label"])
    ok = sum(r["status"] == "ok" for r in recs)
    if ok == 0:
        fail("no run succeeded")
    with open(os.path.join(out, "runs.csv"), encoding="utf-8") as f:
        if len(f.read().strip().splitlines()) != expected + 1:
            fail("runs.csv does not have one row per run")
    tessera(binary, "plot", name, "--out", out)
    for p in d.plots:
        for ext in ("png", "pdf"):
            path = os.path.join(out, "figures", "%s.%s" % (p["file"], ext))
            if not os.path.isfile(path) or os.path.getsize(path) < 2000:
                fail("%s missing or empty" % path)
    before = read(os.path.join(out, "runs.jsonl"))
    again = tessera(binary, "run", name, "--quick", "--out", out)
    if "0 run(s) ok, 0 failed, %d already done" % expected not in again:
        fail("the rerun did not skip every run: %s" % again)
    if read(os.path.join(out, "runs.jsonl")) != before:
        fail("the rerun changed runs.jsonl")
    print("%s: %d runs (%d ok), %d figures, resume ok" % (name, expected, ok, len(d.plots)))


if __name__ == "__main__":
    main()
