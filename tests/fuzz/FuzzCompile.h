// What the tlec fuzz targets share: the scratch input file and a compile that aborts on an internal error.
#pragma once

#include "tle/Driver/Compiler.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tle::fuzz {

/// The scratch file the compiler reads its input from: created once per process (in $TMPDIR,
/// else /tmp) with extension `ext` (".tle"), removed at exit. Aborts when it cannot be created.
const std::string &scratchPath(const char *ext = ".tle");

/// Writes the `size` bytes at `data` to scratchPath(); false when the write fails.
bool writeScratch(const uint8_t *data, size_t size);

/// Runs tlec's pipeline with `o`; returns its exit status, 0 or 1 (a user error), and the
/// diagnostics in `diagnostics`. Anything else is a finding and aborts the process after printing
/// the diagnostics: an exit status other than 0 and 1, or an "internal error" diagnostic (only a
/// diagnostic line's message counts, not an echoed source line or a message quoting the input).
int compileChecked(const driver::CompileOptions &o, std::string &diagnostics);

} // namespace tle::fuzz
