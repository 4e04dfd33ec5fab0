#!/bin/bash
# Under mpirun every rank writes its own trace: node 0 to FILE, node k to FILE
# with ".nodeK" before the extension. Runs QR on a 1x2 grid with --trace and
# passes when both files are valid trace JSON, each names only its own node
# (pid), together they hold every kernel of the factorization exactly once
# (the same (kernel, k, i, j) events as a one-node run's trace), and each holds
# one "node" transfer per message its node received, with the bytes the
# run's JSON counts for that node, each lasting its measured transit.
#   mpi_traces.sh MPIEXEC TESSERA
set -u
mpiexec=$1 tessera=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=(run --algo qr --n 500 --B 64 --threads 1)
"$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$tessera" "${args[@]}" --grid 1x2 --trace "$dir/run.json" --json "$dir/run-result.json" \
  >"$dir/out" 2>&1 || { cat "$dir/out"; echo "FAIL: mpirun exit status"; exit 1; }
"$tessera" "${args[@]}" --trace "$dir/one.json" >"$dir/out1" 2>&1 || { cat "$dir/out1"; echo "FAIL: one-node run"; exit 1; }
for f in run.json run.node1.json one.json; do
  [[ -s $dir/$f ]] || { ls -l "$dir"; echo "FAIL: $f missing or empty"; exit 1; }
done
python3 - "$dir" <<'PY'
import collections, json, sys
d = sys.argv[1]
def kernels(path, pid):
    events = json.load(open(path))["traceEvents"]
    pids = {e["pid"] for e in events if "pid" in e}
    if pids != {pid}:
        sys.exit(f"FAIL: {path} names nodes {sorted(pids)}, expected only {pid}")
    return collections.Counter((e["name"], e["args"]["k"], e["args"]["i"], e["args"]["j"])
                               for e in events if e.get("cat") == "task")
n0, n1, one = kernels(f"{d}/run.json", 0), kernels(f"{d}/run.node1.json", 1), kernels(f"{d}/one.json", 0)
if not n0 or not n1:
    sys.exit(f"FAIL: a node traced no kernel ({sum(n0.values())}, {sum(n1.values())})")
if n0 + n1 != one or max((n0 + n1).values()) != 1:
    sys.exit(f"FAIL: nodes traced {sum(n0.values())} + {sum(n1.values())} kernels, one node {sum(one.values())}")
per_node = json.load(open(f"{d}/run-result.json"))["comm"]["per_node"]
for node, path in ((0, f"{d}/run.json"), (1, f"{d}/run.node1.json")):
    msgs = [e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "transfer"]
    want = per_node[node]
    got_bytes = sum(e["args"]["bytes"] for e in msgs)
    if len(msgs) != want["messages_received"] or got_bytes != want["bytes_received"]:
        sys.exit(f"FAIL: node {node} traced {len(msgs)} messages, {got_bytes} bytes; "
                 f"the run counted {want['messages_received']}, {want['bytes_received']}")
    # A message's event lasts its measured transit (probe to completion): never nothing.
    bad = [e for e in msgs if e["args"]["kind"] != "node" or e["args"]["to"] != node or e["args"]["from"] == node
           or e["dur"] <= 0]
    if bad:
        sys.exit(f"FAIL: node {node}: message events that are not from the other node to this one, "
                 f"or without a transit time: {bad[:2]}")
print(f"ok: node 0 traced {sum(n0.values())} kernels, node 1 {sum(n1.values())}, one node {sum(one.values())}")
PY
