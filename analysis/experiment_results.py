"""Reading an experiment's results folder (runs.jsonl, meta.json) for plots and the report.

A results folder is self-contained: meta.json holds the definition it was run
from, so a folder copied from another machine plots without this checkout's
definitions.
"""
import collections
import json
import os
import statistics


def read_runs(out_dir, on_bad_line=None):
    """The last record of every (config id, repeat) in DIR/runs.jsonl, in order of first appearance.

    A line that is not JSON is skipped; on_bad_line(path, line_number) is told of it.
    """
    path = os.path.join(out_dir, "runs.jsonl")
    records = collections.OrderedDict()
    if os.path.isfile(path):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    if on_bad_line:
                        on_bad_line(path, n)
                    continue
                records[(r["config_id"], r["repeat"])] = r
    return records


class Results:
    """The runs of one results folder, grouped by configuration, restricted to the last sweep's points."""

    def __init__(self, out_dir):
        self.dir = out_dir
        with open(os.path.join(out_dir, "meta.json")) as f:
            self.meta = json.load(f)
        self.definition = self.meta["definition"]
        wanted = set(self.meta.get("configs", []))
        latest = collections.OrderedDict(
            (key, r) for key, r in read_runs(out_dir).items() if not wanted or r["config_id"] in wanted)
        self.groups = collections.OrderedDict()
        for r in latest.values():
            self.groups.setdefault(r["config_id"], []).append(r)

    def points(self, where=None):
        """One Point per configuration whose parameters match `where` ({name: value or [values]})."""
        out = []
        for runs in self.groups.values():
            params = runs[0]["params"]
            if all(params.get(k) in (v if isinstance(v, list) else [v]) for k, v in (where or {}).items()):
                out.append(Point(runs))
        return out

    def find(self, where):
        """The points whose parameters match `where` exactly on the keys it names."""
        return self.points(where)


class Point:
    """A configuration's runs (its repeats): values are medians over the successful ones."""

    def __init__(self, runs):
        self.runs = runs
        self.params = runs[0]["params"]
        self.ok = [r for r in runs if r["status"] == "ok"]
        self.failed = [r for r in runs if r["status"] != "ok"]

    def values(self, name):
        """Every successful run's value of `name`: a metric, a result field or a parameter."""
        out = []
        for r in self.ok:
            v = _lookup(r, name)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out.append(v)
        return out

    def value(self, name):
        """The median over repeats of `name`, or None when no run succeeded."""
        vals = self.values(name)
        return statistics.median(vals) if vals else None

    def failure(self):
        """'exit N: last stderr line' (or 'timeout: ...') of the first failed run when none succeeded, else None."""
        if self.ok or not self.failed:
            return None
        r = self.failed[0]
        lines = (r.get("stderr") or "").strip().splitlines()
        what = "timeout" if r["status"] == "timeout" else "exit %s" % r["exit_status"]
        return "%s: %s" % (what, lines[-1] if lines else "")


def _lookup(record, name):
    for src in (record.get("metrics") or {}, record.get("result") or {}, record["params"]):
        if name in src:
            return src[name]
    return None


def series_key(params, names):
    """The values of the series parameters, as a tuple."""
    return tuple(params.get(n) for n in names)


def series_label(names, key):
    """'cholesky d' style label of a series."""
    return " ".join("%s=%s" % (n, v) if isinstance(v, (int, float)) else str(v) for n, v in zip(names, key)) or "tessera"
