#!/usr/bin/env bash
# Compiles the GPU tests' kernels for sm_80 to PTX, so that the sm_80 code paths (mma.sync,
# ldmatrix, cp.async pipelines without wgmma) run on a Hopper GPU: the driver JIT-compiles sm_80
# PTX for sm_90. Then:
#   build/tests/gpu/tle-gpu-kernel-tests --arch sm_80 --cubin-dir KERNEL_DIR
#   build/tests/gpu/tle-gpu-tests --arch sm_80 --cubin-dir EXAMPLE_DIR
#
# Usage: tests/gpu/sm80_ptx.sh KERNEL_DIR EXAMPLE_DIR [TLEC]   (from the repository root)
# KERNEL_DIR gets NAME.sm_80.ptx for every `# Build:` line of tests/gpu/kernels/*.tle;
# EXAMPLE_DIR gets NAME.sm_80.ptx for every examples/NAME.tle from its `# Compile: tlec` line, and
# one for each of its `# Variant: NAME ...` lines.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 KERNEL_DIR EXAMPLE_DIR [TLEC]" >&2; exit 2; }
kernels=$1 examples=$2 tlec=${3:-build/src/tlec}
mkdir -p "$kernels" "$examples"
re='^# Build: ([A-Za-z0-9_]+) -s "([^"]+)" -w ([0-9]+)$'
for src in tests/gpu/kernels/*.tle; do
  while IFS= read -r line; do
    [[ $line =~ $re ]] || { echo "$src: malformed line: $line" >&2; exit 1; }
    "$tlec" "$src" -s "${BASH_REMATCH[2]}" -w "${BASH_REMATCH[3]}" --arch sm_80 -o "$kernels/${BASH_REMATCH[1]}.sm_80.ptx"
  done < <(grep -E '^# Build: ' "$src")
done
for src in examples/*.tle; do
  line=$(grep -m1 -E '^# Compile: tlec ' "$src") || continue
  [[ $line =~ \ --arch\ ([a-z0-9_]+) && ${BASH_REMATCH[1]} != sm_80 ]] && continue # an sm_90a-only example (clusters)
  [[ $line =~ -s\ \"([^\"]+)\" ]] || { echo "$src: no -s in its Compile line" >&2; exit 1; }
  sig=${BASH_REMATCH[1]}
  warps=4
  [[ $line =~ \ -w\ ([0-9]+) ]] && warps=${BASH_REMATCH[1]}
  "$tlec" "$src" -s "$sig" -w "$warps" --arch sm_80 -o "$examples/$(basename "$src" .tle).sm_80.ptx"
  while IFS= read -r line; do # `# Variant: NAME -s "SIGNATURE" -w WARPS`: one more module
    [[ $line =~ ^#\ Variant:\ ([A-Za-z0-9_]+)\ -s\ \"([^\"]+)\"\ -w\ ([0-9]+)$ ]] || { echo "$src: malformed line: $line" >&2; exit 1; }
    "$tlec" "$src" -s "${BASH_REMATCH[2]}" -w "${BASH_REMATCH[3]}" --arch sm_80 -o "$examples/${BASH_REMATCH[1]}.sm_80.ptx"
  done < <(grep -E '^# Variant: ' "$src" || true)
done
echo "$(ls "$kernels" | wc -l) kernel modules in $kernels, $(ls "$examples" | wc -l) example modules in $examples"
