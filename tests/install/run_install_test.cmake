# Installs a TLE build into a fresh prefix, then configures and builds the consumer project against that prefix only.
#
# cmake -DTLE_BUILD_DIR=... -DPREFIX=... -DCONSUMER_SOURCE=... -DCONSUMER_BUILD=... -DPKGCONFIG_BUILD=...
#       -DEXAMPLES_DIR=... -DGENERATOR=... -DLIBDIR=lib -DKERNEL_FORMAT=cubin|ptx -DCXX_COMPILER=...
#       [-DC_COMPILER=...] -P run_install_test.cmake
# Also checks the installed tree (files, stripped, at most 60 MiB, man pages, tle-bench --tune's dry
# run of examples/tune/add_rmsnorm.json) and builds a pkg-config consumer.
foreach(_var TLE_BUILD_DIR PREFIX CONSUMER_SOURCE CONSUMER_BUILD PKGCONFIG_BUILD EXAMPLES_DIR GENERATOR LIBDIR
             KERNEL_FORMAT CXX_COMPILER)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "run_install_test.cmake: -D${_var}=... is required")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${_rc}): ${ARGN}")
  endif()
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BUILD}" "${PKGCONFIG_BUILD}")
run("installing TLE" ${CMAKE_COMMAND} --install "${TLE_BUILD_DIR}" --prefix "${PREFIX}")

# The installed tree: every file the package promises, stripped, and its size (at most 60 MB).
set(_tools tlec tle-run tle-link tle-inspect tle-bench)
set(_expected "${LIBDIR}/pkgconfig/tle_rt.pc" "${LIBDIR}/tle/libtle-mock-cuda.so" "${LIBDIR}/tle/libtle-mock-nccl.so"
    "${LIBDIR}/libtle_rt.so" "include/tle/Runtime/MockCuda.h" "include/tle/Runtime/Communicator.h" "share/doc/TLE/LICENSE" "share/doc/TLE/CHANGELOG.md"
    "share/tle/python/tle/__init__.py" "share/tle/python/tle/_install.py")
foreach(_t IN LISTS _tools)
  list(APPEND _expected "bin/${_t}" "share/man/man1/${_t}.1" "share/bash-completion/completions/${_t}")
endforeach()
foreach(_f IN LISTS _expected)
  if(NOT EXISTS "${PREFIX}/${_f}")
    message(FATAL_ERROR "the installed tree lacks ${_f}")
  endif()
endforeach()
if(NOT IS_SYMLINK "${PREFIX}/bin/tle-run")
  message(FATAL_ERROR "bin/tle-run should be a link to tlec (one executable for both)")
endif()
find_program(_readelf readelf)
if(_readelf)
  foreach(_f bin/tlec bin/tle-link bin/tle-bench "${LIBDIR}/libtle_rt.so")
    execute_process(COMMAND ${_readelf} -S --wide "${PREFIX}/${_f}" OUTPUT_VARIABLE _sections)
    if(_sections MATCHES "[.]symtab")
      message(FATAL_ERROR "${_f} is not stripped (it has a .symtab)")
    endif()
  endforeach()
endif()
file(GLOB_RECURSE _files LIST_DIRECTORIES false "${PREFIX}/*")
set(_bytes 0)
foreach(_f IN LISTS _files)
  if(NOT IS_SYMLINK "${_f}")
    file(SIZE "${_f}" _size)
    math(EXPR _bytes "${_bytes} + ${_size}")
  endif()
endforeach()
math(EXPR _mib "${_bytes} / 1048576")
message(STATUS "installed tree: ${_bytes} bytes (${_mib} MiB) in ${PREFIX}")
if(_bytes GREATER 62914560)
  message(FATAL_ERROR "the installed tree is ${_mib} MiB, more than 60 MiB")
endif()
file(READ "${PREFIX}/share/man/man1/tlec.1" _man)
if(NOT _man MATCHES "[.]TH TLEC 1" OR NOT _man MATCHES "--emit-header")
  message(FATAL_ERROR "share/man/man1/tlec.1 is not tlec's man page")
endif()
file(READ "${PREFIX}/share/man/man1/tle-bench.1" _man)
if(NOT _man MATCHES "tle-bench --tune --help:" OR NOT _man MATCHES "--from-results")
  message(FATAL_ERROR "share/man/man1/tle-bench.1 lacks the options of tle-bench --tune")
endif()
# The installed tle-bench plans the tuning of a user kernel's launch spec with the tlec installed
# beside it (cubins need ptxas: only where the build had the toolkit).
if(KERNEL_FORMAT STREQUAL "cubin")
  execute_process(COMMAND "${PREFIX}/bin/tle-bench" --tune "${EXAMPLES_DIR}/tune/add_rmsnorm.json" --dry-run
                          --case M=64 --jobs 2 --no-cache
                  OUTPUT_VARIABLE _plan ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 OR NOT _plan MATCHES "compile: 9/9 ok")
    message(FATAL_ERROR "the installed tle-bench --tune --dry-run failed (${_rc}): ${_plan}${_err}")
  endif()
endif()

set(_compilers "")
if(C_COMPILER)
  list(APPEND _compilers "-DCMAKE_C_COMPILER=${C_COMPILER}")
endif()
if(CXX_COMPILER)
  list(APPEND _compilers "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
# Only the prefix: no package registry, no source tree.
run("configuring the consumer" ${CMAKE_COMMAND} -S "${CONSUMER_SOURCE}" -B "${CONSUMER_BUILD}" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${PREFIX}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release
    "-DTLE_EXAMPLES_DIR=${EXAMPLES_DIR}" "-DTLE_EXPECTED_PREFIX=${PREFIX}" ${_compilers})
run("building the consumer" ${CMAKE_COMMAND} --build "${CONSUMER_BUILD}" -j 2)

# A consumer through pkg-config only: the installed tlec writes a launcher for
# examples/vector_add.tle, `c++ $(pkg-config --cflags --libs tle_rt)` builds tests/install/pkgconfig/
# consumer.cpp against it; install.pkgconfig-consumer runs it on the installed test double.
find_program(_pkgconfig NAMES pkg-config pkgconf REQUIRED)
file(MAKE_DIRECTORY "${PKGCONFIG_BUILD}")
set(_pcenv ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${PREFIX}/${LIBDIR}/pkgconfig")
foreach(_q cflags libs)
  execute_process(COMMAND ${_pcenv} ${_pkgconfig} --${_q} tle_rt OUTPUT_VARIABLE _pc_${_q} RESULT_VARIABLE _rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --${_q} tle_rt failed (${_rc})")
  endif()
  separate_arguments(_pc_${_q} UNIX_COMMAND "${_pc_${_q}}")
endforeach()
foreach(_v libdir mock_cuda_driver mock_nccl tlec)
  execute_process(COMMAND ${_pcenv} ${_pkgconfig} --variable=${_v} tle_rt OUTPUT_VARIABLE _pc_${_v}
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
endforeach()
if(NOT EXISTS "${_pc_mock_cuda_driver}" OR NOT EXISTS "${_pc_mock_nccl}" OR NOT EXISTS "${_pc_tlec}")
  message(FATAL_ERROR "tle_rt.pc: mock_cuda_driver (${_pc_mock_cuda_driver}), mock_nccl (${_pc_mock_nccl}) or "
                      "tlec (${_pc_tlec}) does not exist")
endif()
run("the installed tlec writing add.h" "${_pc_tlec}" "${EXAMPLES_DIR}/vector_add.tle"
    -s "*fp32:16, *fp32:16, *fp32:16, i32, 1024" -g "cdiv(n_elements, BLOCK), 1, 1" --arch sm_90a
    -o "${PKGCONFIG_BUILD}/add.${KERNEL_FORMAT}" --emit-header "${PKGCONFIG_BUILD}/add.h" -on add)
run("building the pkg-config consumer" ${CXX_COMPILER} -std=c++17 -O1 -Wall -Wextra -Werror
    "${CONSUMER_SOURCE}/../pkgconfig/consumer.cpp" -I "${PKGCONFIG_BUILD}" ${_pc_cflags}
    -o "${PKGCONFIG_BUILD}/tle-pkgconfig-consumer" ${_pc_libs} -ldl "-Wl,-rpath,${_pc_libdir}")
