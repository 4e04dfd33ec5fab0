#!/usr/bin/python3
"""Draw an experiment's figures (PNG and PDF) from its results folder.

Reads DIR/meta.json (the definition the results were run from) and
DIR/runs.jsonl, draws every plot of the definition's `plots` list with the
kind it names (analysis/figure_kinds.py) and writes DIR/figures/FILE.png and
FILE.pdf. Works on a results folder copied from another machine: nothing
else is read. meta.json's definition is checked as a definition file is
(its plots and reported entries: kinds, keys, types), and a folder without a
single run recorded is refused: one line naming the file, key and value,
exit status 2.

    /usr/bin/python3 analysis/plot_experiment.py results/experiments/001-fig11-imbalance
    tessera experiment plot 001-fig11-imbalance          # the same, by definition name
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # its siblings, under PYTHONSAFEPATH too
import figure_kinds  # noqa: E402
from experiment_results import Results, ResultsError, read_meta  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments"))
from runner import outputs  # noqa: E402
from runner.definition import DefinitionError, check_figures, display_path, load as load_definition  # noqa: E402


def shown_spec(spec, meta):
    """The plot as drawn: a quick sweep's says so in its title, with the parameters its quick section sets otherwise
    than the full sweep (derived or fixed), since labels written for the full sweep (N = 34,560 x sqrt(nodes)) would
    misname its points."""
    if not meta.get("quick"):
        return spec
    doc = meta.get("definition") or {}
    quick = doc.get("quick") or {}
    changed = []
    for key in ("derived", "fixed"):
        full, fast = doc.get(key) or {}, quick.get(key) or {}
        changed += ["%s = %s" % (k, fast[k]) for k in sorted(fast) if full.get(k) != fast[k]]
    shown = dict(spec)
    shown["title"] = "%s [quick sweep%s]" % (spec["title"], ": " + ", ".join(changed) if changed else "")
    return shown


def plot_results(out_dir, definition=None):
    """Draws every plot of `definition` (a definition's JSON object; default the one the
    results were run from, kept in meta.json); returns the files written. A definition
    of another experiment than the results', or a `figures` that is no folder, is a ResultsError."""
    results = Results(out_dir)
    defn = definition or results.definition
    meta_path = os.path.join(out_dir, "meta.json")
    if definition is None:  # meta.json's copy, which no one validated since it was written
        try:
            check_figures(meta_path, defn)
        except DefinitionError as e:
            shown = display_path(meta_path) + ": "
            raise ResultsError(str(e).replace(shown, shown + "definition.", 1) if not str(e).startswith(
                shown + "definition") else str(e))
    if not results.groups:
        raise ResultsError("%s: no run recorded (runs.jsonl missing or empty, or none of meta.json's configs): "
                           "nothing to draw" % out_dir)
    ran = results.meta.get("experiment")
    if definition and ran and definition.get("name") and definition["name"] != ran:
        raise ResultsError("%s: results of %s, not of the definition given (%s)" % (
            os.path.join(out_dir, "meta.json"), ran, definition["name"]))
    fig_dir = os.path.join(out_dir, "figures")
    why = outputs.folder_problem(fig_dir)
    if why:
        raise ResultsError("%s: %s (the figures go there)" % (fig_dir, why))
    written = []
    for spec in defn.get("plots", []):
        fig = figure_kinds.KINDS[spec["kind"]](results, shown_spec(spec, results.meta), defn.get("reported", []))
        for ext in ("png", "pdf"):
            path = os.path.join(fig_dir, "%s.%s" % (spec["file"], ext))
            outputs.save_figure(fig, path)  # through a temporary renamed over the last figure
            written.append(path)
        plt.close(fig)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="an experiment's results folder (holding meta.json and runs.jsonl)")
    ap.add_argument("--definition", help="draw the plots of this definition file instead of meta.json's copy")
    a = ap.parse_args()
    try:
        if not os.path.isfile(os.path.join(a.results, "meta.json")):
            raise ResultsError("%s: no meta.json (not an experiment's results folder)" % a.results)
        doc = None
        if a.definition:
            if not os.path.isfile(a.definition):
                raise ResultsError("--definition %s: %s" % (a.definition, "is a folder, not a definition file"
                                                            if os.path.isdir(a.definition) else "no such file"))
            doc = load_definition(a.definition).doc
            ran = read_meta(a.results).get("experiment")
            if ran and ran != doc["name"]:
                raise ResultsError("--definition %s: the definition of %s, but %s holds results of %s" % (
                    a.definition, doc["name"], a.results, ran))
        for path in plot_results(a.results, doc):
            print(path)
    except (ResultsError, DefinitionError) as e:
        print("plot_experiment.py: %s" % e, file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise  # run_main's
    except OSError as e:  # a figure that could not be written (a full disk): the file and why
        print("plot_experiment.py: %s" % outputs.os_error_line(e), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    outputs.run_main(main)
