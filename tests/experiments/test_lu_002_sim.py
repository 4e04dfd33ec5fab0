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
G g2. On a copy of the committed results, a failed run of the d sweep (the
best d's) stops the script naming the point, where it printed "—" and named
the best of the survivors with exit 0; a failed Fig. 10 variant is shown as
"failed (exit 4)".
"""
import json
import os
import shutil
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
    with open(MACHINE, encoding="utf-8") as f:
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
    with open(MACHINE, encoding="utf-8") as f:
        machine = json.load(f)
    machine["node"]["gpus"]["count"]["value"] = 3
    with tempfile.TemporaryDirectory() as work:
        three = os.path.join(work, "three-gpus.json")
        with open(three, "w", encoding="utf-8") as f:
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


def failed_runs_are_not_left_out():
    names = ("002-fig5-d-sweep", "002-fig6-7-model-d", "002-fig10-scalability", "002-fig11-tall-skinny")
    script = [sys.executable, os.path.join(ROOT, "experiments", "lu_002_sim.py"), "--no-figures", "--results"]

    def copy_with_failed(tmp, name, **where):
        base = os.path.join(tmp, "r")
        shutil.rmtree(base, ignore_errors=True)
        for n in names:
            shutil.copytree(os.path.join(ROOT, "results", "experiments", n), os.path.join(base, n))
        path = os.path.join(base, name, "runs.jsonl")
        with open(path, encoding="utf-8") as f:
            recs = [json.loads(line) for line in f if line.strip()]
        hit = [r for r in recs if all(r["params"].get(k) == v for k, v in where.items())]
        assert hit, where
        for r in hit:
            r.update(status="failed", exit_status=4, result=None, stderr="tessera: error: out of memory")
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps(r) + "\n" for r in recs))
        return base
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run(script + [copy_with_failed(tmp, names[0], B=128, pivot="tournament", d=16)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 2 or "d=16" not in p.stderr or "failed (exit 4: tessera: error: out of memory)" not in \
                p.stderr or len(p.stderr.splitlines()) != 1:
            raise AssertionError("a failed point of the d sweep: exit 2 naming it, got %d: %s" % (p.returncode, p.stderr))
        p = subprocess.run(script + [copy_with_failed(tmp, names[2], threads=12, variant="gepp_async eq1")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        row = [line for line in p.stdout.splitlines() if line.startswith("| 12 |") and "failed (exit 4)" in line]
        if p.returncode != 0 or len(row) != 1:
            raise AssertionError("a failed Fig. 10 variant shown as failed, got %d: %s" % (p.returncode,
                                                                                         p.stdout + p.stderr))


def main():
    failed_runs_are_not_left_out()
    print("lu_002_sim: a failed run stops the best-d tables naming it, or is shown as failed")
    side_flops_by_hand()
    print("lu_002_sim: side_flops on 3 x 3 tiles by hand: ok")
    n = the_runs_choose_the_scripts_d(sys.argv[1])
    print("lu_002_sim: --d auto and --d eq1 of 24 phantom runs each are the script's d (%d distinct pairs)" % n)
    eq1_counts_every_gpu(sys.argv[1])
    print("lu_002_sim: --d eq1 with 1, 2 and 3 GPUs is the script's eq. (1) at G g2")


if __name__ == "__main__":
    main()
