#!/usr/bin/python3
"""`tessera explore` end to end, one case per invocation:

    test_explore.py TESSERA_BINARY WORK_DIR dry_run|sweep|noise|bad_set|machines|ranking|values

dry_run: --dry-run lists every configuration (grids of a node count x tile sizes x
overrides, invalid distributions left out) and runs nothing. sweep: a 4-point sweep
(N = 4608 on 2x2 simulated H100 nodes, B x GPU memory, one point out of GPU memory)
writes ranked results.csv, a PNG and the recommendation line last; the failed point is
recorded with exit 4 and the sweep goes on; a rerun does no new run; a recorded ok run
without a predicted time (written by hand, cut short) runs again on a rerun instead of
ending the ranking in a traceback; a point past --timeout is killed (its whole process
group) and shown as "x timeout" on the heatmap, not "x None". bad_set: a bad
--set path, a non-numeric field, a bad value exit 2 naming them. machines: the shipped
H100 machine files load and run. The dry run also sweeps QR's reduction trees (binary
left out on one node row) and bad_set refuses a bad or misplaced --qr-tree. noise: --node-noise
as an axis with --noise-seeds, each noisy point's seeds merged into one row at their median.
ranking: the merging of seeds, the recommendation and the heatmap's best cell on rows made by hand, where each
number is known. The dry run makes no results folder.
values: option values by hand (ranges whose STOP a float step lands on, integer ranges, lists).
"""
import csv
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(ROOT, "platform", "machines", "h100-cluster-64.json")
NODE = os.path.join(ROOT, "platform", "machines", "h100-node.json")
LOCAL = os.path.join(ROOT, "platform", "machines", "local.json")
KEENELAND = os.path.join(ROOT, "platform", "machines", "keeneland.json")


def explore(tessera, *args):
    p = subprocess.run([tessera, "explore"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def expect(cond, what, out=""):
    if not cond:
        print("FAIL: %s\n%s" % (what, out))
        sys.exit(1)


def dry_run(tessera, work):
    out_dir = os.path.join(work, "dry")
    shutil.rmtree(out_dir, ignore_errors=True)
    rc, out, err = explore(tessera, "--machine", CLUSTER, "--algo", "cholesky", "--n", "4608", "--nodes", "4",
                           "--B", "576,1152", "--dist", "multi-level,block-cyclic-2d",
                           "--set", "network.bandwidth_Bps=12.5e9:50e9:12.5e9", "--out", out_dir, "--dry-run")
    # grids of 4 nodes: 2x2, 1x4, 4x1; x 2 tile sizes x 4 bandwidths; block-cyclic-2d is refused with GPUs
    expect(rc == 0, "dry run exit 0, got %d" % rc, err)
    runs = [l for l in out.splitlines() if " todo " in l]
    expect(len(runs) == 24, "24 configurations listed, got %d" % len(runs), out)
    expect(all("--backend sim" in l and "--json" in l for l in runs), "each line is a tessera run command", out)
    expect(sum(l.startswith("left out:") for l in out.splitlines()) == 24, "24 invalid combinations listed", out)
    expect(out.splitlines()[-1].startswith("explore: 24 configuration(s), 24 combination(s) left out"), "summary", out)
    expect(not os.path.exists(out_dir), "a dry run runs nothing and makes no results folder", out_dir)
    # QR's reduction trees are an axis: 2x2 and 4x1 take both, 1x4 (one node row) only the flat one.
    rc, out, err = explore(tessera, "--machine", CLUSTER, "--algo", "qr", "--n", "4608", "--nodes", "4", "--B", "1152",
                           "--qr-tree", "flat,binary", "--out", out_dir, "--dry-run")
    expect(rc == 0, "QR tree dry run exit 0, got %d" % rc, err)
    runs = [l for l in out.splitlines() if " todo " in l]
    trees = sorted((l.split("--grid ")[1].split()[0], l.split("--qr-tree ")[1].split()[0]) for l in runs)
    expect(trees == [("1x4", "flat"), ("2x2", "binary"), ("2x2", "flat"), ("4x1", "binary"), ("4x1", "flat")],
           "grids x trees, binary left out on 1x4", out)
    left = [l for l in out.splitlines() if l.startswith("left out:")]
    expect(len(left) == 1 and "grid=1x4" in left[0] and "tree=binary" in left[0] and "flat one" in left[0],
           "1x4 binary left out, saying why", out)
    # Compute streams per GPU are an axis, and the machine file's optional stream_overlap can be set though
    # h100-cluster-64.json leaves it out; without GPUs only one stream is a point.
    rc, out, err = explore(tessera, "--machine", CLUSTER, "--algo", "qr", "--n", "4608", "--grids", "2x2", "--B", "1152",
                           "--gpu-streams", "1,3", "--set", "node.gpus.stream_overlap=0,1", "--out", out_dir,
                           "--dry-run")
    expect(rc == 0, "streams dry run exit 0, got %d" % rc, err)
    runs = [l for l in out.splitlines() if " todo " in l]
    expect(len(runs) == 4 and sum("--gpu-streams 3" in l for l in runs) == 2
           and sum("--gpu-streams 1" in l for l in runs) == 2, "2 stream counts x 2 overlaps", out)
    # gpu-columns is an axis where it differs from multi-level: s = 1 left out, saying why.
    rc, out, err = explore(tessera, "--machine", CLUSTER, "--algo", "qr", "--n", "4608", "--grids", "2x2", "--B", "2304",
                           "--s", "1,4", "--dist", "multi-level,gpu-columns", "--out", out_dir, "--dry-run")
    runs = [l for l in out.splitlines() if " todo " in l]
    left = [l for l in out.splitlines() if l.startswith("left out:")]
    expect(rc == 0 and len(runs) == 3 and sum("--dist gpu-columns" in l and "--s 4" in l for l in runs) == 1
           and len(left) == 1 and "gpu-columns" in left[0] and "s = 1" in left[0],
           "gpu-columns with s = 4 run, with s = 1 left out", out)
    # A narrow width too wide for s - 1 columns is left out, saying why; --b (auto too) goes where s = 1 has no
    # narrow columns, as tessera refuses it there.
    rc, out, err = explore(tessera, "--machine", CLUSTER, "--algo", "cholesky", "--n", "4608", "--grids", "2x2",
                           "--B", "1152", "--s", "1,2,3", "--b", "600", "--out", out_dir, "--dry-run")
    runs = [l for l in out.splitlines() if " todo " in l]
    left = [l for l in out.splitlines() if l.startswith("left out:")]
    expect(rc == 0 and len(runs) == 2 and not any("--b " in l for l in runs if "--s 1 " in l)
           and len(left) == 1 and "s=3" in left[0] and "no remainder" in left[0], "s = 3 with b = 600 left out", out)
    rc, out, err = explore(tessera, "--machine", CLUSTER, "--algo", "cholesky", "--n", "4608", "--grids", "2x2",
                           "--B", "1152", "--s", "1,2", "--b", "auto", "--out", out_dir, "--dry-run")
    runs = [l for l in out.splitlines() if " todo " in l]
    expect(rc == 0 and len(runs) == 2 and sum("--b auto" in l for l in runs) == 1, "--b auto only where s = 2", out)
    # Narrow widths are an axis (auto among them): each is a point of s = 2, while s = 1, which has no narrow
    # columns, is one point whatever the widths; the too-wide one is left out at s = 3 only.
    rc, out, err = explore(tessera, "--machine", CLUSTER, "--algo", "cholesky", "--n", "4608", "--grids", "2x2",
                           "--B", "1152", "--s", "1,2,3", "--b", "64,auto,600", "--out", out_dir, "--dry-run")
    runs = [l for l in out.splitlines() if " todo " in l]
    left = [l for l in out.splitlines() if l.startswith("left out:")]
    widths = sorted((l.split("--s ")[1].split()[0], (l.split("--b ")[1].split() + [""])[0] if "--b " in l else "-")
                    for l in runs)
    expect(rc == 0 and widths == [("1", "-"), ("2", "600"), ("2", "64"), ("2", "auto"), ("3", "64"), ("3", "auto")]
           and len(left) == 1 and "s=3 b=600" in left[0] and "no remainder" in left[0],
           "3 widths x s = 2, 3 (b = 600 left out at s = 3), one point at s = 1", out)
    rc, out, err = explore(tessera, "--machine", CLUSTER, "--algo", "cholesky", "--n", "4608", "--grids", "2x2",
                           "--B", "1152", "--s", "2", "--b", "auto", "--gpus", "0", "--out", out_dir, "--dry-run")
    expect(rc == 2 and "no valid configuration" in err and "b auto balances the host against GPUs" in err,
           "--b auto without GPUs left out (the only point: no configuration, saying why)", out + err)
    # A virtual tile height on one node row changes nothing (tessera refuses it): 1x4 left out, 2x2 and 4x1 run.
    rc, out, err = explore(tessera, "--machine", CLUSTER, "--algo", "qr", "--n", "4608", "--nodes", "4", "--B", "1152",
                           "--v", "2", "--out", out_dir, "--dry-run")
    runs = [l for l in out.splitlines() if " todo " in l]
    left = [l for l in out.splitlines() if l.startswith("left out:")]
    expect(rc == 0 and len(runs) == 2 and all("--v 2" in l for l in runs) and len(left) == 1 and "1x4" in left[0]
           and "changes nothing" in left[0], "--v on one node row left out", out + err)
    rc, out, err = explore(tessera, "--machine", CLUSTER, "--algo", "qr", "--n", "4608", "--grids", "2x2", "--B", "1152",
                           "--gpu-streams", "1,3", "--gpus", "0", "--out", out_dir, "--dry-run")
    left = [l for l in out.splitlines() if l.startswith("left out:")]
    expect(rc == 0 and len([l for l in out.splitlines() if " todo " in l]) == 1 and len(left) == 1
           and "streams=3" in left[0] and "no GPU" in left[0], "3 streams without GPUs left out, saying why", out)


def sweep(tessera, work):
    out_dir = os.path.join(work, "sweep")
    shutil.rmtree(out_dir, ignore_errors=True)
    args = ["--machine", CLUSTER, "--algo", "cholesky", "--n", "4608", "--grids", "2x2", "--B", "576,1152",
            "--set", "node.gpus.memory_bytes=2e7,80e9", "--threads", "2", "--jobs", "2", "--out", out_dir]
    rc, out, err = explore(tessera, *args)
    expect(rc == 0, "sweep exit 0, got %d" % rc, out + err)
    lines = out.strip().splitlines()
    expect(lines[0].startswith("explore: 3 run(s) ok, 1 failed, 0 already done"), "3 ok, 1 failed", out)
    expect(lines[-1].startswith("recommendation: grid=2x2 dist=multi-level B=576 ") and "predicted" in lines[-1]
           and "faster than the second best" in lines[-1], "recommendation line last", out)
    with open(os.path.join(out_dir, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    expect(len(rows) == 4, "4 rows in results.csv", str(rows))
    ok = [r for r in rows if r["status"] == "ok"]
    expect([r["rank"] for r in ok] == ["1", "2", "3"], "ok rows ranked 1..3 first", str(rows))
    times = [float(r["time_s"]) for r in ok]
    expect(times == sorted(times) and all(t > 0 for t in times), "ranked by predicted time", str(times))
    bad = rows[3]
    expect(bad["status"] == "failed" and bad["exit_status"] == "4" and "out of memory" in bad["error"]
           and bad["node.gpus.memory_bytes"] == "20000000" and bad["B"] == "1152", "the OOM point recorded", str(bad))
    for r in rows:
        expect(os.path.isfile(os.path.join(out_dir, r["machine_file"])), "derived machine file written", r["machine_file"])
    png = os.path.join(out_dir, "explore.png")
    with open(png, "rb") as f:
        expect(f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 5000, "explore.png is a PNG")
    rc, out2, err = explore(tessera, *args)
    expect(rc == 0 and out2.startswith("explore: 0 run(s) ok, 0 failed, 4 already done"), "rerun resumes", out2 + err)
    expect(out2.strip().splitlines()[-1] == lines[-1], "same recommendation after resume", out2)
    all_failed(tessera, work)
    resumed_without_time(tessera, work)
    timed_out(tessera, work)


def resumed_without_time(tessera, work):
    """A recorded ok run whose result lacks time_s (or holds null) is run again on a rerun, with a warning naming it."""
    for i, bad in enumerate(({}, {"time_s": None})):
        out_dir = os.path.join(work, "no_time%d" % i)
        shutil.rmtree(out_dir, ignore_errors=True)
        args = ["--machine", KEENELAND, "--algo", "cholesky", "--n", "2304", "--grids", "1x1", "--B", "576",
                "--gpus", "1", "--threads", "2", "--out", out_dir]
        rc, out, err = explore(tessera, *args)
        expect(rc == 0, "the one-point sweep", out + err)
        path = os.path.join(out_dir, "runs.jsonl")
        with open(path) as f:
            rec = json.loads(f.read())
        rec["result"] = dict({k: v for k, v in rec["result"].items() if k != "time_s"}, **bad)
        with open(path, "w") as f:
            f.write(json.dumps(rec) + "\n")
        rc, out, err = explore(tessera, *args)
        expect(rc == 0 and "Traceback" not in err and out.startswith("explore: 1 run(s) ok, 0 failed, 0 already done")
               and "has no positive time_s in its result" in err and "it runs again" in err,
               "a record without time_s runs again", out + err)
        with open(os.path.join(out_dir, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        expect([r["status"] for r in rows] == ["ok"] and float(rows[0]["time_s"]) > 0, "ranked after the rerun", str(rows))


def timed_out(tessera, work):
    """A point past --timeout (a stand-in that sleeps) is recorded as timeout; its row and the heatmap say so."""
    slow = os.path.join(work, "slow_tessera")
    with open(slow, "w") as f:
        f.write("#!/usr/bin/python3\nimport subprocess, time\nsubprocess.Popen(['sleep', '30'])\ntime.sleep(30)\n")
    os.chmod(slow, 0o755)
    out_dir = os.path.join(work, "timed_out")
    shutil.rmtree(out_dir, ignore_errors=True)
    rc, out, err = explore(tessera, "--tessera", slow, "--machine", KEENELAND, "--algo", "cholesky", "--n", "2304",
                           "--grids", "1x1", "--B", "576", "--gpus", "1", "--timeout", "1", "--out", out_dir)
    expect(rc == 1 and "Traceback" not in err, "every point timed out: exit 1", out + err)
    with open(os.path.join(out_dir, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    expect([(r["status"], r["exit_status"]) for r in rows] == [("timeout", "timeout")], "the timeout recorded", str(rows))


def all_failed(tessera, work):
    """No point succeeds: exit 2 when tessera refused each as bad input (quoting the first), else 1; results kept."""
    cases = [(["--machine", LOCAL, "--threads", "5"], 2, "--threads 5"),  # local.json has 2 cores
             (["--machine", KEENELAND, "--gpus", "1", "--B", "1152", "--set", "node.gpus.memory_bytes=2e7"], 1,
              "out of memory")]
    for i, (extra, status, needle) in enumerate(cases):
        out_dir = os.path.join(work, "all_failed%d" % i)
        shutil.rmtree(out_dir, ignore_errors=True)
        rc, out, err = explore(tessera, *(["--algo", "cholesky", "--n", "2304", "--grids", "1x1", "--B", "576,1152",
                                           "--out", out_dir] + extra))
        last = err.strip().splitlines()[-1] if err.strip() else ""
        expect(rc == status, "%s: every point failed: exit %d, got %d" % (extra, status, rc), out + err)
        expect(last.startswith("tessera explore: every configuration failed") and needle in last,
               "%s: the first failure quoted last on stderr" % extra, err)
        expect("Traceback" not in err and out.strip().splitlines()[-1].startswith("recommendation: none"),
               "%s: the recommendation line still printed" % extra, out + err)
        with open(os.path.join(out_dir, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        expect(len(rows) >= 1 and all(r["status"] == "failed" for r in rows), "%s: the failed points recorded" % extra,
               str(rows))


def noise(tessera, work):
    """Nodes of unequal speed as an axis: each noisy point runs once per seed and is ranked by their median."""
    out_dir = os.path.join(work, "noise")
    shutil.rmtree(out_dir, ignore_errors=True)
    keeneland = os.path.join(ROOT, "platform", "machines", "keeneland.json")
    args = ["--machine", keeneland, "--algo", "cholesky", "--n", "4608", "--grids", "2x2,1x4", "--B", "576",
            "--gpus", "2", "--node-noise", "0,0.1", "--noise-seeds", "3", "--jobs", "2", "--out", out_dir]
    rc, out, err = explore(tessera, *(args + ["--dry-run"]))
    runs = [l for l in out.splitlines() if " todo " in l]
    expect(rc == 0 and len(runs) == 8, "2 grids x (1 point without noise + 3 seeds with): 8 runs", out + err)
    expect(sum("--noise-seed " in l for l in runs) == 6 and sum("--node-noise 0.1" in l for l in runs) == 6,
           "the noisy points carry their seeds", out)
    rc, out, err = explore(tessera, *args)
    expect(rc == 0, "noise sweep exit 0, got %d" % rc, out + err)
    with open(os.path.join(out_dir, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    expect(len(rows) == 4, "one row per point, the seeds merged: 4 rows", str(rows))
    with open(os.path.join(out_dir, "runs.jsonl")) as f:
        recs = [json.loads(l) for l in f if l.strip()]
    for r in rows:
        if r["node_noise"] == "0":
            expect(r["seeds"] == "" and r["time_min_s"] == "", "no seeds without noise", str(r))
            continue
        times = sorted(x["result"]["time_s"] for x in recs if x["params"].get("node_noise") == 0.1
                       and x["params"]["grid"] == r["grid"])
        expect(r["seeds"] == "3" and len(times) == 3, "3 seeds merged", str(r))
        expect(abs(float(r["time_s"]) - times[1]) < 1e-12 and abs(float(r["time_min_s"]) - times[0]) < 1e-12
               and abs(float(r["time_max_s"]) - times[2]) < 1e-12, "time_s the median of the seeds", str(r))
        expect(times[0] < times[2], "the seeds drew differently", str(times))
    lines = out.strip().splitlines()
    best = [l for l in lines if l.startswith("best with node_noise=")]
    expect(len(best) == 2, "the best per noise level", out)
    expect(all(l.split(": ", 1)[1].count("node_noise=") == 0 for l in best),
           "the variant named once, before the labels", out)


def bad_set(tessera, work):
    base = ["--machine", CLUSTER, "--algo", "cholesky", "--n", "4608", "--nodes", "4", "--dry-run"]
    cases = [(["--set", "network.bandwith_Bps=1e9"], "network.bandwith_Bps"),
             (["--set", "network.topology=3"], "not numeric"),
             (["--set", "node.gpus.count=2.5"], "is an integer"),
             (["--set", "network.latency_s=fast"], "--set network.latency_s=fast"),
             (["--set", "network.latency_s"], "FIELD=VALUES"),
             (["--dist", "round-robin"], "--dist round-robin"),
             (["--B", "0"], "--B 0"),
             (["--b", "64,wide"], "--b 64,wide: 'wide'"),
             (["--b", "0"], "--b 0: '0'"),
             (["--qr-tree", "flat,ternary"], "--qr-tree ternary"),
             (["--qr-tree", "binary"], "--qr-tree binary"),  # Cholesky has no reduction tree
             (["--gpu-streams", "0,2"], "--gpu-streams"),
             (["--set", "node.gpus.stream_overlapp=1"], "node.gpus.stream_overlapp"),
             (["--node-noise", "0,3"], "--node-noise 0,3"),
             (["--kernel-noise", "x"], "--kernel-noise x"),
             (["--noise-seeds", "3"], "--noise-seeds 3"),  # no point has variation
             (["--node-noise", "0.1", "--noise-seeds", "0"], "--noise-seeds 0")]
    # Values tessera's machine-file loader would refuse, refused before the sweep.
    cases += [(["--set", "node.gpus.count=-1"], "node.gpus.count=-1"),
              (["--set", "node.gpus.count=1e30"], "node.gpus.count=1e30"),
              (["--set", "node.cores.count=0"], "node.cores.count=0"),  # a node has a core, it may have no GPU
              (["--set", "network.bandwidth_Bps=-1"], "network.bandwidth_Bps=-1"),
              (["--set", "network.latency_s=1e-6,-1e-6"], "-1e-06"),
              (["--out", CLUSTER], "--out " + CLUSTER)]
    # Machine files explore cannot read: each named with its field; a folder is said to be one.
    bad_files = {"array": [1], "null": None, "nodes": {"nodes": "ten"}, "gpus": {"node": {"gpus": {"count": "three"}}},
                 "node": {"node": "x"}}
    for name, doc in bad_files.items():
        path = os.path.join(work, "bad-%s.json" % name)
        with open(path, "w") as f:
            json.dump(doc, f)
        field = {"array": "the top level", "null": "the top level", "nodes": 'field nodes = "ten"',
                 "gpus": 'field node.gpus.count = "three"', "node": 'field node = "x"'}[name]
        cases.append((["--machine", path], "--machine %s: %s" % (path, field)))
    cases.append((["--machine", work], "--machine %s: is a directory" % work))
    deep = os.path.join(work, "bad-deep.json")
    with open(deep, "w") as f:
        f.write("[" * 100000)  # beyond Python's parser: a RecursionError, not a ValueError
    cases.append((["--machine", deep], "--machine %s: JSON nested too deeply" % deep))
    for extra, needle in cases:
        rc, out, err = explore(tessera, *(base + extra))
        expect(rc == 2, "%s: exit 2, got %d" % (extra, rc), out + err)
        expect(len(err.strip().splitlines()) == 1 and needle.replace(" ", "") in err.replace(" ", ""),
               "%s: one line naming %r" % (extra, needle), err)
    # A results folder that cannot be made: refused before any run.
    for out_dir in ("/proc/x/y", CLUSTER):
        rc, out, err = explore(tessera, *(base[:-1] + ["--out", out_dir]))
        expect(rc == 2 and len(err.strip().splitlines()) == 1 and "--out " + out_dir in err,
               "--out %s: exit 2 naming it, got %d" % (out_dir, rc), out + err)


def machines(tessera, work):
    for path in (NODE, CLUSTER):
        p = subprocess.run([tessera, "run", "--backend", "sim", "--machine", path, "--algo", "cholesky", "--n", "4608",
                            "--B", "1152", "--gpus", "4", "--grid", "1x1"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        expect(p.returncode == 0 and "gpus=4" in p.stdout, "%s runs" % path, p.stdout + p.stderr)
    p = subprocess.run([tessera, "run", "--backend", "sim", "--machine", CLUSTER, "--algo", "qr", "--n", "4608",
                        "--B", "1152", "--gpus", "4", "--grid", "2x2"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    expect(p.returncode == 0 and "grid=2x2" in p.stdout, "QR on 2x2 H100 nodes runs", p.stdout + p.stderr)


def ranking(tessera, work):
    sys.path.insert(0, os.path.join(ROOT, "experiments"))
    import explore as ex

    def row(label, time_s, status="ok", seed=""):
        return {"label": label, "machine_file": "m.json", "status": status, "time_s": time_s, "gflops": 100.0 / time_s,
                "noise_seed": seed, "error": "" if status == "ok" else "exit 4: out of memory"}

    # A point's seeds: the median time (not the mean: 2, 3 and 10 s give 3), their range; one failed seed fails it.
    merged = ex._median_over_seeds([row("a", 2.0, seed=1), row("a", 10.0, seed=2), row("a", 3.0, seed=3),
                                    row("b", 1.0, seed=1), row("b", 1.5, status="failed", seed=2), row("c", 4.0)])
    by = {r["label"]: r for r in merged}
    expect((by["a"]["time_s"], by["a"]["time_min_s"], by["a"]["time_max_s"], by["a"]["seeds"]) == (3.0, 2.0, 10.0, 3),
           "a's seeds merged at their median", str(by["a"]))
    expect(by["b"]["status"] == "failed" and by["b"]["error"].startswith("exit 4"),
           "a point with a failed seed is failed, with that seed's error", str(by["b"]))
    expect(by["c"]["seeds"] == "" and by["c"]["time_s"] == 4.0, "a point without noise is its one run", str(by["c"]))
    # The best against the second: 1.0 s against 1.25 s is 25% faster (the second takes 25% longer).
    text = ex.recommendation([row("fast", 1.0), row("next", 1.25), row("slow", 9.0)])
    expect(text.startswith("recommendation: fast: predicted 1 s") and "25.0% faster than the second best (next" in text,
           "the recommendation names the best and its margin over the second", text)
    # Equal times: ranked by label whatever the order given, and the recommendation says they tie.
    for order in (["y", "x"], ["x", "y"]):
        ranked = ex._ranked([row(order[0], 2.0), row("slow", 3.0), row(order[1], 2.0), row("bad", 1.0, "failed")])
        expect([r["label"] for r in ranked] == ["x", "y", "slow", "bad"], "ties ranked by label", str(ranked))
    text = ex.recommendation(ex._ranked([row("y", 2.0), row("x", 2.0), row("slow", 3.0)]))
    expect("x: predicted 2 s" in text and "tied with y" in text and "faster" not in text, "a tie is said", text)
    heatmap(work)


def heatmap(work):
    """explore.png marks the fastest successful point (B=128, 1 s; not B=256's 2 s nor the failed B=512) as the best:
    its cell (column 0, the tile sizes ascending) framed in red with a star, its label and time in the title."""
    from unittest import mock
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle
    import explore_plot

    def point(B, time_s, status="ok"):
        return {"label": "B=%d" % B, "B": B, "status": status, "time_s": time_s, "exit_status": 0 if time_s else 4}
    figures = []
    with mock.patch.object(explore_plot.plt, "close", figures.append):  # keep the figure to read it back
        explore_plot.draw([point(256, 2.0), point(128, 1.0), point(512, None, "failed"),
                           dict(point(1024, None, "timeout"), exit_status="")], [],
                          os.path.join(work, "heatmap.png"), "t")
    fig = [f for f in figures if isinstance(f, Figure)][0]  # pyplot closes "all" too as it sets up its backend
    ax = fig.axes[0]
    frames = [p.get_xy() for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()]
    stars = [tuple(line.get_xdata()) for line in ax.lines]
    crosses = [t.get_text() for t in ax.texts if t.get_text().startswith("x ")]
    explore_plot.plt.close(fig)
    expect(crosses == ["x 4", "x timeout"], "a failed point's exit status, a timed-out one's timeout", str(crosses))
    expect(ax.get_title() == "t\nbest: B=128, 1 s", "the title names the fastest point", ax.get_title())
    expect(frames == [(-0.5, -0.5)] and stars == [(0.38,)], "the fastest point's cell framed and starred",
           str((frames, stars)))


def values(tessera, work):
    sys.path.insert(0, os.path.join(ROOT, "experiments"))
    import explore_args as ea

    # A range includes STOP when a step lands on it, also where the steps' sum is a float off: (0.3 - 0.1) / 0.1
    # is 1.9999999999999998, and 0.1:0.3:0.1 is still three values; (0.7 - 0.1) / 0.2 four.
    for text, want in (("0.1:0.3:0.1", 3), ("0.1:0.7:0.2", 4), ("12.5e9:50e9:12.5e9", 4), ("1:10:4", 3),
                       ("2:2:1", 1)):
        got = ea.parse_values("--set x=" + text, text)
        expect(len(got) == want and abs(got[-1] - float(text.split(":")[0]) - (want - 1) * float(text.split(":")[2]))
               < 1e-9, "%s gives %d values" % (text, want), str(got))
    expect(ea.parse_values("x", "1:10:4") == [1, 5, 9], "integer ranges stay integers", "")
    expect(ea.parse_values("x", "64,128") == [64, 128], "a comma list", "")


if __name__ == "__main__":
    tessera, work, case = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    {"dry_run": dry_run, "sweep": sweep, "noise": noise, "bad_set": bad_set, "machines": machines,
     "ranking": ranking, "values": values}[case](tessera, work)
    print("ok")
