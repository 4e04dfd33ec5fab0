"""The options of `tessera explore` (experiments/explore.py): their values checked and normalized, the
machine file read and its counts checked, the machine-file overrides (--set) parsed and checked.

Every error is a UsageError whose message names the option (or the machine file and its field) and the
value; explore.py turns it into one line and exit status 2.
"""
import json
import math
import os

from runner import definition, outputs
from runner.outputs import UsageError
from runner.definition import ROOT

DISTS = ("multi-level", "block-cyclic-2d", "column-cyclic", "gpu-columns")
QR_TREES = ("flat", "binary")
# Optional numeric fields of a machine file and the value tessera takes where a file leaves one out
# (platform/machines/README.md): --set sets them all the same.
OPTIONAL_FIELDS = {"node.gpus.stream_overlap": 1.0}
# What tessera's machine-file loader (base/json_fields.hpp) takes of a field, by the end of its dotted path, so that a
# --set value it would refuse is refused before the sweep: (suffix, integer, minimum, minimum excluded); first match.
SET_RULES = (("nodes", True, 1, False), ("cores.count", True, 1, False), ("count", True, 0, False),
             ("bandwidth_Bps", False, 0, True), ("memory_bytes", False, 0, True), ("latency_s", False, 0, False))
MAX_COUNT = 10 ** 9  # tessera's largest integer field


def fmt(v):
    """A number as the user would write it (25000000000.0 -> 2.5e+10)."""
    return "%.10g" % v if isinstance(v, float) else str(v)


# ---------------------------------------------------------------- option values

def _number(text):
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(text)
    return int(v) if v.is_integer() and "e" not in text.lower() and "." not in text else v


def parse_values(name, text):
    """A number, a comma list of numbers, or START:STOP:STEP (STOP included when a step lands on it);
    `name` (the option and value as given) starts an error's message."""
    try:
        if ":" in text:
            parts = text.split(":")
            if len(parts) != 3:
                raise ValueError
            start, stop, step = (float(p) for p in parts)
            if step <= 0 or stop < start or not all(math.isfinite(x) for x in (start, stop, step)):
                raise ValueError
            count = int(math.floor((stop - start) / step * (1 + 1e-12))) + 1
            if count > 1000:
                raise UsageError("%s: the range has %d values (at most 1000)" % (name, count))
            values = [start + i * step for i in range(count)]
            return [int(v) if float(v).is_integer() else v for v in values]
        values = [_number(p.strip()) for p in text.split(",")]
        if not values:
            raise ValueError
        return values
    except UsageError:
        raise
    except ValueError:
        raise UsageError("%s: not a number, a comma list of numbers or a range START:STOP:STEP "
                         "(STEP > 0, STOP >= START)" % name)


def int_list(option, text, minimum=1):
    """A comma list of integers >= minimum."""
    try:
        values = [int(p) for p in text.split(",")]
    except ValueError:
        values = None
    if not values or any(v < minimum for v in values):
        raise UsageError("%s %s: must be a comma list of integers >= %d" % (option, text, minimum))
    return values


def b_list(text):
    """--b: a comma list of narrow column widths (integers >= 1) and/or auto, each an axis value."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        if part == "auto":
            out.append(part)
            continue
        try:
            out.append(int(part))
        except ValueError:
            out.append(None)
        if out[-1] is None or out[-1] < 1:
            raise UsageError("--b %s: %r is not a width (an integer >= 1) or auto" % (text, part))
    return out


def sigma_list(option, text):
    """A comma list of the values `tessera run OPTION` takes (--node-noise: sigmas; --kernel-noise: also auto),
    checked as the experiment runner checks a run option."""
    check, what = definition.RUN_OPTIONS[option[2:].replace("-", "_")]
    out = []
    for part in (p.strip() for p in text.split(",")):
        try:
            v = part if part == "auto" else _number(part)
        except ValueError:
            v = None
        if v is None or not check(v):
            raise UsageError("%s %s: %r is not %s" % (option, text, part, what))
        out.append(v)
    return out


def grid_list(option, text):
    out = []
    for g in text.split(","):
        parts = g.split("x")
        if len(parts) != 2 or not all(p.isdigit() and int(p) >= 1 for p in parts):
            raise UsageError("%s %s: %r is not a grid PrxPc of positive integers" % (option, text, g))
        out.append("%dx%d" % (int(parts[0]), int(parts[1])))
    return out


def grids_for(nodes):
    """Every Pr x Pc grid with Pr * Pc = nodes, squarest first."""
    small = [d for d in range(1, math.isqrt(nodes) + 1) if nodes % d == 0]  # each divisor pairs with nodes // d
    shapes = sorted({(pr, nodes // pr) for d in small for pr in (d, nodes // d)})
    shapes.sort(key=lambda s: (abs(math.log(s[0] / s[1])), s[0] > s[1]))
    return ["%dx%d" % s for s in shapes]


# ---------------------------------------------------------------- machine-file overrides

def lookup(doc, path, option, machine):
    """(container, key, current number) of a numeric field by dotted path, or UsageError naming it."""
    node, where = doc, []
    keys = path.split(".")
    for i, key in enumerate(keys):
        if isinstance(node, dict) and key in node:
            parent, node = node, node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            parent, key, node = node, int(key), node[int(key)]
        elif i == len(keys) - 1 and isinstance(node, dict) and path in OPTIONAL_FIELDS:
            return node, key, OPTIONAL_FIELDS[path]
        else:
            fields = ", ".join(k for k in node if k not in ("source", "notes")) if isinstance(node, dict) else ""
            raise UsageError("%s %s: %s has no field %r%s%s" % (
                option, path, machine, ".".join(where + [keys[i]]),
                " (in %s)" % ".".join(where) if where else "", "; fields there: " + fields if fields else ""))
        where.append(str(key))
    if isinstance(node, dict) and "value" in node:
        parent, key, node = node, "value", node["value"]
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        raise UsageError("%s %s: field %s of %s is not numeric (it is %s)" % (
            option, path, path, machine, json.dumps(node)[:80]))
    return parent, key, node


def parse_sets(texts, base, machine):
    """[(path, [values])] from repeated --set FIELD=VALUES, each path checked against the machine file."""
    out, seen = [], set()
    for text in texts:
        if "=" not in text:
            raise UsageError("--set %s: must be FIELD=VALUES (e.g. network.bandwidth_Bps=25e9)" % text)
        path, values = text.split("=", 1)
        path = path.strip()
        if path in seen:
            raise UsageError("--set %s: field %s is set twice" % (text, path))
        seen.add(path)
        _, _, current = lookup(base, path, "--set", machine)
        vals = parse_values("--set " + text, values)
        if isinstance(current, int) and any(not float(v).is_integer() for v in vals):
            raise UsageError("--set %s: field %s of %s is an integer (now %d)" % (text, path, machine, current))
        for v in vals:
            check_set_value(text, path, v)
        out.append((path, [int(v) if isinstance(current, int) else v for v in vals]))
    return out


# ---------------------------------------------------------------- the tessera binary and the results folder

def tessera_binary(given):
    path = given or os.environ.get("TESSERA_BIN") or os.path.join(ROOT, "build", "tessera")
    if not os.access(path, os.X_OK):
        raise UsageError("--tessera %s: not an executable (build it: cmake --build build --target tessera)" % path)
    return os.path.abspath(path)


def check_out(out, shown, dry_run):
    """Refuses a results folder that cannot be made or written (a dry run writes nothing: only a file of that name)."""
    why = outputs.folder_problem(out, create=not dry_run)
    if why:
        raise UsageError("--out %s: %s" % (shown, why))


# ---------------------------------------------------------------- the machine file

def load_machine(path):
    """The machine document of --machine: a JSON object whose node and GPU counts are counts."""
    if os.path.isdir(path):
        raise UsageError("--machine %s: is a directory, not a machine file" % path)
    if not os.path.isfile(path):
        raise UsageError("--machine %s: no such file" % path)
    try:
        with open(path, encoding="utf-8") as f:
            base = json.load(f)
    except ValueError as e:
        raise UsageError("--machine %s: malformed JSON (%s)" % (path, e))
    except RecursionError:
        raise UsageError("--machine %s: JSON nested too deeply, not a machine file" % path)
    except OSError as e:
        raise UsageError("--machine %s: cannot read it (%s)" % (path, e.strerror or e))
    if not isinstance(base, dict):
        raise UsageError("--machine %s: the top level must be an object, not %s" % (path, json.dumps(base)[:80]))
    machine_counts(base, path)
    return base


def machine_counts(doc, machine):
    """(nodes, GPUs per node) of a machine document (bare numbers or {"value": ...}; absent: 1 node, no GPU)."""
    def count(obj, key, where, default, minimum):
        raw = obj.get(key, default)
        v = raw.get("value") if isinstance(raw, dict) else raw
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not minimum <= v <= MAX_COUNT or v != int(v):
            raise UsageError("--machine %s: field %s = %s must be an integer from %d to %d" % (
                machine, where, json.dumps(raw)[:80], minimum, MAX_COUNT))
        return int(v)

    def section(obj, key, where):
        v = obj.get(key, {})
        if not isinstance(v, dict):
            raise UsageError("--machine %s: field %s = %s must be an object" % (machine, where, json.dumps(v)[:80]))
        return v
    gpus = section(section(doc, "node", "node"), "gpus", "node.gpus")
    return count(doc, "nodes", "nodes", 1, 1), count(gpus, "count", "node.gpus.count", 0, 0)


def check_set_value(text, path, value):
    """Refuses a --set value that tessera's machine-file loader would refuse for the field (SET_RULES)."""
    for suffix, integer, minimum, strict in SET_RULES:
        if path == suffix or path.endswith("." + suffix):
            bad = value < minimum or (strict and value == minimum)
            if integer:
                bad = bad or not float(value).is_integer() or value > MAX_COUNT
            if bad:
                what = ("an integer from %d to %d" % (minimum, MAX_COUNT) if integer else
                        "%s %d" % (">" if strict else ">=", minimum))
                raise UsageError("--set %s: field %s must be %s, not %s" % (text, path, what, fmt(value)))
            return


def check_options(a):
    """Validates and normalizes the options in place; returns the base machine document."""
    base = load_machine(a.machine)
    for opt in ("n", "m", "jobs", "timeout", "nodes", "threads"):
        v = getattr(a, opt)
        if v is not None and v < 1:
            raise UsageError("--%s %d: must be >= 1" % (opt, v))
    if a.gpus is not None and a.gpus < 0:
        raise UsageError("--gpus %d: must be >= 0" % a.gpus)
    a.b = b_list(a.b) if a.b is not None else None
    a.B = int_list("--B", a.B)
    a.s = int_list("--s", a.s)
    a.v = int_list("--v", a.v) if a.v else None
    a.gpu_streams = int_list("--gpu-streams", a.gpu_streams) if a.gpu_streams else None
    a.node_noise = sigma_list("--node-noise", a.node_noise) if a.node_noise else None
    a.kernel_noise = sigma_list("--kernel-noise", a.kernel_noise) if a.kernel_noise else None
    if a.noise_seeds < 1:
        raise UsageError("--noise-seeds %d: must be >= 1" % a.noise_seeds)
    if a.noise_seeds > 1 and not any(x not in (None, 0) for x in (a.node_noise or []) + (a.kernel_noise or [])):
        raise UsageError("--noise-seeds %d: seeds vary the draws of --node-noise or --kernel-noise, and no point has "
                         "any" % a.noise_seeds)
    if a.v and a.algo != "qr":
        raise UsageError("--v %s: virtual tile heights are for --algo qr only" % ",".join(map(str, a.v)))
    if a.qr_tree:
        a.qr_tree = [t.strip() for t in a.qr_tree.split(",")]
        for t in a.qr_tree:
            if t not in QR_TREES:
                raise UsageError("--qr-tree %s: unknown tree (known: %s)" % (t, ", ".join(QR_TREES)))
        if a.algo != "qr":
            raise UsageError("--qr-tree %s: reduction trees are for --algo qr only" % ",".join(a.qr_tree))
    a.dist = [d.strip() for d in a.dist.split(",")]
    for d in a.dist:
        if d not in DISTS:
            raise UsageError("--dist %s: unknown distribution (known: %s)" % (d, ", ".join(DISTS)))
    if a.grids and a.nodes:
        raise UsageError("--grids %s: give --grids or --nodes, not both" % a.grids)
    if a.grids:
        a.grids = grid_list("--grids", a.grids)
    else:
        a.grids = grids_for(a.nodes if a.nodes is not None else machine_counts(base, a.machine)[0])
    return base


