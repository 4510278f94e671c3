#!/usr/bin/env bash
# GPU checks for break/continue/early return, tl.device_print and tl.device_assert: runs the
# kernels of this directory with tle-run on the CPU target and on the GPU and compares.
#
# Usage: tests/gpu/control/check.sh [BUILD_DIR]   (default: build; needs a CUDA GPU)
# Exit status 0 when every check passes, 1 otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
run="$build/src/tle-run"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }

# x for control_flow: 6 rows of 16 (row 2 has a large element, row 4 a negative sum).
python3 - "$work/rows.npy" <<'PY'
import struct, sys
rows = [[1] * 16, [2] * 16, [60] + [1] * 15, [3] * 16, [-5] * 16, [4] * 16]
vals = [float(v) for r in rows for v in r]
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(vals)
hdr += ' ' * (64 - (10 + len(hdr) + 1) % 64) + '\n'
with open(sys.argv[1], 'wb') as f:
    f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<%df' % len(vals), *vals))
PY

# 1. Control flow: identical results on both targets, and the expected values.
cf=(-s "*fp32:16, *fp32:16, *fp32:16, i32, 16" --grid 4 --arg "x_ptr=$work/rows.npy"
    --arg out_ptr=full:-7:f32:64 --arg out2_ptr=zeros:f32:8 --arg n_rows=6 --print out_ptr --print out2_ptr -q)
"$run" "$here/control_flow.tle" "${cf[@]}" --target cpu > "$work/cf.cpu" 2>&1 || fail "control_flow on the cpu target"
"$run" "$here/control_flow.tle" "${cf[@]}" --target gpu > "$work/cf.gpu" 2>&1 || fail "control_flow on the gpu"
want="out2_ptr: fp32[8] = [16, 3, 19, 0, 1536, 1280, 1536, 0]"
if cmp -s "$work/cf.cpu" "$work/cf.gpu" && grep -qF "$want" "$work/cf.gpu"; then
  pass "control_flow: gpu == cpu"
else
  fail "control_flow: gpu differs from cpu"; diff "$work/cf.cpu" "$work/cf.gpu"
fi
for w in 1 8; do
  "$run" "$here/control_flow.tle" "${cf[@]}" -w $w --target gpu > "$work/cf.gpu$w" 2>&1
  cmp -s "$work/cf.cpu" "$work/cf.gpu$w" && pass "control_flow -w $w" || fail "control_flow -w $w differs from cpu"
done

# 2. device_print: the same set of lines on both targets (the GPU's order is unspecified).
pa=(-s "*fp32:16, i32, 16" --grid 2 --arg x_ptr=full:2.5:f32:32 --arg n=20 -q)
"$run" "$here/print_assert.tle" "${pa[@]}" --target cpu --threads 1 > "$work/p.cpu" 2>&1 || fail "print on the cpu target"
"$run" "$here/print_assert.tle" "${pa[@]}" --target gpu > "$work/p.gpu" 2>&1 || fail "print on the gpu"
sort "$work/p.cpu" > "$work/p.cpu.s"
sort "$work/p.gpu" > "$work/p.gpu.s"
if cmp -s "$work/p.cpu.s" "$work/p.gpu.s" && [ "$(wc -l < "$work/p.gpu.s")" -eq 102 ]; then
  pass "device_print: 102 lines, gpu == cpu"
else
  fail "device_print: gpu lines differ from cpu"; diff "$work/p.cpu.s" "$work/p.gpu.s" | head -20
fi

# 3. device_assert: passes, is compiled out without --debug, and aborts the launch when false.
"$run" "$here/print_assert.tle" "${pa[@]}" --debug --target gpu > /dev/null 2>&1 \
  && pass "device_assert: true everywhere" || fail "device_assert fired on valid input"
"$run" "$here/print_assert.tle" -s "*fp32:16, i32, 16" --grid 2 --arg x_ptr=full:500:f32:32 --arg n=20 -q \
  --target gpu > /dev/null 2>&1 && pass "device_assert: compiled out without --debug" \
  || fail "device_assert without --debug"
"$run" "$here/print_assert.tle" -s "*fp32:16, i32, 16" --grid 2 --arg x_ptr=full:500:f32:32 --arg n=20 -q \
  --debug --target gpu > "$work/a.gpu" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "Assertion .x too big. failed" "$work/a.gpu"; then
  pass "device_assert: the launch fails with the message (exit $rc)"
else
  fail "device_assert: expected a failed launch and 'Assertion \`x too big\` failed' (exit $rc)"; tail -5 "$work/a.gpu"
fi

echo "$fails failure(s)"
[ $fails -eq 0 ]
