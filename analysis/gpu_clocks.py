#!/usr/bin/python3
"""What the GPU's clocks did during each step of a lent machine's call.

    /usr/bin/python3 analysis/gpu_clocks.py OUT [--markdown] [--json FILE]

OUT is a folder that `experiments/gpu_node.sh run` wrote: gpu_clocks.csv
(nvidia-smi every 200 ms: timestamp, SM and memory clocks in MHz, power in W,
temperature in C, utilization in %, and the bit mask of what held the clocks
back) and step_times.txt (each step's name and its UTC start and end). For
each step with samples it prints the SM clock's median, lowest and highest,
the share of samples below 95% of the call's highest (a GPU slowed under
load), the median and highest power, the highest temperature and every
reason the driver gave (NVML's clocks event reasons: SwPowerCap, HwSlowdown,
SwThermalSlowdown, ...), busy samples only (utilization above 0), so that
an idle GPU's low clocks do not count. Why: `tessera calibrate --device
cuda` times each kernel for milliseconds, a benchmark keeps the GPU busy for
minutes, and if the GPU slows under a sustained load every prediction from
the calibration comes out fast by that much.

A field nvidia-smi could not read ("[N/A]", "[Not Supported]": utilization
under MIG, power on some virtual GPUs) counts as missing: a sample without
utilization counts as busy, one without power or temperature leaves those
statistics alone. A line that is no sample (an error nvidia-smi printed, the
last line cut short when the logger was stopped, a repeated header) is
skipped, and the count of skipped lines is printed. Exit 2 with one line
naming the file for a folder without the two files, a file without a single
sample, a step_times.txt without a step, or a step line that cannot be read
(not text either); and naming --json for a path that is one of the two inputs
or cannot be written, checked before anything is read. A step without busy
samples is listed with a dash.
"""
import argparse
import datetime
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments"))
from runner.outputs import output_problem, run_main  # noqa: E402

# NVML's clocks event reasons (nvmlClocksEventReason*), by bit.
REASONS = [(0x1, "GpuIdle"), (0x2, "ApplicationsClocksSetting"), (0x4, "SwPowerCap"), (0x8, "HwSlowdown"),
           (0x10, "SyncBoost"), (0x20, "SwThermalSlowdown"), (0x40, "HwThermalSlowdown"),
           (0x80, "HwPowerBrakeSlowdown"), (0x100, "DisplayClockSetting")]


def fail(msg):
    print("gpu_clocks.py: error: " + msg, file=sys.stderr)
    sys.exit(2)


def reason_names(mask):
    names = [name for bit, name in REASONS if mask & bit]
    rest = mask & ~sum(bit for bit, _ in REASONS)
    return names + (["0x%x" % rest] if rest else [])


def value(cell, parse=float):
    """A field's value, or None where nvidia-smi could not read it ("[N/A]", "[Not Supported]", ...)."""
    return None if cell.startswith("[") else parse(cell)


def read_samples(path):
    """([(datetime, sm_mhz, mem_mhz, watts, celsius, util, reasons)], lines skipped) from nvidia-smi's CSV; the
    timestamp and SM clock are required, any other field may be None."""
    out, skipped = [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for line in lines:
        if not line.strip() or line.startswith("timestamp"):
            continue
        cells = [c.strip() for c in line.split(",")]
        try:
            if len(cells) != 7:
                raise ValueError("%d fields, not 7" % len(cells))
            when = datetime.datetime.strptime(cells[0], "%Y/%m/%d %H:%M:%S.%f")
            sm = float(cells[1])
            mem, watts, temp, util = (value(c) for c in cells[2:6])
            reasons = value(cells[6], lambda c: int(c, 16))
        except ValueError:
            skipped += 1
            continue
        out.append((when, sm, mem, watts, temp, util, reasons))
    if not out:
        fail("%s holds no sample (%d lines that are none)" % (path, skipped))
    return out, skipped


def read_steps(path):
    """[(name, start, end)] from step_times.txt (bytes that are no text read as U+FFFD: such a line is no step)."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for no, line in enumerate(f, start=1):
            if not line.strip():
                continue
            cells = line.split()
            try:
                if len(cells) != 3:
                    raise ValueError("%d fields, not 3" % len(cells))
                start, end = (datetime.datetime.strptime(c, "%Y-%m-%dT%H:%M:%S.%f") for c in cells[1:])
            except ValueError as e:
                fail("%s line %d: %r is no step (%s)" % (path, no, line.rstrip("\n"), e))
            out.append((cells[0], start, end))
    if not out:
        fail("%s holds no step (gpu_node.sh run writes a line per step it ran)" % path)
    return out


def is_busy(s):
    return s[5] is None or s[5] > 0  # (no utilization reading: counted as busy)


def summarize(samples, steps):
    top = max((s[1] for s in samples if is_busy(s)), default=0.0)
    rows = []
    for name, start, end in steps:
        busy = [s for s in samples if start <= s[0] <= end and is_busy(s)]
        row = {"step": name, "busy_samples": len(busy)}
        if busy:
            sm = [s[1] for s in busy]
            watts = [s[3] for s in busy if s[3] is not None]
            temps = [s[4] for s in busy if s[4] is not None]
            mask = 0
            for s in busy:
                mask |= s[6] or 0
            row.update({
                "sm_mhz_median": statistics.median(sm), "sm_mhz_min": min(sm), "sm_mhz_max": max(sm),
                "slow_share": sum(1 for v in sm if v < 0.95 * top) / len(sm),
                "watts_median": statistics.median(watts) if watts else None, "watts_max": max(watts, default=None),
                "celsius_max": max(temps, default=None), "reasons": reason_names(mask & ~0x1)})
        rows.append(row)
    return {"sm_mhz_top": top, "steps": rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", help="also write the values as JSON to this file (not one of the inputs)")
    a = ap.parse_args()
    paths = [os.path.join(a.out, f) for f in ("gpu_clocks.csv", "step_times.txt")]
    if a.json:
        why = output_problem(a.json, paths)
        if why:
            fail("--json %s: %s" % (a.json, why))
    for p in paths:
        if not os.path.isfile(p):
            fail("%s is missing (gpu_node.sh run writes it where nvidia-smi is present)" % p)
    samples, skipped = read_samples(paths[0])
    result = summarize(samples, read_steps(paths[1]))
    result["lines_skipped"] = skipped
    head = ["step", "busy samples", "SM MHz median", "min", "max", "below 95%% of %g" % result["sm_mhz_top"],
            "W median", "W max", "C max", "reasons"]
    lines = []
    for r in result["steps"]:
        if not r["busy_samples"]:
            lines.append([r["step"], "0"] + ["-"] * 8)
            continue
        num = lambda fmt, v: "-" if v is None else fmt % v
        lines.append([r["step"], str(r["busy_samples"]), "%g" % r["sm_mhz_median"], "%g" % r["sm_mhz_min"],
                      "%g" % r["sm_mhz_max"], "%.0f%%" % (100 * r["slow_share"]), num("%.0f", r["watts_median"]),
                      num("%.0f", r["watts_max"]), num("%g", r["celsius_max"]), ", ".join(r["reasons"]) or "none"])
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        for l in [head] + lines:
            print("  ".join(l))
    if skipped:
        print("(%d lines of %s were no sample and were skipped)" % (skipped, paths[0]))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    run_main(main)
