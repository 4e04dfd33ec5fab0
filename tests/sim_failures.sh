#!/usr/bin/env bash
# Simulated failures (issue 17 point 2, --fail): a node of a simulated 2x2
# cluster turned off at 0.5 s of simulated time ends the run with exit 5 and
# one line naming the node, the time and the nodes that stop; a node's link
# turned off ends it when a message crosses it, naming the link and both
# times; a GPU's PCIe link the same for a copy; the same on real data with
# --check; a failure after the run's end never happens (exit 0, a line says
# so); bad --fail values and --fail without --backend sim exit 2 naming the
# option and the value. Every run within 10 s, no summary line on failure.
# Usage: sim_failures.sh TESSERA MACHINE_FILE
set -u
tessera=$1 machine=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

run() {  # name, expected status, expected line (regex), expected count of that line, command...
  local name=$1 rc=$2 line=$3 count=$4
  shift 4
  timeout 10 "$@" > "$dir/out" 2> "$dir/err"
  local got=$?
  [ "$got" = "$rc" ] || { cat "$dir/out" "$dir/err"; fail "$name: exit $got, expected $rc (124: still running after 10 s)"; }
  local seen
  seen=$(cat "$dir/out" "$dir/err" | grep -c -E "$line")
  [ "$seen" = "$count" ] || { cat "$dir/out" "$dir/err"; fail "$name: $seen lines match '$line', expected $count"; }
  if [ "$rc" != 0 ]; then
    grep -q "backend=" "$dir/out" && fail "$name: a failed run printed a summary line"
    [ "$(wc -l < "$dir/err")" = 1 ] || { cat "$dir/err"; fail "$name: stderr is not one line"; }
  fi
  echo "ok: $name"
}

# Cholesky, n = 8000, on a simulated 2x2 Keeneland cluster: 2.28 s of
# simulated time, phantom kernels (a fraction of a second of wall time).
sim=("$tessera" run --backend sim --machine "$machine" --grid 2x2 --algo cholesky --n 8000 --threads 2)
t='0\.5[0-9]*'

run node_2x2 5 "^tessera: error: simulated failure \(--fail node2@0\.5\): node2 was turned off at 0\.5 s of simulated time; node0, node1 and node3 stop$" 1 \
  "${sim[@]}" --fail node2@0.5
run node0_at_start 5 "^tessera: error: simulated failure \(--fail node0@0\): node0 was turned off at 0 s of simulated time; node1, node2 and node3 stop$" 1 \
  "${sim[@]}" --fail node0@0
run link_2x2 5 "^tessera: error: node [0-3]: simulated failure \(--fail link:node1-net@0\.5\): link node1-net was turned off at 0\.5 s of simulated time; a message from node [0-3] to node [0-3] was lost at $t s$" 1 \
  "${sim[@]}" --fail link:node1-net@0.5
# A message lost on node 1's link involves node 1.
grep -q -E "(from node 1 to node [0-3]|from node [0-3] to node 1) was lost" "$dir/err" || fail "link_2x2: the lost message is not node 1's"
# One node with two simulated GPUs: the second GPU's PCIe link.
run pcie_one_node 5 "^tessera: error: simulated failure \(--fail link:node0-gpu2-pcie@0\.3\): link node0-gpu2-pcie was turned off at 0\.3 s of simulated time; a copy (to|from) GPU 2 of node0 \(simulated\) was lost at 0\.3[0-9]* s$" 1 \
  "$tessera" run --backend sim --machine "$machine" --algo cholesky --n 8000 --threads 2 --gpus 2 --fail link:node0-gpu2-pcie@0.3
# On real data with --check (the factorization takes 7.5 ms of simulated time).
data=("$tessera" run --backend sim --machine "$machine" --grid 2x2 --algo cholesky --n 1000 --B 100 --threads 2 --sim-data --check)
run node_sim_data 5 "^tessera: error: simulated failure \(--fail node3@0\.003\): node3 was turned off at 0\.003 s of simulated time; node0, node1 and node2 stop$" 1 \
  "${data[@]}" --fail node3@0.003
run link_sim_data 5 "^tessera: error: node [0-3]: simulated failure \(--fail link:node3-net@0\.003\): link node3-net was turned off at 0\.003 s of simulated time; a message from node [0-3] to node [0-3] was lost at 0\.003[0-9]* s$" 1 \
  "${data[@]}" --fail link:node3-net@0.003

# After the run's end: nothing happens, the run succeeds and says so.
run after_end 0 "^failure: --fail node2@100 never happened: the run ended at 2\.[0-9]+ s of simulated time, before it$" 1 \
  "${sim[@]}" --fail node2@100
grep -q -E "^cholesky +tile d 8000x8000 .* grid=2x2 .* backend=sim .* unchecked$" "$dir/out" || fail "after_end: no summary line"
run after_end_checked 0 "^failure: --fail link:node3-net@10 never happened: the run ended at 0\.00[0-9]+ s of simulated time, before it$" 1 \
  "${data[@]}" --fail link:node3-net@10
grep -q -E "^cholesky +tile d 1000x1000 .* ok$" "$dir/out" || fail "after_end_checked: the check did not pass"

# Bad values: exit 2, the option and the value named, nothing run.
escape() { printf '%s' "$1" | sed 's/[].[*^$()+?{}|\\]/\\&/g'; }
bad() {  # name, --fail value, the message after "tessera: error: --fail VALUE: " (regex)
  run "bad_$1" 2 "^tessera: error: --fail $(escape "$2"): $3" 1 "${sim[@]}" --fail "$2"
}
bad unknown_node node4@0.5 "node4 is not a node of this run \(its nodes: node0 to node3\)$"
bad negative_time node2@-1 "the time -1 s is negative"
bad no_time node2 "expected nodeK@SECONDS or link:NAME@SECONDS"
bad not_a_time node2@soon "'soon' is not a time in seconds$"
bad infinite_time node2@inf "'inf' is not a time in seconds$"
bad neither gpu0@1 "'gpu0' is neither a node \(nodeK\) nor a link \(link:NAME\)$"
bad unknown_link link:node7-net@1 "this run has no link node7-net \(its links: node0-net to node3-net\)$"
bad pcie_without_gpus link:node0-gpu1-pcie@1 "this run has no link node0-gpu1-pcie"
run native_backend 2 "^tessera: error: --fail node1@0\.5 turns off a host or link of a simulated machine: add --backend sim --machine FILE$" 1 \
  "$tessera" run --algo cholesky --n 200 --fail node1@0.5
echo "simulated failures: 17 cases pass"
