#!/usr/bin/python3
"""The reproduction report generated from the --quick results of every definition.

    check_report.py RESULTS_BASE REPORT.md

Runs `experiment.py report --quick --results RESULTS_BASE --output REPORT.md`
and checks that every definition has its section, that every reported entry
with a number has a row with the paper's value, and that the figures it links
exist.
"""
import datetime
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
from runner import definition  # noqa: E402


def fail(msg):
    print("check_report: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    base, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "experiments", "experiment.py"), "report", "--quick",
                        "--results", base, "--output", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail("report: exit %d: %s" % (p.returncode, p.stderr))
    with open(out, encoding="utf-8") as f:
        text = f.read()
    for name in definition.all_names():
        d = definition.load(name)
        if "## " + d.title not in text:
            fail("no section for %s" % name)
        for r in d.reported:
            row = [line for line in text.splitlines() if line.startswith("| %s | %s |" % (name, r["id"]))]
            if not row:
                fail("no row for %s %s" % (name, r["id"]))
            if r.get("value") is not None and ("%.4g" % r["value"]) not in row[0]:
                fail("row of %s %s lacks the paper's value %s: %s" % (name, r["id"], r["value"], row[0]))
    links = re.findall(r"\]\(([^)]+\.png)\)", text)
    if not links:
        fail("no figure linked")
    for link in links:
        if not os.path.isfile(os.path.join(os.path.dirname(out), link)):
            fail("linked figure %s does not exist" % link)
    # Dated by its results' newest run, not the clock: the same results give the same report, byte for byte.
    newest = max(json.loads(line)["date"] for name in definition.all_names()
                 for path in [os.path.join(base, name, "quick", "runs.jsonl")] if os.path.isfile(path)
                 for line in open(path, encoding="utf-8") if line.strip())
    shown = datetime.datetime.fromisoformat(newest).astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if "(their newest run: %s)" % shown not in text:
        fail("the report is not dated by its newest run, %s" % shown)
    again = out + ".again.md"
    p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "experiments", "experiment.py"), "report", "--quick",
                        "--results", base, "--output", again], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    with open(again, encoding="utf-8") as f:
        if p.returncode != 0 or f.read() != text:
            fail("the report made again from the same results differs")
    print("report: %d sections, %d figure links" % (text.count("\n## "), len(links)))


if __name__ == "__main__":
    main()
