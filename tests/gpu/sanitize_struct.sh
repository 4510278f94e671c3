#!/usr/bin/env bash
# compute-sanitizer over every TLE-Struct kernel the GPU checks run: the warp-specialisation,
# copy, pipe, barrier and sub-mesh barrier suites (each suite's tle-run calls wrapped in the
# sanitizer, so every kernel of the suite is checked with its own inputs and its results still
# compared), the struct GEMM variants of bench/struct_gemm/matmul_struct_ws.tle at a ragged shape,
# examples/attention_fa3.tle (causal and not, head dims 64, 128 and 256), and the examples that use
# tle.gpu through the PyTorch bridge. One line per check: PASS when the tool reports nothing and
# the check's own comparison holds. The GEMMs run in bf16 (TLE_SANITIZE_DTYPES="fp16 bf16" adds
# fp16: the same code but for the dtype).
# Usage: tests/gpu/sanitize_struct.sh TOOL BUILD_DIR [SOURCE_DIR]   (TOOL: memcheck, racecheck, synccheck)
# TLE_SANITIZE_PARTS (default "suites gemm fa3 bridge") picks the parts to run.
# Exit 1 when any check fails or the tool reports an error; 77 without a GPU.
set -uo pipefail
TOOL="$1" BUILD="$(cd "$2" && pwd)"
SRC="${3:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
# --report-api-errors no: the runtime asks the driver for the parameter after a kernel's last one
# (cuFuncGetParamInfo, CUDA_ERROR_INVALID_VALUE expected) to check the module's metadata.
CS=(compute-sanitizer --tool "$TOOL" --error-exitcode 9 --print-limit 20 --report-api-errors no)
command -v compute-sanitizer >/dev/null || { echo "SKIPPED: no compute-sanitizer"; exit 77; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# tle-run under the sanitizer, as the suites call it.
cat > "$TMP/tle-run" <<EOF
#!/usr/bin/env bash
exec ${CS[*]} "$BUILD/src/tle-run" "\$@"
EOF
chmod +x "$TMP/tle-run"
status=0
PARTS=" ${TLE_SANITIZE_PARTS:-suites gemm fa3 bridge} "
for suite in ws copy pipe barriers submesh_barrier; do
  [[ $PARTS == *" suites "* ]] || break
  out="$(bash "$SRC/tests/gpu/${suite}_gpu.sh" "$TMP/tle-run" "$SRC" 2>&1)"
  rc=$?
  [ $rc -eq 77 ] && { echo "SKIPPED: no GPU"; exit 77; }
  echo "$out" | grep -E "^(PASS|FAIL)" | sed "s/^/$suite: /"
  grep -E "========= (ERROR|Race|Error|Warning|.*hazard)" <<<"$out" | head -20
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" <<<"$out" | sort | uniq -c
  [ $rc -ne 0 ] && { echo "FAIL  suite $suite (exit $rc)"; status=1; }
done
run() {  # run NAME TLE-RUN-ARGUMENTS...: one kernel under the sanitizer, random inputs
  local name="$1" out rc
  shift
  out="$("${CS[@]}" "$BUILD/src/tle-run" -q --target gpu "$@" 2>&1)"
  rc=$?
  if [ $rc -eq 0 ]; then echo "PASS  $name"; else echo "FAIL  $name (exit $rc)"; echo "$out" | tail -30; status=1; fi
}
GEMM="$SRC/bench/struct_gemm/matmul_struct_ws.tle"
M=400 N=528 K=336
for dt in ${TLE_SANITIZE_DTYPES:-bf16}; do
  [[ $PARTS == *" gemm "* ]] || break
  ab="--arg a_ptr=rand:${M}x$K --arg b_ptr=rand:${K}x$N --arg c_ptr=zeros:${M}x$N --arg M=$M --arg N=$N --arg K=$K"
  base="*$dt:16, *$dt:16, *$dt:16, i32, i32:16, i32:16, 128, 256, 64"
  # shellcheck disable=SC2086
  {
    run "gemm ws $dt" "$GEMM" -n matmul_struct_ws -w 8 -s "$base, 3" --grid "4, 3" $ab
    run "gemm persistent $dt" "$GEMM" -n matmul_struct_ws_persistent -w 8 -s "$base, 3" --grid 5 $ab
    run "gemm persistent 4 stages, split epilogue $dt" "$GEMM" -n matmul_struct_ws_persistent -w 8 -s "$base, 4, 2" --grid 5 $ab
    run "gemm persistent TMA epilogue $dt" "$GEMM" -n matmul_struct_ws_persistent -w 8 -s "$base, 3, 1, False, True" --grid 5 $ab
    run "gemm storer partition $dt" "$GEMM" -n matmul_struct_ws_storer -w 8 -s "$base, 3" --grid 5 $ab
    run "gemm stream-K $dt" "$GEMM" -n matmul_struct_ws_streamk -w 8 --grid 5 \
      -s "*$dt:16, *$dt:16, *$dt:16, *fp32:16, *i32:16, i32, i32:16, i32:16, 128, 256, 64, 3" \
      $ab --arg ws_ptr=zeros:f32:5x32768 --arg flags_ptr=zeros:i32:5
    run "gemm multicast $dt" "$GEMM" -n matmul_struct_ws_mc -w 8 -s "$base, 3, 0" --grid 12 $ab
    run "gemm multicast persistent $dt" "$GEMM" -n matmul_struct_ws_mc -w 8 -s "$base, 3, 1" --grid 4 $ab
    run "gemm ping-pong $dt" "$GEMM" -n matmul_struct_ws_pingpong -w 4 \
      -s "*$dt:16, *$dt:16, *$dt:16, i32, i32:16, i32:16, 128, 128, 64, 4" --grid 5 $ab
  }
done
FA3="$SRC/examples/attention_fa3.tle"
for d in 64 128 256; do for causal in 0 1; do
  [[ $PARTS == *" fa3 "* ]] || break 2
  bn=128; [ $d = 256 ] && bn=64
  z=1 h=2 n=384
  run "attention_fa3 d=$d causal=$causal" "$FA3" -n attn_fwd -w 4 --grid "3, 2" \
    -s "*bf16:16, *bf16:16, *bf16:16, *bf16:16, fp32, i32, i32, i32:16, $d, 128, $bn, $causal" \
    --arg Q=rand:$((z * h * n))x$d --arg K=rand:$((z * h * n))x$d --arg V=rand:$((z * h * n))x$d \
    --arg Out=zeros:$((z * h * n))x$d --arg sm_scale=0.088 --arg Z=$z --arg H=$h --arg N_CTX=$n
done; done
# The examples that use tle.gpu, through the bridge (results checked against torch).
[[ $PARTS == *" bridge "* ]] || exit $status
out="$(TLE_TLEC="$BUILD/src/tlec" TLE_RT_LIBRARY="$BUILD/runtime/libtle_rt.so" "${CS[@]}" \
  python3 "$SRC/tests/gpu/bridge_examples.py" --build "$BUILD" --no-triton \
  --only attention_fa3,softmax_cluster,softmax_cluster_staged,matmul_splitk_cluster 2>&1)"
rc=$?
grep -E " (PASS|FAIL|SKIP) |examples: |ERROR SUMMARY|RACECHECK SUMMARY" <<<"$out" | head -20
[ $rc -ne 0 ] && { echo "FAIL  bridge examples (exit $rc)"; echo "$out" | tail -30; status=1; }
exit $status
