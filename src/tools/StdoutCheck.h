// The tools' exit through a check of standard output: a result printed to a stdout that could
// not take it (redirected to a full disk) is an error, not an exit status of 0 with it lost.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace tle::tools {

/// Flushes standard output (iostreams and stdio). When that fails, prints "TOOL: error: cannot
/// write to standard output: REASON" on standard error and returns 1 (or `status` when it is
/// already non-zero); otherwise returns `status`. For `return exitChecked("tool", run(...))`.
inline int exitChecked(const char *tool, int status) {
  errno = 0;
  std::cout.flush();
  bool ok = static_cast<bool>(std::cout);
  ok = std::fflush(stdout) == 0 && ok;
  if (ok)
    return status;
  std::fprintf(stderr, "%s: error: cannot write to standard output%s%s\n", tool, errno ? ": " : "",
               errno ? std::strerror(errno) : "");
  return status ? status : 1;
}

} // namespace tle::tools
