#!/usr/bin/python3
"""analysis/gpu_clocks.py on a folder laid out as gpu_node.sh writes it, with
nvidia-smi's CSV made here: each step gets the busy samples between its start
and end (an idle sample, utilization 0, is left out however low its clock),
the SM clock's median, lowest and highest, the share below 95% of the call's
highest, and the reasons decoded from the bit mask (GpuIdle not among them,
even on a busy sample); a step without busy samples gets a dash. Fields nvidia-smi could not read
("[N/A]") are missing values, not errors (no utilization: busy); lines that
are no sample (an error message, a line cut short) are skipped and counted.
A missing file, a file without a sample, a step file without a step, or a
step line that cannot be read (bytes that are no text too) exits 2 naming it;
--json naming an input or a folder that does not exist exits 2 before the
table, the input kept.

    test_gpu_clocks.py WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "analysis", "gpu_clocks.py")

HEADER = ("timestamp, clocks.current.sm [MHz], clocks.current.memory [MHz], power.draw [W], temperature.gpu, "
          "utilization.gpu [%], clocks_event_reasons.active")


def expect(cond, what, out=""):
    if not cond:
        print("FAIL: %s\n%s" % (what, out))
        sys.exit(1)


def run(*args):
    p = subprocess.run(["/usr/bin/python3", SCRIPT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def write(folder, samples, steps):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "gpu_clocks.csv"), "w") as f:
        f.write(HEADER + "\n" + "".join(line + "\n" for line in samples))
    with open(os.path.join(folder, "step_times.txt"), "w") as f:
        f.write("".join(line + "\n" for line in steps))


def main():
    work = sys.argv[1]
    shutil.rmtree(work, ignore_errors=True)
    good = os.path.join(work, "good")
    write(good, [
        "2026/11/28 01:00:00.100, 1980, 2619, 310.5, 40, 100, 0x0000000000000000",
        "2026/11/28 01:00:00.300, 1980, 2619, 320.0, 41, 100, 0x0000000000000000",
        "2026/11/28 01:00:01.100, 1980, 2619, 600.0, 60, 100, 0x0000000000000000",
        "2026/11/28 01:00:01.300, 1700, 2619, 690.0, 70, 100, 0x0000000000000004",
        "2026/11/28 01:00:01.500, 345, 2619, 90.0, 66, 0, 0x0000000000000001",
        "2026/11/28 01:00:01.700, 1650, 2619, 699.0, 72, 100, 0x0000000000000024",
        "2026/11/28 01:00:01.900, 1600, 2619, 700.0, 73, 100, 0x0000000000000004",
        "Unable to determine the device handle for GPU0000:00:00.0: Unknown Error",
        "2026/11/28 01:00:03.200, 1500, [N/A], [N/A], 50, [N/A], 0x0000000000000005",
        "2026/11/28 01:00:03.4",
    ], [
        "calibrate 2026-11-28T01:00:00.000 2026-11-28T01:00:00.900",
        "bench 2026-11-28T01:00:01.000 2026-11-28T01:00:02.000",
        "tests 2026-11-28T01:00:03.000 2026-11-28T01:00:04.000",
        "ooc 2026-11-28T01:00:05.000 2026-11-28T01:00:06.000",
    ])
    rc, out, err = run(good, "--markdown", "--json", os.path.join(work, "c.json"))
    expect(rc == 0 and err == "", "a good folder: exit 0, nothing on stderr", out + err)
    expect("| bench | 4 | 1675 | 1600 | 1980 | 75% |" in out, "bench's row: 4 busy samples, median 1675", out)
    expect("SwPowerCap, SwThermalSlowdown" in out, "the reasons decoded", out)
    expect("| tests | 1 | 1500 | 1500 | 1500 | 100% | - | - | 50 | SwPowerCap |" in out,
           "a sample without utilization or power counts as busy, without a power statistic", out)
    expect("(2 lines of" in out and "were no sample and were skipped)" in out, "the skipped lines counted", out)
    with open(os.path.join(work, "c.json")) as f:
        j = json.load(f)
    steps = {s["step"]: s for s in j["steps"]}
    expect(j["sm_mhz_top"] == 1980, "the call's highest busy clock", j)
    expect(steps["calibrate"]["busy_samples"] == 2 and steps["calibrate"]["slow_share"] == 0 and
           steps["calibrate"]["reasons"] == [], "calibrate: full clocks, no reason", j)
    expect(steps["bench"]["busy_samples"] == 4 and steps["bench"]["sm_mhz_min"] == 1600 and
           steps["bench"]["watts_max"] == 700 and steps["bench"]["celsius_max"] == 73, "bench's values", j)
    expect(steps["bench"]["reasons"] == ["SwPowerCap", "SwThermalSlowdown"], "GpuIdle is no reason", j)
    expect(steps["ooc"]["busy_samples"] == 0 and "| ooc | 0 | - |" in out, "a step without samples gets a dash", out)
    expect(j["lines_skipped"] == 2, "two lines skipped", j)

    missing = os.path.join(work, "missing")
    os.makedirs(missing)
    rc, out, err = run(missing)
    expect(rc == 2 and "gpu_clocks.csv is missing" in err and err.count("\n") == 1, "a missing CSV", err)
    bad = os.path.join(work, "bad")
    write(bad, ["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."], [])
    rc, out, err = run(bad)
    expect(rc == 2 and "gpu_clocks.csv holds no sample (1 lines that are none)" in err, "no sample at all", err)
    write(bad, ["2026/11/28 01:00:00.100, 1980, 2619, 310.5, 40, 100, 0x0"], ["bench 2026-11-28T01:00:01.000"])
    rc, out, err = run(bad)
    expect(rc == 2 and "step_times.txt line 1" in err, "a step line that cannot be read", err)
    with open(os.path.join(bad, "step_times.txt"), "wb") as f:
        f.write(b"\xff\xfe x\n")
    rc, out, err = run(bad)
    expect(rc == 2 and "step_times.txt line 1" in err and "Traceback" not in err, "a step line of bytes", err)
    write(bad, ["2026/11/28 01:00:00.100, 1980, 2619, 310.5, 40, 100, 0x0"], [])
    rc, out, err = run(bad)
    expect(rc == 2 and "step_times.txt holds no step" in err, "no step at all: not a header alone", out + err)
    # --json over an input, or into a folder that does not exist: refused before anything is read or printed.
    csv_path = os.path.join(good, "gpu_clocks.csv")
    with open(csv_path) as f:
        before = f.read()
    for target, needle in ((csv_path, "is an input"), (os.path.join(good, "step_times.txt"), "is an input"),
                           (os.path.join(work, "nowhere", "c.json"), "its folder"), (work, "is a folder")):
        rc, out, err = run(good, "--json", target)
        expect(rc == 2 and out == "" and err.count("\n") == 1 and "--json %s: %s" % (target, needle) in err,
               "--json %s refused first" % target, out + err)
    with open(csv_path) as f:
        expect(f.read() == before, "the CSV kept")
    print("gpu_clocks: ok")


if __name__ == "__main__":
    main()
