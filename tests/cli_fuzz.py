#!/usr/bin/env python3
"""Random `tessera run` command lines against the README's exit-status contract.

    cli_fuzz.py TESSERA REPO_ROOT [--runs N] [--seed S] [--timeout T]

Each run draws a factorization, a backend (simulated or native), sizes, tiles,
GPUs, grids and options from the combinations the README documents, and with
probability 0.15 replaces one value with a malformed or out-of-range one. The
contract it holds every run to (README, "Exit status"):

  - the process ends by itself within T seconds (no hang) and by exit, not by
    a signal (no crash);
  - its status is 0-5, or CLI11's (100-120) with CLI11's "Run with --help" line;
  - 0: nothing on stderr; 2-4: exactly one stderr line, `tessera: error: ...`;
  - never 5 (an internal error: the generator injects no failure);
  - no sanitizer report (a build with TESSERA_ASAN=ON prints one on a memory or
    undefined-behaviour error), except the sanitizer's own out-of-memory
    abort, its form of a refused allocation (status 4 in a normal build);
  - a --check that runs passes: every generated matrix is one the factorization
    handles (spd for Cholesky, full-rank or rank-deficient for QR, well- or
    ill-conditioned for LU), so status 1 is a defect here.

Found on its first runs (2026-11-28): a simulated --gpu-streams 0 was an
internal error (status 5; now refused, status 2); --n 99999999999999999999
was read by CLI11 as 2^63 - 1, then refused as out of memory naming that
value (now refused naming the value given); LU with --B far beyond the
matrix sized its buffers m x B and was refused as out of memory (1584 GiB for
a 192 x 192 matrix; now sized by the matrix, it runs).

The seed fixes the command lines, so a failure is reproduced by the printed
command. Status 4 is allowed (a small --gpu-memory may not hold one task's
tiles). Exit status 0 when every run held, 1 otherwise.
"""
import argparse
import collections
import random
import subprocess
import sys

BAD_VALUES = ["0", "-1", "abc", "1e3", "99999999999999999999", "3.5", "nan", "2147483648", ""]
KEENELAND = "platform/machines/keeneland.json"
LOCAL = "platform/machines/local.json"


def command(rng, binary):
    algo = rng.choice(["cholesky", "qr", "lu"])
    backend = rng.choice(["sim", "sim", "native"])
    n = rng.choice([64, 96, 100, 128, 150, 192])
    args = [binary, "run", "--backend", backend, "--algo", algo, "--n", str(n)]
    check = rng.random() < 0.7
    gpus = rng.choice([0, 0, 1, 2])
    grid = rng.choice(["1x1", "1x2", "2x1", "2x2", "3x2"]) if backend == "sim" and rng.random() < 0.5 else None
    if backend == "sim":
        args += ["--machine", KEENELAND if gpus or grid or rng.random() < 0.5 else LOCAL]
        if check or rng.random() < 0.3:
            args.append("--sim-data")
    args += ["--B", str(rng.choice([16, 24, 32, 48, 64]))]
    s = rng.choice([1, 1, 2, 3])
    if s > 1:
        args += ["--s", str(s)]
        if rng.random() < 0.5:
            args += ["--b", str(rng.choice([4, 8]))]
    if algo == "qr":
        if rng.random() < 0.5:
            args += ["--m", str(n + rng.choice([0, 17, 64, 200]))]
        if rng.random() < 0.5:
            args += ["--ib", str(rng.choice([4, 8, 16]))]
        if rng.random() < 0.3:
            args += ["--qr-tree", "binary"]
    if algo == "lu" and rng.random() < 0.5:
        args += ["--pivot", rng.choice(["partial", "tournament", "none"])]
    if gpus:
        args += ["--gpus", str(gpus)]
        if backend == "native" and rng.random() < 0.5:
            args += ["--gpu-memory", str(rng.choice([200000, 400000, 2000000]))]
        if rng.random() < 0.3:
            args += ["--eviction", rng.choice(["lru", "next-use"])]
        if backend == "sim" and rng.random() < 0.3:
            args += ["--gpu-streams", str(rng.choice([1, 2, 3]))]
        if algo == "lu" and rng.random() < 0.5:
            args += ["--d", rng.choice(["0", "1", "auto"])]
    if grid:
        args += ["--grid", grid]
        if algo == "qr" and grid[0] != "1" and rng.random() < 0.5:
            args += ["--v", str(rng.choice([1, 2, 3]))]
        if rng.random() < 0.3:
            args += ["--broadcast", rng.choice(["flat", "binomial"])]
    if backend == "native" and rng.random() < 0.5:
        args += ["--threads", str(rng.choice([1, 2, 3]))]
    if rng.random() < 0.3:
        args += ["--window", str(rng.choice([8, 32, 200]))]
    if rng.random() < 0.3:
        args += ["--policy", rng.choice(["fifo", "random", "priority"])]
    if rng.random() < 0.3:
        args += ["--precision", "s"]
    if rng.random() < 0.3 and (backend == "native" or "--sim-data" in args):
        matrices = {"cholesky": ["spd", "graded"], "qr": ["general", "graded", "illcond", "rankdef"],
                    "lu": ["general", "graded", "illcond"]}
        args += ["--matrix", rng.choice(matrices[algo])]
    if backend == "sim" and rng.random() < 0.2:
        args += ["--kernel-noise", "0.2", "--noise-seed", str(rng.randint(1, 9))]
    if check:
        args.append("--check")
    if rng.random() < 0.15:  # one malformed or out-of-range value
        values = [i for i in range(5, len(args)) if not args[i].startswith("--")]
        if values:
            args[rng.choice(values)] = rng.choice(BAD_VALUES)
    return args


def violation(rc, out, err):
    """What the run broke of the contract, or None."""
    lines = [line for line in err.splitlines() if line.strip()]
    # Under AddressSanitizer an allocation the system refuses aborts instead of throwing std::bad_alloc: what a
    # normal build reports as out of memory (status 4, e.g. a --window of 2^31 tasks' 480 GiB of slots).
    if "AddressSanitizer: out-of-memory" in err or "AddressSanitizer: allocation-size-too-big" in err:
        return None
    if "AddressSanitizer" in err or "runtime error:" in err or "LeakSanitizer" in err:
        return "a sanitizer report"
    if rc < 0:
        return "killed by signal %d" % -rc
    if 100 <= rc <= 120:
        return None if "Run with --help" in err else "status %d without CLI11's message" % rc
    if rc > 5:
        return "status %d is not one of the README's" % rc
    if rc == 0:
        return "stderr on success" if lines else None
    if rc == 1:
        return "a --check failed on a matrix the factorization handles" if out.strip().endswith("FAILED") \
            else "status 1 without a FAILED summary"
    if len(lines) != 1 or not lines[0].startswith(("tessera: error:", "tessera: internal error:")):
        return "status %d with %d stderr lines instead of one tessera: line" % (rc, len(lines))
    if rc == 5:  # the generator injects no failure (--fail, --test-fault): an internal error is a defect
        return "an internal error"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("root", help="repository root (machine files are relative to it)")
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    statuses = collections.Counter()
    failures = 0
    for _ in range(a.runs):
        args = command(rng, a.binary)
        shown = " ".join(repr(x) if x == "" or " " in x else x for x in args[1:])
        try:
            p = subprocess.run(args, capture_output=True, text=True, timeout=a.timeout, cwd=a.root)
        except subprocess.TimeoutExpired:
            failures += 1
            print("FAIL (no exit within %g s): tessera %s" % (a.timeout, shown))
            continue
        statuses[p.returncode] += 1
        why = violation(p.returncode, p.stdout, p.stderr)
        if why:
            failures += 1
            print("FAIL (%s): tessera %s\n  stderr: %s" % (why, shown, p.stderr.strip()[-1500:]))
    print("cli_fuzz: %d runs (seed %d), statuses %s, %d broke the contract"
          % (a.runs, a.seed, dict(sorted(statuses.items())), failures))
    # A fuzz that only ever gets refusals tests the parser alone.
    if statuses[0] < a.runs // 4:
        print("cli_fuzz: only %d of %d runs succeeded: the generator no longer reaches the runtime" %
              (statuses[0], a.runs))
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
