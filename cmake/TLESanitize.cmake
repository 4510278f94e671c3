# Sanitizer and fuzzer builds: TLE_SANITIZE (ASan+UBSan for every target) and TLE_BUILD_FUZZER (tests/fuzz).
#
# TLE_SANITIZE=ON compiles and links everything with AddressSanitizer and UndefinedBehaviorSanitizer;
# any finding aborts the process (-fno-sanitize-recover=all). CI's sanitizer job
# (scripts/test-sanitized.sh) uses it. LLVM and the ANTLR runtime stay uninstrumented (prebuilt
# static libraries), which ASan and UBSan allow.
#
# TLE_BUILD_FUZZER=ON adds tests/fuzz: with clang it links libFuzzer targets (tle-fuzz,
# tle-fuzz-gen, tle-fuzz-runtime) and instruments the project's own code for coverage
# (-fsanitize=fuzzer-no-link); with another compiler they are plain drivers that replay corpus
# files. tests/fuzz/run.sh sets a clang build up.
# Included by the top-level CMakeLists.txt before any target is defined.

option(TLE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer (abort on any finding)" OFF)
# On by default with the test suite: a build with another compiler than clang makes the targets
# corpus replayers, whose ctests (fuzz.replay.*) keep them and their corpora from rotting.
option(TLE_BUILD_FUZZER "Build the fuzz targets of tests/fuzz (libFuzzer with clang, else corpus replayers)" ${TLE_BUILD_TESTS})

if(TLE_SANITIZE)
  set(TLE_SANITIZE_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  message(STATUS "TLE_SANITIZE: ${TLE_SANITIZE_FLAGS}")
  add_compile_options(${TLE_SANITIZE_FLAGS})
  add_link_options(-fsanitize=address,undefined)
endif()

set(TLE_LIBFUZZER OFF)
if(TLE_BUILD_FUZZER AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(TLE_LIBFUZZER ON)
  # Coverage feedback for the compiler's own code; the fuzz target itself links -fsanitize=fuzzer.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
