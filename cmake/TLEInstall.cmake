# Install rules and the CMake package: `cmake --install` puts tlec, tle-run, tle-link, tle-inspect, tle-bench, libtle_rt, its headers, TLEConfig.cmake, tle_rt.pc, the driver and NCCL test doubles, the PyTorch bridge (python/tle), man pages and bash completions under the prefix.
#
# A consumer then writes find_package(TLE) and tle_add_kernels(...) (cmake/TLEKernels.cmake);
# docs/aot.md describes both. Included at the end of the top-level CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TLE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/TLE)

install(TARGETS tle_rt EXPORT TLETargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tle/Runtime
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tle
  FILES_MATCHING PATTERN "*.h")

# The tools, finding libtle_rt in ../lib. tlec and tle-run are one executable (tle-tools, exported
# as TLE::tlec; bin/tle-run is a link to it), so the compiler and LLVM are installed once.
set(_installed_tools "")
if(TARGET tle-tools)
  set_target_properties(tle-tools PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS tle-tools EXPORT TLETargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(CODE "file(CREATE_LINK tlec \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/tle-run\" SYMBOLIC)")
  list(APPEND _installed_tools tlec)
endif()
foreach(_tool tle-link tle-inspect tle-bench)
  if(TARGET ${_tool})
    set_target_properties(${_tool} PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
    install(TARGETS ${_tool} EXPORT TLETargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    list(APPEND _installed_tools ${_tool})
  endif()
endforeach()

install(EXPORT TLETargets NAMESPACE TLE:: DESTINATION ${TLE_INSTALL_CMAKEDIR})

# The driver test double, for consumers' tests without a GPU (TLE_RT_CUDA_DRIVER=<it>): not a link
# dependency of anything; TLEConfig.cmake names it TLE_MOCK_CUDA_DRIVER, tle_rt.pc mock_cuda_driver.
# The NCCL test double likewise (TLE_RT_NCCL=<it>, next to the fake driver): TLE_MOCK_NCCL,
# mock_nccl.
install(TARGETS tle-mock-cuda tle-mock-nccl LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/tle)

# The PyTorch bridge: the pure-Python package python/tle under share/tle/python (PYTHONPATH), with
# _install.py telling it where bin/tlec and libtle_rt are relative to itself.
set(TLE_PYTHON_INSTALLDIR ${CMAKE_INSTALL_DATADIR}/tle/python)
file(RELATIVE_PATH TLE_PY_TLEC "/prefix/${TLE_PYTHON_INSTALLDIR}/tle" "/prefix/${CMAKE_INSTALL_BINDIR}/tlec")
file(RELATIVE_PATH TLE_PY_LIBTLE_RT "/prefix/${TLE_PYTHON_INSTALLDIR}/tle" "/prefix/${CMAKE_INSTALL_LIBDIR}/libtle_rt.so")
file(RELATIVE_PATH TLE_PY_MOCK "/prefix/${TLE_PYTHON_INSTALLDIR}/tle" "/prefix/${CMAKE_INSTALL_LIBDIR}/tle/libtle-mock-cuda.so")
configure_file(${PROJECT_SOURCE_DIR}/python/tle/_install.py.in ${PROJECT_BINARY_DIR}/python/_install.py @ONLY)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/tle DESTINATION ${TLE_PYTHON_INSTALLDIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/python/_install.py DESTINATION ${TLE_PYTHON_INSTALLDIR}/tle)

# pkg-config: tle_rt.pc, relative to its own directory so that the prefix can move.
file(RELATIVE_PATH TLE_PC_PREFIX_FROM_PCDIR "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tle_rt.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/tle_rt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/tle_rt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# LICENSE, CHANGELOG, and per tool a man page and a bash completion generated from its --help.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
set(_help_outputs "")
foreach(_tool tlec tle-run tle-link tle-inspect tle-bench)
  if(NOT TARGET ${_tool})
    continue()
  endif()
  set(_man ${PROJECT_BINARY_DIR}/share/man/man1/${_tool}.1)
  set(_completion ${PROJECT_BINARY_DIR}/share/bash-completion/completions/${_tool})
  set(_extra_help "")
  if(_tool STREQUAL "tle-bench")
    set(_extra_help "--tune --help") # the autotuning mode's options too
  endif()
  add_custom_command(OUTPUT ${_man} ${_completion}
    COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:${_tool}> -DNAME=${_tool} -DVERSION=${PROJECT_VERSION}
            -DMAN=${_man} -DCOMPLETION=${_completion} "-DEXTRA_HELP=${_extra_help}"
            -P ${PROJECT_SOURCE_DIR}/cmake/TLEHelpDocs.cmake
    DEPENDS ${_tool} ${PROJECT_SOURCE_DIR}/cmake/TLEHelpDocs.cmake
    COMMENT "man page and bash completion of ${_tool}" VERBATIM)
  list(APPEND _help_outputs ${_man} ${_completion})
  install(FILES ${_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${_completion} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
endforeach()
add_custom_target(tle_help_docs ALL DEPENDS ${_help_outputs})

# What the installing build could make: cubins need ptxas (the CUDA toolkit), PTX needs nothing.
if(TLE_HAVE_CUDA_TOOLKIT)
  set(TLE_DEFAULT_KERNEL_FORMAT cubin)
else()
  set(TLE_DEFAULT_KERNEL_FORMAT ptx)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TLEConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/TLEConfig.cmake
  INSTALL_DESTINATION ${TLE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/TLEConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/TLEConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/TLEConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/TLEKernels.cmake
  DESTINATION ${TLE_INSTALL_CMAKEDIR})

# Stripped binaries in the installed tree (TLE_INSTALL_STRIP, default ON): the build tree keeps its
# symbols. Runs last, after every file above is in place.
option(TLE_INSTALL_STRIP "strip the installed executables and libraries" ON)
if(TLE_INSTALL_STRIP AND CMAKE_STRIP)
  set(_strip_files "")
  foreach(_tool IN LISTS _installed_tools)
    list(APPEND _strip_files "${CMAKE_INSTALL_BINDIR}/${_tool}")
  endforeach()
  list(APPEND _strip_files "${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:tle_rt>"
                           "${CMAKE_INSTALL_LIBDIR}/tle/$<TARGET_FILE_NAME:tle-mock-cuda>"
                           "${CMAKE_INSTALL_LIBDIR}/tle/$<TARGET_FILE_NAME:tle-mock-nccl>")
  install(CODE "
    foreach(_f ${_strip_files})
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-unneeded \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/\${_f}\"
                      RESULT_VARIABLE _rc)
      if(NOT _rc EQUAL 0)
        message(FATAL_ERROR \"stripping \${_f} failed\")
      endif()
    endforeach()")
endif()
