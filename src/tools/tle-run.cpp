// tle-run: compiles a kernel and runs it once on host arrays (CPU target, ORC JIT) or on the GPU
// (through libtle_rt), with arguments from .npy files, generators or numbers; saves outputs.
#include "StdoutCheck.h"
#include "tle/Driver/Compiler.h"
#include "tle/Driver/GridExpr.h"
#include "tle/IR/IR.h"
#include "tle/Runtime/Runtime.h"
#include "tle/Support/Diagnostics.h"
#include "tle/Target/CPU/CPUBackend.h"
#include "tle/Target/CPU/HostArray.h"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

using namespace tle;

namespace {

/// A user error: reported as "tle-run: error: <message>", exit status 1.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string input;
  driver::CompileOptions compile;
  std::vector<std::string> defines, args, saves, prints, expects;
  std::string grid = "1";
  std::optional<double> rtol, atol;
  std::string target = "cpu";
  uint64_t seed = 0;
  unsigned threads = 0;
  bool checkBounds = false;
  bool quiet = false;
  std::string dumpIR;
};

/// NAME=VALUE, split at the first '='.
std::pair<std::string, std::string> splitAssign(const std::string &s, const char *what) {
  size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(std::string(what) + " expects NAME=VALUE, got '" + s + "'");
  return {s.substr(0, eq), s.substr(eq + 1)};
}

/// Without -s: the signature entry of each parameter, from its --arg value, for the parameters
/// that have no annotation (sema::SpecializeOptions::argTypes): a .npy file's dtype, a
/// generator's dtype, or a number typed as Triton's JIT types it (bool i1; an int i32, else i64,
/// else u64; a float fp32). Values that say nothing (a generator without a dtype) are left out.
std::map<std::string, std::string> inferArgTypes(const std::map<std::string, std::string> &given) {
  std::map<std::string, std::string> types;
  for (auto &[name, spec] : given) {
    std::vector<std::string> parts;
    std::stringstream ss(spec);
    for (std::string p; std::getline(ss, p, ':');)
      parts.push_back(p);
    const std::string kind = parts.empty() ? "" : parts[0];
    size_t dtypeAt = kind == "full" ? 2 : 1;
    if (kind == "zeros" || kind == "ones" || kind == "rand" || kind == "full") {
      if (parts.size() == dtypeAt + 2)
        if (auto d = cpu::parseArrayDType(parts[dtypeAt]))
          types[name] = std::string("*") + ir::name(*d);
      continue;
    }
    if (spec.size() > 4 && spec.compare(spec.size() - 4, 4, ".npy") == 0) {
      try {
        types[name] = std::string("*") + ir::name(cpu::readNpyDType(spec));
      } catch (const cpu::Error &e) {
        throw UsageError("--arg " + name + ": " + e.what());
      }
      continue;
    }
    if (spec == "true" || spec == "false" || spec == "True" || spec == "False") {
      types[name] = "i1";
      continue;
    }
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(spec.c_str(), &end, 0);
    if (!spec.empty() && !*end && !errno) {
      types[name] = v >= INT32_MIN && v <= INT32_MAX ? "i32" : "i64";
      continue;
    }
    if (!spec.empty() && spec[0] != '-' && !*end && errno == ERANGE) {
      errno = 0;
      std::strtoull(spec.c_str(), &end, 0);
      if (!*end && !errno)
        types[name] = "u64";
      continue;
    }
    std::strtod(spec.c_str(), &end);
    if (!spec.empty() && !*end)
      types[name] = "fp32";
  }
  return types;
}

/// The signed value of an integer scalar argument's bits of type `t`.
int64_t signedValue(uint64_t bits, ir::DType t) {
  unsigned w = ir::bitWidth(t);
  if (!ir::isSigned(t) || w >= 64)
    return static_cast<int64_t>(bits);
  uint64_t sign = 1ULL << (w - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

/// The grid of --grid: one to three expressions as tlec -g takes them ("cdiv(n, BLOCK), 4"), over
/// the kernel's integer scalar arguments and integer constexprs.
cpu::Grid evaluateRunGrid(const std::string &text, const ir::Function &fn, const std::vector<uint64_t> &scalars) {
  driver::GridError err;
  auto bad = [&](const std::string &why) {
    return UsageError("--grid '" + text + "': " + why);
  };
  std::optional<driver::GridExpr> g = driver::parseGrid(text, &err);
  if (!g)
    throw bad(err.message + " (column " + std::to_string(err.column + 1) + ")");
  std::map<std::string, int64_t> values;
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (!fn.params[i].type.isPointer() && ir::isInteger(fn.params[i].type.dtype))
      values[fn.params[i].name] = signedValue(scalars[i], fn.params[i].type.dtype);
  for (auto &[name, value] : fn.constexprs) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (!value.empty() && !*end && !errno)
      values[name] = v;
  }
  int64_t dims[3] = {1, 1, 1};
  for (size_t d = 0; d < g->dims.size(); ++d) {
    std::optional<int64_t> v = driver::evaluateGrid(*g->dims[d], values, &err);
    if (!v) {
      std::string usable;
      for (auto &[n, _] : values)
        usable += (usable.empty() ? "" : ", ") + n;
      throw bad(err.message + " (names: the integer scalar arguments and constexprs: " +
                (usable.empty() ? "none" : usable) + ")");
    }
    int64_t limit = d == 0 ? 0x7fffffffLL : 65535;
    if (*v < 1 || *v > limit)
      throw bad("dimension " + std::to_string(d) + " (" + g->dimText(d) + ") is " + std::to_string(*v) +
                ", outside [1, " + std::to_string(limit) + "]");
    dims[d] = *v;
  }
  return {uint32_t(dims[0]), uint32_t(dims[1]), uint32_t(dims[2])};
}

/// torch.testing.assert_close's default (rtol, atol) for comparing elements of `t`; integers exact.
std::pair<double, double> defaultTolerance(ir::DType t) {
  switch (t) {
  case ir::DType::F16: return {1e-3, 1e-5};
  case ir::DType::BF16: return {1.6e-2, 1e-5};
  case ir::DType::F32: return {1.3e-6, 1e-5};
  case ir::DType::F64: return {1e-7, 1e-7};
  case ir::DType::F8E4M3: return {1.25e-1, 1e-5};
  case ir::DType::F8E5M2: return {2.5e-1, 1e-5};
  default: return {0, 0};
  }
}

/// --expect NAME=FILE.npy: `got` equals the file's array elementwise within atol + rtol *
/// |expected| (NaN matches NaN); a UsageError says how many elements differ and where.
std::string checkExpected(const std::string &name, const std::string &path, const cpu::HostArray &got,
                          std::optional<double> rtolGiven, std::optional<double> atolGiven) {
  cpu::HostArray want;
  try {
    want = cpu::readNpy(path);
  } catch (const cpu::Error &e) {
    throw UsageError("--expect " + name + ": " + e.what());
  }
  bool bits = ir::isFP8(got.dtype()) || got.dtype() == ir::DType::BF16;
  if (bits && ir::storageBytes(want.dtype()) == ir::storageBytes(got.dtype()) && ir::isInteger(want.dtype()))
    want.reinterpret(got.dtype()); // NumPy has no bf16 or fp8: their bits travel as integers
  if (want.numElements() != got.numElements())
    throw UsageError("--expect " + name + ": '" + path + "' holds " + want.describe() + " but " + name + " is " +
                     got.describe() + " (" + std::to_string(got.numElements()) + " elements)");
  auto [rtol, atol] = defaultTolerance(got.dtype());
  rtol = rtolGiven.value_or(rtol);
  atol = atolGiven.value_or(atol);
  size_t bad = 0, first = 0, worstAt = 0;
  double worst = 0;
  for (size_t i = 0; i < got.numElements(); ++i) {
    double g = got.get(i), w = want.get(i);
    if (std::isnan(g) && std::isnan(w))
      continue;
    double err = std::fabs(g - w);
    if (std::isnan(err) || err > worst || (std::isinf(err) && !std::isinf(worst))) {
      worst = std::isnan(err) ? INFINITY : err;
      worstAt = i;
    }
    if (!(err <= atol + rtol * std::fabs(w)) && !(g == w)) {
      if (!bad++)
        first = i;
    }
  }
  char tol[96];
  std::snprintf(tol, sizeof tol, "atol=%g, rtol=%g", atol, rtol);
  char worstText[96];
  std::snprintf(worstText, sizeof worstText, "max abs error %g at index %zu", worst, worstAt);
  if (bad)
    throw UsageError("--expect " + name + "=" + path + ": " + std::to_string(bad) + " of " +
                     std::to_string(got.numElements()) + " elements differ by more than atol + rtol * |expected| (" +
                     tol + "); first at index " + std::to_string(first) + ": got " + got.str(first) + ", expected " +
                     want.str(first) + "; " + worstText);
  return name + " matches " + path + ": " + std::to_string(got.numElements()) + " elements, " + worstText + " (" +
         tol + ")";
}

/// A scalar argument's bits from its text, range-checked against `t`.
uint64_t parseScalar(const std::string &text, ir::DType t, const std::string &param) {
  auto bad = [&](const std::string &why) {
    return UsageError("bad value '" + text + "' for scalar parameter '" + param + "' (" + ir::name(t) + "): " + why);
  };
  if (t == ir::DType::I1) {
    if (text == "1" || text == "true" || text == "True")
      return 1;
    if (text == "0" || text == "false" || text == "False")
      return 0;
    throw bad("expected true, false, 1 or 0");
  }
  char *end = nullptr;
  errno = 0;
  if (ir::isFloat(t)) {
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end)
      throw bad("expected a number");
    switch (t) {
    case ir::DType::F16: return cpu::halfFromDouble(v);
    case ir::DType::BF16: return cpu::bf16FromDouble(v);
    case ir::DType::F32: {
      float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    default: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    }
  }
  if (text.empty() || text.find_first_of(".eE") != std::string::npos)
    throw bad("expected an integer");
  unsigned w = ir::bitWidth(t);
  if (ir::isSigned(t)) {
    long long v = std::strtoll(text.c_str(), &end, 0);
    long long lo = w == 64 ? std::numeric_limits<long long>::min() : -(1LL << (w - 1));
    long long hi = w == 64 ? std::numeric_limits<long long>::max() : (1LL << (w - 1)) - 1;
    if (*end || errno || v < lo || v > hi)
      throw bad("expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<uint64_t>(v) & (w == 64 ? ~0ULL : (1ULL << w) - 1);
  }
  if (text[0] == '-')
    throw bad("expected a non-negative integer");
  unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  unsigned long long hi = w == 64 ? ~0ULL : (1ULL << w) - 1;
  if (*end || errno || v > hi)
    throw bad("expected an integer in [0, " + std::to_string(hi) + "]");
  return v;
}

/// The array for pointer parameter `p` from a generator spec or a .npy path.
cpu::HostArray loadArray(const std::string &spec, const ir::Param &p, uint64_t seed) {
  ir::DType pointee = p.type.pointee;
  try {
    if (auto a = cpu::makeArray(spec, pointee, seed))
      return std::move(*a);
  } catch (const cpu::Error &e) {
    throw UsageError("--arg " + p.name + ": " + e.what());
  }
  bool looksNumeric = !spec.empty() && (std::isdigit(static_cast<unsigned char>(spec[0])) || spec[0] == '-') &&
                      spec.find(".npy") == std::string::npos && access(spec.c_str(), F_OK) != 0;
  if (looksNumeric)
    throw UsageError("pointer parameter '" + p.name + "' (" + p.type.str() + ") needs an array: a .npy file or " +
                     "a generator such as zeros:" + ir::name(pointee) + ":1024, got '" + spec + "'");
  cpu::HostArray a;
  try {
    a = cpu::readNpy(spec);
  } catch (const cpu::Error &e) {
    throw UsageError(std::string("--arg ") + p.name + ": " + e.what());
  }
  if (a.dtype() == pointee)
    return a;
  if (pointee == ir::DType::BF16 && (a.dtype() == ir::DType::U16 || a.dtype() == ir::DType::I16)) {
    a.reinterpret(ir::DType::BF16); // NumPy has no bf16: its bits travel as uint16
    return a;
  }
  if (ir::isFP8(pointee) && (a.dtype() == ir::DType::U8 || a.dtype() == ir::DType::I8)) {
    a.reinterpret(pointee); // NumPy has no fp8: its bits travel as uint8
    return a;
  }
  throw UsageError("'" + spec + "' holds " + ir::name(a.dtype()) + " elements (" + cpu::npyDescr(a.dtype()) +
                   ") but '" + p.name + "' points to " + ir::name(pointee) + " (" + cpu::npyDescr(pointee) +
                   "); convert the array first, e.g. numpy's a.astype(...)");
}

/// One runtime argument as tle-run holds it.
struct Arg {
  bool isArray = false;
  cpu::HostArray array;
  uint64_t bits = 0;
};

/// Compiles with the tlec pipeline into a temporary cubin and returns its bytes.
std::string compileCubin(const Options &o, const std::string &arch) {
  driver::CompileOptions co = o.compile;
  co.emit = driver::Emit::Cubin;
  co.arch = arch;
  const char *tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/tle-run-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0)
    throw UsageError("cannot create a temporary file for the cubin: " + std::string(std::strerror(errno)));
  close(fd);
  co.output = path;
  int rc = driver::compile(co, std::cout, std::cerr);
  std::ifstream in(path, std::ios::binary);
  std::string cubin((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unlink(path.c_str());
  if (rc != 0)
    throw UsageError("compiling the kernel for the GPU failed");
  return cubin;
}

double runGpu(const Options &o, const ir::Function &fn, const cpu::Grid &grid, std::vector<Arg> &args) {
  std::string reason;
  if (!rt::gpuAvailable(&reason))
    throw UsageError("--target gpu needs a CUDA GPU, but none is usable here: " + reason +
                     " (use --target cpu to run on the host)");
  rt::Device dev(0);
  std::string cubin = compileCubin(o, dev.arch());
  rt::Module mod = rt::Module::fromImage(dev, cubin.data(), cubin.size(), o.input);
  rt::Kernel k = mod.kernel(fn.name);
  std::vector<rt::DeviceBuffer> bufs(args.size());
  std::vector<uint64_t> slots(args.size());
  std::vector<void *> ptrs(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].isArray) {
      bufs[i] = rt::DeviceBuffer(dev, args[i].array.bytes());
      if (args[i].array.bytes())
        bufs[i].copyFromHost(args[i].array.data(), args[i].array.bytes());
      slots[i] = bufs[i].address();
    } else {
      slots[i] = args[i].bits;
    }
    ptrs[i] = &slots[i];
  }
  rt::Stream stream(dev);
  auto t0 = std::chrono::steady_clock::now();
  k.launchRaw(rt::Grid(grid.x, grid.y, grid.z), stream, ptrs.data(), ptrs.size());
  stream.synchronize();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].isArray && args[i].array.bytes())
      bufs[i].copyToHost(args[i].array.data(), args[i].array.bytes());
  return ms;
}

double runCpu(const Options &o, const ir::Function &fn, DiagnosticEngine &diags, const cpu::Grid &grid,
              std::vector<Arg> &args) {
  cpu::CompileOptions co;
  co.checkBounds = o.checkBounds;
  co.keepIR = !o.dumpIR.empty();
  std::unique_ptr<cpu::Kernel> k = cpu::Kernel::compile(fn, diags, co);
  if (!k)
    throw UsageError("compiling the kernel for the cpu failed");
  if (!o.dumpIR.empty()) {
    std::ofstream out(o.dumpIR);
    out << k->llvmIR();
    if (!out)
      throw UsageError("cannot write '" + o.dumpIR + "'");
  }
  std::vector<cpu::ArgValue> values;
  for (size_t i = 0; i < args.size(); ++i)
    values.push_back(args[i].isArray ? cpu::ArgValue::ptr(args[i].array.data(), args[i].array.bytes())
                                     : cpu::ArgValue::scalarBits(fn.params[i].type.dtype, args[i].bits));
  cpu::RunOptions ro;
  ro.threads = o.threads;
  auto t0 = std::chrono::steady_clock::now();
  k->run(grid, values, ro);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void printArray(const std::string &name, const cpu::HostArray &a) {
  constexpr size_t kMax = 1000;
  std::cout << name << ": " << a.describe() << " = [";
  size_t n = std::min(a.numElements(), kMax);
  for (size_t i = 0; i < n; ++i)
    std::cout << (i ? ", " : "") << a.str(i);
  if (a.numElements() > kMax)
    std::cout << ", ... (" << a.numElements() - kMax << " more)";
  std::cout << "]\n";
}

int run(Options o) {
  if (o.target != "cpu" && o.target != "gpu")
    throw UsageError("--target must be cpu or gpu, got '" + o.target + "'");
  if (o.checkBounds && o.target != "cpu")
    throw UsageError("--check-bounds works with --target cpu only");
  // Arguments, by parameter name.
  std::map<std::string, std::string> given;
  for (const std::string &a : o.args) {
    auto [name, spec] = splitAssign(a, "--arg");
    if (given.count(name))
      throw UsageError("--arg " + name + " is given twice");
    given[name] = spec;
  }
  if (!o.compile.signature)
    o.compile.argTypes = inferArgTypes(given);

  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::string ioErr;
  uint32_t file = sm.loadFile(o.input, ioErr);
  if (!file)
    throw UsageError(ioErr);
  std::unique_ptr<ir::Function> fn = driver::compileToTile(file, o.compile, diags);
  if (!fn) {
    for (auto &[name, spec] : given)
      if (!o.compile.signature && !o.compile.argTypes.count(name) && spec.find(':') != std::string::npos)
        std::cerr << "tle-run: note: --arg " << name << "=" << spec << " gives no type: write its dtype (e.g. "
                  << spec.substr(0, spec.find(':')) << ":f32" << spec.substr(spec.find(':')) << ") or pass -s\n";
    return 1;
  }

  std::string paramList;
  for (auto &p : fn->params)
    paramList += (paramList.empty() ? "" : ", ") + p.name + " (" + p.type.str() + ")";
  for (auto &[name, spec] : given) {
    bool known = false;
    for (auto &p : fn->params)
      known = known || p.name == name;
    if (known)
      continue;
    for (auto &[cname, value] : fn->constexprs)
      if (cname == name)
        throw UsageError("'" + name + "' is a constexpr parameter (specialised to " + value +
                         "): set it with -D " + name + "=VALUE or in the signature, not --arg");
    throw UsageError("kernel '" + fn->name + "' has no parameter '" + name + "'; its runtime parameters are: " +
                     paramList);
  }
  std::string missing;
  for (auto &p : fn->params)
    if (!given.count(p.name))
      missing += (missing.empty() ? "" : ", ") + p.name + " (" + p.type.str() + ")";
  if (!missing.empty())
    throw UsageError("missing --arg for: " + missing +
                     "; pointers take a .npy file or zeros:/ones:/rand:/full:V: generators, scalars a number");
  std::vector<Arg> args(fn->params.size());
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const ir::Param &p = fn->params[i];
    const std::string &spec = given[p.name];
    if (p.type.isPointer()) {
      args[i].isArray = true;
      args[i].array = loadArray(spec, p, o.seed + i);
    } else {
      if (spec.find(':') != std::string::npos || spec.find(".npy") != std::string::npos)
        throw UsageError("scalar parameter '" + p.name + "' (" + p.type.str() + ") takes a number, got '" + spec + "'");
      args[i].bits = parseScalar(spec, p.type.dtype, p.name);
    }
  }
  auto arrayArg = [&](const std::string &name, const char *opt) -> cpu::HostArray & {
    for (size_t i = 0; i < fn->params.size(); ++i)
      if (fn->params[i].name == name) {
        if (!args[i].isArray)
          throw UsageError(std::string(opt) + " " + name + ": '" + name + "' is a scalar, not an array");
        return args[i].array;
      }
    throw UsageError(std::string(opt) + ": kernel '" + fn->name + "' has no pointer parameter '" + name +
                     "'; its runtime parameters are: " + paramList);
  };
  std::vector<std::pair<std::string, std::string>> saves;
  for (const std::string &s : o.saves) {
    auto sv = splitAssign(s, "--save");
    arrayArg(sv.first, "--save");
    saves.push_back(sv);
  }
  for (const std::string &name : o.prints)
    arrayArg(name, "--print");
  std::vector<std::pair<std::string, std::string>> expects;
  for (const std::string &e : o.expects) {
    auto ev = splitAssign(e, "--expect");
    arrayArg(ev.first, "--expect");
    expects.push_back(ev);
  }
  std::vector<uint64_t> scalars;
  for (const Arg &a : args)
    scalars.push_back(a.bits);
  cpu::Grid grid = evaluateRunGrid(o.grid, *fn, scalars);

  double ms = 0;
  try {
    ms = o.target == "cpu" ? runCpu(o, *fn, diags, grid, args) : runGpu(o, *fn, grid, args);
  } catch (const cpu::Error &e) {
    throw UsageError(e.what());
  } catch (const rt::Error &e) {
    throw UsageError(e.what());
  }
  for (auto &[name, path] : saves) {
    try {
      cpu::writeNpy(path, arrayArg(name, "--save"));
    } catch (const cpu::Error &e) {
      throw UsageError(e.what());
    }
  }
  for (const std::string &name : o.prints)
    printArray(name, arrayArg(name, "--print"));
  std::vector<std::string> matched;
  for (auto &[name, path] : expects)
    matched.push_back(checkExpected(name, path, arrayArg(name, "--expect"), o.rtol, o.atol));
  if (!o.quiet) {
    char line[256];
    std::snprintf(line, sizeof line, "%s: ran %u x %u x %u programs on the %s in %.3f ms\n", fn->name.c_str(), grid.x,
                  grid.y, grid.z, o.target.c_str(), ms);
    std::cerr << line;
    for (const std::string &m : matched)
      std::cerr << "tle-run: " << m << "\n";
  }
  return 0;
}

} // namespace

namespace {

int runTool(int argc, char **argv) {
  CLI::App app{"tle-run: compile a TLE / Triton kernel and run it on the CPU (ORC JIT) or the GPU, with "
               "arguments from .npy files, generated arrays or numbers",
               "tle-run"};
  app.set_version_flag("--version", std::string("tle-run ") + TLE_VERSION);
  Options o;
  app.add_option("input", o.input, "kernel source (.tle, Triton .py, or tile IR .tir)")->required();
  app.add_option("-I", o.compile.importPath,
                 "directory searched for imported modules (repeatable; after the input's package root, as tlec -I)");
  app.add_option("-n,--kernel", o.compile.kernel, "kernel to run (default: the file's only @jit kernel, or the only one no other @jit function names)");
  app.add_option("-s,--signature", o.compile.signature,
                 "Triton AOT signature, e.g. '*fp32:16, *fp32:16, i32, 1024' (default: the annotations, and for "
                 "parameters without one the --arg values' types: a .npy file's dtype, a generator's DTYPE, "
                 "an integer i32 (i64 when larger), a float fp32, true/false i1)");
  app.add_option("-D", o.defines, "constexpr parameter value, NAME=VALUE (repeatable): a literal or an expression "
                                  "evaluated in the kernel's module, as tlec -D");
  app.add_option("-w,--num-warps", o.compile.numWarps, "warps per program for the GPU (default 4)");
  app.add_option("--grid", o.grid, "programs to run: one to three expressions as tlec -g takes them, over the "
                                  "integer scalar arguments and constexprs, e.g. 'cdiv(n, BLOCK), 4' (default 1)");
  app.add_option("--arg", o.args,
                 "NAME=SPEC for each runtime parameter (repeatable). Pointers: a .npy file, "
                 "zeros:[DTYPE:]SHAPE, ones:[DTYPE:]SHAPE, rand:[DTYPE:]SHAPE or full:VALUE:[DTYPE:]SHAPE "
                 "(SHAPE like 4096 or 128x1024); scalars: a number (true/false for i1)");
  app.add_option("--save", o.saves, "NAME=FILE.npy: write pointer argument NAME after the run (repeatable)");
  app.add_option("--print", o.prints, "NAME: print pointer argument NAME after the run (repeatable)");
  app.add_option("--expect", o.expects,
                 "NAME=FILE.npy: after the run, pointer argument NAME must equal the file's array within "
                 "atol + rtol * |expected| elementwise, else exit 1 naming the first difference (repeatable)");
  app.add_option("--rtol", o.rtol, "--expect's relative tolerance (default: torch.testing's for the dtype, e.g. "
                                   "1.3e-6 for fp32, 1e-3 for fp16; 0 for integers)");
  app.add_option("--atol", o.atol, "--expect's absolute tolerance (default: torch.testing's for the dtype, e.g. "
                                   "1e-5; 0 for integers)");
  app.add_option("--target", o.target, "cpu (default; ORC JIT on this machine) or gpu (CUDA, through libtle_rt)");
  app.add_option("--seed", o.seed, "seed for rand: arrays (default 0; argument i uses seed + i)");
  app.add_option("--threads", o.threads, "cpu worker threads (default: one per hardware thread)");
  app.add_flag("--check-bounds", o.checkBounds,
               "cpu: check every global access against the argument arrays; report the first one outside "
               "them instead of crashing");
  app.add_flag("--debug", o.compile.debug,
               "debug build: runtime assert and tl.device_assert stop the run with their message when false");
  app.add_flag("-q,--quiet", o.quiet, "do not print the timing line");
  app.add_option("--dump-llvm", o.dumpIR, "cpu: write the kernel's optimised host LLVM IR to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  try {
    for (auto &d : o.defines) {
      auto [name, value] = splitAssign(d, "-D");
      o.compile.defines[name] = value;
    }
    o.compile.input = o.input;
    o.compile.fromTile = o.input.size() > 4 && o.input.compare(o.input.size() - 4, 4, ".tir") == 0;
    return run(o);
  } catch (const UsageError &e) {
    std::cerr << "tle-run: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "tle-run: error: " << e.what() << "\n";
    return 1;
  }
}

} // namespace

int main(int argc, char **argv) { return tle::tools::exitChecked("tle-run", runTool(argc, argv)); }
