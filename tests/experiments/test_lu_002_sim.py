#!/usr/bin/python3
"""experiments/lu_002_sim.py's models of the CPU share d, against the runtime's.

    test_lu_002_sim.py TESSERA

lu_002_sim.py prints experiments/README.md's LU tables with its own
evaluation of the two estimates of d the runs choose (--d auto: the whole
run's flop balance, models::cpu_block_columns_whole_run; --d eq1: 002 eq.
(1), models::cpu_block_columns) and of the CPU's share of the flops at a
given d; a disagreement with the runs is printed (MISMATCH), not an error.
So, here: side_flops on 3 x 3 tiles by hand, then, on 002's machine file
(48 Opteron cores + one S2050), phantom runs with --d auto and --d eq1 at
P = 4 ... 48 cores and tile sizes on and between the points of the
efficiency curves, square and tall, must choose the d the script's
functions give, and --d eq1 on that node with 1, 2 and 3 GPUs eq. (1) at
G g2.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
import lu_002_sim  # noqa: E402

MACHINE = os.path.join(ROOT, "platform", "machines", "opteron6172-s2050.json")


def expect(got, want, what):
    if abs(got - want) > 1e-12:
        raise AssertionError("%s: %r, expected %r" % (what, got, want))


def side_flops_by_hand():
    # 3 x 3 tiles, unit tile flops: the panels cost 8/3, 5/3 and 2/3 (on the CPU); step 0's two trailing
    # columns 1 + 2 x 2 = 5 each, step 1's one 1 + 2 x 1 = 3. d = 1: the CPU holds only column k at step k
    # (its panel), so every update is the GPU's: (5, 13). d = 2: column k + 1's too: (5 + 5 + 3, 5).
    for d, (cpu, gpu) in ((1, (5.0, 13.0)), (2, (13.0, 5.0))):
        got = lu_002_sim.side_flops(3, 3, d)
        expect(got[0], cpu, "CPU flops at d = %d" % d)
        expect(got[1], gpu, "GPU flops at d = %d" % d)
        expect(lu_002_sim.cpu_flop_share(3, 3, d), cpu / (cpu + gpu), "CPU share at d = %d" % d)


def run_d(tessera, work, m, n, B, P, how, machine=MACHINE, gpus=1):
    out = os.path.join(work, "lu.json")
    p = subprocess.run([tessera, "run", "--algo", "lu", "--backend", "sim", "--machine", machine, "--m", str(m),
                        "--n", str(n), "--B", str(B), "--threads", str(P), "--gpus", str(gpus), "--d", how,
                        "--json", out], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError("tessera run --d %s exited %d: %s" % (how, p.returncode, p.stderr))
    with open(out) as f:
        return json.load(f)["d"]


def the_runs_choose_the_scripts_d(tessera):
    with open(MACHINE) as f:
        machine = json.load(f)
    chosen = set()
    with tempfile.TemporaryDirectory() as work:
        for m, n in ((6000, 6000), (20000, 2048)):
            for B in (128, 200, 512):
                g1, g2 = lu_002_sim.gemm_speeds(machine, B)
                p, q = -(-m // B), -(-n // B)
                for P in (4, 12, 24, 48):
                    what = "m = %d, n = %d, B = %d, P = %d" % (m, n, B, P)
                    auto = run_d(tessera, work, m, n, B, P, "auto")
                    eq1 = run_d(tessera, work, m, n, B, P, "eq1")
                    if auto != lu_002_sim.whole_run_balance_d(p, q, P, g1, g2):
                        raise AssertionError("%s: --d auto chose %d, the script's whole-run balance %d" % (
                            what, auto, lu_002_sim.whole_run_balance_d(p, q, P, g1, g2)))
                    if eq1 != lu_002_sim.eq1_d(q, P, g1, g2):
                        raise AssertionError("%s: --d eq1 chose %d, the script's eq. (1) %d" % (
                            what, eq1, lu_002_sim.eq1_d(q, P, g1, g2)))
                    chosen.add((auto, eq1))
    # The estimates vary over these points: agreeing on a constant would show little.
    if len(chosen) < 10:
        raise AssertionError("only %d distinct (auto, eq1) pairs of d: %s" % (len(chosen), sorted(chosen)))
    return len(chosen)


def eq1_counts_every_gpu(tessera):
    """--d eq1 is 002 eq. (1), d/N = P g1 / (P g1 + G g2): G counts the GPUs. 002's machine has one; the same
    node with three of its GPUs (a copy of the file, node.gpus.count 3) must give the script's eq. (1) at G g2
    for --gpus G = 1, 2, 3, each GPU taking columns from the cores."""
    with open(MACHINE) as f:
        machine = json.load(f)
    machine["node"]["gpus"]["count"]["value"] = 3
    with tempfile.TemporaryDirectory() as work:
        three = os.path.join(work, "three-gpus.json")
        with open(three, "w") as f:
            json.dump(machine, f)
        for B, P in ((128, 12), (200, 48)):
            g1, g2 = lu_002_sim.gemm_speeds(machine, B)
            q = -(-6000 // B)
            ds = []
            for G in (1, 2, 3):
                d = run_d(tessera, work, 6000, 6000, B, P, "eq1", three, G)
                if d != lu_002_sim.eq1_d(q, P, g1, G * g2):
                    raise AssertionError("B = %d, P = %d, --gpus %d: --d eq1 chose %d, the script's eq. (1) %d" % (
                        B, P, G, d, lu_002_sim.eq1_d(q, P, g1, G * g2)))
                ds.append(d)
            if not ds[0] > ds[1] > ds[2]:
                raise AssertionError("B = %d, P = %d: --d eq1 with 1, 2, 3 GPUs chose %s: each GPU added must "
                                     "take columns from the cores" % (B, P, ds))


def main():
    side_flops_by_hand()
    print("lu_002_sim: side_flops on 3 x 3 tiles by hand: ok")
    n = the_runs_choose_the_scripts_d(sys.argv[1])
    print("lu_002_sim: --d auto and --d eq1 of 24 phantom runs each are the script's d (%d distinct pairs)" % n)
    eq1_counts_every_gpu(sys.argv[1])
    print("lu_002_sim: --d eq1 with 1, 2 and 3 GPUs is the script's eq. (1) at G g2")


if __name__ == "__main__":
    main()
