#!/usr/bin/python3
"""Draw an experiment's figures (PNG and PDF) from its results folder.

Reads DIR/meta.json (the definition the results were run from) and
DIR/runs.jsonl, draws every plot of the definition's `plots` list with the
kind it names (analysis/figure_kinds.py) and writes DIR/figures/FILE.png and
FILE.pdf. Works on a results folder copied from another machine: nothing
else is read.

    /usr/bin/python3 analysis/plot_experiment.py results/experiments/001-fig11-imbalance
    tessera experiment plot 001-fig11-imbalance          # the same, by definition name
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import figure_kinds  # noqa: E402
from experiment_results import Results  # noqa: E402


def plot_results(out_dir, definition=None):
    """Draws every plot of `definition` (a definition's JSON object; default the one the
    results were run from, kept in meta.json); returns the files written."""
    results = Results(out_dir)
    defn = definition or results.definition
    fig_dir = os.path.join(out_dir, "figures")
    os.makedirs(fig_dir, exist_ok=True)
    written = []
    for spec in defn.get("plots", []):
        fig = figure_kinds.KINDS[spec["kind"]](results, spec, defn.get("reported", []))
        for ext in ("png", "pdf"):
            path = os.path.join(fig_dir, "%s.%s" % (spec["file"], ext))
            fig.savefig(path)
            written.append(path)
        plt.close(fig)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="an experiment's results folder (holding meta.json and runs.jsonl)")
    ap.add_argument("--definition", help="draw the plots of this definition file instead of meta.json's copy")
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.results, "meta.json")):
        print("plot_experiment.py: %s: no meta.json (not an experiment's results folder)" % a.results, file=sys.stderr)
        return 2
    doc = None
    if a.definition:
        with open(a.definition) as f:
            doc = json.load(f)
    for path in plot_results(a.results, doc):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
