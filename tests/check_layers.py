#!/usr/bin/env python3
"""Fails when a project #include crosses the layer order (CONTRIBUTING.md).

Layers, from the bottom; a file may include files of its own layer and of
the layers below it, never above:

  0 base         base/
  1 interfaces   kernels/*.hpp (tile_kernels_api.hpp; recursive_blocking.hpp, device-free algorithms both
                 kernel sets share), platform/*.hpp (the directory's own files)
  2 runtime      runtime/
  3 algorithms   algorithms/
  4 adapters     kernels/cpu/, kernels/cuda/, platform/native/, platform/simgrid/, models/
  5 experiments  experiments/ (the composition root: CLI, driver, calibration, peers)

Tests may include anything. Prints one line per crossing (file:line, the
include, both layers) and exits 1; exits 0 with a one-line summary otherwise.

Usage: check_layers.py [SOURCE_ROOT]   (default: the parent of this script's folder)
"""
import pathlib
import re
import sys

LAYERS = ["base", "interfaces", "runtime", "algorithms", "adapters", "experiments"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = ("*.hpp", "*.cpp", "*.cu", "*.cuh", "*.h")


def layer_of(path: str):
    """The layer index of a path relative to the source root; None outside the layers."""
    parts = path.split("/")
    top = parts[0]
    if top == "base":
        return 0
    if top == "kernels":
        if len(parts) == 2:
            return 1  # kernels/tile_kernels_api.hpp
        return 4 if parts[1] in ("cpu", "cuda") else None
    if top == "platform":
        if len(parts) == 2:
            return 1
        return 4 if parts[1] in ("native", "simgrid") else None
    if top == "runtime":
        return 2
    if top == "algorithms":
        return 3
    if top == "models":
        return 4
    if top == "experiments":
        return 5
    return None


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    crossings, files, includes = [], 0, 0
    for pattern in SOURCES:
        for f in sorted(root.rglob(pattern)):
            rel = f.relative_to(root).as_posix()
            if rel.startswith(("build", "tests/", ".")):
                continue
            mine = layer_of(rel)
            if mine is None:
                crossings.append(f"{rel}: is in no layer (add its folder to tests/check_layers.py and CONTRIBUTING.md)")
                continue
            files += 1
            for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                theirs = layer_of(target)
                if theirs is None:
                    if (root / target).exists() or "/" in target:
                        crossings.append(f"{rel}:{n}: includes \"{target}\", which is in no layer")
                    continue  # a header beside the file, found through its own folder
                includes += 1
                if theirs > mine:
                    crossings.append(f"{rel}:{n}: includes \"{target}\": layer {LAYERS[mine]} must not include "
                                     f"layer {LAYERS[theirs]} (order: {' -> '.join(LAYERS)})")
    for c in crossings:
        print(c)
    if crossings:
        print(f"check_layers: {len(crossings)} include(s) cross the layer order")
        return 1
    print(f"check_layers: {files} files, {includes} project includes, none crosses the layer order "
          f"({' -> '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
