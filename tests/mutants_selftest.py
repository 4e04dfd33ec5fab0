#!/usr/bin/env python3
"""mutants.py --current finds what makes a mutant meaningless: on a scratch tree, one mutant whose text occurs
twice, one whose text is gone, one whose file is gone, a name given twice, and (with a build folder) a test
selection that matches no test must each be named, and the one sound mutant must not."""
import importlib.util
import sys
import pathlib
import tempfile

spec = importlib.util.spec_from_file_location("mutants", sys.argv[1])
mutants = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutants)
build = sys.argv[2]
with tempfile.TemporaryDirectory() as d:
    root = pathlib.Path(d)
    (root / "a.cpp").write_text("int f() { return 1; }\nint g() { return 1; }\nint h() { return 2; }\n")
    chosen = [
        {"name": "sound", "file": "a.cpp", "old": "return 2;", "new": "return 3;", "tests": '-L "unit"'},
        {"name": "twice", "file": "a.cpp", "old": "return 1;", "new": "return 0;", "tests": '-L "unit"'},
        {"name": "gone", "file": "a.cpp", "old": "return 4;", "new": "return 0;", "tests": '-L "unit"'},
        {"name": "no_file", "file": "b.cpp", "old": "x", "new": "y", "tests": '-L "unit"'},
        {"name": "sound", "file": "a.cpp", "old": "int h()", "new": "int k()", "tests": '-L "unit"'},
        {"name": "no_tests", "file": "a.cpp", "old": "int g()", "new": "int k()", "tests": '-R "^no_such_test$"'},
    ]
    found = mutants.problems(chosen, d, build)
    expected = ["twice: its text occurs 2 times in a.cpp", "gone: its text occurs 0 times in a.cpp",
                "no_file: no file b.cpp", "sound: the name is given twice",
                'no_tests: its tests -R "^no_such_test$" select no test']
    missing = [e for e in expected if not any(p.startswith(e) for p in found)]
    if missing or len(found) != len(expected):
        print("expected:\n  " + "\n  ".join(expected) + "\nfound:\n  " + "\n  ".join(found))
        sys.exit(1)
    without_build = mutants.problems(chosen, d)
    if any("select no test" in p for p in without_build) or len(without_build) != len(expected) - 1:
        print("without a build folder the selections must go unchecked:\n  " + "\n  ".join(without_build))
        sys.exit(1)
print("mutants.py --current names the %d planted problems and passes the sound mutant" % len(expected))
