"""Running a sweep: one `tessera run` process per run, resumable, in parallel for simulations.

Results go to DIR (default results/experiments/NAME/, --quick: .../NAME/quick/):

  runs.jsonl  one JSON object per run, appended as runs finish (a rerun with
              --force appends again; the last line of a run wins);
  runs.csv    the same, flat, rewritten at the end of every `run`;
  meta.json   the definition, the mode, the tessera commit, the date, the
              host, the points of the full sweep left out and why;
  traces/     trace files of definitions that attach a trace breakdown.
"""
import concurrent.futures
import csv
import datetime
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time

from . import expr
from .definition import ROOT, display_path
from .outputs import append_line
from .progress import Progress

sys.path.insert(0, os.path.join(ROOT, "analysis"))
import experiment_results  # noqa: E402  (analysis/ is not a package)
import trace_devices  # noqa: E402

CSV_PARAMS_FIRST = ("algo", "precision", "backend", "n", "grid", "nodes", "threads", "gpus", "B", "s", "b")
CSV_RESULT_FIELDS = ("time_s", "gflops", "imbalance_ratio", "tasks", "wall_s", "B", "b")
STDERR_KEEP = 2000


def default_out(name, quick):
    """results/experiments/NAME/ (or NAME/quick/ for --quick)."""
    base = os.path.join(ROOT, "results", "experiments", name)
    return os.path.join(base, "quick") if quick else base


def source_dir_of(binary):
    """The source tree a tessera binary was built from (CMAKE_HOME_DIRECTORY of the CMakeCache.txt
    beside it), else this checkout."""
    cache = os.path.join(os.path.dirname(os.path.abspath(binary)), "CMakeCache.txt")
    if os.path.isfile(cache):
        with open(cache, errors="replace") as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    return line.split("=", 1)[1].strip()
    return ROOT


def git_commit(source_dir):
    """The commit of a source tree and whether its tracked files differ from it."""
    def git(*args):
        p = subprocess.run(["git", "-C", source_dir] + list(args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
        return p.returncode, p.stdout.strip()
    rc, commit = git("rev-parse", "HEAD")
    if rc != 0:
        return {"commit": None, "dirty": None}
    rc, _ = git("diff", "--quiet", "HEAD", "--")
    return {"commit": commit, "dirty": rc != 0}


def binary_identity(binary):
    """Path, SHA-256 and modification time of the tessera binary the runs use."""
    h = hashlib.sha256()
    with open(binary, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    mtime = datetime.datetime.fromtimestamp(os.path.getmtime(binary), datetime.timezone.utc)
    return {"path": binary, "sha256": h.hexdigest(), "built": mtime.isoformat(timespec="seconds"),
            "source_dir": source_dir_of(binary)}


def command(defn, config, tessera, json_path, trace_path=None):
    """The argument vector of one run of `config`."""
    opts = config.run_options()
    args = [tessera, "run"]
    for k, v in opts.items():
        if v is None:
            continue  # a derived option may be left to tessera's default
        if k == "nodes" and (config.backend != "sim" or "grid" in opts):
            continue  # the grid says how many nodes; --nodes is a simulated run's option
        flag = "--" + k.replace("_", "-")
        if isinstance(v, bool):
            args += [flag] if v else []
        else:
            args += [flag, str(v)]
    if config.backend == "sim":
        args += ["--backend", "sim", "--machine", machine_of(defn, config)]
    args += ["--json", json_path]
    if trace_path:
        args += ["--trace", trace_path]
    if config.backend == "mpirun":
        ranks = opts.get("nodes") or _grid_nodes(opts.get("grid", "1x1"))
        root = ["--allow-run-as-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        args = ["mpirun", "-np", str(ranks)] + root + list(defn.mpirun_args) + args
    return args


def machine_of(defn, config):
    """The machine file of one run: the config's own (`tessera explore` derives one per point), else the definition's."""
    return getattr(config, "machine", None) or defn.machine


def _grid_nodes(grid):
    pr, pc = (int(x) for x in grid.split("x"))
    return pr * pc


def load_records(out_dir):
    """The last record of every (config id, repeat) in DIR/runs.jsonl, in file order (a line that is not a run
    record, e.g. one cut short, is ignored with one warning naming the file and line)."""
    return experiment_results.read_runs(out_dir)


class CannotStart(RuntimeError):
    """The tessera binary could not be started: no run can succeed, the sweep stops."""


class Runner:
    """Runs one definition's sweep into an output folder."""

    def __init__(self, defn, out_dir, tessera, quick=False, jobs=1, force=False, retry_failed=False, timeout_s=None):
        self.defn = defn
        self.out = out_dir
        self.tessera = tessera
        self.quick = quick
        self.jobs = max(1, jobs)
        self.force = force
        self.retry_failed = retry_failed
        self.timeout_s = timeout_s or defn.timeout_s
        self.config_ids = None  # the sweep's configurations in order, once planned
        self.lock = threading.Lock()
        self.binary = binary_identity(tessera)
        self.stamp = dict(git_commit(self.binary["source_dir"]), date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                          host=platform.node(), machine=defn.machine)

    def plan(self):
        """(pending runs as (config, repeat), runs already done, skipped full-sweep points, all configs)."""
        configs, skipped = self.defn.expand(self.quick)
        done = {} if self.force else load_records(self.out)
        pending, kept = [], 0
        for c in configs:
            for rep in range(c.repeats):
                r = done.get((c.id, rep))
                if r is None or (self.retry_failed and r["status"] != "ok"):
                    pending.append((c, rep))
                else:
                    kept += 1
        return pending, kept, skipped, configs

    def run(self):
        """Runs every pending run; returns (ok, failed, kept) counts."""
        os.makedirs(self.out, exist_ok=True)
        pending, kept, skipped, configs = self.plan()
        self.config_ids = [c.id for c in configs]
        self.write_meta(skipped, configs)
        progress = Progress(len(pending), title=self.defn.name)
        counts = {"ok": 0, "failed": 0}
        parallel = [p for p in pending if p[0].backend == "sim"]
        serial = [p for p in pending if p[0].backend != "sim"]  # real runs: one at a time, alone
        try:
            with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
                futures = [pool.submit(self.run_one, c, rep) for c, rep in parallel]
                try:
                    for fut in concurrent.futures.as_completed(futures):
                        self.finished(fut.result(), progress, counts)
                except CannotStart:
                    for f in futures:
                        f.cancel()
                    raise
            for c, rep in serial:
                self.finished(self.run_one(c, rep), progress, counts)
        finally:
            progress.finish()
            self.write_csv()
        return counts["ok"], counts["failed"], kept, len(skipped)

    def finished(self, record, progress, counts):
        """Appends a record to runs.jsonl and advances the progress bar."""
        with self.lock:
            append_line(os.path.join(self.out, "runs.jsonl"), json.dumps(record, sort_keys=True))
        ok = record["status"] == "ok"
        counts["ok" if ok else "failed"] += 1
        tail = "ok" if ok else "%s (exit %s)" % (record["status"], record["exit_status"])
        progress.update(ok, "%s: %s" % (record["label"], tail))
        if not ok and not progress.enabled:
            first = (record.get("stderr") or "").strip().splitlines()
            print("%s: %s %s: %s" % (self.defn.name, record["label"], tail, first[-1] if first else ""), file=sys.stderr)

    def run_one(self, config, rep):
        """Runs one repeat of one configuration and returns its record."""
        with tempfile.TemporaryDirectory(prefix="tessera-exp-") as tmp:
            json_path = os.path.join(tmp, "run.json")
            trace_path = None
            if "trace_breakdown" in self.defn.attach:
                os.makedirs(os.path.join(self.out, "traces"), exist_ok=True)
                trace_path = os.path.join(self.out, "traces", "%s-r%d.json" % (config.id, rep))
            cmd = command(self.defn, config, self.tessera, json_path, trace_path)
            record = {"experiment": self.defn.name, "config_id": config.id, "repeat": rep, "label": config.label(),
                      "params": config.params, "quick": self.quick, "command": _shown(cmd, json_path),
                      "tessera_commit": self.stamp["commit"], "tessera_dirty": self.stamp["dirty"],
                      "tessera_binary": self.binary, "machine": machine_of(self.defn, config), "host": self.stamp["host"]}
            t0 = time.monotonic()
            timed_out = False
            try:
                p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   timeout=self.timeout_s)
                rc, out, err = p.returncode, p.stdout, p.stderr
            except subprocess.TimeoutExpired as e:
                timed_out = True
                rc, out, err = None, _text(e.stdout), _text(e.stderr) + "\nkilled after the %d s timeout" % self.timeout_s
            except OSError as e:
                raise CannotStart("could not start %s: %s (nothing recorded for this run)" % (cmd[0], e))
            record["run_wall_s"] = time.monotonic() - t0
            record["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            record["exit_status"] = rc
            record["stdout"] = out[-STDERR_KEEP:]
            record["stderr"] = err[-STDERR_KEEP:]
            result = None
            if rc == 0:
                try:
                    with open(json_path) as f:
                        result = json.load(f)
                except (OSError, ValueError) as e:
                    record["stderr"] += "\nno readable --json output: %s" % e
            record["status"] = "ok" if result is not None else ("timeout" if timed_out else "failed")
            record["result"] = result
            if result is not None:
                record["attached"] = self.attachments(config, result, trace_path)
                record["metrics"], errors = metrics(self.defn, config.params, result, record["attached"])
                if errors:
                    record["metric_errors"] = errors
            if trace_path:
                record["trace"] = os.path.relpath(trace_path, self.out)
            return record

    def attachments(self, config, result, trace_path):
        """The extra data a definition asks for: comm model, derived counts, trace breakdown."""
        out = {}
        opts = config.run_options()
        grid = opts.get("grid", "1x1")
        pr, pc = (int(x) for x in grid.split("x"))
        v_run = result.get("v", 1) if result["algo"] == "qr" else None
        if "comm_model" in self.defn.attach:
            # As experiments/validate_comm: A.2 at the run's virtual tile height, and QR
            # also at the paper's v = n/(B*Pr) (one virtual tile per node row).
            out["comm_model"] = self.comm_model(result, grid, ["--v", str(v_run)] if v_run else [])
            if v_run:
                v_paper = max(1.0, result["n"] / (result["B"] * pr))
                out["comm_model_paper_v"] = self.comm_model(result, grid, ["--v", "%g" % v_paper])
        if "comm_derived" in self.defn.attach and result["s"] == 1:
            d = validate_comm().derived_counts(result["algo"], result["n"], result["B"], pr, pc, result.get("ib", 32),
                                               v_run or 1, result["comm"].get("broadcast", "flat"))
            if d:
                per = result["comm"]["per_node"]
                exact = all(per[x][k] == d[k][x] for x in range(len(per))
                            for k in ("messages_sent", "words_sent", "messages_received", "words_received"))
                out["comm_derived"] = {"max_messages_sent": max(d["messages_sent"]),
                                       "max_words_sent": max(d["words_sent"]), "every_node_exact": exact}
        if "trace_breakdown" in self.defn.attach and trace_path:
            files = [trace_path] + _node_files(trace_path, result.get("nodes", 1))
            try:
                out["trace_breakdown"] = trace_devices.breakdown(files)
            except trace_devices.TraceError as e:  # the run's metrics on it fail; the sweep goes on
                out["trace_breakdown"] = {"error": str(e)}
        return out

    def comm_model(self, result, grid, extra=()):
        """`tessera model comm` for the run's n, B, s and grid."""
        with tempfile.TemporaryDirectory(prefix="tessera-exp-") as tmp:
            path = os.path.join(tmp, "model.json")
            cmd = [self.tessera, "model", "comm", "--algo", result["algo"], "--n", str(result["n"]), "--B",
                   str(result["B"]), "--s", str(result["s"]), "--grid", grid, "--json", path] + list(extra)
            p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                return {"error": "exit %d: %s" % (p.returncode, p.stderr.strip())}
            with open(path) as f:
                return json.load(f)

    def write_meta(self, skipped, configs):
        """DIR/meta.json: what was asked for, by whom, when; the left-out points and why."""
        meta = {"experiment": self.defn.name, "definition": self.defn.doc, "definition_file": display_path(self.defn.path),
                "quick": self.quick, "tessera_commit": self.stamp["commit"], "tessera_dirty": self.stamp["dirty"],
                "tessera_binary": self.binary,
                "machine": self.defn.machine, "date": self.stamp["date"], "host": self.stamp["host"],
                "configs": [c.id for c in configs],
                "skipped": [{"config_id": c.id, "label": c.label(), "params": c.params, "reason": reason}
                            for c, reason in skipped]}
        with open(os.path.join(self.out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True)

    def write_csv(self):
        """DIR/runs.csv from the last record of every run."""
        write_csv(self.out, self.defn, self.config_ids)


def write_csv(out_dir, defn, configs=None):
    """Flat table of every run: parameters, status, main result fields, metrics, provenance; in the sweep's order
    (`configs`, the configuration ids in order), whatever order parallel runs finished in."""
    records = experiment_results.in_sweep_order(list(load_records(out_dir).values()), configs)
    params = sorted({k for r in records for k in r["params"]}, key=lambda k: (k not in CSV_PARAMS_FIRST,
                                                                               CSV_PARAMS_FIRST.index(k) if k in CSV_PARAMS_FIRST else 0, k))
    mnames = list(defn.metrics)
    head = (["experiment", "config_id", "repeat", "status", "exit_status"] + params +
            ["result_" + k for k in CSV_RESULT_FIELDS] + mnames + ["run_wall_s", "tessera_commit", "machine", "date", "error"])
    with open(os.path.join(out_dir, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        for r in records:
            res, met = r.get("result") or {}, r.get("metrics") or {}
            err = "" if r["status"] == "ok" else ((r.get("stderr") or "").strip().splitlines() or [""])[-1]
            w.writerow([r.get("experiment"), r["config_id"], r["repeat"], r["status"], r.get("exit_status")] +
                       [r["params"].get(k, "") for k in params] + [res.get(k, "") for k in CSV_RESULT_FIELDS] +
                       [met.get(k, "") for k in mnames] +
                       ["%.3f" % r.get("run_wall_s", 0), r.get("tessera_commit"), r.get("machine"), r.get("date"), err])


def metrics(defn, params, result, attached):
    """The definition's metrics of one run: ({name: value}, {name: error})."""
    env = dict(result)
    env.update(attached)
    env.update(params)
    values, errors = {}, {}
    for name, text in defn.metrics.items():
        try:
            values[name] = expr.evaluate(text, env)
            env[name] = values[name]
        except expr.ExprError as e:
            values[name] = None
            errors[name] = str(e)
    return values, errors


_VALIDATE_COMM = []


def validate_comm():
    """experiments/validate_comm loaded as a module (its derived_counts())."""
    if not _VALIDATE_COMM:
        path = os.path.join(ROOT, "experiments", "validate_comm")
        loader = importlib.machinery.SourceFileLoader("validate_comm", path)
        spec = importlib.util.spec_from_loader("validate_comm", loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        _VALIDATE_COMM.append(module)
    return _VALIDATE_COMM[0]


def _node_files(trace_path, nodes):
    base, ext = os.path.splitext(trace_path)
    return [p for p in ("%s.node%d%s" % (base, k, ext) for k in range(1, nodes)) if os.path.isfile(p)]


def _shown(cmd, json_path):
    """The command as it can be repeated by hand (the temporary --json path as run.json)."""
    return " ".join("run.json" if a == json_path else a for a in cmd)


def _text(data):
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data
