"""tessera's experiment runner: paper figures as definition files, run, plotted and reported.

Modules: `expr` (the expressions of derived parameters and metrics), `definition`
(loading, validating and expanding a definition file), `execute` (running a
sweep: resume, results files), `processes` (each run's process group, killed
with the runner; the results folder's lock), `progress` (the terminal progress
bar), `report` (experiments/REPRODUCTION.md from the results). The command
line is experiments/experiment.py.
"""
