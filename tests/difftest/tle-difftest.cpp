// tle-difftest: differential testing of the CPU target against the reference interpreter of the
// tile IR. For each seed it generates a random kernel and its inputs (Generator.h), compiles it
// to the tile stage through the compiler library, runs the interpreter on the tile IR before and
// after canonicalisation and the CPU target (ORC JIT) on the same inputs, and compares every
// buffer. A disagreement, a compile failure of a generated kernel, an internal error or an
// exception is a finding: the kernel, its inputs and a reproducer are written to a directory.
// tests/difftest/README.md describes the tool and the findings so far.
#include "Generator.h"
#include "Interpreter.h"

#include "tle/Driver/Compiler.h"
#include "tle/Frontend/Parser.h"
#include "tle/IR/IR.h"
#include "tle/Sema/Specialize.h"
#include "tle/Support/Diagnostics.h"
#include "tle/Target/CPU/CPUBackend.h"
#include "tle/Target/CPU/HostArray.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

using namespace tle;
using namespace tle::difftest;

namespace {

struct Options {
  uint64_t seed = 0;
  uint64_t count = 100;
  std::string outDir = "difftest-failures";
  unsigned threads = 1;
  bool show = false;
  bool verbose = false;
  bool corrupt = false;
  std::string source;
  double relTol = 1e-5;
};

/// A finding for one seed: what went wrong, in one paragraph.
struct Finding {
  std::string what;
};

/// The buffers of one run: one HostArray per pointer argument (empty for scalars).
using Buffers = std::vector<cpu::HostArray>;

Buffers makeBuffers(const GeneratedKernel &k) {
  Buffers b;
  for (const KernelArg &a : k.args) {
    if (!a.isPointer) {
      b.emplace_back();
      continue;
    }
    cpu::HostArray h(a.dtype, a.shape);
    std::memcpy(h.data(), a.bytes.data(), a.bytes.size());
    b.push_back(std::move(h));
  }
  return b;
}

std::string elementText(const cpu::HostArray &h, size_t i) {
  const unsigned char *p = static_cast<const unsigned char *>(h.data()) + i * ir::storageBytes(h.dtype());
  uint64_t bits = 0;
  std::memcpy(&bits, p, ir::storageBytes(h.dtype()));
  std::ostringstream os;
  os << h.str(i) << " (bits 0x" << std::hex << bits << ")";
  return os.str();
}

/// Compares buffers `a` and `b` (of the kernel's pointer arguments); returns the first
/// difference as a sentence, or an empty string. Integers must be bit-identical; floats equal in
/// value (NaN equals NaN, +0 equals -0), within `relTol` relative when `approximate`.
std::string compareBuffers(const GeneratedKernel &k, const Buffers &a, const Buffers &b, const char *nameA,
                           const char *nameB, bool approximate, double relTol) {
  for (size_t p = 0; p < k.args.size(); ++p) {
    if (!k.args[p].isPointer)
      continue;
    const cpu::HostArray &x = a[p], &y = b[p];
    ir::DType t = x.dtype();
    unsigned eb = ir::storageBytes(t);
    size_t bad = 0, first = SIZE_MAX;
    for (size_t i = 0; i < x.numElements(); ++i) {
      uint64_t bx = 0, by = 0;
      std::memcpy(&bx, static_cast<const unsigned char *>(x.data()) + i * eb, eb);
      std::memcpy(&by, static_cast<const unsigned char *>(y.data()) + i * eb, eb);
      bool same;
      if (ir::isFloat(t)) {
        long double fx = floatFromBits(bx, t), fy = floatFromBits(by, t);
        if (std::isnan(fx) || std::isnan(fy))
          same = std::isnan(fx) && std::isnan(fy);
        else if (fx == fy)
          same = true;
        else
          same = approximate && std::isfinite(fx) && std::isfinite(fy) &&
                 std::fabs(fx - fy) <= relTol * std::max(std::fabs(fx), std::fabs(fy));
      } else {
        same = bx == by;
      }
      if (!same) {
        ++bad;
        if (first == SIZE_MAX)
          first = i;
      }
    }
    if (bad)
      return "buffer '" + k.args[p].name + "' (" + x.describe() + ") differs in " + std::to_string(bad) +
             " element(s); first at element " + std::to_string(first) + ": " + nameA + " " + elementText(x, first) +
             ", " + nameB + " " + elementText(y, first);
  }
  return "";
}

std::string scalarText(const KernelArg &a) {
  if (a.dtype == ir::DType::F32) {
    float f;
    uint32_t b = uint32_t(a.bits);
    std::memcpy(&f, &b, 4);
    std::ostringstream os;
    os << std::setprecision(9) << f;
    return os.str();
  }
  if (ir::isSigned(a.dtype))
    return std::to_string(int64_t(a.bits << (64 - ir::bitWidth(a.dtype))) >> (64 - ir::bitWidth(a.dtype)));
  return std::to_string(a.bits);
}

/// Writes the kernel, its inputs, both results and a reproducer into `dir`; returns the
/// reproducer's text.
std::string saveFinding(const std::filesystem::path &dir, const GeneratedKernel &k, const Buffers &inputs,
                        const Buffers *expected, const Buffers *got, const std::string &tileIR) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "kernel.tle") << k.source;
  if (!tileIR.empty())
    std::ofstream(dir / "kernel.tir") << tileIR;
  std::ostringstream run;
  run << "tle-run kernel.tle -n " << k.kernelName << " -s \"" << k.signature << "\" --grid " << k.grid[0] << ","
      << k.grid[1] << "," << k.grid[2] << " --threads 1";
  for (size_t p = 0; p < k.args.size(); ++p) {
    const KernelArg &a = k.args[p];
    if (!a.isPointer) {
      run << " --arg " << a.name << "=" << scalarText(a);
      continue;
    }
    cpu::writeNpy((dir / (a.name + ".npy")).string(), inputs[p]);
    if (expected)
      cpu::writeNpy((dir / (a.name + ".expected.npy")).string(), (*expected)[p]);
    if (got)
      cpu::writeNpy((dir / (a.name + ".cpu.npy")).string(), (*got)[p]);
    run << " --arg " << a.name << "=" << a.name << ".npy --save " << a.name << "=" << a.name << ".out.npy";
  }
  std::string cmd = run.str();
  std::ofstream(dir / "repro.sh") << "#!/bin/sh\n# Runs the kernel on the CPU target; compare *.out.npy with "
                                     "*.expected.npy (the reference interpreter's result).\n"
                                  << cmd << "\n";
  return cmd;
}

std::vector<InterpArg> interpArgs(const GeneratedKernel &k, Buffers &b) {
  std::vector<InterpArg> r;
  for (size_t p = 0; p < k.args.size(); ++p)
    r.push_back(k.args[p].isPointer ? InterpArg::buffer(b[p].data(), b[p].bytes()) : InterpArg::scalar(k.args[p].bits));
  return r;
}

std::vector<cpu::ArgValue> cpuArgs(const GeneratedKernel &k, Buffers &b) {
  std::vector<cpu::ArgValue> r;
  for (size_t p = 0; p < k.args.size(); ++p)
    r.push_back(k.args[p].isPointer ? cpu::ArgValue::ptr(b[p].data(), b[p].bytes())
                                    : cpu::ArgValue::scalarBits(k.args[p].dtype, k.args[p].bits));
  return r;
}

/// Changes element 0 of the first output buffer (for --corrupt): flips the lowest bit of an integer,
/// moves a float well away from its value (beyond any tolerance).
void corruptFirstOutput(const GeneratedKernel &k, Buffers &b) {
  for (size_t p = 0; p < k.args.size(); ++p) {
    if (!k.args[p].isPointer)
      continue;
    cpu::HostArray &h = b[p];
    unsigned eb = ir::storageBytes(h.dtype());
    uint64_t bits = 0;
    std::memcpy(&bits, h.data(), eb);
    if (ir::isFloat(h.dtype())) {
      long double v = floatFromBits(bits, h.dtype());
      v = std::isnan(v) ? 0.0L : std::isinf(v) ? 1.0L : v + 1 + std::fabs(v); // > v, or 1 for v < 0
      bits = floatToBits(roundToFloat(v, h.dtype()), h.dtype());
    } else {
      bits ^= 1;
    }
    std::memcpy(h.data(), &bits, eb);
    return;
  }
}

/// Generates, compiles, runs and compares kernel `seed`. Returns a finding or nullopt.
std::optional<Finding> testSeed(uint64_t seed, const Options &o) {
  GeneratedKernel k = generateKernel(seed);
  if (!o.source.empty()) {
    std::ifstream in(o.source);
    if (!in)
      throw std::runtime_error("cannot read '" + o.source + "'");
    std::ostringstream text;
    text << in.rdbuf();
    k.source = text.str();
  }
  if (o.show)
    std::cout << "# seed " << seed << ": -s \"" << k.signature << "\" --grid " << k.grid[0] << "," << k.grid[1] << "\n"
              << k.source << "\n";
  std::filesystem::path dir = std::filesystem::path(o.outDir) / ("seed-" + std::to_string(seed));
  Buffers inputs = makeBuffers(k);
  auto fail = [&](const std::string &what, const Buffers *expected, const Buffers *got, const std::string &ir) {
    std::string cmd = saveFinding(dir, k, inputs, expected, got, ir);
    return Finding{what + "\n  kernel and inputs: " + dir.string() + "\n  reproduce: tle-difftest --seed " +
                   std::to_string(seed) + " --count 1   (CPU target alone, in that directory: " + cmd + ")"};
  };

  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream diagText;
  diags.setStream(diagText);
  uint32_t file = sm.addFile("difftest_" + std::to_string(seed) + ".tle", k.source);

  // The tile IR straight from specialisation (before canonicalisation) ...
  std::unique_ptr<ir::Function> raw;
  try {
    ast::ASTContext actx;
    ast::Module mod = frontend::parseModule(file, actx, diags);
    sema::SpecializeOptions so;
    so.kernel = k.kernelName;
    so.signature = k.signature;
    raw = sema::specialize(mod, so, diags);
  } catch (CompileAborted &) {
    raw = nullptr;
  }
  // ... and the tile stage proper, the input of the CPU target.
  driver::CompileOptions co;
  co.kernel = k.kernelName;
  co.signature = k.signature;
  std::unique_ptr<ir::Function> fn = raw ? driver::compileToTile(file, co, diags) : nullptr;
  if (!raw || !fn || diags.numErrors())
    return fail("the generated kernel does not compile:\n" + diagText.str(), nullptr, nullptr, "");
  if (std::string v = ir::verify(*raw); !v.empty())
    return fail("the specialised tile IR does not verify: " + v, nullptr, nullptr, "");
  std::ostringstream tir;
  ir::print(tir, *fn);
  if (std::string u = unsupportedOp(*fn); !u.empty())
    return fail("the generated kernel uses an op the interpreter lacks: " + u, nullptr, nullptr, tir.str());

  Buffers ref = makeBuffers(k), canon = makeBuffers(k), got = makeBuffers(k);
  try {
    interpret(*raw, k.grid, interpArgs(k, ref));
    interpret(*fn, k.grid, interpArgs(k, canon));
  } catch (const InterpError &e) {
    return fail(std::string("the reference interpreter failed: ") + e.what(), nullptr, nullptr, tir.str());
  }
  if (std::string d = compareBuffers(k, ref, canon, "before canonicalize", "after", false, 0); !d.empty())
    return fail("canonicalisation changed the result: " + d, &ref, &canon, tir.str());

  std::unique_ptr<cpu::Kernel> ck = cpu::Kernel::compile(*fn, diags);
  if (!ck || diags.numErrors())
    return fail("the CPU target rejects the kernel:\n" + diagText.str(), &ref, nullptr, tir.str());
  try {
    cpu::RunOptions ro;
    ro.threads = o.threads;
    ck->run({k.grid[0], k.grid[1], k.grid[2]}, cpuArgs(k, got), ro);
  } catch (const cpu::Error &e) {
    return fail(std::string("the CPU target failed: ") + e.what(), &ref, nullptr, tir.str());
  }
  if (o.corrupt)
    corruptFirstOutput(k, got);
  if (std::string d = compareBuffers(k, ref, got, "interpreter", "cpu", k.approximate, o.relTol); !d.empty())
    return fail("mismatch between the interpreter and the CPU target: " + d, &ref, &got, tir.str());
  return std::nullopt;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{"tle-difftest: random kernels run on the CPU target and on the reference interpreter of the tile "
               "IR, their results compared"};
  app.add_option("--seed", o.seed, "first seed (default 0)");
  app.add_option("--count", o.count, "number of kernels, seeds seed .. seed+count-1 (default 100)");
  app.add_option("--out-dir", o.outDir, "where findings are written, one directory per seed (default difftest-failures)");
  app.add_option("--threads", o.threads, "CPU target worker threads (default 1)");
  app.add_option("--rel-tol", o.relTol,
                 "relative tolerance for float outputs of kernels that call exp or log (default 1e-5)");
  app.add_flag("--corrupt", o.corrupt,
               "self-test: change one element of every CPU result; succeeds only if every kernel is reported");
  app.add_option("--source", o.source,
                 "use this kernel source instead of the generated one, with the seed's signature, grid and inputs "
                 "(to reduce a finding by hand)");
  app.add_flag("--show", o.show, "print every generated kernel and its signature");
  app.add_flag("-v,--verbose", o.verbose, "print one line per kernel");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  auto start = std::chrono::steady_clock::now();
  uint64_t findings = 0;
  for (uint64_t s = o.seed; s < o.seed + o.count; ++s) {
    std::optional<Finding> f;
    try {
      f = testSeed(s, o);
    } catch (const std::exception &e) {
      f = Finding{std::string("uncaught exception: ") + e.what() + "\n  reproduce: tle-difftest --seed " +
                  std::to_string(s) + " --count 1"};
    }
    if (f) {
      ++findings;
      std::cout << "tle-difftest: seed " << s << ": " << f->what << "\n";
    } else if (o.verbose) {
      std::cout << "tle-difftest: seed " << s << ": ok\n";
    }
    std::cout.flush();
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "tle-difftest: " << o.count << " kernels (seeds " << o.seed << " to " << o.seed + o.count - 1 << "), "
            << findings << " finding(s), " << std::fixed << std::setprecision(1) << secs << " s\n";
  if (o.corrupt) {
    bool all = findings == o.count;
    std::cout << "tle-difftest: self-test " << (all ? "passed" : "FAILED") << ": " << findings << " of " << o.count
              << " corrupted results reported\n";
    return all ? 0 : 1;
  }
  return findings ? 1 : 0;
}
