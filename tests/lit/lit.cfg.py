# lit settings shared by TLE's golden tests (tests/lit) and expected-diagnostic tests (tests/errors).
#
# Loaded from the lit.site.cfg.py that CMake writes into the build tree, which sets config.tle_suite,
# the source/binary directories and the tool paths. Substitutions available in RUN lines:
#   %tlec      the tlec built in this tree
#   FileCheck  LLVM 19's FileCheck          not     LLVM 19's not
#   %exit1     tests/errors/exit1.py: runs a command, passes only if it exits with status 1
#   %python    the Python interpreter running lit
import os
import sys

import lit.formats

if not hasattr(config, "tle_suite"):
    lit_config.fatal("run lit on the build tree (e.g. build/tests/lit), not on the source tree; "
                     "or simply run: ctest --test-dir build -L lit")

config.name = "TLE-" + config.tle_suite
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tle", ".tir"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.join(config.tle_source_dir, "tests", config.tle_suite)
config.test_exec_root = os.path.join(config.tle_binary_dir, "tests", config.tle_suite)

python = getattr(config, "python_executable", "") or sys.executable
exit1 = os.path.join(config.tle_source_dir, "tests", "errors", "exit1.py")

# Tool names are replaced only where they stand alone (not inside a path or a longer word).
def tool(name):
    return r"(?<![\w./-])" + name + r"(?![\w./-])"

# Order matters: lit applies these in sequence, before its own %s/%t, so %tlec is never read as %t.
config.substitutions.append((tool("FileCheck"), config.filecheck))
config.substitutions.append((tool("not"), config.not_tool))
config.substitutions.append(("%tlec", config.tlec))
# tle-link is built next to tlec (src/CMakeLists.txt).
config.substitutions.append(("%tle-link", '"%s"' % os.path.join(os.path.dirname(config.tlec), "tle-link")))
# tle-run (CPU target and GPU runner) is built next to tlec too.
config.substitutions.append(("%tle-run", '"%s"' % os.path.join(os.path.dirname(config.tlec), "tle-run")))
# tle-inspect (cubin / PTX module reader) is built next to tlec too.
config.substitutions.append(("%tle-inspect", '"%s"' % os.path.join(os.path.dirname(config.tlec), "tle-inspect")))
config.substitutions.append(("%exit1", '"%s" "%s"' % (python, exit1)))
config.substitutions.append(("%python", '"%s"' % python))

# TLE-Raw's CUDA functions need clang-19 and the CUDA toolkit's headers, both found at configure
# time (tests that compile CUDA say `REQUIRES: clang-cuda`).
clang_cuda = getattr(config, "clang_cuda", "")
cuda_root = getattr(config, "cuda_root", "")
if clang_cuda and not clang_cuda.endswith("-NOTFOUND") and os.path.exists(os.path.join(cuda_root, "include", "cuda.h")):
    config.available_features.add("clang-cuda")

# Tests that assemble cubins need the toolkit's ptxas (found at configure time).
ptxas = getattr(config, "ptxas", "")
if ptxas and not ptxas.endswith("-NOTFOUND") and os.path.exists(ptxas):
    config.available_features.add("ptxas")

# Deterministic, colour-free diagnostics for FileCheck.
config.environment["NO_COLOR"] = "1"
config.environment["TERM"] = "dumb"
