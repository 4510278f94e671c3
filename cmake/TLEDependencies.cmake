# Finds TLE's dependencies: Debian 12 packages (see scripts/setup.sh) and, optionally, the CUDA toolkit.

if(TLE_BUILD_COMPILER)
  # LLVM's package looks for optional libraries of tools TLE does not link (the line editor, the
  # debuginfod client) and reports each one missing; they stay unused, so skip the search.
  set(CMAKE_DISABLE_FIND_PACKAGE_LibEdit ON)
  set(CMAKE_DISABLE_FIND_PACKAGE_CURL ON)
  find_package(LLVM 19.1 REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
  message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
  find_package(antlr4-runtime REQUIRED CONFIG)
  find_program(ANTLR4_TOOL antlr4 REQUIRED)
  find_package(Java COMPONENTS Runtime REQUIRED)
  find_program(FILECHECK FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR})
endif()
find_package(fmt REQUIRED CONFIG)
find_package(CLI11 REQUIRED CONFIG) # the command lines of tlec, tle-run, tle-link and tle-bench
find_package(nlohmann_json 3 REQUIRED CONFIG)
if(TLE_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED CONFIG)
endif()

# The CUDA toolkit is optional: without it tlec still emits PTX and the runtime still builds
# (it loads the driver with dlopen and declares the driver API itself).
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND)
  set(TLE_HAVE_CUDA_TOOLKIT ON)
  get_filename_component(_cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  find_file(TLE_LIBDEVICE libdevice.10.bc HINTS "${_cuda_root}/nvvm/libdevice" NO_DEFAULT_PATH)
  find_program(TLE_PTXAS ptxas HINTS "${CUDAToolkit_BIN_DIR}" NO_DEFAULT_PATH)
  set(TLE_CUDA_ROOT "${_cuda_root}")
  message(STATUS "CUDA toolkit ${CUDAToolkit_VERSION}: ptxas=${TLE_PTXAS} libdevice=${TLE_LIBDEVICE}")
else()
  set(TLE_HAVE_CUDA_TOOLKIT OFF)
  message(STATUS "CUDA toolkit not found: tlec will emit PTX but not cubins")
endif()

# TLE-Raw's CUDA functions are compiled by clang's CUDA mode of the same LLVM version (Debian's
# clang-19); optional: without it, kernels that call CUDA functions get a clear error.
find_program(TLE_CLANG_CUDA clang-19 HINTS ${LLVM_TOOLS_BINARY_DIR})
if(TLE_CLANG_CUDA)
  message(STATUS "TLE-Raw CUDA functions: ${TLE_CLANG_CUDA}")
else()
  message(STATUS "clang-19 not found: TLE-Raw CUDA functions are unavailable (LLVM IR ones work)")
endif()
