"""Reading an experiment's results folder (runs.jsonl, meta.json) for plots and the report.

A results folder is self-contained: meta.json holds the definition it was run
from, so a folder copied from another machine plots without this checkout's
definitions.
"""
import collections
import json
import os
import statistics
import sys


class ResultsError(ValueError):
    """A results folder that cannot be read (a meta.json that is not one); the message names the file."""


# Record fields every reader uses, with their types; the other fields are read with defaults.
RECORD_FIELDS = {"config_id": str, "repeat": int, "params": dict, "status": str}
OPTIONAL_FIELDS = {"result": dict, "metrics": dict, "tessera_binary": dict, "stderr": str, "label": str, "date": str,
                   "tessera_commit": str, "run_wall_s": (int, float), "metric_errors": dict, "attached": dict,
                   "machine_digest": str}
_WARNED = set()

# A distributed run's result fields that meant node 0's alone in records made before 2026-11-29 (d7aacef) and
# the whole run's since (tasks: every node's; imbalance_ratio: the worst node's; README.md, "JSON output").
NODE0_FIELDS = ("tasks", "imbalance_ratio")


def node0_fields(result):
    """NODE0_FIELDS where a run's result is such an older record of a distributed run (nodes > 1, its
    comm.per_node entries without their own tasks, which d7aacef added with the change), else (): the readers
    take those fields as absent rather than report node 0's numbers as the run's."""
    if not isinstance(result, dict) or not isinstance(result.get("nodes"), int) or result["nodes"] <= 1:
        return ()
    comm = result.get("comm")
    per = comm.get("per_node") if isinstance(comm, dict) else None
    if isinstance(per, list) and per and isinstance(per[0], dict) and "tasks" not in per[0]:
        return NODE0_FIELDS
    return ()


def run_result(record):
    """A record's result ({} if none) less the fields it holds as node 0's alone (node0_fields)."""
    result = record.get("result") or {}
    old = node0_fields(result)
    return {k: v for k, v in result.items() if k not in old} if old else result


def record_problem(r):
    """Why a parsed runs.jsonl line is not a run record (one phrase), or None."""
    if not isinstance(r, dict):
        return "a JSON %s, not an object" % type(r).__name__
    for k, t in RECORD_FIELDS.items():
        if not isinstance(r.get(k), t) or isinstance(r.get(k), bool):
            return "%s %s" % (k, "missing" if k not in r else "%s is not a %s" % (json.dumps(r[k])[:40], t.__name__))
    for k, t in OPTIONAL_FIELDS.items():
        if r.get(k) is not None and not isinstance(r[k], t):
            return "%s %s is not a %s" % (k, json.dumps(r[k])[:40], getattr(t, "__name__", "number"))
    return None


def warn_bad_line(path, n, why):
    """One warning per bad line of a runs.jsonl, however often it is read."""
    if (path, n) not in _WARNED:
        _WARNED.add((path, n))
        print("%s:%d: %s, line ignored" % (path, n, why), file=sys.stderr)


def read_runs(out_dir, on_bad_line=warn_bad_line):
    """The last record of every (config id, repeat) in DIR/runs.jsonl, in order of first appearance.

    A line that is not a run record (not JSON, not UTF-8, a truncated last
    line, a record without its fields) is skipped; on_bad_line(path,
    line_number, why) is told of it.
    """
    path = os.path.join(out_dir, "runs.jsonl")
    records = collections.OrderedDict()
    if os.path.isfile(path):
        with open(path, "rb") as f:
            for n, raw in enumerate(f, 1):
                try:
                    line = raw.decode("utf-8").strip()
                    if not line:
                        continue
                    r = json.loads(line)
                    why = record_problem(r)
                except UnicodeDecodeError:
                    why = "not UTF-8 text"
                except ValueError:
                    why = "not a JSON line"
                except RecursionError:
                    why = "JSON nested too deeply, not a run record"
                if why:
                    if on_bad_line:
                        on_bad_line(path, n, why)
                    continue
                records[(r["config_id"], r["repeat"])] = r
    return records


def in_sweep_order(records, configs):
    """The records (of read_runs) in the sweep's order: by the configurations' order in `configs` (meta.json's list),
    then repeat; a configuration not listed comes after, in order of first appearance. Runs run in parallel finish,
    and are appended to runs.jsonl, in any order: what is read from them must not follow that order."""
    rank = {c: i for i, c in enumerate(configs or []) if isinstance(c, str)}
    first = {}
    for r in records:
        first.setdefault(r["config_id"], len(first))
    return sorted(records, key=lambda r: (rank.get(r["config_id"], len(rank)), first[r["config_id"]], r["repeat"]))


def read_meta(out_dir):
    """DIR/meta.json, checked: an object holding the definition it was run from; else ResultsError naming it."""
    path = os.path.join(out_dir, "meta.json")
    try:
        with open(path, "rb") as f:
            meta = json.loads(f.read().decode("utf-8"))
    except OSError as e:
        raise ResultsError("%s: cannot read it (%s)" % (path, e.strerror or e))
    except UnicodeDecodeError:
        raise ResultsError("%s: not UTF-8 text (not an experiment's meta.json)" % path)
    except ValueError as e:
        raise ResultsError("%s: not JSON (%s)" % (path, e))
    except RecursionError:
        raise ResultsError("%s: JSON nested too deeply (not an experiment's meta.json)" % path)
    if not isinstance(meta, dict):
        raise ResultsError("%s: the top level is %s, not an object (not an experiment's meta.json)" % (
            path, json.dumps(meta)[:40]))
    checks = (("definition", dict, True), ("configs", list, False), ("skipped", list, False),
              ("experiment", str, False), ("definition_file", str, False), ("machine", str, False),
              ("repeats", dict, False))
    for key, kind, required in checks:
        if (required and key not in meta) or meta.get(key) is not None and not isinstance(meta[key], kind):
            what = "missing" if key not in meta else "%s is not a %s" % (json.dumps(meta[key])[:40], kind.__name__)
            raise ResultsError("%s: %s %s (not an experiment's meta.json)" % (path, key, what))
    for s in meta.get("skipped") or []:
        if not isinstance(s, dict) or not isinstance(s.get("params"), dict):
            raise ResultsError("%s: skipped holds %s, not a point with its params" % (path, json.dumps(s)[:40]))
    if not isinstance(meta["definition"].get("plots", []), list):
        raise ResultsError("%s: definition.plots is not a list" % path)
    return meta


class Results:
    """The runs of one results folder, grouped by configuration, restricted to the last sweep's points."""

    def __init__(self, out_dir):
        self.dir = out_dir
        self.meta = read_meta(out_dir)
        self.definition = self.meta["definition"]
        wanted = set(c for c in self.meta.get("configs") or [] if isinstance(c, str))
        # A point's repeats as the last sweep ran it (meta.json since 2026-11-29): a repeat beyond them was
        # recorded by a sweep that ran more and is no run of this one.
        repeats = {c: n for c, n in (self.meta.get("repeats") or {}).items() if isinstance(n, int)}
        latest = [r for r in read_runs(out_dir).values() if (not wanted or r["config_id"] in wanted) and
                  r["repeat"] < repeats.get(r["config_id"], r["repeat"] + 1)]
        self.groups = collections.OrderedDict()
        for r in in_sweep_order(latest, self.meta.get("configs")):
            self.groups.setdefault(r["config_id"], []).append(r)

    def points(self, where=None):
        """One Point per configuration whose parameters match `where` ({name: value or [values]})."""
        out = []
        for runs in self.groups.values():
            if matches(runs[0]["params"], where):
                out.append(Point(runs))
        return out

    def find(self, where):
        """The points whose parameters match `where` exactly on the keys it names."""
        return self.points(where)


def matches(params, where):
    """Whether a point's parameters match a `where` filter ({name: value or [values]}; None: every point)."""
    return all(params.get(k) in (v if isinstance(v, list) else [v]) for k, v in (where or {}).items())


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
        what = "timeout" if r["status"] == "timeout" else "exit %s" % r.get("exit_status")
        return "%s: %s" % (what, lines[-1] if lines else "")

    def metric_error(self, name):
        """'metric NAME failed: why' when runs succeeded but none gave `name` and one recorded why its evaluation
        failed (runs.jsonl's metric_errors, e.g. an attachment that could not be computed); else None."""
        if not self.ok or self.values(name):
            return None
        for r in self.ok:
            why = (r.get("metric_errors") or {}).get(name)
            if why:
                return "metric %s failed: %s" % (name, why)
        return None

    def why_missing(self, name):
        """Why this point has no value of `name`: failure() or metric_error(), else None (none is recorded)."""
        return self.failure() or self.metric_error(name)


def _lookup(record, name):
    for src in (record.get("metrics") or {}, run_result(record), record["params"]):
        if name in src:
            return src[name]
    return None


def series_key(params, names):
    """The values of the series parameters, as a tuple."""
    return tuple(params.get(n) for n in names)


def series_label(names, key):
    """'cholesky d' style label of a series."""
    return " ".join("%s=%s" % (n, v) if isinstance(v, (int, float)) else str(v) for n, v in zip(names, key)) or "tessera"
