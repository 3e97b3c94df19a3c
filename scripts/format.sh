#!/usr/bin/env bash
# Lays out pes's own C and C++ sources with .clang-format (clang-format-19, the
# pinned LLVM's). `--check` changes nothing: it lists the files clang-format
# would change and exits 1 (the CI test style.clang_format), so the style
# cannot drift again.
# Programs under measurement (tests/e2e, bench/) are left alone: reports and
# tests name their source lines.
# Usage: scripts/format.sh [--check] [--clang-format PROGRAM]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
check=0
cf=clang-format-19
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1 ;;
    --clang-format) cf="$2"; shift ;;
    *) echo "format.sh: unknown argument '$1' (usage: format.sh [--check] [--clang-format PROGRAM])" >&2; exit 2 ;;
  esac
  shift
done
command -v "$cf" >/dev/null || { echo "format.sh: $cf not found (scripts/install-deps.sh installs it)" >&2; exit 2; }
cd "$root"
folders=(collector trace replay model llvm-pass tests/unit tests/fuzz)
sources() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z -- "${folders[@]/%//*.c}" "${folders[@]/%//*.h}" "${folders[@]/%//*.cpp}"
  else   # a tree without git (a release tarball)
    find "${folders[@]}" \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) -type f -print0
  fi
}
if [ $check -eq 0 ]; then
  sources | xargs -0 "$cf" --style=file -i
  exit 0
fi
bad=()
n=0
while IFS= read -r -d '' f; do
  n=$((n + 1))
  "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(sources)
if [ ${#bad[@]} -gt 0 ]; then
  echo "format.sh: ${#bad[@]} of $n file(s) differ from .clang-format (run scripts/format.sh):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format.sh: all $n C/C++ sources match .clang-format"
