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
import signal
import subprocess
import sys
import tempfile
import threading
import time

from . import expr
from .definition import ROOT, display_path, machine_digest
from .outputs import append_line, loads, replace_file, write_error
from .processes import STOP_SIGNALS, CannotStart, kill_running, lock_folder, new_sweep, run_in_group, terminated
from .progress import Progress

sys.path.insert(0, os.path.join(ROOT, "analysis"))
import experiment_results  # noqa: E402  (analysis/ is not a package)
import trace_devices  # noqa: E402

CSV_PARAMS_FIRST = ("algo", "precision", "backend", "n", "grid", "nodes", "threads", "gpus", "B", "s", "b")
CSV_RESULT_FIELDS = ("time_s", "gflops", "imbalance_ratio", "tasks", "wall_s", "B", "b")
STDERR_KEEP = 2000
COMM_MODEL_TIMEOUT_S = 300  # `tessera model comm` of one run (a formula: seconds at most)


def default_out(name, quick):
    """results/experiments/NAME/ (or NAME/quick/ for --quick)."""
    base = os.path.join(ROOT, "results", "experiments", name)
    return os.path.join(base, "quick") if quick else base


def source_dir_of(binary):
    """The source tree a tessera binary was built from (CMAKE_HOME_DIRECTORY of the CMakeCache.txt
    beside it), else this checkout."""
    cache = os.path.join(os.path.dirname(os.path.abspath(binary)), "CMakeCache.txt")
    if os.path.isfile(cache):
        with open(cache, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    return line.split("=", 1)[1].strip()
    return ROOT


def git_commit(source_dir):
    """The commit of a source tree and whether its tracked files differ from it; None for what git cannot tell
    (not a checkout, or no git on the PATH: the runs go on, recorded without their commit)."""
    def git(*args):
        try:
            p = subprocess.run(["git", "-C", source_dir] + list(args), stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        except OSError:
            return None, ""
        return p.returncode, p.stdout.strip()
    rc, commit = git("rev-parse", "HEAD")
    if rc != 0:
        return {"commit": None, "dirty": None}
    rc, _ = git("diff", "--quiet", "HEAD", "--")
    return {"commit": commit, "dirty": None if rc is None else rc != 0}


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
        self.machine_digests = {}  # machine file -> machine_digest of its figures now
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
                why = r is not None and r["status"] == "ok" and (self.defn.record_problem(r) or
                                                                  self.machine_changed(c, r) or
                                                                  self.host_changed(c, r))
                if why:
                    print("%s: %s: the record of %s %s; it runs again" % (self.defn.name, display_path(
                        os.path.join(self.out, "runs.jsonl")), c.label(), why), file=sys.stderr)
                if r is None or why or (self.retry_failed and r["status"] != "ok"):
                    pending.append((c, rep))
                else:
                    kept += 1
        return pending, kept, skipped, configs

    def current_digest(self, config):
        """The digest of a simulated run's machine file as it is now; None for a real run, or a file that cannot be
        read as JSON (the run then fails, tessera saying why)."""
        if config.backend != "sim":
            return None
        path = machine_of(self.defn, config)
        if path not in self.machine_digests:
            try:
                with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                    self.machine_digests[path] = machine_digest(loads(f.read()))
            except (OSError, ValueError):
                return None  # not kept: `tessera explore` writes its points' files after planning
        return self.machine_digests[path]

    def machine_changed(self, config, record):
        """Why a simulated run's record was simulated on other figures than its machine file holds now, or None: a
        resumed sweep would otherwise mix two models in one figure. A record from before digests were kept has none
        and is kept."""
        then, now = record.get("machine_digest"), self.current_digest(config)
        if then is None or now is None or then == now:
            return None
        return "was simulated on other figures of %s (digest %s then, %s now)" % (machine_of(self.defn, config), then, now)

    def host_changed(self, config, record):
        """Why a real run's record cannot stand for a run on this host, or None: it ran on another (a results folder
        copied from another machine and resumed here would mix two machines' speeds in one figure)."""
        then = record.get("host")
        if config.backend == "sim" or not then or then == self.stamp["host"]:
            return None
        return "ran on host %s, not this one (%s)" % (then, self.stamp["host"])

    def run(self):
        """Runs every pending run; returns (ok, failed, kept, skipped points) counts; self.metric_failures: how many
        of the ok runs have a metric that could not be evaluated (each named on stderr)."""
        os.makedirs(self.out, exist_ok=True)
        lock = lock_folder(self.out)
        try:
            return self._run()
        finally:
            os.close(lock)

    def _run(self):
        pending, kept, skipped, configs = self.plan()
        self.config_ids = [c.id for c in configs]
        self.write_meta(skipped, configs)
        progress = Progress(len(pending), title=self.defn.name)
        counts = {"ok": 0, "failed": 0}
        self.metric_failures = 0
        parallel = [p for p in pending if p[0].backend == "sim"]
        serial = [p for p in pending if p[0].backend != "sim"]  # real runs: one at a time, alone
        # Each run is a session of its own (run_in_group): a SIGTERM, SIGHUP or SIGQUIT to the runner ends it as Ctrl-C
        # does, killing the runs in progress, which the signal would not reach.
        main = threading.current_thread() is threading.main_thread()
        old_handlers = {s: signal.signal(s, terminated) for s in STOP_SIGNALS} if main else {}
        new_sweep()
        try:
            pool = concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs)
            futures = [pool.submit(self.run_one, c, rep) for c, rep in parallel]
            try:
                for fut in concurrent.futures.as_completed(futures):
                    self.finished(fut.result(), progress, counts)
            except BaseException:
                # A run that cannot start, Ctrl-C or a signal, a record that cannot be written: the sweep stops now,
                # not once every pending run has run for nothing. Runs in sessions of their own: Ctrl-C on the
                # terminal no longer reaches them.
                kill_running()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            pool.shutdown(wait=True)
            for c, rep in serial:
                self.finished(self.run_one(c, rep), progress, counts)
        except BaseException:
            progress.finish()
            try:
                self.write_csv()  # of the runs recorded so far
            except OSError:
                pass  # the error on its way out is the one to tell
            raise
        else:
            progress.finish()
            self.write_csv()
        finally:
            for s, handler in old_handlers.items():
                signal.signal(s, handler)
        return counts["ok"], counts["failed"], kept, len(skipped)

    def finished(self, record, progress, counts):
        """Appends a record to runs.jsonl and advances the progress bar."""
        path = os.path.join(self.out, "runs.jsonl")
        with self.lock:
            try:
                append_line(path, json.dumps(record, sort_keys=True))
            except OSError as e:  # the sweep stops (run): its runs' results would be lost
                raise write_error(path, e) from e
        ok = record["status"] == "ok"
        counts["ok" if ok else "failed"] += 1
        tail = "ok" if ok else "timeout" if record["status"] == "timeout" else "%s (exit %s)" % (
            record["status"], record["exit_status"])
        errors = record.get("metric_errors") or {}
        if errors:
            self.metric_failures += 1
            tail = "ok, metric %s failed" % ", ".join(sorted(errors))
        progress.update(ok and not errors, "%s: %s" % (record["label"], tail))
        if not ok and not progress.enabled:
            first = (record.get("stderr") or "").strip().splitlines()
            print("%s: %s %s: %s" % (self.defn.name, record["label"], tail, first[-1] if first else ""), file=sys.stderr)
        for name, message in sorted(errors.items()):  # the run's result is kept; these metrics have no value
            (progress.stream if progress.enabled else sys.stderr).write(
                "%s%s: %s: metric %s failed: %s\n" % ("\r\033[K" if progress.enabled else "", self.defn.name,
                                                      record["label"], name, message))

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
            if config.backend == "sim":
                record["machine_digest"] = self.current_digest(config)
            t0 = time.monotonic()
            try:
                rc, out, err, timed_out = run_in_group(cmd, self.timeout_s)
            except OSError as e:
                raise CannotStart("could not start %s: %s (nothing recorded for this run)" % (cmd[0], e))
            if timed_out:
                err += "\nkilled after the %d s timeout" % self.timeout_s
            record["run_wall_s"] = time.monotonic() - t0
            record["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            record["exit_status"] = rc
            record["stdout"] = out[-STDERR_KEEP:]
            record["stderr"] = err[-STDERR_KEEP:]
            result = None
            if rc == 0:
                try:
                    with open(json_path, encoding="utf-8") as f:
                        result = loads(f.read())
                    if not isinstance(result, dict):
                        raise ValueError("a JSON %s, not a run's result object" % type(result).__name__)
                except (OSError, ValueError) as e:
                    result = None
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
        """The extra data a definition asks for: comm model, derived counts, trace breakdown. One that cannot be
        computed for this run is {"error": why}: the metrics reading it fail (and say so), the sweep goes on."""
        out = {}
        opts = config.run_options()
        grid = opts.get("grid", "1x1")
        pr, pc = (int(x) for x in grid.split("x"))
        v_run = result.get("v", 1) if result.get("algo") == "qr" else None
        tree = qr_tree_of(result, opts)
        if "comm_model" in self.defn.attach:
            # As experiments/validate_comm: A.2 at the run's virtual tile height (the binary tree's own count, at
            # the run's ib, for a binary-tree QR), and a flat-tree QR also at the paper's v = n/(B*Pr) (one virtual
            # tile per node row).
            tree_args = ["--qr-tree", "binary", "--ib", str(result.get("ib", 32))] if tree == "binary" else []
            if tree == "binary" and "domain=" in str(result.get("variant")):
                out["comm_model"] = {"error": "tessera model comm counts the binary tree with one domain per node "
                                              "row; this run's %s is not modelled" % result["variant"]}
            else:
                out["comm_model"] = _guarded(lambda: self.comm_model(
                    result, grid, (["--v", str(v_run)] if v_run else []) + tree_args))
            if v_run and tree == "binary":
                out["comm_model_paper_v"] = {"error": "A.2.2 at the paper's v is the flat tree's count; this QR "
                                                      "ran the binary tree"}
            elif v_run:
                out["comm_model_paper_v"] = _guarded(lambda: self.comm_model(
                    result, grid, ["--v", "%g" % max(1.0, result["n"] / (result["B"] * pr))]))
        if "comm_derived" in self.defn.attach and result.get("s") == 1:
            if tree == "binary":
                derived = {"error": "no derived counts for the binary tree (validate_comm's derived_counts follows "
                                    "the flat tree's TSQRT chains)"}
            else:
                derived = _guarded(lambda: self.comm_derived(result, pr, pc, v_run))
            if derived is not None:
                out["comm_derived"] = derived
        if "trace_breakdown" in self.defn.attach and trace_path:
            files = [trace_path] + _node_files(trace_path, result.get("nodes", 1))
            out["trace_breakdown"] = _guarded(lambda: trace_devices.breakdown(files))
        return out

    def comm_derived(self, result, pr, pc, v_run):
        """The protocol's message and word counts per node (validate_comm's derived_counts) against the run's own:
        None where there is no derivation for the algorithm; {"error"} for a run without a comm section (one node)."""
        comm = result.get("comm")
        if not isinstance(comm, dict) or not isinstance(comm.get("per_node"), list):
            return {"error": "the run's result has no comm section (one node, or not a distributed run)"}
        d = validate_comm().derived_counts(result["algo"], result["n"], result["B"], pr, pc, result.get("ib", 32),
                                           v_run or 1, comm.get("broadcast", "flat"))
        if not d:
            return None
        per = comm["per_node"]
        exact = all(per[x][k] == d[k][x] for x in range(len(per))
                    for k in ("messages_sent", "words_sent", "messages_received", "words_received"))
        return {"max_messages_sent": max(d["messages_sent"]), "max_words_sent": max(d["words_sent"]),
                "every_node_exact": exact}

    def comm_model(self, result, grid, extra=()):
        """`tessera model comm` for the run's n, B, s and grid."""
        with tempfile.TemporaryDirectory(prefix="tessera-exp-") as tmp:
            path = os.path.join(tmp, "model.json")
            cmd = [self.tessera, "model", "comm", "--algo", result["algo"], "--n", str(result["n"]), "--B",
                   str(result["B"]), "--s", str(result["s"]), "--grid", grid, "--json", path] + list(extra)
            rc, _, err, timed_out = run_in_group(cmd, COMM_MODEL_TIMEOUT_S)
            if timed_out:
                return {"error": "tessera model comm: killed after the %d s timeout" % COMM_MODEL_TIMEOUT_S}
            if rc != 0:
                return {"error": "exit %d: %s" % (rc, err.strip())}
            with open(path, encoding="utf-8") as f:
                return loads(f.read())

    def write_meta(self, skipped, configs):
        """DIR/meta.json: what was asked for, by whom, when; the left-out points and why."""
        meta = {"experiment": self.defn.name, "definition": self.defn.doc, "definition_file": display_path(self.defn.path),
                "quick": self.quick, "tessera_commit": self.stamp["commit"], "tessera_dirty": self.stamp["dirty"],
                "tessera_binary": self.binary,
                "machine": self.defn.machine, "date": self.stamp["date"], "host": self.stamp["host"],
                "configs": [c.id for c in configs], "repeats": {c.id: c.repeats for c in configs},
                "skipped": [{"config_id": c.id, "label": c.label(), "params": c.params, "reason": reason}
                            for c, reason in skipped]}
        replace_file(os.path.join(self.out, "meta.json"), lambda f: json.dump(meta, f, indent=1, sort_keys=True))

    def write_csv(self):
        """DIR/runs.csv from the last record of every run."""
        write_csv(self.out, self.defn, self.config_ids)


def write_csv(out_dir, defn, configs=None):
    """Flat table of every run: parameters, status, main result fields, metrics, provenance; in the sweep's order
    (`configs`, the configuration ids in order), whatever order parallel runs finished in. `error` holds a failed
    run's last stderr line, or an ok run's metrics that failed. Written beside and renamed into place (replace_file):
    the last runs.csv stays whole until the new one is."""
    records = experiment_results.in_sweep_order(list(load_records(out_dir).values()), configs)
    params = sorted({k for r in records for k in r["params"]}, key=lambda k: (k not in CSV_PARAMS_FIRST,
                                                                               CSV_PARAMS_FIRST.index(k) if k in CSV_PARAMS_FIRST else 0, k))
    mnames = list(defn.metrics)
    head = (["experiment", "config_id", "repeat", "status", "exit_status"] + params +
            ["result_" + k for k in CSV_RESULT_FIELDS] + mnames + ["run_wall_s", "tessera_commit", "machine", "date", "error"])
    rows = []
    for r in records:
        res, met = experiment_results.run_result(r), r.get("metrics") or {}
        if r["status"] == "ok":
            err = "; ".join("metric %s failed: %s" % kv for kv in sorted((r.get("metric_errors") or {}).items()))
        else:
            err = ((r.get("stderr") or "").strip().splitlines() or [""])[-1]
        wall = r.get("run_wall_s")
        rows.append([r.get("experiment"), r["config_id"], r["repeat"], r["status"], r.get("exit_status")] +
                    [r["params"].get(k, "") for k in params] + [res.get(k, "") for k in CSV_RESULT_FIELDS] +
                    [met.get(k, "") for k in mnames] +
                    ["%.3f" % wall if isinstance(wall, (int, float)) else "", r.get("tessera_commit"), r.get("machine"),
                     r.get("date"), err])
    replace_file(os.path.join(out_dir, "runs.csv"), lambda f: csv.writer(f).writerows([head] + rows), newline="")


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


def qr_tree_of(result, opts):
    """A QR run's reduction tree, "flat" or "binary": its result's variant ("tree=binary ..."), else the --qr-tree
    it was given (tessera's default flat); None for the other algorithms."""
    if result.get("algo") != "qr":
        return None
    variant = result.get("variant")
    if isinstance(variant, str):
        return "binary" if "tree=binary" in variant.split() else "flat"
    return "binary" if opts.get("qr_tree") == "binary" else "flat"


def _guarded(compute):
    """compute(), or {"error": why} when it raises: an attachment that cannot be had for one run is recorded with the
    run, whose metrics that read it then fail by name, and the sweep goes on."""
    try:
        return compute()
    except Exception as e:  # noqa: BLE001  (whatever it was, the run's own result is kept)
        return {"error": "%s: %s" % (type(e).__name__, e)}
