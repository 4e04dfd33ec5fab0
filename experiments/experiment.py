#!/usr/bin/python3
"""Paper figures as experiments: list, run, plot and report them.

    tessera experiment list
    tessera experiment run NAME [--quick] [--out DIR] [--jobs J] [--force] [--retry-failed] [--dry-run]
    tessera experiment plot NAME [--quick] [--out DIR]
    tessera experiment report [--output FILE] [--results DIR] [--quick]

(`tessera experiment ...` runs this file with /usr/bin/python3; it also runs
directly: /usr/bin/python3 experiments/experiment.py ...). NAME is a file of
experiments/definitions/ without .json, or a path to a definition file; the
schema is in experiments/definitions/README.md. Exit status: 0 done, 1 `run`
ran runs that failed, or runs whose metrics could not all be evaluated (each
recorded in the results and named on stderr; the sweep went on), 2 a bad
definition, option or results folder (one line naming the file, key and
value), or an output that could not be written (one line naming the file; a
sweep stops at once, its runs in progress killed).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from runner import definition, execute, outputs, report  # noqa: E402
from runner.outputs import UsageError  # noqa: E402
from runner.definition import ROOT, DefinitionError, display_path  # noqa: E402
from runner.progress import clock  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "analysis"))
import plot_experiment  # noqa: E402
from experiment_results import ResultsError  # noqa: E402


def tessera_binary(given):
    """The tessera binary: --tessera, else $TESSERA_BIN (set by `tessera experiment`), else build/tessera."""
    path = given or os.environ.get("TESSERA_BIN") or os.path.join(ROOT, "build", "tessera")
    if not os.access(path, os.X_OK):
        raise UsageError("--tessera %s: not an executable (build it: cmake --build build --target tessera)" % path)
    return os.path.abspath(path)


def _runs(configs):
    return sum(c.repeats for c in configs)


def cmd_list(a):
    """One line per definition: name, paper figure, backend, runs in the full and quick sweeps."""
    status = 0
    print("%-28s %-22s %-7s %5s %5s %5s  %s" % ("name", "paper", "backend", "full", "skip", "quick", "title"))
    for name in definition.all_names():
        try:
            d = definition.load(name)
            full, skipped = d.expand(False)
            quick, _ = d.expand(True)
        except DefinitionError as e:
            print("tessera experiment: %s" % e, file=sys.stderr)
            status = 2
            continue
        print("%-28s %-22s %-7s %5d %5d %5d  %s" % (name, "%s %s" % (d.paper["id"], d.paper["figure"]),
                                                   d.doc["backend"], _runs(full), len(skipped), _runs(quick), d.title))
    return status


def cmd_run(a):
    """Runs a sweep (pending runs only, unless --force) and writes its results."""
    d = definition.load(a.name)
    if a.jobs < 1:
        raise UsageError("--jobs %d: must be >= 1" % a.jobs)
    if a.timeout is not None and a.timeout <= 0:
        raise UsageError("--timeout %d: must be >= 1 (seconds)" % a.timeout)
    out = os.path.abspath(a.out) if a.out else execute.default_out(d.name, a.quick)
    why = outputs.folder_problem(out, create=not a.dry_run)
    if why:
        raise UsageError("--out %s: %s" % (a.out or display_path(out), why))
    for name in ("meta.json", "runs.jsonl", "runs.csv", "traces") if not a.dry_run else ():
        path = os.path.join(out, name)
        why = outputs.folder_problem(path, create=False) if name == "traces" else outputs.file_problem(path)
        if why:
            raise UsageError("--out %s: %s %s" % (a.out or display_path(out), display_path(path), why))
    if a.dry_run:
        configs, skipped = d.expand(a.quick)
        for c in configs:
            cmd = execute.command(d, c, a.tessera or "tessera", "run.json")
            print("%s x%d  %s" % (c.id, c.repeats, " ".join(cmd)))
        for c, reason in skipped:
            print("%s skip  %s  (%s)" % (c.id, c.label(), reason))
        return 0
    runner = execute.Runner(d, out, tessera_binary(a.tessera), quick=a.quick, jobs=a.jobs, force=a.force,
                            retry_failed=a.retry_failed, timeout_s=a.timeout)
    t0 = time.monotonic()
    ok, failed, kept, skipped = runner.run()
    bad_metric = runner.metric_failures
    print("%s: %d run(s) ok%s, %d failed, %d already done (kept), %d point(s) of the full sweep not run (see meta.json) "
          "in %s -> %s" % (d.name, ok, " (%d with a metric that failed, named above)" % bad_metric if bad_metric else "",
                           failed, kept, skipped, clock(time.monotonic() - t0), display_path(out)))
    return 1 if failed or bad_metric else 0


def cmd_plot(a):
    """Draws the definition's figures (as its file states them now) from a results folder (this machine's or a copied one)."""
    d = definition.load(a.name)
    out = os.path.abspath(a.out) if a.out else execute.default_out(d.name, a.quick)
    if not os.path.isfile(os.path.join(out, "meta.json")):
        raise UsageError("--out %s: no results there (run `tessera experiment run %s` first)" % (display_path(out), a.name))
    for path in plot_experiment.plot_results(out, d.doc):
        print(display_path(path))
    return 0


def cmd_report(a):
    """Writes experiments/REPRODUCTION.md from the results of every definition."""
    path = os.path.abspath(a.output)
    why = outputs.file_problem(path)
    if why:
        raise UsageError("--output %s: %s" % (a.output, why))
    if a.results and not os.path.isdir(a.results):
        raise UsageError("--results %s: %s" % (a.results, "is a file, not a folder" if os.path.exists(a.results)
                                               else "no such folder"))
    report.write(path, quick=a.quick, base=os.path.abspath(a.results) if a.results else None)
    print(display_path(path))
    return 0


def parser():
    ap = argparse.ArgumentParser(prog="tessera experiment", description=__doc__.splitlines()[0])
    ap.add_argument("--tessera", help="the tessera binary (default $TESSERA_BIN or build/tessera)")
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the definitions, with their paper figure and sweep sizes")
    r = sub.add_parser("run", help="run a definition's sweep (resumable)")
    r.add_argument("name", help="definition name (experiments/definitions/NAME.json) or file")
    r.add_argument("--quick", action="store_true", help="the reduced sweep (under 2 minutes on a 2-core VM)")
    r.add_argument("--out", help="results folder (default results/experiments/NAME/, --quick: .../NAME/quick/)")
    r.add_argument("--jobs", type=int, default=1, help="simulations run in parallel (real runs always one at a time)")
    r.add_argument("--force", action="store_true", help="rerun runs whose results exist")
    r.add_argument("--retry-failed", action="store_true", help="rerun runs recorded as failed")
    r.add_argument("--timeout", type=int, help="seconds before a run is killed (default the definition's, else 600)")
    r.add_argument("--dry-run", action="store_true", help="print every run's command and the left-out points")
    p = sub.add_parser("plot", help="draw a definition's figures (PNG and PDF) into its results folder")
    p.add_argument("name", help="definition name or file")
    p.add_argument("--quick", action="store_true", help="the --quick results folder")
    p.add_argument("--out", help="results folder (default as for run)")
    rep = sub.add_parser("report", help="write experiments/REPRODUCTION.md from every definition's results")
    rep.add_argument("--output", default=os.path.join(ROOT, "experiments", "REPRODUCTION.md"))
    rep.add_argument("--quick", action="store_true", help="from the --quick results (a test of the report itself)")
    rep.add_argument("--results", help="folder holding one results folder per definition (default results/experiments)")
    return ap


def main(argv=None):
    a = parser().parse_args(argv)
    try:
        return {"list": cmd_list, "run": cmd_run, "plot": cmd_plot, "report": cmd_report}[a.command](a)
    except (DefinitionError, UsageError, ResultsError, execute.CannotStart) as e:
        print("tessera experiment: %s" % e, file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0  # the reader (e.g. head) has gone
    except OSError as e:  # an output that could not be written (a full disk): the file and why, the sweep stopped
        print("tessera experiment: %s" % outputs.os_error_line(e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tessera experiment: interrupted (finished runs are kept; run again to resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
