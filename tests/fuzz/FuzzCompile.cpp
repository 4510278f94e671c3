// The scratch file and the checked compile of the tlec fuzz targets (FuzzCompile.h).
#include "FuzzCompile.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <vector>

namespace tle::fuzz {

namespace {
std::string &path() {
  static std::string p;
  return p;
}

void removeScratch() {
  if (!path().empty())
    std::remove(path().c_str());
}
} // namespace

const std::string &scratchPath(const char *ext) {
  if (path().empty()) {
    const char *dir = std::getenv("TMPDIR");
    std::string suffix(ext);
    std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/tle-fuzz-XXXXXX" + suffix;
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    int fd = mkstemps(buf.data(), int(suffix.size()));
    if (fd < 0) {
      std::perror("tle-fuzz: cannot create a scratch file");
      std::abort();
    }
    close(fd);
    path() = buf.data();
    std::atexit(removeScratch);
  }
  return path();
}

bool writeScratch(const uint8_t *data, size_t size) {
  std::ofstream f(scratchPath(), std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(f);
}

int compileChecked(const driver::CompileOptions &o, std::string &diagnostics) {
  std::ostringstream out, err;
  int rc = driver::compile(o, out, err);
  diagnostics = err.str();
  // TLE_FUZZ_VERBOSE=1: one line per compilation (exit status, first diagnostic), to see how deep inputs get.
  static const bool verbose = std::getenv("TLE_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    std::string first = diagnostics.substr(0, diagnostics.find('\n'));
    std::fprintf(stderr, "tle-fuzz: %s exit %d%s%s\n", o.fromTile ? "tile IR" : "source", rc, first.empty() ? "" : ": ",
                 first.c_str());
  }
  // "internal error" diagnostics (invalid IR after a pass, invalid LLVM IR) are asserts that
  // tlec reports instead of crashing: findings too, whatever the exit status. Only diagnostic
  // lines count, and only their message (the text after the first "error: "): the echoed source
  // line and caret (indented by two spaces) and a message quoting the input (a bad signature
  // entry "error: internal error*fp32") may contain the words.
  bool internal = false;
  std::istringstream lines(diagnostics);
  for (std::string line; !internal && std::getline(lines, line);) {
    if (line.rfind("  ", 0) == 0)
      continue;
    size_t at = line.find("error: ");
    internal = at != std::string::npos && line.compare(at + 7, 14, "internal error") == 0;
  }
  if ((rc == 0 || rc == 1) && !internal)
    return rc;
  std::fprintf(stderr, "tle-fuzz: tlec's pipeline returned %d with an internal error, diagnostics:\n%s\n", rc,
               diagnostics.c_str());
  std::abort();
}

} // namespace tle::fuzz
