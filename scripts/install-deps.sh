#!/usr/bin/env bash
# Installs every Debian 12 package pes needs to build, test and run its demo.
# Idempotent: packages already present are left alone. Needs root (or sudo).
set -euo pipefail

LLVM_VERSION=19   # one pinned LLVM; version-specific plugin API lives in llvm-pass/llvm_compat.h
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  "clang-${LLVM_VERSION}" "llvm-${LLVM_VERSION}-dev" "libclang-${LLVM_VERSION}-dev"
  "libomp-${LLVM_VERSION}-dev" "libclang-rt-${LLVM_VERSION}-dev"
  libzstd-dev zstd libpfm4-dev libgsl-dev libdw-dev libelf-dev libcmocka-dev
  libjansson-dev   # pes-replay writes and reads JSON reports with it (report.c, diff.c)
  libhwloc-dev hwloc   # pes-calibrate: cache geometry and sharing (model/calibrate/); lstopo exports test topologies
  "clang-format-${LLVM_VERSION}"   # scripts/format.sh and its CI check (style.clang_format)
  python3 python3-jsonschema jq
  python3-html5lib chromium   # --html: the e2e test parses the page and renders it headless (replay_html.sh)
  help2man man-db bash-completion   # man pages from --help; the install test reads them and the completion
  openmpi-bin libopenmpi-dev   # optional: pes-replay-mpi (built only when CMake finds MPI)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
