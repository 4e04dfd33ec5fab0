#!/usr/bin/env bash
# The tree follows .clang-format: exits 1 naming every C++/CUDA source that
# clang-format would change (one "code should be clang-formatted" warning per
# place), 0 when none would change.
# Usage: check_format.sh CLANG_FORMAT SOURCE_ROOT
set -uo pipefail
clang_format=$1 root=$2
cd "$root" || exit 2
[[ -f .clang-format ]] || { echo "check_format: no .clang-format in $root"; exit 1; }
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -d '' files < <(git ls-files -z -- '*.cpp' '*.hpp' '*.cu' '*.cuh')
else
  mapfile -d '' files < <(find base runtime algorithms kernels platform models experiments tests \
                               \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print0)
fi
[[ ${#files[@]} -gt 0 ]] || { echo "check_format: no sources found under $root"; exit 1; }
if "$clang_format" --style=file --dry-run --Werror "${files[@]}"; then
  echo "check_format: all ${#files[@]} sources follow .clang-format"
else
  echo "check_format: the files above differ from .clang-format; fix with:"
  echo "  git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | xargs clang-format -i"
  exit 1
fi
