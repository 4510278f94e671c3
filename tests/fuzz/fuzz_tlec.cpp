// Fuzz target for tlec's whole pipeline, source text to PTX (no ptxas); a libFuzzer target, or a corpus replayer.
//
// Each input is a .tle source, or tile IR text when a line starts with `func @` (as tlec reads
// .tir files: parse, verify, then the same passes and code generation). The signature comes from the input's own header when it has one
// (`# Compile: tlec ... -s "SIG" -w N [-g "GRID"]`, `# RUN: %tlec %s -s "SIG" ...`, `# Build: NAME -s "SIG" -w N`),
// else from the annotations in the source, else (when parameters lack annotations) it is guessed
// from their names; with several @jit functions each is tried as the kernel. An input that fails
// parsing or specialisation is a user error (exit status 1) and simply uninteresting. The architecture is sm_80 or sm_90a, chosen by a
// hash of the input (or --arch in the header line). Only real failures stop the run: a crash, a
// failed assert, an uncaught exception, an exit status other than 0 and 1 (2 = invalid tile IR
// after a pass), an "internal error" diagnostic, or a sanitizer report.
//
// Built with clang and TLE_LIBFUZZER, libFuzzer supplies main(), and a custom mutator adds
// boundary-value rewrites of integer literals to libFuzzer's byte-level mutations. Otherwise
// ReplayMain.cpp's main() replays files and directories given on the command line (no mutation).
#include "FuzzCompile.h"
#include "tle/Driver/Compiler.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using tle::fuzz::scratchPath;
using tle::fuzz::writeScratch;

/// The text after `key` in `line` up to the next `end` character (or the line's end); "" if absent.
std::string after(const std::string &line, const std::string &key, char end) {
  size_t at = line.find(key);
  if (at == std::string::npos)
    return "";
  at += key.size();
  return line.substr(at, line.find(end, at) - at);
}

/// Reads -s, -w, --arch and -g from the first header line that gives a signature.
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
    // A launch grid (-g "...") is parsed, checked and folded against the kernel's parameters.
    if (line.find(" -g \"") != std::string::npos)
      o.grid = after(line, " -g \"", '"');
    return;
  }
}

uint32_t fnv1a(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 16777619u;
  return h;
}

/// The names listed in "several @jit functions (a, b, c)", or none.
std::vector<std::string> kernelChoices(const std::string &diagnostics) {
  std::vector<std::string> names;
  std::string list = after(diagnostics, "several @jit functions (", ')');
  for (size_t at = 0; at < list.size() && names.size() < 4;) {
    size_t comma = list.find(", ", at);
    names.push_back(list.substr(at, comma - at));
    at = comma == std::string::npos ? list.size() : comma + 2;
  }
  return names;
}

/// A signature for a kernel without annotations, guessed from the parameter names in its
/// `def` line (Triton's conventions): *_ptr / *ptr* -> "*fp32:16", ALL_CAPS -> 64, else i32.
std::optional<std::string> guessSignature(const std::string &text, const std::string &kernel) {
  size_t def = text.find("def " + kernel + "(");
  if (kernel.empty() || def == std::string::npos)
    return std::nullopt;
  size_t open = def + 5 + kernel.size(), close = text.find(')', open);
  if (close == std::string::npos || close - open > 2000)
    return std::nullopt;
  std::string sig, params = text.substr(open, close - open);
  for (size_t at = 0; at <= params.size();) {
    size_t comma = std::min(params.find(',', at), params.size());
    std::string p = params.substr(at, comma - at);
    p.erase(0, p.find_first_not_of(" \t\n"));
    p = p.substr(0, p.find_first_of(" :=\t\n"));
    at = comma + 1;
    if (p.empty())
      continue;
    bool caps = std::none_of(p.begin(), p.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)); });
    sig += std::string(sig.empty() ? "" : ", ") + (p.find("ptr") != std::string::npos ? "*fp32:16" : caps ? "64" : "i32");
  }
  return sig;
}

/// The kernel named in "parameter 'x' has no type" diagnostics is not given; the first `def`
/// after a @jit decorator is.
std::string firstJitKernel(const std::string &text) {
  size_t jit = text.find(".jit");
  size_t def = jit == std::string::npos ? std::string::npos : text.find("def ", jit);
  if (def == std::string::npos)
    return "";
  size_t open = text.find('(', def);
  return open == std::string::npos ? "" : text.substr(def + 4, std::min<size_t>(open - def - 4, 200));
}

/// Runs the pipeline; exit status 0 and 1 are fine, anything else aborts (FuzzCompile.h).
int compileOnce(const tle::driver::CompileOptions &o, std::string &diagnostics) {
  return tle::fuzz::compileChecked(o, diagnostics);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

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
  std::string diagnostics;
  if (compileOnce(o, diagnostics) == 0 || o.fromTile)
    return 0;
  // Several @jit functions: try each (up to 4) as the kernel.
  if (std::vector<std::string> kernels = kernelChoices(diagnostics); !kernels.empty()) {
    for (const std::string &k : kernels) {
      o.kernel = k;
      compileOnce(o, diagnostics);
    }
    return 0;
  }
  // No signature and unannotated parameters: guess one from the parameter names.
  if (!o.signature && diagnostics.find("has no type") != std::string::npos) {
    if (std::optional<std::string> sig = guessSignature(text, firstJitKernel(text))) {
      o.signature = sig;
      compileOnce(o, diagnostics);
    }
  }
  return 0;
}

#ifdef TLE_LIBFUZZER
#include <random>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

/// Decimal integer tokens of `text`: (offset, length), not counting digits inside names.
std::vector<std::pair<size_t, size_t>> integerTokens(const std::string &text) {
  std::vector<std::pair<size_t, size_t>> tokens;
  for (size_t i = 0; i < text.size();) {
    bool inName = i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_');
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || inName) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))
      ++j;
    tokens.push_back({i, j - i});
    i = j;
  }
  return tokens;
}

} // namespace

/// One mutation in four replaces an integer literal by a boundary value (powers of two and their
/// neighbours, int32/int64 limits) and, half of those times, every equal literal with it, so that
/// shapes stay consistent across lines (tile IR types, signatures and constexprs); the rest are
/// libFuzzer's own byte-level mutations.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize, unsigned int seed) {
  static const char *const kValues[] = {"0", "1", "2", "3", "7", "15", "17", "31", "32", "33", "63", "64", "65",
                                        "127", "128", "255", "256", "1023", "1024", "1025", "65535", "65536",
                                        "1048576", "1048577", "2097152", "2147483647", "2147483648", "4294967296",
                                        "4611686018427387904", "9223372036854775807", "9223372036854775808"};
  std::mt19937 rng(seed);
  if (rng() % 4 != 0)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string text(reinterpret_cast<const char *>(data), size);
  std::vector<std::pair<size_t, size_t>> tokens = integerTokens(text);
  if (tokens.empty())
    return LLVMFuzzerMutate(data, size, maxSize);
  auto [at, len] = tokens[rng() % tokens.size()];
  std::string from = text.substr(at, len), to = kValues[rng() % (sizeof kValues / sizeof *kValues)];
  if (rng() % 2) {
    text.replace(at, len, to);
  } else {
    for (auto it = tokens.rbegin(); it != tokens.rend(); ++it)
      if (text.compare(it->first, it->second, from) == 0)
        text.replace(it->first, it->second, to);
  }
  if (text.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

#endif
