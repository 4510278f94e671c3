# Checks tle-engine without a GPU: its command line, the no-driver path (exit 0 with
# "no CUDA driver/GPU: ...", or 77 with --require-gpu), and, with the fake driver of tests/runtime
# and the engine's kernels as PTX, that every launch of the block passes the runtime's checks
# against the kernels' metadata (--no-check), and that a wrong result fails (the fake driver does
# not compute these kernels, so the checks must report FAIL and exit 1).
# Usage: cmake -DENGINE=tle-engine [-DMOCK=libtle-mock-cuda.so -DPTX_DIR=dir] -P engine_cli_test.cmake
set(_missing "TLE_RT_CUDA_DRIVER=libtle-engine-test-missing-driver.so.1")

# run(NAME EXPECTED_EXIT REGEX ENV ARGS...): runs the engine, requires the exit status and that
# stdout + stderr match REGEX.
function(run name expected regex env)
  if(env)
    set(_cmd ${CMAKE_COMMAND} -E env ${env} ${ENGINE} ${ARGN})
  else()
    set(_cmd ${ENGINE} ${ARGN})
  endif()
  execute_process(COMMAND ${_cmd} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  set(_all "${_out}${_err}")
  if(NOT _rc STREQUAL "${expected}")
    message(FATAL_ERROR "${name}: exit status ${_rc}, expected ${expected}; output:\n${_all}")
  endif()
  if(NOT _all MATCHES "${regex}")
    message(FATAL_ERROR "${name}: output does not match '${regex}':\n${_all}")
  endif()
  message(STATUS "${name}: ok (exit ${_rc})")
endfunction()

run(help 0 "usage: tle-engine.*--head-dim" "" --help)
run(no-driver 0 "no CUDA driver/GPU: libtle_rt: cannot load the CUDA driver.*nothing was run \\(exit status 0\\)"
    "${_missing}")
run(no-driver-require-gpu 77 "no CUDA driver/GPU: .*exit status 77" "${_missing}" --require-gpu)
run(unknown-option 2 "unknown option '--bogus'" "" --bogus)
run(missing-value 2 "--seq needs a value" "" --seq)
run(bad-integer 2 "--heads takes an integer in \\[1, [0-9]+\\], not 'x'" "" --heads x)
run(bad-eps 2 "--eps takes a positive number" "" --eps -1)
run(seq-not-multiple 2 "unsupported shape: seq must be a multiple of 128" "" --seq 1000)
run(hidden-mismatch 2 "hidden \\(1000\\) must equal heads \\* head dim \\(16 \\* 64\\)" "" --hidden 1000)
run(head-dim 2 "head dim must be 64 or 128" "" --head-dim 96 --hidden 1536)
run(plan 0 "qkv_proj +matmul +grid \\(192, 1, 1\\).*rotary +rotary_d128 .*attention +attention_d128 +grid \\(4, 16, 1\\).*residual_2"
    "" --plan --batch 1 --seq 512 --hidden 2048 --heads 16 --head-dim 128)

if(MOCK AND PTX_DIR)
  set(_shape --batch 1 --seq 128 --hidden 256 --heads 4 --ffn 320)
  run(mock-launches 0 "block: batch 1, seq 128.*CUDA graph of the block \\(12 kernels, one cuGraphLaunch\\): final state identical to eager launches.*whole block +\\(CUDA graph\\).*checks skipped" "TLE_RT_CUDA_DRIVER=${MOCK}"
      ${_shape} --kernel-dir ${PTX_DIR} --no-check --warmup 1 --reps 2)
  run(mock-launches-d128 0 "checks skipped" "TLE_RT_CUDA_DRIVER=${MOCK}"
      --batch 2 --seq 256 --hidden 1280 --heads 10 --head-dim 128 --ffn 512 --kernel-dir ${PTX_DIR} --no-check
      --warmup 0 --reps 1)
  run(mock-wrong-results 1 "rmsnorm_1 +rmsnorm_1024 .* FAIL.*FAILED: [0-9]+ of 12 steps outside their tolerance" "TLE_RT_CUDA_DRIVER=${MOCK}"
      ${_shape} --kernel-dir ${PTX_DIR} --no-time)
  run(mock-missing-kernels 1 "no module for kernel 'rmsnorm_1024'" "TLE_RT_CUDA_DRIVER=${MOCK}"
      ${_shape} --kernel-dir ${PTX_DIR}/does-not-exist)
endif()
