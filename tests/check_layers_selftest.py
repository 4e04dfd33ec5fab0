#!/usr/bin/env python3
"""The layer checker finds what it must: a scratch tree with one include per
kind (allowed downward, same layer, upward, into no layer) must give exit 1
naming exactly the upward and the unknown ones with file and line."""
import pathlib
import subprocess
import sys
import tempfile

checker = sys.argv[1]
with tempfile.TemporaryDirectory() as d:
    root = pathlib.Path(d)
    files = {
        "base/a.hpp": '#pragma once\n#include <vector>\n',
        "runtime/r.hpp": '#pragma once\n#include "base/a.hpp"\n#include "platform/platform.hpp"\n',
        "runtime/r.cpp": '#include "runtime/r.hpp"\n\n#include "algorithms/x.hpp"\n',
        "algorithms/x.hpp": '#pragma once\n#include "runtime/r.hpp"\n',
        "models/m.cpp": '#include "algorithms/x.hpp"\n#include "experiments/e.hpp"\n',
        "experiments/e.hpp": '#pragma once\n#include "models/m.hpp"\n#include "nowhere/y.hpp"\n',
        "platform/platform.hpp": '#pragma once\n#include "base/a.hpp"\n',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    r = subprocess.run([sys.executable, checker, d], capture_output=True, text=True)
    out = r.stdout.splitlines()
    expected = ["runtime/r.cpp:3: includes \"algorithms/x.hpp\"", "models/m.cpp:2: includes \"experiments/e.hpp\"",
                "experiments/e.hpp:3: includes \"nowhere/y.hpp\", which is in no layer"]
    problems = []
    if r.returncode != 1:
        problems.append(f"exit {r.returncode}, expected 1")
    for e in expected:
        if not any(line.startswith(e) for line in out):
            problems.append(f"no line starting with: {e}")
    if len(out) != len(expected) + 1:
        problems.append(f"{len(out)} lines, expected {len(expected)} crossings and a total")
    if problems:
        print("\n".join(problems + ["--- output:"] + out))
        sys.exit(1)
    print("check_layers finds the 3 planted crossings and passes the 6 allowed includes")
