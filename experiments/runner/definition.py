"""Experiment definition files: loading, validation and expansion into runs.

The schema is documented in experiments/definitions/README.md. Every error
in a definition is a DefinitionError whose message names the file, the key
and the value; the command line turns it into one line and exit status 2.
"""
import hashlib
import itertools
import json
import os
import re
import sys

from . import expr

EXPERIMENTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(EXPERIMENTS_DIR)
DEFINITIONS_DIR = os.path.join(EXPERIMENTS_DIR, "definitions")

TOP_KEYS = {"name", "title", "description", "paper", "machine", "backend", "fixed", "sweep", "derived", "variables",
            "repeats", "timeout_s", "attach", "metrics", "quick", "skip", "reported", "plots", "notes", "mpirun_args"}
REQUIRED_KEYS = ("name", "title", "paper", "backend", "sweep")
QUICK_KEYS = {"fixed", "sweep", "derived", "repeats", "note"}
PAPER_KEYS = {"id", "figure", "section", "page"}
REPORTED_KEYS = {"id", "plot", "where", "metric", "value", "source", "text", "headline", "derived_from", "aggregate",
                 "relative_to", "best_of"}
AGGREGATES = ("single", "median", "max", "min")
PLOT_KEYS = {"file", "kind", "title", "x", "y", "series", "where", "xlabel", "ylabel", "logx", "logy", "hline",
             "pair", "categories", "ymin"}
PLOT_KINDS = {"lines", "bars", "breakdown", "scatter"}
SKIP_KEYS = {"where", "reason"}
BACKENDS = ("sim", "native", "mpirun")
ATTACHMENTS = ("comm_model", "comm_derived", "trace_breakdown")


def machine_figures(doc):
    """A machine document without its prose (sources, descriptions, notes): what a simulation reads."""
    if isinstance(doc, dict):
        return {k: machine_figures(v) for k, v in doc.items() if k not in ("source", "description", "notes")}
    if isinstance(doc, list):
        return [machine_figures(v) for v in doc]
    return doc


def machine_digest(doc):
    """12 hex digits naming a machine document by its figures: editing a source note keeps the digest, changing a
    number changes it."""
    return hashlib.sha1(json.dumps(machine_figures(doc), sort_keys=True).encode()).hexdigest()[:12]


class DefinitionError(ValueError):
    """A definition that cannot be run; the message names file, key and value."""


def _positive(minimum):
    def check(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= minimum
    return check


def _one_of(*values):
    def check(v):
        return v in values
    check.values = values
    return check


def _b_value(v):
    return v == "auto" or _positive(1)(v)


def _d_value(v):
    return v in ("auto", "eq1") or _positive(1)(v)


def _grid_value(v):
    return isinstance(v, str) and re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*", v) is not None


def _flag(v):
    return isinstance(v, bool)


def _sigma(v):
    """A noise sigma of tessera run (--node-noise, --kernel-noise): a number from 0 to 2."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 2


def _sigma_or_auto(v):
    return v == "auto" or _sigma(v)


# `tessera run` options a definition may set: name -> (check, what it must be).
RUN_OPTIONS = {
    "algo": (_one_of("cholesky", "qr", "lu"), "cholesky, qr or lu"),
    "pivot": (_one_of("partial", "tournament", "none"), "partial, tournament or none"),
    "tslu_tree": (_one_of("binary", "flat"), "binary or flat"),
    "d": (_d_value, "an integer >= 1, \"auto\" or \"eq1\""),
    "n": (_positive(1), "an integer >= 1"), "m": (_positive(1), "an integer >= 1"),
    "B": (_positive(1), "an integer >= 1"), "s": (_positive(1), "an integer >= 1"),
    "b": (_b_value, "an integer >= 1 or \"auto\""), "ib": (_positive(1), "an integer >= 1"),
    "precision": (_one_of("d", "s"), "d or s"), "threads": (_positive(1), "an integer >= 1"),
    "gpus": (_positive(0), "an integer >= 0"), "grid": (_grid_value, "a grid PrxPc of positive integers"),
    "nodes": (_positive(1), "an integer >= 1"), "window": (_positive(1), "an integer >= 1"),
    "seed": (_positive(0), "an integer >= 0"), "policy": (_one_of("priority", "fifo", "random"), "priority, fifo or random"),
    "impl": (_one_of("tile", "lapack", "cusolver"), "tile, lapack or cusolver"),
    "device": (_one_of("emulated", "cuda"), "emulated or cuda"),
    "check": (_flag, "true or false"), "sim_data": (_flag, "true or false"), "keep_tiles": (_flag, "true or false"),
    "dist": (_one_of("multi-level", "block-cyclic-2d", "column-cyclic", "gpu-columns"),
             "multi-level, block-cyclic-2d, column-cyclic or gpu-columns"),
    "v": (_positive(1), "an integer >= 1"),
    "qr_tree": (_one_of("flat", "binary"), "flat or binary"),
    "qr_domain": (_positive(0), "an integer >= 0"),
    "gpu_streams": (_positive(1), "an integer >= 1"),
    "kernel_noise": (_sigma_or_auto, "a number from 0 to 2 or \"auto\""),
    "node_noise": (_sigma, "a number from 0 to 2"), "noise_seed": (_positive(0), "an integer >= 0"),
}
RUNNER_PARAMS = {"backend": (_one_of(*BACKENDS), " or ".join(BACKENDS))}


class Config:
    """One point of a sweep: its parameters (run options, backend, variables) and a stable id."""

    def __init__(self, params, definition):
        self.params = params
        self.backend = params["backend"]
        self.repeats = definition.repeats_for(self.backend)
        key = json.dumps({k: v for k, v in sorted(params.items())}, sort_keys=True)
        self.id = hashlib.sha1(((definition.machine or "") + "|" + key).encode()).hexdigest()[:12]

    def run_options(self):
        """The `tessera run` options of this point (no variables, no backend)."""
        return {k: v for k, v in self.params.items() if k in RUN_OPTIONS}

    def label(self):
        """A short readable description: the run options in a fixed order."""
        order = ["algo", "precision", "m", "n", "grid", "nodes", "threads", "gpus", "B", "s", "b", "pivot", "d"]
        opts = self.run_options()
        parts = ["%s=%s" % (k, opts[k]) for k in order if opts.get(k) is not None]
        return " ".join([self.backend] + parts)


class Definition:
    """A validated experiment definition (see experiments/definitions/README.md)."""

    def __init__(self, path, doc):
        self.path = path
        self.doc = doc
        self.name = doc["name"]
        self.title = doc["title"]
        self.paper = doc["paper"]
        self.machine = doc.get("machine")
        self.variables = doc.get("variables", {})
        self.metrics = doc.get("metrics", {})
        self.attach = doc.get("attach", [])
        self.reported = doc.get("reported", [])
        self.plots = doc.get("plots", [])
        self.notes = doc.get("notes", {})
        self.timeout_s = doc.get("timeout_s", 600)
        self.mpirun_args = doc.get("mpirun_args", ["--oversubscribe"])

    def error(self, key, message):
        """A DefinitionError naming this file and `key`."""
        return DefinitionError("%s: %s: %s" % (display_path(self.path), key, message))

    def record_problem(self, record):
        """Why a recorded ok run cannot be kept on a resumed sweep (it then runs again), or None: a distributed run
        recorded when its tasks and imbalance_ratio were node 0's alone, so the sweep's records do not mix the two
        meanings (`tessera explore` also asks for a predicted time)."""
        if _experiment_results().node0_fields(record.get("result")):
            return "holds node 0's tasks and imbalance_ratio (recorded before they were the whole run's)"
        return None

    def repeats_for(self, backend):
        """Runs per point: simulations are deterministic and run once; real runs `repeats` times."""
        return 1 if backend == "sim" else self.doc.get("repeats", 1)

    def expand(self, quick=False):
        """The points of the full (or --quick) sweep, as (to_run, skipped) where skipped
        is a list of (Config, reason) of full-sweep points a `skip` entry leaves out."""
        section = self.doc.get("quick", {}) if quick else {}
        fixed = dict(self.doc.get("fixed", {}))
        fixed.update(section.get("fixed", {}))
        fixed.setdefault("backend", self.doc["backend"])
        sweep = section.get("sweep", self.doc["sweep"])
        derived = dict(self.doc.get("derived", {}))
        derived.update(section.get("derived", {}))
        where = "quick." if quick and "sweep" in section else ""
        points = []
        for combo in itertools.product(*[_factor_points(f) for f in sweep]):
            params = dict(fixed)
            origin = {k: "%sfixed.%s" % ("quick." if quick and k in section.get("fixed", {}) else "", k) for k in params}
            for part in combo:
                for k, v in part.items():
                    if k in params and k != "backend":
                        raise self.error("%ssweep.%s" % (where, k), "also set in fixed (value %r)" % (params[k],))
                    params[k] = v
                    origin[k] = "%ssweep.%s" % (where, k)
            for k, text in derived.items():
                try:
                    params[k] = expr.evaluate(text, params)
                except expr.ExprError as e:
                    raise self.error("derived.%s" % k, "value %s: %s" % (json.dumps(text), e))
                origin[k] = "derived.%s" % k
            self._check_values(params, origin)
            points.append(Config(params, self))
        skipped = []
        if not quick:
            kept = []
            for c in points:
                reason = self._skip_reason(c.params)
                (skipped.append((c, reason)) if reason else kept.append(c))
            points = kept
        unique = {}
        for c in points:
            unique.setdefault(c.id, c)
        return list(unique.values()), skipped

    def _skip_reason(self, params):
        for s in self.doc.get("skip", []):
            if all(params.get(k) in (v if isinstance(v, list) else [v]) for k, v in s["where"].items()):
                return s["reason"]
        return None

    def _check_values(self, params, origin):
        for k, v in params.items():
            check = RUN_OPTIONS.get(k) or RUNNER_PARAMS.get(k)
            if check and v is not None and not check[0](v):
                raise self.error(origin.get(k, k), "value %s must be %s" % (json.dumps(v), check[1]))
        if params["backend"] == "sim" and not self.machine:
            raise self.error("machine", "a sim backend needs a machine file (none given)")
        if "grid" in params and "nodes" in params:
            pr, pc = (int(x) for x in params["grid"].split("x"))
            if pr * pc != params["nodes"]:
                raise self.error(origin["grid"], "value %s does not have nodes = %s nodes" % (
                    json.dumps(params["grid"]), params["nodes"]))


def display_path(path):
    """A path relative to the repository when it lies inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def _factor_points(factor):
    """A sweep factor {a: [..], b: [..]} (lists of one length, zipped) as a list of dicts."""
    keys = list(factor)
    return [dict(zip(keys, values)) for values in zip(*[factor[k] for k in keys])]


def resolve(name_or_path):
    """The definition file of a name (experiments/definitions/NAME.json) or a path."""
    if name_or_path.endswith(".json") or os.sep in name_or_path:
        return os.path.abspath(name_or_path)
    return os.path.join(DEFINITIONS_DIR, name_or_path + ".json")


def all_names():
    """Names of every definition in experiments/definitions/, sorted."""
    return sorted(f[:-5] for f in os.listdir(DEFINITIONS_DIR) if f.endswith(".json"))


def load(name_or_path):
    """Loads and validates a definition; raises DefinitionError naming file, key and value."""
    path = resolve(name_or_path)
    shown = display_path(path)
    if not os.path.isfile(path):
        raise DefinitionError("%s: no such definition (known: %s)" % (shown, ", ".join(all_names())))
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except ValueError as e:
        raise DefinitionError("%s: not valid JSON: %s" % (shown, e))
    except RecursionError:
        raise DefinitionError("%s: not valid JSON: nested too deeply" % shown)
    if not isinstance(doc, dict):
        raise DefinitionError("%s: the top level must be an object" % shown)
    _validate(path, doc)
    return Definition(path, doc)


def _fail(path, key, message):
    raise DefinitionError("%s: %s: %s" % (display_path(path), key, message))


def _keys(path, where, obj, allowed=None, required=()):
    """`obj` must be an object whose keys are in `allowed` (any when None), with every `required` one."""
    if not isinstance(obj, dict):
        _fail(path, where or "top level", "value %s must be an object" % json.dumps(obj))
    for k in obj:
        if allowed is not None and k not in allowed:
            _fail(path, (where + "." if where else "") + k, "unknown key (allowed: %s)" % ", ".join(sorted(allowed)))
    for k in required:
        if k not in obj:
            _fail(path, (where + "." if where else "") + k, "missing")


def _validate(path, doc):
    """Structural checks that need no expansion: keys, names, files, expressions."""
    _keys(path, "", doc, TOP_KEYS, REQUIRED_KEYS)
    stem = os.path.splitext(os.path.basename(path))[0]
    if doc["name"] != stem:
        _fail(path, "name", "value %s differs from the file name %s" % (json.dumps(doc["name"]), json.dumps(stem)))
    _keys(path, "paper", doc["paper"], PAPER_KEYS, ("id", "figure"))
    for key in ("title", "description"):
        if key in doc and not _text(doc[key]):
            _fail(path, key, "value %s must be a non-empty string" % json.dumps(doc[key]))
    args = doc.get("mpirun_args", [])
    if not isinstance(args, list) or not all(_text(a) for a in args):
        _fail(path, "mpirun_args", "value %s must be a list of mpirun arguments (strings), e.g. [\"--oversubscribe\"]"
              % json.dumps(args))
    notes = doc.get("notes", {})
    _keys(path, "notes", notes)
    for k, v in notes.items():
        if not _text(v):
            _fail(path, "notes." + k, "value %s must be a non-empty string" % json.dumps(v))
    if doc["backend"] not in BACKENDS:
        _fail(path, "backend", "value %s must be one of %s" % (json.dumps(doc["backend"]), ", ".join(BACKENDS)))
    if "machine" in doc:
        m = doc["machine"]
        if not isinstance(m, str) or not os.path.isfile(os.path.join(ROOT, m)):
            _fail(path, "machine", "value %s: no such machine file" % json.dumps(m))
    variables = doc.get("variables", {})
    _keys(path, "variables", variables)
    for v in variables:
        if v in RUN_OPTIONS or v in RUNNER_PARAMS:
            _fail(path, "variables." + v, "is a run option, not a variable")
    known = set(RUN_OPTIONS) | set(RUNNER_PARAMS) | set(variables)
    _check_params(path, doc, "", known)
    if "quick" in doc:
        _keys(path, "quick", doc["quick"], QUICK_KEYS)
        _check_params(path, doc["quick"], "quick.", known)
    for key in ("repeats", "timeout_s"):
        if key in doc and not _positive(1)(doc[key]):
            _fail(path, key, "value %s must be an integer >= 1" % json.dumps(doc[key]))
    for i, a in enumerate(_list(path, "attach", doc.get("attach", []))):
        if a not in ATTACHMENTS:
            _fail(path, "attach[%d]" % i, "value %s must be one of %s" % (json.dumps(a), ", ".join(ATTACHMENTS)))
    metrics = doc.get("metrics", {})
    _keys(path, "metrics", metrics)
    for name, text in metrics.items():
        if name in known:
            _fail(path, "metrics." + name, "is already a parameter")
        _parse_expr(path, "metrics." + name, text)
    for i, s in enumerate(_list(path, "skip", doc.get("skip", []))):
        _keys(path, "skip[%d]" % i, s, SKIP_KEYS, SKIP_KEYS)
        _check_where(path, "skip[%d].where" % i, s["where"], known)
    _check_plots(path, doc, known, set(metrics))
    _check_reported(path, doc, known, set(metrics))


def _check_params(path, section, prefix, known):
    fixed = section.get("fixed", {})
    _keys(path, prefix + "fixed", fixed, known)
    if "sweep" in section or not prefix:
        sweep = section.get("sweep")
        if not isinstance(sweep, list) or not sweep:
            _fail(path, prefix + "sweep", "value %s must be a non-empty list of factors" % json.dumps(sweep))
        for i, factor in enumerate(sweep):
            where = "%ssweep[%d]" % (prefix, i)
            _keys(path, where, factor, known)
            if not factor:
                _fail(path, where, "value {} must name at least one parameter (an empty factor makes no run)")
            lengths = set()
            for k, values in factor.items():
                if not isinstance(values, list) or not values:
                    _fail(path, "%s.%s" % (where, k), "value %s must be a non-empty list" % json.dumps(values))
                lengths.add(len(values))
            if len(lengths) > 1:
                _fail(path, where, "zipped lists of different lengths %s" % sorted(lengths))
    derived = section.get("derived", {})
    _keys(path, prefix + "derived", derived, known)
    for name, text in derived.items():
        _parse_expr(path, prefix + "derived." + name, text)
    if "repeats" in section and not _positive(1)(section["repeats"]):
        _fail(path, prefix + "repeats", "value %s must be an integer >= 1" % json.dumps(section["repeats"]))


def _parse_expr(path, key, text):
    try:
        expr.parse(text)
    except expr.ExprError as e:
        _fail(path, key, "value %s: %s" % (json.dumps(text), e))


def _text(v):
    return isinstance(v, str) and v != ""


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _list(path, key, v):
    if not isinstance(v, list):
        _fail(path, key, "value %s must be a list" % json.dumps(v))
    return v


def _check_where(path, key, where, params):
    """A `where` filter: an object of parameters, each a value or a list of values."""
    _keys(path, key, where)
    for k, v in where.items():
        if k not in params:
            _fail(path, "%s.%s" % (key, k), "not a parameter")
        if isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v)):
            _fail(path, "%s.%s" % (key, k), "value %s must be a value or a list of values" % json.dumps(v))


# Plot keys beside file, kind, x, y and where: (check, what the value must be).
PLOT_VALUES = {
    "title": (_text, "a non-empty string"), "xlabel": (lambda v: isinstance(v, str), "a string"),
    "ylabel": (lambda v: isinstance(v, str), "a string"),
    "logx": (lambda v: isinstance(v, bool) or (_number(v) and v in (2, 10)), "true, false, 2 or 10 (the base)"),
    "logy": (_flag, "true or false"), "ymin": (_number, "a number"),
    "hline": (lambda v: isinstance(v, dict) and set(v) <= {"value", "label"} and _number(v.get("value"))
              and _text(v.get("label", "-")), "an object {\"value\": number, \"label\": text}"),
    "categories": (lambda v: isinstance(v, list) and v != [] and all(
        isinstance(c, dict) and set(c) == {"label", "metric"} and _text(c["label"]) and _text(c["metric"]) for c in v),
        "a non-empty list of {\"label\": text, \"metric\": name}"),
    "pair": (lambda v: isinstance(v, dict) and set(v) == {"param", "x", "y", "value"} and _text(v["param"])
             and _text(v["value"]), "an object {\"param\", \"x\", \"y\", \"value\"}"),
}
# What each kind draws from (figure_kinds.py): keys it needs.
PLOT_NEEDS = {"lines": ("x", "y"), "bars": ("x", "y"), "breakdown": ("categories",), "scatter": ()}


def _check_plots(path, doc, params, metrics):
    files = set()
    known = params | metrics
    for i, p in enumerate(_list(path, "plots", doc.get("plots", []))):
        where = "plots[%d]" % i
        _keys(path, where, p, PLOT_KEYS, ("file", "kind", "title"))
        if p["kind"] not in PLOT_KINDS:
            _fail(path, where + ".kind", "value %s must be one of %s" % (json.dumps(p["kind"]), ", ".join(sorted(PLOT_KINDS))))
        if not isinstance(p["file"], str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", p["file"]) or p["file"] in files:
            _fail(path, where + ".file", "value %s must be a unique plain file name" % json.dumps(p["file"]))
        files.add(p["file"])
        for k in PLOT_NEEDS[p["kind"]] + (() if p["kind"] != "scatter" or "pair" in p else ("x", "y")):
            if k not in p:
                _fail(path, "%s.%s" % (where, k), "missing (a %s plot needs it)" % p["kind"])
        for k, (check, what) in PLOT_VALUES.items():
            if k in p and not check(p[k]):
                _fail(path, "%s.%s" % (where, k), "value %s must be %s" % (json.dumps(p[k]), what))
        for k in ("x", "y"):
            if k in p and (not isinstance(p[k], str) or p[k] not in known and not _result_field(p[k])):
                _fail(path, "%s.%s" % (where, k), "value %s is neither a parameter, a metric nor a result field" % json.dumps(p[k]))
        named = [("%s.categories[%d].metric" % (where, j), c["metric"]) for j, c in enumerate(p.get("categories", []))]
        named += [(where + ".pair.value", p["pair"]["value"])] if "pair" in p else []
        for key, name in named:
            if name not in known and not _result_field(name):
                _fail(path, key, "value %s is neither a metric, a parameter nor a result field" % json.dumps(name))
        if "where" in p:
            _check_where(path, where + ".where", p["where"], params)
        series = p.get("series", [])
        if not isinstance(series, list) or not all(isinstance(n, str) for n in series):
            _fail(path, where + ".series", "value %s must be a list of parameter names" % json.dumps(series))
        for n in series:
            if n not in params:
                _fail(path, where + ".series", "value %s: %s is not a parameter" % (json.dumps(series), json.dumps(n)))


def _experiment_results():
    """analysis/experiment_results.py (analysis/ is not a package; the runner's execute.py imports it too)."""
    folder = os.path.join(ROOT, "analysis")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    import experiment_results
    return experiment_results


def check_figures(path, doc):
    """The plots and reported entries of a definition kept elsewhere (the copy in a results folder's meta.json,
    which figures and reports are drawn from): DefinitionError naming `path`, the key and the value."""
    _keys(path, "definition", doc)
    variables, metrics = doc.get("variables", {}), doc.get("metrics", {})
    _keys(path, "definition.variables", variables)
    _keys(path, "definition.metrics", metrics)
    known = set(RUN_OPTIONS) | set(RUNNER_PARAMS) | set(variables)
    for key in ("derived", "quick"):
        _keys(path, "definition." + key, doc.get(key, {}))
    _keys(path, "definition.quick.derived", doc.get("quick", {}).get("derived", {}))
    _check_plots(path, doc, known, set(metrics))
    _check_reported(path, doc, known, set(metrics))


def _result_field(name):
    return name in ("time_s", "gflops", "imbalance_ratio", "tasks", "wall_s", "cpu_s", "B", "b")


def _check_reported(path, doc, params, metrics):
    known = params | metrics
    plots = {p["file"] for p in doc.get("plots", [])}
    derived = derived_names(doc)
    ids = set()
    for i, r in enumerate(_list(path, "reported", doc.get("reported", []))):
        where = "reported[%d]" % i
        _keys(path, where, r, REPORTED_KEYS, ("id", "source"))
        for key in ("id", "source", "text", "derived_from"):
            if key in r and not _text(r[key]):
                _fail(path, "%s.%s" % (where, key), "value %s must be a non-empty string" % json.dumps(r[key]))
        if "headline" in r and not _flag(r["headline"]):
            _fail(path, where + ".headline", "value %s must be true or false" % json.dumps(r["headline"]))
        if "plot" in r and not _text(r["plot"]):
            _fail(path, where + ".plot", "value %s must be a plot's file name" % json.dumps(r["plot"]))
        if r["id"] in ids:
            _fail(path, where + ".id", "value %s is used twice" % json.dumps(r["id"]))
        ids.add(r["id"])
        if "plot" in r and r["plot"] not in plots:
            _fail(path, where + ".plot", "value %s names no plot of this file" % json.dumps(r["plot"]))
        value = r.get("value")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            _fail(path, where + ".value", "value %s must be a number or null" % json.dumps(value))
        if value is None and "text" not in r:
            _fail(path, where + ".text", "missing (a reported entry without a number needs the paper's words)")
        if value is not None and "metric" not in r:
            _fail(path, where + ".metric", "missing (which of our numbers compares with %s)" % json.dumps(value))
        if "metric" in r and not _text(r["metric"]):
            _fail(path, where + ".metric", "value %s must be a name" % json.dumps(r["metric"]))
        if "metric" in r and r["metric"] not in known and not _result_field(r["metric"]):
            _fail(path, where + ".metric", "value %s is neither a metric nor a result field" % json.dumps(r["metric"]))
        if r.get("aggregate", "single") not in AGGREGATES:
            _fail(path, where + ".aggregate", "value %s must be one of %s" % (json.dumps(r["aggregate"]), ", ".join(AGGREGATES)))
        if "where" in r:
            _check_where(path, where + ".where", r["where"], known)
        _check_relative(path, where, r, params, derived)


def derived_names(doc):
    """The parameters a definition (as a JSON object) derives, in its full or its quick sweep."""
    return set(doc.get("derived") or {}) | set((doc.get("quick") or {}).get("derived") or {})


def _check_relative(path, where, r, params, derived):
    """relative_to (a ratio against other points) and best_of (the parameter value of the best point)."""
    if ("relative_to" in r or "best_of" in r) and "metric" not in r:
        _fail(path, where + ".metric", "missing (relative_to and best_of compare a metric across points)")
    if "relative_to" in r and "best_of" in r:
        _fail(path, where + ".best_of", "cannot be combined with relative_to")
    if "relative_to" in r:
        ref = r["relative_to"]
        if not isinstance(ref, dict) or not ref:
            _fail(path, where + ".relative_to", "value %s must be a non-empty object of parameters" % json.dumps(ref))
        _check_where(path, where + ".relative_to", ref, params)
        for k, v in ref.items():
            if v == []:
                _fail(path, "%s.relative_to.%s" % (where, k), "value [] names no reference")
            if k in derived:
                _fail(path, "%s.relative_to.%s" % (where, k), "is derived: name the swept parameter it is derived from")
    if "best_of" in r and (not isinstance(r["best_of"], str) or r["best_of"] not in params):
        _fail(path, where + ".best_of", "value %s is not a parameter" % json.dumps(r["best_of"]))
    if "best_of" in r and "aggregate" in r:
        _fail(path, where + ".aggregate", "does not apply to best_of (one point, the best)")
