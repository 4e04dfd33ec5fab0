"""experiments/REPRODUCTION.md, generated from the results of every definition.

For every `reported` entry of every definition: the paper's value and source,
ours (from the results folder, aggregated as the entry says), the ratio, the
figure, and for a difference above 15% the cause recorded in the
definition's `notes` under the entry's id. Points of the full sweep that were
not run, runs that failed and metrics that could not be evaluated are listed
with their reason or error, and a value aggregated over points some of which
failed says how many and why in its cell: nothing is left out silently. The
numbers come from the results only.
"""
import collections
import datetime
import os
import statistics
import sys

from . import definition
from .definition import ROOT
from .execute import default_out
from .outputs import replace_file

sys.path.insert(0, os.path.join(ROOT, "analysis"))
from experiment_results import Results, matches  # noqa: E402

THRESHOLD = 0.15


def fmt(v):
    """A number in 4 significant digits."""
    if v is None:
        return "—"
    if isinstance(v, float):
        return "%.4g" % v
    return str(v)


def ours(results, entry):
    """(value, how) of our side of a reported entry: (number, None) or (None, why there is none).

    Plain entries take the metric at the points matching `where`; `relative_to`
    divides it by the same point's metric with those parameters changed (a list
    of values: the largest of those points), one ratio per point; `best_of`
    gives the named parameter's value at the point with the largest metric."""
    where = entry.get("where", {})
    pts = results.points(where)
    if "best_of" in entry:
        return best_of(results, entry, pts)
    if "relative_to" in entry:
        good, short, problem, failed = ratios(results, entry, pts)
        against = "against " + ", ".join(
            "the best of %d values of %s" % (len(v), k) if isinstance(v, list) else "%s = %s" % (k, v)
            for k, v in sorted(entry["relative_to"].items())) + short
        if not good and problem:
            return None, problem
    else:
        good = [v for v in (p.value(entry["metric"]) for p in pts) if v is not None]
        failed = [p.why_missing(entry["metric"]) for p in pts
                  if p.value(entry["metric"]) is None and p.why_missing(entry["metric"])]
        against = None
    if not good:
        return None, missing(results, where, pts, entry.get("metric"))
    agg = entry.get("aggregate", "single")
    if agg == "single" and len(good) > 1:
        agg = "median"
    value = {"single": good[0], "median": statistics.median(good), "max": max(good), "min": min(good)}[agg]
    how = [against] if against else []
    if failed:  # an aggregate over the survivors is not the sweep's: say so
        how.append("%s of %d of %d points; %d failed: %s" % (agg, len(good), len(good) + len(failed), len(failed),
                                                            failed[0]))
    elif agg != "single":
        how.append("%s of %d points" % (agg, len(good)))
    return value, "; ".join(how) or None


def ratios(results, entry, pts):
    """(ratios, shortfall, problem, failed): each point's metric over its reference's, the reference being the
    points with the point's own swept and fixed parameters (derived ones follow them) and relative_to's values in
    place, several of them: the largest. A point that is its own reference (it already has those values) is
    left out, not counted as 1. shortfall says when a list's references did not all give a value; problem why
    no point had a reference; failed, why each point that failed (or whose reference did) gave no ratio."""
    metric, ref = entry["metric"], entry["relative_to"]
    derived = definition.derived_names(results.definition)
    wanted = max((len(v) for v in ref.values() if isinstance(v, list)), default=1)
    out, fewest, problem, failed = [], None, None, []
    for p in pts:
        v = p.value(metric)
        if v is None:
            if p.why_missing(metric):
                failed.append(p.why_missing(metric))
            continue
        key = {k: x for k, x in p.params.items() if k not in derived}
        key.update(ref)
        matches = results.points(key)
        others = [q for q in matches if q.params != p.params]
        refs = [r for r in (q.value(metric) for q in others) if r is not None]
        if refs and max(refs) > 0:
            out.append(v / max(refs))
            fewest = len(refs) if fewest is None else min(fewest, len(refs))
        elif refs:
            why = "reference value %s for %s: no ratio" % (fmt(max(refs)), key)
            failed.append(why)
            problem = problem or why
        elif len(others) == len(matches):  # not merely its own reference
            bad = [q.why_missing(metric) for q in others if q.why_missing(metric)]
            if bad:
                failed.append("reference %s" % bad[0])
            problem = problem or (("reference run failed: %s" % bad[0]) if bad else "no reference run for %s" % key)
    short = " (%d of %d references ran)" % (fewest, wanted) if fewest is not None and fewest < wanted else ""
    return out, short, problem, failed


def best_of(results, entry, pts):
    """(the best_of parameter's value at the point with the largest metric, how)."""
    name, metric = entry["best_of"], entry["metric"]
    cands = [(p.value(metric), p.params.get(name)) for p in pts]
    cands = [(v, x) for v, x in cands if v is not None and isinstance(x, (int, float)) and not isinstance(x, bool)]
    if not cands:
        if any(p.value(metric) is not None for p in pts):
            return None, "no point matching %s has a numeric %s" % (entry.get("where", {}), name)
        return None, missing(results, entry.get("where", {}), pts, metric)
    best = max(cands, key=lambda c: c[0])
    failed = [p.why_missing(metric) for p in pts if p.value(metric) is None and p.why_missing(metric)]
    if failed:  # the best of the points that ran, not of the sweep
        return best[1], "%s of the largest %s among the %d of %d points that gave one (%s); %d failed: %s" % (
            name, metric, len(cands), len(cands) + len(failed), fmt(best[0]), len(failed), failed[0])
    return best[1], "%s of the largest %s among %d points (%s)" % (name, metric, len(cands), fmt(best[0]))


def missing(results, where, pts, metric=None):
    """Why the points matching `where` give no value of `metric`: a failure, a metric that failed, a skipped point,
    or none there."""
    failures = [p.failure() for p in pts if p.failure()]
    if failures:
        return "run failed: %s" % failures[0]
    errors = [p.metric_error(metric) for p in pts if metric and p.metric_error(metric)]
    if errors:
        return errors[0]
    skipped = [s for s in results.meta.get("skipped") or [] if matches(s["params"], where)]
    if skipped:
        return "not run: %s" % skipped[0].get("reason")
    return "no result for %s" % where


def figure_link(results, entry, defn, report_dir):
    """Markdown image link (relative to experiments/) of the entry's plot, or of the definition's first."""
    plot = entry.get("plot") or (defn.plots[0]["file"] if defn.plots else None)
    if not plot:
        return ""
    png = os.path.join(results.dir, "figures", plot + ".png")
    rel = os.path.relpath(png, report_dir)
    return "[%s](%s)" % (plot, rel) if os.path.isfile(png) else "%s (not drawn)" % plot


def entry_row(name, defn, results, entry, causes, report_dir):
    """One table row of a reported entry; appends (id, sentence) to causes when the difference needs one."""
    paper = entry.get("value")
    paper_text = fmt(paper) if paper is not None else "“%s”" % entry["text"]
    if paper is None:
        note = defn.notes.get(entry["id"], "the paper gives no number here")
        if entry.get("derived_from") and "metric" in entry:
            note += " Ours: " + entry["derived_from"]
        causes.append((entry["id"], note))
        value, how = ours(results, entry) if "metric" in entry else (None, None)
        mine = "—" if value is None else fmt(value) + (" (%s)" % how if how else "")
        return "| %s | %s | %s (%s) | %s | — | %s |" % (name, entry["id"], paper_text, entry["source"], mine,
                                                     figure_link(results, entry, defn, report_dir))
    value, how = ours(results, entry)
    if value is None:
        causes.append((entry["id"], how + (". " + defn.notes[entry["id"]] if entry["id"] in defn.notes else "")))
        return "| %s | %s | %s (%s) | %s | — | %s |" % (name, entry["id"], paper_text, entry["source"], how,
                                                     figure_link(results, entry, defn, report_dir))
    ratio = value / paper if paper else None
    ours_text = fmt(value) + (" (%s)" % how if how else "")
    if ratio is not None and abs(ratio - 1) > THRESHOLD:
        causes.append((entry["id"], defn.notes.get(entry["id"], "**no cause recorded**: add notes.%s to %s" % (
            entry["id"], definition.display_path(defn.path)))))
    return "| %s | %s | %s (%s) | %s | %s | %s |" % (name, entry["id"], paper_text, entry["source"], ours_text,
                                                  "%.2f" % ratio if ratio is not None else "—",
                                                  figure_link(results, entry, defn, report_dir))


def section(name, defn, results, report_dir, headline):
    """The Markdown section of one definition."""
    meta = results.meta
    lines = ["## %s" % defn.title, ""]
    runs = [r for p in results.points() for r in p.runs]
    ok = sum(1 for r in runs if r["status"] == "ok")
    binary = [r.get("tessera_binary") or {} for r in runs]
    commits = sorted({(r.get("tessera_commit") or "?")[:10] + (" with uncommitted changes" if r.get("tessera_dirty") else "")
                      + (", binary %s built %s" % (str(b.get("sha256"))[:12], b.get("built")) if b else "")
                      for r, b in zip(runs, binary)})
    dates = sorted(r["date"] for r in runs if r.get("date"))
    lines.append("Definition `%s`; results `%s` (%s sweep, %d run(s): %d ok, %d failed), tessera %s, runs from %s to %s, "
                 "machine `%s`." % (meta.get("definition_file"), os.path.relpath(results.dir, ROOT),
                                    "quick" if meta.get("quick") else "full", len(runs), ok, len(runs) - ok,
                                    "; ".join(commits) or "?", dates[0] if dates else "?", dates[-1] if dates else "?",
                                    meta.get("machine")))
    lines.append("")
    if defn.reported:
        lines += ["| definition | reported value | paper (source) | ours | ours/paper | figure |",
                  "|---|---|---|---|---:|---|"]
        causes = []
        for entry in defn.reported:
            row = entry_row(name, defn, results, entry, causes, report_dir)
            lines.append(row)
            if entry.get("headline"):
                headline.append(row)
        lines.append("")
        for eid, text in causes:
            lines.append("- **%s**: %s" % (eid, text))
        for entry in defn.reported:
            if entry.get("derived_from") and entry.get("value") is not None:
                lines.append("- **%s** (the paper's value, %s): %s" % (entry["id"], fmt(entry["value"]),
                                                                       entry["derived_from"]))
        lines.append("")
    for plot in defn.plots:
        png = os.path.join(results.dir, "figures", plot["file"] + ".png")
        if os.path.isfile(png):
            lines.append("![%s](%s)" % (plot["title"], os.path.relpath(png, report_dir)))
    lines.append("")
    lines += not_run(meta) + failed(runs) + metric_failed(runs)
    if "general" in defn.notes:
        lines += [defn.notes["general"], ""]
    return lines


def not_run(meta):
    """Full-sweep points left out, grouped by reason."""
    by_reason = collections.OrderedDict()
    for s in meta.get("skipped") or []:
        by_reason.setdefault(s.get("reason"), []).append(str(s.get("label")))
    out = []
    for reason, labels in by_reason.items():
        out.append("Not run (%d point(s)): %s. Points: %s." % (len(labels), reason, "; ".join(labels)))
        out.append("")
    return out


def failed(runs):
    """Failed runs, grouped by their last error line."""
    by_error = collections.OrderedDict()
    for r in runs:
        if r["status"] != "ok":
            lines = (r.get("stderr") or "").strip().splitlines()
            key = "%s, exit %s: %s" % (r["status"], r.get("exit_status"), _generic(lines[-1] if lines else ""))
            by_error.setdefault(key, []).append(r.get("label", r["config_id"]))
    out = []
    for err, labels in by_error.items():
        out.append("Failed (%d run(s)): `%s`. Runs: %s." % (len(labels), err, "; ".join(labels)))
        out.append("")
    return out


def metric_failed(runs):
    """Runs that succeeded but whose metrics could not all be evaluated, grouped by metric and error."""
    by_error = collections.OrderedDict()
    for r in runs:
        if r["status"] == "ok":
            for name, why in sorted((r.get("metric_errors") or {}).items()):
                by_error.setdefault("%s: %s" % (name, _generic(str(why))), []).append(r.get("label", r["config_id"]))
    out = []
    for err, labels in by_error.items():
        out.append("Metric failed (%d run(s)): `%s`. Runs: %s." % (len(labels), err, "; ".join(labels)))
        out.append("")
    return out


def _generic(line):
    """An error line with its node/GPU numbers and byte counts kept (it is shown as measured)."""
    return line.replace("|", "/")


def write(path, quick=False, base=None):
    """Writes the report for every definition that has results (under `base`, default results/experiments/)."""
    out = ["# Reproducing the papers' figures", "",
           "Generated by `tessera experiment report` from the results under `%s` (their newest run: %s) "
           "(do not edit by hand: change a definition's `notes`, rerun, regenerate). One section per experiment "
           "definition (`experiments/definitions/`): the paper's value and its source, ours from the results, "
           "ours/paper, the figure, and for every difference above %d%% its cause. Points that were not run and runs "
           "that failed are listed with their reason." % (
               definition.display_path(base or os.path.join(ROOT, "results", "experiments")), "{newest run}",
               int(THRESHOLD * 100)), ""]
    # Dated by its results, not by the clock: the same results give the same report.
    newest = ""
    missing, headline, body = [], [], []
    for name in definition.all_names():
        defn = definition.load(name)
        folder = default_out(name, quick)
        if base:
            folder = os.path.join(base, name, "quick") if quick else os.path.join(base, name)
        if not os.path.isfile(os.path.join(folder, "meta.json")):
            missing.append(name)
            continue
        results = Results(folder)
        newest = max([newest] + [r["date"] for runs in results.groups.values() for r in runs
                                 if isinstance(r.get("date"), str)])
        body += section(name, defn, results, os.path.dirname(os.path.abspath(path)), headline)
    if headline:
        out += ["## Headline values", "",
                "The values each figure is known by; every row is repeated, with its cause where it differs by more "
                "than %d%%, in its figure's section below." % int(THRESHOLD * 100), "",
                "| definition | reported value | paper (source) | ours | ours/paper | figure |", "|---|---|---|---|---:|---|"]
        out += headline + [""]
    out += body
    if missing:
        out += ["## Definitions without results", "",
                "Not run yet: %s (`tessera experiment run NAME`)." % ", ".join("`%s`" % m for m in missing), ""]
    out[2] = out[2].replace("{newest run}", _date_shown(newest) if newest else "none recorded", 1)
    text = "\n".join(out).rstrip() + "\n"
    replace_file(path, lambda f: f.write(text))  # the previous report whole until this one is


def _date_shown(iso):
    """A run's ISO date (2026-11-23T09:50:33+00:00) as the report shows dates: 2026-11-23 09:50 UTC."""
    try:
        when = datetime.datetime.fromisoformat(iso).astimezone(datetime.timezone.utc)
    except ValueError:
        return iso
    return when.strftime("%Y-%m-%d %H:%M UTC")
