#!/usr/bin/python3
"""The critical path of a tessera trace: the longest dependency chain of the tasks that ran.

The task DAG is rebuilt from the tiles each task event lists in `args.tiles`
(mode "r", "w" or "rw"; a tile is {"i", "j"}, an algorithm's extra datum
{"panel"}). A node's tasks sorted by start time, then end time, are a
topological order of what ran: a task reading a tile version starts after the
version's writer ended, and a tile's writers run one after another (the
runtime orders write-after-read and write-after-write instead of renaming).
Tasks with the same start and end (zero-length tasks at one instant, such as
a simulated LU's row moves) are not ordered by time; among them a task comes
after one that writes a datum it only reads, and otherwise by step, kernel
name, worker and arguments, never by their order in the file (which is the
merge of the workers' buffers, not the order the tasks were made in). Walking
that order and keeping, per tile, its last writer and the readers since, a
task depends on

  - the last writer of every tile it accesses (read-after-write, and
    write-after-write for the tiles it writes), and
  - for every tile it writes, the readers since that writer (write-after-read).

The critical path is the longest path through that DAG with each task weighted
by its own duration: the time the run needs with unlimited workers and its
tasks' durations as they were. Against the makespan it says how much of the
run was forced by dependencies rather than by too few workers (CP/makespan near
1: the run is latency-bound; near 0: it had parallelism to spare).

Each node (pid) of a distributed run is one DAG of its own (the messages
between nodes are not followed), so the trace's critical path is the longest
of its nodes'.

    /usr/bin/python3 analysis/trace_critical_path.py TRACE.json [TRACE.node1.json ...]
"""
import argparse
import collections
import heapq
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # its siblings, under PYTHONSAFEPATH too
from trace_summary import TraceError, fail, load_all, run_main  # noqa: E402


def task_events(events):
    """The trace's task events ("X" events of category "task")."""
    return [e for e in events if e.get("ph") == "X" and e.get("cat") == "task"]


def accesses(event):
    """tile key -> (reads, writes) of one task event; a tile listed twice merges its modes."""
    out = {}
    for t in event.get("args", {}).get("tiles", []):
        key = tuple(sorted((k, v) for k, v in t.items() if k != "mode"))
        mode = t.get("mode", "rw")
        r, w = out.get(key, (False, False))
        out[key] = (r or "r" in mode, w or "w" in mode)
    return out


def _canonical(e):
    """A sort key of a task event that does not depend on where the file lists it: step, kernel, worker, arguments."""
    k = e.get("args", {}).get("k")
    return (k if isinstance(k, int) and not isinstance(k, bool) else -1, e["name"], e["tid"],
            json.dumps(e.get("args", {}), sort_keys=True))


def _order_tie(group):
    """Tasks of one start and end time in an order of their data: a task after any of the group that writes a datum
    it only reads (the version it read was that task's), the others by _canonical(); a cycle is broken the same way."""
    if len(group) < 2:
        return group
    tiles = [accesses(e) for e in group]
    writers = collections.defaultdict(list)
    for n, acc in enumerate(tiles):
        for key, (_, writes) in acc.items():
            if writes:
                writers[key].append(n)
    after = [set() for _ in group]  # after[n]: the tasks n must follow
    for n, acc in enumerate(tiles):
        for key, (reads, writes) in acc.items():
            if reads and not writes:
                after[n].update(w for w in writers.get(key, ()) if w != n)
    keys = [_canonical(e) for e in group]
    waiting = [len(a) for a in after]
    followers = collections.defaultdict(list)
    for n, a in enumerate(after):
        for m in a:
            followers[m].append(n)
    ready = [(keys[n], n) for n in range(len(group)) if not waiting[n]]
    heapq.heapify(ready)
    out, placed = [], [False] * len(group)
    while len(out) < len(group):
        if ready:  # a task enters the heap once, when its last predecessor is placed
            n = heapq.heappop(ready)[1]
        else:  # a cycle: the first of the rest by key goes next
            n = min((m for m in range(len(group)) if not placed[m]), key=lambda m: keys[m])
        placed[n] = True
        out.append(group[n])
        for m in followers[n]:
            waiting[m] -= 1
            if waiting[m] == 0 and not placed[m]:
                heapq.heappush(ready, (keys[m], m))
    return out


def in_order(tasks):
    """One node's task events in a topological order that does not depend on the file's order of events: by start,
    then end time, tasks of one start and end time by _order_tie()."""
    groups = collections.defaultdict(list)
    for e in tasks:
        groups[(e["ts"], e["ts"] + e["dur"])].append(e)
    return [e for t in sorted(groups) for e in _order_tie(groups[t])]


def predecessors(tasks):
    """For tasks in a topological order: per task, the indices of the tasks it depends on."""
    last_writer, readers = {}, collections.defaultdict(list)
    preds = []
    for n, e in enumerate(tasks):
        mine, tiles = set(), accesses(e)
        for key, (_, writes) in tiles.items():
            if key in last_writer:
                mine.add(last_writer[key])
            if writes:
                mine.update(readers[key])
        for key, (_, writes) in tiles.items():
            if writes:
                last_writer[key] = n
                readers[key] = []
            else:
                readers[key].append(n)
        mine.discard(n)
        preds.append(sorted(mine))
    return preds


def longest_path(tasks, preds):
    """(length in us, task indices on it, first to last) of the heaviest chain, each task weighted by its dur."""
    finish, via = [], []
    for n, e in enumerate(tasks):
        best = max(preds[n], key=lambda p: finish[p], default=None)
        finish.append(e["dur"] + (finish[best] if best is not None else 0.0))
        via.append(best)
    if not tasks:
        return 0.0, []
    end = max(range(len(tasks)), key=lambda n: finish[n])
    path = []
    while end is not None:
        path.append(end)
        end = via[end]
    return finish[path[0]], path[::-1]


def node_critical_path(tasks):
    """The critical path of one node's task events: length, task count, kernels on it, makespan, in seconds."""
    order = in_order(tasks)
    length_us, path = longest_path(order, predecessors(order))
    span_us = max(e["ts"] + e["dur"] for e in order) - min(e["ts"] for e in order) if order else 0.0
    kernels = collections.Counter(order[n]["name"] for n in path)
    return {"critical_path_s": length_us / 1e6, "tasks": len(path), "kernels": dict(kernels.most_common()),
            "makespan_s": span_us / 1e6, "ratio": length_us / span_us if span_us > 0 else None,
            "dag_tasks": len(order)}


def critical_path(events):
    """The trace's critical path (its longest node's) with every node's, as a JSON-ready dict.

    critical_path_s, tasks (on the path), kernels (their count per kernel) and node
    are those of the node with the longest path; makespan_s is the whole trace's
    (first task start to last task end over all nodes) and ratio is
    critical_path_s / makespan_s. nodes lists node_critical_path() of each pid.
    """
    tasks = task_events(events)
    by_node = collections.defaultdict(list)
    for e in tasks:
        by_node[e.get("pid", 0)].append(e)
    nodes = [dict(node=pid, **node_critical_path(by_node[pid])) for pid in sorted(by_node)]
    span_us = max(e["ts"] + e["dur"] for e in tasks) - min(e["ts"] for e in tasks) if tasks else 0.0
    top = max(nodes, key=lambda r: r["critical_path_s"], default=None)
    cp_s = top["critical_path_s"] if top else 0.0
    return {"critical_path_s": cp_s, "tasks": top["tasks"] if top else 0, "kernels": top["kernels"] if top else {},
            "node": top["node"] if top else None, "makespan_s": span_us / 1e6,
            "ratio": cp_s / (span_us / 1e6) if span_us > 0 else None, "nodes": nodes}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="+", help="trace files: one, or every node's of a distributed run")
    a = ap.parse_args()
    try:
        c = critical_path(load_all(a.trace)[1])
    except TraceError as e:
        return fail("trace_critical_path.py", e)
    print("critical path %.6f s, %d tasks (node %s), makespan %.6f s, CP/makespan %s" % (
        c["critical_path_s"], c["tasks"], c["node"], c["makespan_s"],
        "%.3f" % c["ratio"] if c["ratio"] is not None else "-"))
    print("kernels on it: %s" % ", ".join("%s %d" % kv for kv in c["kernels"].items()))
    return 0


if __name__ == "__main__":
    run_main(main)
