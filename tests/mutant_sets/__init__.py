"""The mutants of tests/mutants.py, one module per set; each defines MUTANTS."""
