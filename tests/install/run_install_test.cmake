# Installs a TLE build into a fresh prefix, then configures and builds the consumer project against that prefix only.
#
# cmake -DTLE_BUILD_DIR=... -DPREFIX=... -DCONSUMER_SOURCE=... -DCONSUMER_BUILD=... -DEXAMPLES_DIR=...
#       -DGENERATOR=... [-DC_COMPILER=... -DCXX_COMPILER=...] -P run_install_test.cmake
foreach(_var TLE_BUILD_DIR PREFIX CONSUMER_SOURCE CONSUMER_BUILD EXAMPLES_DIR GENERATOR)
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

file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BUILD}")
run("installing TLE" ${CMAKE_COMMAND} --install "${TLE_BUILD_DIR}" --prefix "${PREFIX}")

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
