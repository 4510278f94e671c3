// Parsing and validation of __tle_metadata documents, parameter types, and launch-argument checks (no driver needed).
#include "tle/Runtime/Metadata.h"
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/TensorMap.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tle::rt {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// ParamType
// ---------------------------------------------------------------------------------------------

ParamType ParamType::parse(std::string_view spelling) {
  ParamType t;
  std::string_view s = spelling;
  if (!s.empty() && s.front() == '*') {
    t.pointer = true;
    s.remove_prefix(1);
  }
  struct Entry {
    const char *name;
    ScalarKind kind;
    unsigned bits;
  };
  static constexpr Entry table[] = {
      {"i1", ScalarKind::Bool, 1},     {"i8", ScalarKind::Int, 8},
      {"i16", ScalarKind::Int, 16},    {"i32", ScalarKind::Int, 32},
      {"i64", ScalarKind::Int, 64},    {"u8", ScalarKind::UInt, 8},
      {"u16", ScalarKind::UInt, 16},   {"u32", ScalarKind::UInt, 32},
      {"u64", ScalarKind::UInt, 64},   {"fp16", ScalarKind::Float, 16},
      {"bf16", ScalarKind::BFloat, 16}, {"fp32", ScalarKind::Float, 32},
      {"fp64", ScalarKind::Float, 64}, {"nvTmaDesc", ScalarKind::TensorMap, 1024},
      {"fp8e4nv", ScalarKind::Float8E4M3, 8}, {"fp8e5", ScalarKind::Float8E5M2, 8},
  };
  for (const Entry &e : table) {
    if (s == e.name) {
      if (t.pointer && e.kind == ScalarKind::TensorMap)
        throw MetadataError(fmt::format(
            "type '{}': a TMA descriptor (nvTmaDesc) is passed by value, not through a pointer",
            spelling));
      t.kind = e.kind;
      t.bits = e.bits;
      return t;
    }
  }
  throw MetadataError(fmt::format(
      "unknown type '{}' (expected an optional '*' then one of i1 i8 i16 i32 i64 u8 u16 u32 u64 "
      "fp8e4nv fp8e5 fp16 bf16 fp32 fp64, or nvTmaDesc)",
      spelling));
}

std::string ParamType::elementName() const {
  switch (kind) {
  case ScalarKind::Bool:
    return "i1";
  case ScalarKind::Int:
    return fmt::format("i{}", bits);
  case ScalarKind::UInt:
    return fmt::format("u{}", bits);
  case ScalarKind::Float:
    return fmt::format("fp{}", bits);
  case ScalarKind::BFloat:
    return "bf16";
  case ScalarKind::Float8E4M3:
    return "fp8e4nv";
  case ScalarKind::Float8E5M2:
    return "fp8e5";
  case ScalarKind::TensorMap:
    return "nvTmaDesc";
  }
  return "?";
}

std::string ParamType::str() const { return (pointer ? "*" : "") + elementName(); }

size_t ParamType::argBytes() const {
  if (pointer)
    return 8;
  if (kind == ScalarKind::TensorMap)
    return sizeof(TensorMap);
  return bits == 1 ? 1 : bits / 8;
}

std::string ParamType::cppName() const {
  if (pointer)
    return "tle::rt::DeviceBuffer or tle::rt::DevicePtr";
  switch (kind) {
  case ScalarKind::Bool:
    return "bool";
  case ScalarKind::Int:
    return fmt::format("int{}_t", bits);
  case ScalarKind::UInt:
    return fmt::format("uint{}_t", bits);
  case ScalarKind::Float:
    return bits == 16 ? "tle::rt::Half" : bits == 32 ? "float" : "double";
  case ScalarKind::BFloat:
    return "tle::rt::BFloat16";
  case ScalarKind::Float8E4M3:
  case ScalarKind::Float8E5M2:
    return "uint8_t (the fp8 bits)";
  case ScalarKind::TensorMap:
    return "tle::rt::TensorMap";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// KernelInfo / ModuleInfo
// ---------------------------------------------------------------------------------------------

std::optional<int64_t> KernelInfo::constexprInt(std::string_view name) const {
  auto it = constexprs.find(std::string(name));
  if (it == constexprs.end())
    return std::nullopt;
  json v = json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (!v.is_number_integer())
    return std::nullopt;
  return v.get<int64_t>();
}

std::string KernelInfo::signature() const {
  std::string s;
  for (const ParamInfo &p : params) {
    if (!s.empty())
      s += ", ";
    s += p.type.str();
    if (p.divisibility > 1)
      s += fmt::format(":{}", p.divisibility);
  }
  return s;
}

const KernelInfo *ModuleInfo::find(std::string_view name) const {
  for (const KernelInfo &k : kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// parseModuleMetadata

// ---------------------------------------------------------------------------------------------

namespace {

/// Limits on a metadata document: tlec writes a few kilobytes, nested 4 levels deep.
constexpr size_t kMaxMetadataBytes = size_t(16) << 20;
constexpr size_t kMaxMetadataDepth = 64;

/// The deepest nesting of arrays and objects in JSON text `text` (brackets inside strings do not
/// count), without parsing it.
size_t nestingDepth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

[[noreturn]] void bad(const std::string &where, const std::string &what) {
  throw MetadataError("invalid __tle_metadata: " + (where.empty() ? "" : where + ": ") + what);
}

const json &member(const json &obj, const char *key, const std::string &where) {
  auto it = obj.find(key);
  if (it == obj.end())
    bad(where, fmt::format("missing key \"{}\"", key));
  return *it;
}

std::string join(const std::string &where, const std::string &key) {
  return where.empty() ? key : where + "." + key;
}

int64_t integer(const json &v, const std::string &where, int64_t lo, int64_t hi) {
  if (!v.is_number_integer())
    bad(where, fmt::format("expected an integer, got {}", v.dump()));
  // Unsigned values above int64 range are out of any range we accept.
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    bad(where, fmt::format("{} is out of range [{}, {}]", v.dump(), lo, hi));
  int64_t x = v.get<int64_t>();
  if (x < lo || x > hi)
    bad(where, fmt::format("{} is out of range [{}, {}]", x, lo, hi));
  return x;
}

std::string string(const json &v, const std::string &where) {
  if (!v.is_string())
    bad(where, fmt::format("expected a string, got {}", v.dump()));
  return v.get<std::string>();
}

std::array<unsigned, 3> dims3(const json &v, const std::string &where, int64_t hi) {
  if (!v.is_array() || v.size() != 3)
    bad(where, fmt::format("expected an array of 3 integers, got {}", v.dump()));
  std::array<unsigned, 3> d{};
  for (size_t i = 0; i < 3; ++i)
    d[i] = unsigned(integer(v[i], fmt::format("{}[{}]", where, i), 1, hi));
  return d;
}

ParamInfo parseParam(const json &p, const std::string &where) {
  if (!p.is_object())
    bad(where, fmt::format("expected an object, got {}", p.dump()));
  ParamInfo info;
  info.name = string(member(p, "name", where), join(where, "name"));
  if (info.name.empty())
    bad(join(where, "name"), "empty parameter name");
  std::string type = string(member(p, "type", where), join(where, "type"));
  try {
    info.type = ParamType::parse(type);
  } catch (const MetadataError &e) {
    bad(join(where, "type"), e.what());
  }
  if (auto it = p.find("divisibility"); it != p.end())
    info.divisibility = integer(*it, join(where, "divisibility"), 1, int64_t(1) << 32);
  if (info.type.kind == ScalarKind::TensorMap && info.divisibility != 1)
    bad(join(where, "divisibility"),
        fmt::format("{} on a nvTmaDesc parameter (descriptors carry no divisibility promise)",
                    info.divisibility));
  return info;
}

/// The index of the parameter named by string `v`.
size_t paramIndex(const json &v, const std::string &where, const std::vector<ParamInfo> &params) {
  std::string name = string(v, where);
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == name)
      return i;
  bad(where, fmt::format("no parameter named '{}'", name));
}

TensorMapArgInfo parseTensorMap(const json &t, const std::string &where, const std::vector<ParamInfo> &params) {
  if (!t.is_object())
    bad(where, fmt::format("expected an object, got {}", t.dump()));
  TensorMapArgInfo info;
  info.dtype = string(member(t, "dtype", where), join(where, "dtype"));
  try {
    tensorMapDataType(info.dtype);
  } catch (const ArgumentError &e) {
    bad(join(where, "dtype"), e.what());
  }
  info.base = paramIndex(member(t, "base", where), join(where, "base"), params);
  if (!params[info.base].type.pointer)
    bad(join(where, "base"), fmt::format("parameter '{}' is not a pointer", params[info.base].name));
  if (params[info.base].type.elementName() != info.dtype)
    bad(join(where, "dtype"), fmt::format("{} disagrees with parameter '{}' ({})", info.dtype,
                                          params[info.base].name, params[info.base].type.str()));
  auto sources = [&](const char *key) {
    const json &a = member(t, key, where);
    std::string w = join(where, key);
    if (!a.is_array() || a.empty() || a.size() > 5)
      bad(w, fmt::format("expected an array of 1 to 5 entries, got {}", a.dump()));
    // An integer parameter by name, a constant, or a product: an array of both, or
    // {"product": [...], "bits": 32} for one the kernel computes in 32 bits.
    auto factor = [&](const json &e, const std::string &wf, TensorMapArgInfo::Source &s) {
      if (e.is_string()) {
        size_t p = paramIndex(e, wf, params);
        const ParamType &pt = params[p].type;
        if (pt.pointer || (pt.kind != ScalarKind::Int && pt.kind != ScalarKind::UInt))
          bad(wf, fmt::format("parameter '{}' is not an integer", params[p].name));
        s.params.push_back(int(p));
      } else if (__builtin_mul_overflow(s.value, integer(e, wf, 1, int64_t(1) << 40), &s.value)) {
        bad(wf, "the product's constant factors overflow 64 bits");
      }
    };
    std::vector<TensorMapArgInfo::Source> out;
    for (size_t i = 0; i < a.size(); ++i) {
      std::string wi = fmt::format("{}[{}]", w, i);
      TensorMapArgInfo::Source s;
      const json *product = &a[i];
      if (a[i].is_object()) {
        product = &member(a[i], "product", wi);
        s.bits = int(integer(member(a[i], "bits", wi), join(wi, "bits"), 32, 64));
        if (s.bits != 32 && s.bits != 64)
          bad(join(wi, "bits"), fmt::format("{} is not 32 or 64", s.bits));
        wi = join(wi, "product");
      }
      if (product->is_array()) {
        if (product->empty() || product->size() > 8)
          bad(wi, fmt::format("expected 1 to 8 factors, got {}", product->dump()));
        for (size_t f = 0; f < product->size(); ++f)
          factor((*product)[f], fmt::format("{}[{}]", wi, f), s);
      } else if (a[i].is_object()) {
        bad(wi, fmt::format("expected an array of factors, got {}", product->dump()));
      } else {
        factor(*product, wi, s);
      }
      out.push_back(s);
    }
    return out;
  };
  info.shape = sources("shape");
  info.strides = sources("strides");
  const json &box = member(t, "box", where);
  if (!box.is_array() || box.size() != info.shape.size() || info.strides.size() != info.shape.size())
    bad(where, "shape, strides and box must have one entry per dimension");
  for (size_t i = 0; i < box.size(); ++i)
    info.box.push_back(integer(box[i], fmt::format("{}[{}]", join(where, "box"), i), 1, 256));
  info.swizzle = int(integer(member(t, "swizzle", where), join(where, "swizzle"), 0, 128));
  if (info.swizzle != 0 && info.swizzle != 32 && info.swizzle != 64 && info.swizzle != 128)
    bad(join(where, "swizzle"), fmt::format("{} is not 0, 32, 64 or 128", info.swizzle));
  return info;
}

/// The entry function a kernel launches: its "symbol", else its name.
const std::string &entrySymbol(const KernelInfo &k) { return k.symbol.empty() ? k.name : k.symbol; }

KernelInfo parseKernel(const json &k, const std::string &where, const std::string &target) {
  if (!k.is_object())
    bad(where, fmt::format("expected an object, got {}", k.dump()));
  KernelInfo info;
  info.target = target;
  info.name = string(member(k, "name", where), join(where, "name"));
  if (info.name.empty())
    bad(join(where, "name"), "empty kernel name");
  if (auto it = k.find("symbol"); it != k.end()) {
    info.symbol = string(*it, join(where, "symbol"));
    if (info.symbol.empty())
      bad(join(where, "symbol"), "empty entry symbol");
  }
  info.numWarps = int(integer(member(k, "num_warps", where), join(where, "num_warps"), 1, 32));
  info.block = {unsigned(32 * info.numWarps), 1, 1};
  if (auto it = k.find("block"); it != k.end()) {
    std::array<unsigned, 3> b = dims3(*it, join(where, "block"), 1024);
    if (b != info.block)
      bad(join(where, "block"),
          fmt::format("[{}, {}, {}] disagrees with num_warps {} (expected [{}, 1, 1])", b[0], b[1],
                      b[2], info.numWarps, 32 * info.numWarps));
  }
  if (auto it = k.find("shared_bytes"); it != k.end())
    info.sharedBytes = unsigned(integer(*it, join(where, "shared_bytes"), 0, int64_t(1) << 30));
  if (auto it = k.find("cluster"); it != k.end())
    info.cluster = dims3(*it, join(where, "cluster"), 64);
  if (auto it = k.find("cooperative"); it != k.end()) {
    if (!it->is_boolean())
      bad(join(where, "cooperative"), fmt::format("expected true or false, got {}", it->dump()));
    info.cooperative = it->get<bool>();
  }
  const json &params = member(k, "params", where);
  if (!params.is_array())
    bad(join(where, "params"), fmt::format("expected an array, got {}", params.dump()));
  for (size_t i = 0; i < params.size(); ++i) {
    info.params.push_back(parseParam(params[i], fmt::format("{}.params[{}]", where, i)));
    for (size_t j = 0; j < i; ++j)
      if (info.params[j].name == info.params[i].name)
        bad(fmt::format("{}.params[{}].name", where, i),
            fmt::format("duplicate parameter name '{}'", info.params[i].name));
  }
  if (auto it = k.find("tensor_maps"); it != k.end()) {
    if (!it->is_array())
      bad(join(where, "tensor_maps"), fmt::format("expected an array, got {}", it->dump()));
    for (size_t m = 0; m < it->size(); ++m)
      info.tensorMaps.push_back(parseTensorMap((*it)[m], fmt::format("{}.tensor_maps[{}]", where, m), info.params));
  }
  if (auto it = k.find("constexprs"); it != k.end()) {
    if (!it->is_object())
      bad(join(where, "constexprs"), fmt::format("expected an object, got {}", it->dump()));
    for (auto c = it->begin(); c != it->end(); ++c)
      info.constexprs[c.key()] = c.value().dump();
  }
  return info;
}

} // namespace

ModuleInfo parseModuleMetadata(std::string_view text) {
  // Bounded before parsing: the JSON parser (and the dumps of constexprs and error messages) recurse
  // once per level, so a crafted document nested 100,000 deep would overflow the stack.
  if (text.size() > kMaxMetadataBytes)
    bad("", fmt::format("the document is {} bytes, more than the limit of {}", text.size(), kMaxMetadataBytes));
  if (size_t depth = nestingDepth(text); depth > kMaxMetadataDepth)
    bad("", fmt::format("the document nests {} levels deep, more than the limit of {}", depth, kMaxMetadataDepth));
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception &e) {
    bad("", fmt::format("not valid JSON ({})", e.what()));
  }
  if (!doc.is_object())
    bad("", "the document is not a JSON object");
  ModuleInfo info;
  info.json = std::string(text);
  info.format = string(member(doc, "format", ""), "format");
  if (info.format != metadata::kFormat)
    bad("format", fmt::format("\"{}\" is not \"{}\"", info.format, metadata::kFormat));
  const json &version = member(doc, "version", "");
  if (!version.is_number_integer())
    bad("version", fmt::format("expected an integer, got {}", version.dump()));
  if (version.is_number_unsigned() ? version.get<uint64_t>() > uint64_t(metadata::kVersion)
                                   : version.get<int64_t>() > metadata::kVersion)
    throw MetadataError(fmt::format(
        "__tle_metadata version {} is newer than this libtle_rt reads (version {}); use a "
        "libtle_rt at least as new as the tlec that built the module",
        version.dump(), metadata::kVersion));
  info.version = int(integer(version, "version", 1, metadata::kVersion));
  info.target = string(member(doc, "target", ""), "target");
  if (auto it = doc.find("compiler"); it != doc.end())
    info.compiler = string(*it, "compiler");
  if (auto it = doc.find("source_hash"); it != doc.end())
    info.sourceHash = string(*it, "source_hash");
  const json &kernels = member(doc, "kernels", "");
  if (!kernels.is_array())
    bad("kernels", fmt::format("expected an array, got {}", kernels.dump()));
  for (size_t i = 0; i < kernels.size(); ++i) {
    info.kernels.push_back(parseKernel(kernels[i], fmt::format("kernels[{}]", i), info.target));
    for (size_t j = 0; j < i; ++j) {
      if (info.kernels[j].name == info.kernels[i].name)
        bad(fmt::format("kernels[{}].name", i),
            fmt::format("duplicate kernel name '{}'", info.kernels[i].name));
      // One entry function has one parameter list: two kernels launching it with two lists would
      // pass one of them an argument buffer of the wrong layout.
      if (entrySymbol(info.kernels[j]) == entrySymbol(info.kernels[i]))
        bad(fmt::format("kernels[{}]", i),
            fmt::format("entry symbol '{}' is also the entry symbol of kernels[{}] ('{}')",
                        entrySymbol(info.kernels[i]), j, info.kernels[j].name));
    }
  }
  return info;
}

// ---------------------------------------------------------------------------------------------
// Argument checks
// ---------------------------------------------------------------------------------------------

std::string argTypeName(const ArgDesc &arg) {
  if (arg.pointer)
    return "pointer";
  ParamType t;
  t.kind = arg.kind;
  t.bits = arg.bits;
  return t.elementName();
}

void checkArgCount(const KernelInfo &kernel, size_t given) {
  if (given == kernel.params.size())
    return;
  std::string names;
  for (const ParamInfo &p : kernel.params)
    names += (names.empty() ? "" : ", ") + p.name;
  throw ArgumentError(fmt::format("{} expects {} argument{} ({}) but was given {}", kernel.name,
                                  kernel.params.size(), kernel.params.size() == 1 ? "" : "s",
                                  names, given));
}

void checkArgType(const KernelInfo &kernel, size_t index, const ArgDesc &given) {
  if (index >= kernel.params.size())
    checkArgCount(kernel, index + 1);
  const ParamInfo &p = kernel.params[index];
  const ParamType &t = p.type;
  if (t.pointer && given.pointer)
    return;
  if (!t.pointer && !given.pointer && t.kind == given.kind && t.bits == given.bits)
    return;
  std::string hint;
  if (t.pointer && !given.pointer && given.bits == 64 && given.kind != ScalarKind::Float)
    hint = "; wrap a raw CUdeviceptr in tle::rt::DevicePtr";
  else if (t.kind == ScalarKind::TensorMap && !t.pointer)
    hint = "; build the descriptor with tle::rt::encodeTensorMapTiled";
  else if (!t.pointer && !given.pointer && given.kind != ScalarKind::TensorMap)
    hint = fmt::format("; cast the argument to {}", t.cppName());
  throw ArgumentError(fmt::format(
      "{}: argument {} ('{}') has parameter type {} (C++ {}) but was given {} ({}){}",
      kernel.name, index, p.name, t.str(), t.cppName(), given.cppType, argTypeName(given), hint));
}

void checkArgValue(const KernelInfo &kernel, size_t index, const void *value) {
  const ParamInfo &p = kernel.params.at(index);
  if (p.divisibility <= 1)
    return;
  const ParamType &t = p.type;
  if (t.pointer) {
    uint64_t addr;
    std::memcpy(&addr, value, 8);
    if (addr % uint64_t(p.divisibility) != 0)
      throw ArgumentError(fmt::format(
          "{}: argument {} ('{}') is declared *{}:{} (address divisible by {} bytes) but the "
          "address 0x{:x} is not",
          kernel.name, index, p.name, t.elementName(), p.divisibility, p.divisibility, addr));
    return;
  }
  if (t.kind != ScalarKind::Int && t.kind != ScalarKind::UInt)
    return;
  int64_t sv = 0;
  uint64_t uv = 0;
  argInteger(t, value, sv, uv);
  bool ok = t.kind == ScalarKind::Int ? sv % p.divisibility == 0
                                      : uv % uint64_t(p.divisibility) == 0;
  if (!ok)
    throw ArgumentError(fmt::format(
        "{}: argument {} ('{}') is declared {}:{} (a multiple of {}) but the value is {}",
        kernel.name, index, p.name, t.str(), p.divisibility, p.divisibility,
        t.kind == ScalarKind::Int ? std::to_string(sv) : std::to_string(uv)));
}

void argInteger(const ParamType &t, const void *value, int64_t &sv, uint64_t &uv) {
  switch (t.bits) {
  case 8: {
    uint8_t x;
    std::memcpy(&x, value, 1);
    uv = x;
    sv = int8_t(x);
    break;
  }
  case 16: {
    uint16_t x;
    std::memcpy(&x, value, 2);
    uv = x;
    sv = int16_t(x);
    break;
  }
  case 32: {
    uint32_t x;
    std::memcpy(&x, value, 4);
    uv = x;
    sv = int32_t(x);
    break;
  }
  default: {
    std::memcpy(&uv, value, 8);
    sv = int64_t(uv);
    break;
  }
  }
}

// ---------------------------------------------------------------------------------------------
// Half / BFloat16
// ---------------------------------------------------------------------------------------------

Half Half::fromFloat(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  uint32_t sign = (f >> 16) & 0x8000u;
  uint32_t exp = (f >> 23) & 0xffu;
  uint32_t man = f & 0x7fffffu;
  Half h;
  if (exp == 0xff) { // inf / nan
    h.bits = uint16_t(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    return h;
  }
  int e = int(exp) - 127 + 15;
  if (e >= 31) { // overflow
    h.bits = uint16_t(sign | 0x7c00u);
    return h;
  }
  if (e <= 0) { // subnormal or zero in half
    if (e < -10) {
      h.bits = uint16_t(sign);
      return h;
    }
    man |= 0x800000u;
    unsigned shift = unsigned(14 - e);
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    h.bits = uint16_t(sign | half);
    return h;
  }
  uint32_t half = (uint32_t(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1)))
    ++half; // may carry into the exponent, up to infinity: correct
  h.bits = uint16_t(sign | half);
  return h;
}

float Half::toFloat() const {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t man = bits & 0x3ffu;
  uint32_t f;
  if (exp == 0x1f) {
    f = sign | 0x7f800000u | (man << 13);
  } else if (exp == 0) {
    float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  } else {
    f = sign | ((exp - 15 + 127) << 23) | (man << 13);
  }
  float out;
  std::memcpy(&out, &f, 4);
  return out;
}

BFloat16 BFloat16::fromFloat(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  BFloat16 b;
  if ((f & 0x7fffffffu) > 0x7f800000u) { // nan: keep it quiet
    b.bits = uint16_t((f >> 16) | 0x40u);
    return b;
  }
  uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
  b.bits = uint16_t((f + rounding) >> 16);
  return b;
}

float BFloat16::toFloat() const {
  uint32_t f = uint32_t(bits) << 16;
  float out;
  std::memcpy(&out, &f, 4);
  return out;
}

} // namespace tle::rt
