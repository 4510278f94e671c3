#!/usr/bin/env bash
# Installs TLE's missing Debian 12 build dependencies, then configures and builds build/ (idempotent).
#
# Usage: scripts/setup.sh            (from any directory; uses sudo for apt-get when not root)
#        scripts/setup.sh --fuzz-packages   (optional, for tests/fuzz/run.sh only: also installs clang-14
#                                            with libFuzzer, then stops before configuring)
# Environment: TLE_BUILD_DIR (default: <repo>/build), TLE_JOBS (default: all cores),
#              CUDAToolkit_ROOT (default: /usr/local/cuda when it exists; the toolkit is optional),
#              TLE_CMAKE_ARGS (extra arguments for the CMake configure step),
#              TLE_BUILD_TARGETS (build only these targets, e.g. "tlec tle-run"; default: everything).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TLE_BUILD_DIR:-$ROOT/build}"
JOBS="${TLE_JOBS:-$(nproc)}"

say() { printf 'setup: %s\n' "$*"; }

# --- 1. Packages: install only what dpkg does not already report as installed.
PACKAGES=(build-essential cmake ninja-build llvm-19-dev llvm-19-tools antlr4 libantlr4-runtime-dev
          default-jre-headless libfmt-dev libcli11-dev catch2 nlohmann-json3-dev libzstd-dev
          zlib1g-dev python3 pkgconf clang-19)
FUZZ_ONLY=0
if [[ "${1:-}" == "--fuzz-packages" ]]; then
  FUZZ_ONLY=1
  PACKAGES+=(clang-14 libclang-rt-14-dev)
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  say "dpkg-query not found: this script expects Debian 12 (bookworm); install the packages above by hand." >&2
  exit 1
fi

is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

missing=()
for pkg in "${PACKAGES[@]}"; do
  if is_installed "$pkg"; then continue; fi
  # ANTLR only needs a Java runtime; any installed JRE (e.g. openjdk-17-jre-headless) will do.
  if [[ "$pkg" == default-jre-headless ]] && command -v java >/dev/null 2>&1; then continue; fi
  missing+=("$pkg")
done

if ((${#missing[@]})); then
  SUDO=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { say "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=(sudo)
  fi
  say "installing: ${missing[*]}"
  "${SUDO[@]}" apt-get update
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
else
  say "all Debian packages present"
fi
if ((FUZZ_ONLY)); then
  exit 0
fi

# --- 2. Configure (Ninja, Release). An existing build directory keeps its generator.
CMAKE_ARGS=(-S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release)
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  CMAKE_ARGS+=(-G Ninja)
fi
CUDA_ROOT="${CUDAToolkit_ROOT:-}"
if [[ -z "$CUDA_ROOT" && -d /usr/local/cuda ]]; then
  CUDA_ROOT=/usr/local/cuda
fi
if [[ -n "$CUDA_ROOT" ]]; then
  CMAKE_ARGS+=("-DCUDAToolkit_ROOT=$CUDA_ROOT")
  say "CUDA toolkit: $CUDA_ROOT"
else
  say "no CUDA toolkit found (optional): tlec will emit PTX but not cubins"
fi
if [[ -n "${TLE_CMAKE_ARGS:-}" ]]; then
  read -r -a extra <<<"$TLE_CMAKE_ARGS"
  CMAKE_ARGS+=("${extra[@]}")
fi
say "configuring $BUILD_DIR"
cmake "${CMAKE_ARGS[@]}"

# --- 3. Build everything (compiler, runtime, tests, and every example for sm_80 and sm_90a), or
# only TLE_BUILD_TARGETS.
if [[ -n "${TLE_BUILD_TARGETS:-}" ]]; then
  read -r -a targets <<<"$TLE_BUILD_TARGETS"
  say "building ${targets[*]} with $JOBS jobs"
  cmake --build "$BUILD_DIR" -j "$JOBS" --target "${targets[@]}"
else
  say "building everything with $JOBS jobs"
  cmake --build "$BUILD_DIR" -j "$JOBS"
fi
say "build finished: $BUILD_DIR"
