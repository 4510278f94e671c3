// The compile-time parts of torch that kernel modules read (torch's dtypes, torch.finfo and
// torch.iinfo limits), tl.dtype(name) and tl.core.get_int_dtype: evaluated by the compiler, with no
// torch installed.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <cmath>
#include <limits>

namespace tle::sema {

using ir::DType;

namespace {

/// torch's name of a dtype ("float16"), as finfo(...).dtype gives it.
std::string torchName(DType d) {
  switch (d) {
  case DType::F16: return "float16";
  case DType::BF16: return "bfloat16";
  case DType::F32: return "float32";
  case DType::F64: return "float64";
  case DType::F8E4M3: return "float8_e4m3fn";
  case DType::F8E5M2: return "float8_e5m2";
  case DType::I1: return "bool";
  case DType::I8: return "int8";
  case DType::I16: return "int16";
  case DType::I32: return "int32";
  case DType::I64: return "int64";
  case DType::U8: return "uint8";
  case DType::U16: return "uint16";
  case DType::U32: return "uint32";
  case DType::U64: return "uint64";
  default: return "?";
  }
}

/// torch.finfo(dtype): bits, eps, max, min, tiny (= smallest_normal) and resolution of a float
/// dtype, the values torch gives (IEEE formats; fp8 e4m3fn has no infinity, its max is 448).
SVal torchFinfo(Specializer &S, const BuiltinCall &c) {
  // torch.finfo() describes the default dtype, float32
  ir::ScalarType t = c.p.has("type") ? c.p.dtype("type") : ir::ScalarType{DType::F32};
  DType d = t.dtype;
  if (!ir::isFloat(d) || t.isPointer())
    S.fail(c.p.loc("type"), "torch.finfo() takes a floating-point dtype, got " + c.p.get("type").val.describe() +
                                " (torch.iinfo describes integer dtypes)");
  int mant = int(ir::mantissaBits(d)), bits = int(ir::bitWidth(d));
  int expBits = bits - 1 - mant;
  int bias = (1 << (expBits - 1)) - 1;
  double max;
  if (d == DType::F8E4M3) // e4m3fn: the all-ones exponent holds finite values, 0x7f is NaN
    max = 448.0;
  else
    max = std::ldexp(2.0 - std::ldexp(1.0, -mant), bias);
  double eps = std::ldexp(1.0, -mant);
  double tiny = std::ldexp(1.0, 1 - bias);
  // resolution: 10 ** -floor(mantissa digits * log10(2))
  double resolution = std::pow(10.0, -std::floor(mant * std::log10(2.0)));
  return SVal::record("torch.finfo", {{"bits", SVal::integer(bits)},
                                {"eps", SVal::real(eps)},
                                {"max", SVal::real(max)},
                                {"min", SVal::real(-max)},
                                {"tiny", SVal::real(tiny)},
                                {"smallest_normal", SVal::real(tiny)},
                                {"resolution", SVal::real(resolution)},
                                {"dtype", SVal::str(torchName(d))}});
}

/// torch.iinfo(dtype): bits, max and min of an integer dtype.
SVal torchIinfo(Specializer &S, const BuiltinCall &c) {
  ir::ScalarType t = c.p.dtype("type");
  DType d = t.dtype;
  if (!ir::isInteger(d) || d == DType::I1 || t.isPointer())
    S.fail(c.p.loc("type"), "torch.iinfo() takes an integer dtype, got " + c.p.get("type").val.describe() +
                                " (torch.finfo describes floating-point dtypes)");
  if (d == DType::U64)
    S.fail(c.p.loc("type"), "torch.iinfo(torch.uint64).max, 2**64 - 1, is beyond TLE's 64-bit compile-time integers");
  int bits = int(ir::bitWidth(d));
  int64_t max = ir::isSigned(d) ? (int64_t(1) << (bits - 1)) - 1 : int64_t((uint64_t(1) << bits) - 1);
  if (d == DType::I64)
    max = std::numeric_limits<int64_t>::max();
  int64_t min = ir::isSigned(d) ? -max - 1 : 0;
  return SVal::record("torch.iinfo", {{"bits", SVal::integer(bits)},
                                {"max", SVal::integer(max)},
                                {"min", SVal::integer(min)},
                                {"dtype", SVal::str(torchName(d))}});
}

/// tl.dtype(name): the dtype of Triton's type name ("fp16", "int32", "uint8", "bf16"...).
SVal dtypeByName(Specializer &S, const BuiltinCall &c) {
  const SVal &n = c.p.get("name").val;
  if (n.kind == SVal::Kind::DType)
    return n;
  if (n.kind != SVal::Kind::Str)
    S.fail(c.p.loc("name"), "tl.dtype() takes a type name (e.g. \"fp16\", \"int32\"), got " + n.describe());
  static const std::pair<const char *, DType> names[] = {
      {"int1", DType::I1},    {"int8", DType::I8},      {"int16", DType::I16},     {"int32", DType::I32},
      {"int64", DType::I64},  {"uint8", DType::U8},     {"uint16", DType::U16},    {"uint32", DType::U32},
      {"uint64", DType::U64}, {"fp8e4nv", DType::F8E4M3}, {"fp8e5", DType::F8E5M2}, {"fp16", DType::F16},
      {"bf16", DType::BF16},  {"fp32", DType::F32},     {"fp64", DType::F64}};
  for (auto &[name, d] : names)
    if (n.s == name)
      return SVal::dtypeOf(ir::ScalarType{d});
  if (n.s == "fp8e4b15" || n.s == "fp8e4b8" || n.s == "fp8e5b16")
    S.fail(c.p.loc("name"), "tl.dtype(\"" + n.s + "\") is not supported: TLE targets NVIDIA GPUs, whose fp8 types are "
                            "fp8e4nv and fp8e5");
  S.fail(c.p.loc("name"), "tl.dtype(\"" + n.s + "\"): not a type name (int1, int8 ... int64, uint8 ... uint64, "
                          "fp8e4nv, fp8e5, fp16, bf16, fp32, fp64)");
}

/// tl.core.get_int_dtype(bitwidth, signed): the integer dtype of that width and signedness
/// (width 1 is int1 either way), as Triton's core.get_int_dtype; other widths are an error.
SVal intDTypeOf(Specializer &S, const BuiltinCall &c) {
  const int64_t bits = c.p.constInt("bitwidth", 0);
  const SVal &sv = c.p.get("signed").val;
  if (!sv.isConstexpr())
    S.fail(c.p.loc("signed"), "get_int_dtype() argument 'signed' must be a compile-time bool, got " + sv.describe());
  const bool isSigned = S.truthy(sv, c.p.loc("signed"));
  static const std::pair<int64_t, std::pair<DType, DType>> widths[] = {
      {8, {DType::I8, DType::U8}}, {16, {DType::I16, DType::U16}},
      {32, {DType::I32, DType::U32}}, {64, {DType::I64, DType::U64}}};
  if (bits == 1)
    return SVal::dtypeOf(ir::ScalarType{DType::I1});
  for (auto &[w, d] : widths)
    if (bits == w)
      return SVal::dtypeOf(ir::ScalarType{isSigned ? d.first : d.second});
  S.fail(c.p.loc("bitwidth"), "get_int_dtype(): unsupported bitwidth " + std::to_string(bits) +
                                  " (1, 8, 16, 32 or 64)");
}

/// torch.cuda.get_device_capability(device=None): the (major, minor) of the architecture
/// compiled for (--arch: (9, 0) for sm_90a, (8, 0) for sm_80), as torch reports a GPU of it.
SVal torchCapability(Specializer &S, const BuiltinCall &) {
  int arch = S.opts.arch.rfind("sm_", 0) == 0 ? std::atoi(S.opts.arch.c_str() + 3) : 0;
  return SVal::tuple({SVal::integer(arch / 10), SVal::integer(arch % 10)});
}

} // namespace

std::optional<ir::ScalarType> torchDType(const std::string &n) {
  static const std::pair<const char *, DType> table[] = {
      {"float16", DType::F16},  {"half", DType::F16},    {"bfloat16", DType::BF16}, {"float32", DType::F32},
      {"float", DType::F32},    {"float64", DType::F64}, {"double", DType::F64},    {"int8", DType::I8},
      {"int16", DType::I16},    {"short", DType::I16},   {"int32", DType::I32},     {"int", DType::I32},
      {"int64", DType::I64},    {"long", DType::I64},    {"uint8", DType::U8},      {"uint16", DType::U16},
      {"uint32", DType::U32},   {"uint64", DType::U64},  {"bool", DType::I1},       {"float8_e4m3fn", DType::F8E4M3},
      {"float8_e5m2", DType::F8E5M2}};
  for (auto &[name, d] : table)
    if (n == name)
      return ir::ScalarType{d};
  return std::nullopt;
}

std::vector<BuiltinSpec> torchBuiltins() {
  return {
      {"torch.finfo", "type=None", torchFinfo},
      {"torch.cuda.get_device_capability", "device=None", torchCapability},
      {"torch.iinfo", "type", torchIinfo},
      {"tl.dtype", "name", dtypeByName},
      {"tl.get_int_dtype", "bitwidth, signed", intDTypeOf},
  };
}

} // namespace tle::sema
