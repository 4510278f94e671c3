# Install rules and the CMake package: `cmake --install` puts tlec, tle-link, tle-run, tle-inspect, libtle_rt, its headers and TLEConfig.cmake under the prefix.
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

# The tools; tle-run finds libtle_rt next to it, in ../lib.
foreach(_tool tlec tle-link tle-run tle-inspect)
  if(TARGET ${_tool})
    set_target_properties(${_tool} PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
    install(TARGETS ${_tool} EXPORT TLETargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

install(EXPORT TLETargets NAMESPACE TLE:: DESTINATION ${TLE_INSTALL_CMAKEDIR})

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
