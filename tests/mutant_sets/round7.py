"""Round 7: the command line and drivers, the runtime's headers and platforms, the analysis scripts and the StarPU
peer, each proposed by a reviewer who read code no mutant covered."""
from mutant_sets.common import *  # noqa: F401,F403 (m, the selections, the paths)

MUTANTS = [
]
