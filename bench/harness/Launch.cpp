// Reading kernel metadata from built files and resolving suite launches against it (see Launch.h).
#include "Launch.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

namespace tle::bench {

std::string executableDirectory() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return ".";
  std::string p(buf, size_t(n));
  return p.substr(0, p.rfind('/'));
}

rt::ModuleInfo readMetadataFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw BenchError("cannot read " + path);
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string sym = "__tle_metadata[";
  size_t at = data.find(sym);
  if (data.rfind("\x7f" "ELF", 0) != 0 && at != std::string::npos) {
    // PTX: .b8 __tle_metadata[N] = {123, 34, ...};
    size_t open = data.find('{', at), close = data.find('}', open);
    if (open == std::string::npos || close == std::string::npos)
      throw BenchError(path + ": malformed __tle_metadata array");
    std::string json;
    const char *p = data.c_str() + open + 1, *end = data.c_str() + close;
    while (p < end) {
      char *next = nullptr;
      long v = std::strtol(p, &next, 10);
      if (next == p) {
        ++p;
        continue;
      }
      if (v != 0)
        json += char(v);
      p = next;
    }
    return rt::parseModuleMetadata(json);
  }
  size_t key = data.find("\"tle-module\"");
  if (key == std::string::npos)
    throw BenchError(path + " carries no __tle_metadata (not built by tlec?)");
  size_t start = data.rfind('\0', key);
  start = start == std::string::npos ? 0 : start + 1;
  size_t stop = data.find('\0', key);
  return rt::parseModuleMetadata(std::string_view(data).substr(start, stop - start));
}

std::string findKernelFile(const std::string &dir, const std::string &name, const std::vector<std::string> &archs) {
  for (const std::string &arch : archs)
    for (const char *ext : {"cubin", "ptx"}) {
      std::string p = fmt::format("{}/{}.{}.{}", dir, name, arch, ext);
      if (access(p.c_str(), R_OK) == 0)
        return p;
    }
  return "";
}

Env launchEnv(const ResolvedCase &rc, const rt::KernelInfo &info) {
  Env env = rc.env;
  for (const auto &[name, text] : info.constexprs) {
    try {
      auto j = nlohmann::json::parse(text);
      if (j.is_number_integer())
        env[name] = Value::ofInt(j.get<int64_t>());
      else if (j.is_number_float())
        env[name] = Value::ofFloat(j.get<double>());
      else if (j.is_boolean())
        env[name] = Value::ofInt(j.get<bool>() ? 1 : 0);
    } catch (const std::exception &) {
      // Non-numeric constexprs (strings, dtypes) are not visible to expressions.
    }
  }
  return env;
}

namespace {

uint64_t scalarBits(const rt::ParamType &t, const Value &v, const std::string &where) {
  uint64_t bits = 0;
  switch (t.kind) {
  case rt::ScalarKind::Bool: return v.asDouble() != 0 ? 1 : 0;
  case rt::ScalarKind::Int:
  case rt::ScalarKind::UInt: {
    int64_t x = v.asInt(where);
    bool isSigned = t.kind == rt::ScalarKind::Int;
    int64_t lo = isSigned ? (t.bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (t.bits - 1))) : 0;
    int64_t hi = t.bits == 64 ? std::numeric_limits<int64_t>::max()
                              : (isSigned ? (int64_t(1) << (t.bits - 1)) - 1 : (int64_t(1) << t.bits) - 1);
    if (x < lo || x > hi)
      throw BenchError(fmt::format("{} = {} does not fit {}", where, x, t.str()));
    std::memcpy(&bits, &x, t.bits / 8);
    return bits;
  }
  case rt::ScalarKind::Float:
    if (t.bits == 32) {
      float f = float(v.asDouble());
      std::memcpy(&bits, &f, 4);
    } else if (t.bits == 64) {
      double d = v.asDouble();
      std::memcpy(&bits, &d, 8);
    } else {
      bits = rt::Half::fromFloat(float(v.asDouble())).bits;
    }
    return bits;
  case rt::ScalarKind::BFloat: return rt::BFloat16::fromFloat(float(v.asDouble())).bits;
  case rt::ScalarKind::TensorMap:
    throw BenchError(fmt::format("{}: nvTmaDesc (TMA descriptor) parameters are not supported by tle-bench", where));
  case rt::ScalarKind::Float8E4M3:
  case rt::ScalarKind::Float8E5M2:
    throw BenchError(fmt::format("{}: fp8 scalar parameters are not supported (pass fp8 data through a pointer)", where));
  }
  return bits;
}

} // namespace

ResolvedLaunch resolveLaunch(const LaunchSpec &l, const KernelHandle &k, const ResolvedCase &rc) {
  const CaseSpec &c = *rc.spec;
  std::string where = fmt::format("case '{}', kernel '{}' ({})", c.name, l.kernel, k.info.name);
  const auto &params = k.info.params;
  if (l.args.size() != params.size()) {
    std::string names;
    for (const auto &p : params)
      names += (names.empty() ? "" : ", ") + p.name + ": " + p.type.str();
    throw BenchError(fmt::format("{}: {} arguments given, the kernel takes {} ({})", where, l.args.size(),
                                 params.size(), names));
  }
  Env env = launchEnv(rc, k.info);
  ResolvedLaunch rl;
  rl.kernel = &k;
  for (size_t i = 0; i < params.size(); ++i) {
    const rt::ParamInfo &p = params[i];
    std::string pw = fmt::format("{}: argument {} ('{}', {})", where, i, p.name, p.type.str());
    ResolvedArg a;
    int b = bufferIndex(c, l.args[i]);
    if (p.type.pointer) {
      if (b < 0)
        throw BenchError(pw + ": expected a buffer name, got '" + l.args[i] + "'");
      const BufferSpec &bs = c.buffers[size_t(b)];
      if (dtypeName(bs.dtype) != p.type.elementName())
        throw BenchError(fmt::format("{}: buffer '{}' holds {}, the parameter points to {}", pw, bs.name,
                                     dtypeName(bs.dtype), p.type.elementName()));
      a.pointer = true;
      a.buffer = b;
    } else {
      if (b >= 0)
        throw BenchError(pw + ": a buffer was given for a scalar parameter");
      Value v = evalExpr(l.args[i], env);
      a.bits = scalarBits(p.type, v, pw);
      a.text = p.type.kind == rt::ScalarKind::Float || p.type.kind == rt::ScalarKind::BFloat
                   ? fmt::format("{:.17g}", v.asDouble())
                   : std::to_string(v.asInt(pw));
      if (p.divisibility > 1 && p.type.kind != rt::ScalarKind::Float && v.asInt(pw) % p.divisibility != 0)
        throw BenchError(fmt::format("{} = {} breaks the kernel's divisibility promise (:{})", pw, v.str(),
                                     p.divisibility));
    }
    rl.args.push_back(a);
  }
  for (size_t d = 0; d < 3; ++d) {
    if (d >= l.grid.size())
      continue;
    int64_t g = evalExpr(l.grid[d], env).asInt(fmt::format("{}: grid[{}]", where, d));
    int64_t hi = d == 0 ? 0x7fffffff : 65535;
    if (g < 1 || g > hi)
      throw BenchError(fmt::format("{}: grid[{}] = {} ({}) is outside [1, {}]", where, d, g, l.grid[d], hi));
    rl.grid[d] = unsigned(g);
  }
  return rl;
}

} // namespace tle::bench
