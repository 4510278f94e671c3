// Fuzz target for tlec's whole pipeline, source text to PTX (no ptxas); a libFuzzer target, or a corpus replayer.
//
// Each input is a .tle source, or tile IR text when a line starts with `func @` (as tlec reads
// .tir files: parse, verify, then the same passes and code generation). The signature comes from the input's own header when it has one
// (`# Compile: tlec ... -s "SIG" -w N`, `# RUN: %tlec %s -s "SIG" ...`, `# Build: NAME -s "SIG" -w N`),
// else from the annotations in the source; an input that fails parsing or specialisation is a user
// error (exit status 1) and simply uninteresting. The architecture is sm_80 or sm_90a, chosen by a
// hash of the input (or --arch in the header line). Only real failures stop the run: a crash, a
// failed assert, an uncaught exception, an exit status other than 0 and 1 (2 = invalid tile IR
// after a pass), or a sanitizer report.
//
// Built with clang and TLE_LIBFUZZER, libFuzzer supplies main(). Otherwise main() below replays
// files and directories given on the command line (the same inputs, no mutation).
#include "tle/Driver/Compiler.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

/// The scratch file compile() reads; created once per process, removed at exit.
std::string &scratchPath() {
  static std::string path;
  return path;
}

void removeScratch() {
  if (!scratchPath().empty())
    std::remove(scratchPath().c_str());
}

bool writeScratch(const uint8_t *data, size_t size) {
  if (scratchPath().empty()) {
    const char *dir = std::getenv("TMPDIR");
    std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/tle-fuzz-XXXXXX.tle";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    int fd = mkstemps(buf.data(), 4);
    if (fd < 0) {
      std::perror("tle-fuzz: cannot create a scratch file");
      std::abort();
    }
    close(fd);
    scratchPath() = buf.data();
    std::atexit(removeScratch);
  }
  std::ofstream f(scratchPath(), std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(f);
}

/// The text after `key` in `line` up to the next `end` character (or the line's end); "" if absent.
std::string after(const std::string &line, const std::string &key, char end) {
  size_t at = line.find(key);
  if (at == std::string::npos)
    return "";
  at += key.size();
  return line.substr(at, line.find(end, at) - at);
}

/// Reads -s, -w and --arch from the first header line that gives a signature.
void optionsFromHeader(const std::string &text, tle::driver::CompileOptions &o) {
  std::istringstream head(text.substr(0, 4096)); // headers are at the top
  for (std::string line; std::getline(head, line);) {
    if (line.rfind("# Compile: tlec ", 0) != 0 && line.rfind("# RUN: %tlec ", 0) != 0 && line.rfind("# Build: ", 0) != 0)
      continue;
    if (line.find("-s \"") == std::string::npos)
      continue;
    o.signature = after(line, "-s \"", '"');
    std::string w = after(line, " -w ", ' ');
    if (!w.empty() && w.size() <= 2 && std::isdigit(static_cast<unsigned char>(w[0])))
      o.numWarps = std::atoi(w.c_str());
    std::string a = after(line, "--arch ", ' ');
    if (a == "sm_80" || a == "sm_90a")
      o.arch = a;
    return;
  }
}

uint32_t fnv1a(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 16777619u;
  return h;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024) // larger inputs only slow the search down
    return -1;
  if (!writeScratch(data, size))
    return 0;
  tle::driver::CompileOptions o;
  o.input = scratchPath();
  o.output = "-";
  o.emit = tle::driver::Emit::PTX;
  o.arch = (fnv1a(data, size) & 1) ? "sm_80" : "sm_90a";
  std::string text(reinterpret_cast<const char *>(data), size);
  o.fromTile = text.rfind("func @", 0) == 0 || text.find("\nfunc @") != std::string::npos;
  if (!o.fromTile)
    optionsFromHeader(text, o);
  std::ostringstream out, err;
  int rc = tle::driver::compile(o, out, err);
  if (rc == 0 || rc == 1)
    return 0;
  // Exit status 2 and anything else: an internal error that tlec reported instead of crashing.
  std::fprintf(stderr, "tle-fuzz: tlec's pipeline returned %d (an internal error), diagnostics:\n%s\n", rc,
               err.str().c_str());
  std::abort();
}

#ifndef TLE_LIBFUZZER
#include <algorithm>
#include <filesystem>
#include <vector>

/// Replays every file named on the command line (directories: every file below them, sorted).
int main(int argc, char **argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...   (replays inputs through LLVMFuzzerTestOneInput)\n", argv[0]);
    return 2;
  }
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (fs::is_directory(argv[i])) {
      for (auto &e : fs::recursive_directory_iterator(argv[i]))
        if (e.is_regular_file())
          files.push_back(e.path().string());
    } else {
      files.push_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  for (const std::string &f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay: %s\n", f.c_str());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(text.data()), text.size());
  }
  std::fprintf(stderr, "replay: %zu inputs, no failure\n", files.size());
  return 0;
}
#endif
