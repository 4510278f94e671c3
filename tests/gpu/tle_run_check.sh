# Sourced by the GPU checks that run one kernel file with tle-run (libdevice_gpu.sh, pipe_gpu.sh,
# barriers_gpu.sh, copy_gpu.sh, ws_gpu.sh).
# check NAME EXPECTED TLE-RUN-ARGUMENTS...: runs "$TLE_RUN" "$KERNELS" -q --target gpu with the
# arguments; prints PASS when the output holds EXPECTED, else FAIL with the output and sets
# status=1; exits 77 (skipped) when no GPU is usable.
# expect NAME TLE-RUN-ARGUMENTS...: the same, passing when tle-run exits 0 (its --expect checks).
# seq_list FIRST STEP COUNT: "FIRST, FIRST+STEP, ..." as tle-run prints integers.
status=0
check() {
  local name="$1" want="$2"
  shift 2
  local out
  out="$("$TLE_RUN" "$KERNELS" -q --target gpu "$@" 2>&1)"
  if [ $? -ne 0 ] && grep -qi "none is usable here\|CUDA_ERROR_NO_DEVICE\|needs a CUDA GPU" <<<"$out"; then
    echo "SKIPPED: no GPU"; exit 77
  fi
  if grep -qF -- "$want" <<<"$out"; then
    echo "PASS  $name"
  else
    echo "FAIL  $name: expected $want, got"; echo "$out"; status=1
  fi
}
expect() {
  local name="$1"
  shift
  local out rc
  out="$("$TLE_RUN" "$KERNELS" -q --target gpu "$@" 2>&1)"
  rc=$?
  if [ $rc -ne 0 ] && grep -qi "none is usable here\|CUDA_ERROR_NO_DEVICE\|needs a CUDA GPU" <<<"$out"; then
    echo "SKIPPED: no GPU"; exit 77
  fi
  if [ $rc -eq 0 ]; then echo "PASS  $name"; else echo "FAIL  $name:"; echo "$out"; status=1; fi
}
seq_list() {
  local out="" v=$1 i
  for ((i = 0; i < $3; ++i)); do out+="${out:+, }$v"; v=$((v + $2)); done
  echo "$out"
}
