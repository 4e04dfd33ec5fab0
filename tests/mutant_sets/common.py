"""What every set of mutants shares: the mutant's form, the test selections and the files named often."""


CORE = '-L "unit|runtime|sim|numerics"'
WITH_CLI = '-L "unit|runtime|sim|numerics|cli"'
SCRIPTS = "-L experiments"


def m(name, path, old, new, tests=CORE, why=""):
    return {"name": name, "file": path, "old": old, "new": new, "tests": tests, "why": why}


PS, TW, DI = "runtime/protocol_sink.cpp", "runtime/task_window.cpp", "runtime/distribution.cpp"
LU, QT, CM = "kernels/cpu/lu_kernels.cpp", "algorithms/qr_tree.cpp", "models/comm_model.cpp"
KM, KN, SG = "models/kernel_model.cpp", "models/kernel_noise.cpp", "platform/simgrid/simgrid_platform.cpp"
RQ, KT, RP = "runtime/ready_queue.cpp", "base/kernel_table.hpp", "experiments/runner/report.py"
ER, HF, EX = "analysis/experiment_results.py", "experiments/heldout_floor.py", "experiments/explore.py"
TS, TC, L2 = "analysis/trace_summary.py", "analysis/trace_compare.py", "experiments/lu_002_sim.py"
REPORT = '-R "experiments_(report|runner|quick|results)"'
DF, EXR = "experiments/runner/definition.py", "experiments/runner/expr.py"
DEFS = '-R "experiments_(definitions|runner)"'
GP, GC = "experiments/gpu_predict.py", "analysis/gpu_clocks.py"
BG = "experiments/bench_gpu.py"
BC = "experiments/bench_cpu.py"
BS = "experiments/bench_starpu.py"
TV, EA, FK = "experiments/tune_validate.py", "experiments/explore_args.py", "analysis/figure_kinds.py"
TD, XP, BM = "analysis/trace_devices.py", "experiments/experiment.py", "experiments/bench_mpi.py"
PRIO = "{ return lexicographic_priority(q, q - out_col, q - k); }"
