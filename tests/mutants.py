#!/usr/bin/python3
"""Mutation runs: would the tests notice a plausible bug?

Each mutant changes one piece of source text the way a bug would (a rule left
out, a formula changed, an off-by-one), rebuilds, runs the tests that could
notice it (ctest --stop-on-failure on the mutant's labels), and restores the
file. KILLED: a test failed. SURVIVED: every test passed, which means either a
missing test or a change that cannot matter (an equivalent mutant, said in
its `why`). STALE: the source text is no longer there (the code changed:
update the mutant). Exit status 1 when a mutant without a `why` survived;
a `why` beginning OPEN names a known gap, a test still to write (counted
at the end). The mutants are in tests/mutant_sets/, one module per round.
Running them is not part of the test command (one run of every mutant takes
about an hour on 2 cores); checking that each still applies is.

    /usr/bin/python3 tests/mutants.py --build build              # every mutant
    /usr/bin/python3 tests/mutants.py --build build --only rule7  # names containing 'rule7'
    /usr/bin/python3 tests/mutants.py --list
    /usr/bin/python3 tests/mutants.py --current --build build  # every mutant still applies (a ctest)

It edits the working tree: the files it mutates must have no uncommitted
changes, and each is restored (also on Ctrl-C) before the next mutant; the
build folder is rebuilt from the restored sources at the end.
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutant_sets import core, round6, round7, round8, round9, round10, round11, scripts  # noqa: E402

MUTANTS = core.MUTANTS + scripts.MUTANTS + round6.MUTANTS + round7.MUTANTS + round8.MUTANTS + round9.MUTANTS + round10.MUTANTS + round11.MUTANTS


def sh(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def run_one(mu, build):
    path = os.path.join(ROOT, mu["file"])
    with open(path, encoding="utf-8") as f:
        src = f.read()
    if src.count(mu["old"]) != 1:
        return "STALE", "the text occurs %d times in %s" % (src.count(mu["old"]), mu["file"])
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(src.replace(mu["old"], mu["new"]))
        b = sh("ninja", build)
        if b.returncode != 0:
            return "BUILD FAILED", b.stdout[-600:]
        t = sh("ctest -j2 --stop-on-failure --timeout 300 -E tessera_format %s" % mu["tests"], build)
        failed = [l.split(":", 1)[1].split()[0] for l in t.stdout.splitlines()
                  if ("***Failed" in l or "***Exception" in l or "***Timeout" in l) and ":" in l]
        return ("KILLED", ", ".join(failed[:2])) if t.returncode != 0 else ("SURVIVED", mu["why"])
    finally:
        with open(path, "w", encoding="utf-8") as f:
            f.write(src)


def problems(mutants, root, build=None):
    """What keeps mutants from meaning anything: a text that no longer occurs exactly once in its file (the code
    changed under it), a name given twice, and (with a build folder) a test selection that matches no test."""
    out, seen, selections = [], set(), {}
    for x in mutants:
        if x["name"] in seen:
            out.append("%s: the name is given twice" % x["name"])
        seen.add(x["name"])
        path = os.path.join(root, x["file"])
        if not os.path.isfile(path):
            out.append("%s: no file %s" % (x["name"], x["file"]))
            continue
        with open(path, encoding="utf-8") as f:
            n = f.read().count(x["old"])
        if n != 1:
            out.append("%s: its text occurs %d times in %s" % (x["name"], n, x["file"]))
        selections.setdefault(x["tests"], x["name"])
    for sel, name in ([] if build is None else sorted(selections.items())):
        listed = sh("ctest -N -E tessera_format %s" % sel, build).stdout
        if "Total Tests: 0" in listed or "Total Tests:" not in listed:
            out.append("%s: its tests %s select no test in %s" % (name, sel, build))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="a configured build folder (ninja) of this checkout")
    ap.add_argument("--only", default="", help="run the mutants whose name contains this text")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--current", action="store_true",
                    help="only check that every mutant still applies (its text once in its file, its name unique, "
                         "with --build its tests selecting some) and exit 1 naming those that do not")
    args = ap.parse_args()
    if args.current:
        found = problems(MUTANTS, ROOT, os.path.abspath(args.build) if args.build else None)
        for p in found:
            print("mutants.py: " + p, file=sys.stderr)
        print("%d mutants, %d problems" % (len(MUTANTS), len(found)))
        return 1 if found else 0
    chosen = [x for x in MUTANTS if args.only in x["name"]]
    if args.list:
        for x in chosen:
            print("%-40s %s" % (x["name"], x["file"]))
        return 0
    if not chosen:
        print("mutants.py: --only %r: no mutant's name contains it (--list names them)" % args.only, file=sys.stderr)
        return 2
    build = os.path.abspath(args.build)
    if not os.path.isfile(os.path.join(build, "build.ninja")):
        print("mutants.py: --build %s: no build.ninja there (./setup.sh build makes one)" % args.build, file=sys.stderr)
        return 2
    files = sorted({x["file"] for x in chosen})
    dirty = sh("git status --porcelain -- " + " ".join(files), ROOT).stdout.strip()
    if dirty:
        print("mutants.py: uncommitted changes in files it would mutate:\n" + dirty, file=sys.stderr)
        return 2
    survived = gaps = 0
    try:
        for x in chosen:
            start = time.time()
            verdict, detail = run_one(x, build)
            survived += verdict == "SURVIVED" and not x["why"]
            gaps += verdict == "SURVIVED" and x["why"].startswith("OPEN")
            print("%-12s %-40s %5.0f s  %s" % (verdict, x["name"], time.time() - start, detail), flush=True)
    finally:
        sh("ninja", build)  # the restored sources
    if gaps:
        print("%d survivors are known gaps (their why begins OPEN): tests still to write" % gaps)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
