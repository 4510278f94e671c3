// Host arrays for the CPU target and tle-run: 16-bit float rounding, .npy reading and writing,
// and generated arrays.
#include "tle/Target/CPU/HostArray.h"
#include "tle/Target/CPU/CPUBackend.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

namespace tle::cpu {

using ir::DType;

// ---------------------------------------------------------------------------------------------
// 16-bit floats (the same algorithms the generated code uses; see Elementwise.cpp)

namespace {

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float floatOf(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

/// double -> float rounded to odd (so that a second rounding to a narrower format is exact).
float toFloatOdd(double x) {
  float t = static_cast<float>(x);
  if (std::isnan(x) || static_cast<double>(t) == x)
    return t;
  uint32_t b = bitsOf(t);
  if (std::fabs(static_cast<double>(t)) > std::fabs(x))
    b -= 1;
  return floatOf(b | 1);
}

uint16_t halfFromFloat(float f) {
  uint32_t b = bitsOf(f);
  uint32_t sign = (b >> 16) & 0x8000;
  uint32_t a = b & 0x7FFFFFFF;
  uint32_t v;
  if (a > 0x7F800000) {
    v = 0x7E00;
  } else if (a >= 0x477FF000) {
    v = 0x7C00;
  } else if (a >= 0x38800000) {
    uint32_t r = a - 0x38000000;
    r += 0xFFF + ((r >> 13) & 1);
    v = r >> 13;
  } else {
    v = bitsOf(floatOf(a) + 0.5f) - 0x3F000000;
  }
  return static_cast<uint16_t>(v | sign);
}

uint16_t bf16FromFloat(float f) {
  uint32_t b = bitsOf(f);
  if ((b & 0x7FFFFFFF) > 0x7F800000)
    return static_cast<uint16_t>((b >> 16) | 0x40);
  return static_cast<uint16_t>((b + 0x7FFF + ((b >> 16) & 1)) >> 16);
}

} // namespace

uint16_t halfFromDouble(double x) { return halfFromFloat(toFloatOdd(x)); }
uint16_t bf16FromDouble(double x) { return bf16FromFloat(toFloatOdd(x)); }

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t em = h & 0x7FFF;
  if (em < 0x400)
    return floatOf(bitsOf(static_cast<float>(em) * 0x1p-24f) | sign);
  return floatOf(((em << 13) + (em >= 0x7C00 ? 0x70000000u : 0x38000000u)) | sign);
}

float bf16ToFloat(uint16_t h) { return floatOf(uint32_t(h) << 16); }

// ---------------------------------------------------------------------------------------------
// HostArray

HostArray::HostArray(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  if (dtype == DType::Invalid || dtype == DType::Ptr)
    throw Error("arrays of " + std::string(ir::name(dtype)) + " are not supported");
  size_t n = 1;
  for (int64_t d : shape_) {
    if (d < 0)
      throw Error("bad shape: dimension " + std::to_string(d) + " is negative");
    if (d && n > std::numeric_limits<size_t>::max() / 16 / static_cast<size_t>(d))
      throw Error("bad shape: the array is too large");
    n *= static_cast<size_t>(d);
  }
  numElements_ = n;
  try {
    data_.assign((bytes() + sizeof(Chunk) - 1) / sizeof(Chunk), Chunk{});
  } catch (const std::bad_alloc &) {
    throw Error("cannot allocate " + std::to_string(bytes()) + " bytes for a " + describe() + " array");
  }
}

void HostArray::reinterpret(DType dtype) {
  if (ir::storageBytes(dtype) != ir::storageBytes(dtype_))
    throw Error(std::string("cannot reinterpret ") + ir::name(dtype_) + " as " + ir::name(dtype));
  dtype_ = dtype;
}

double HostArray::get(size_t i) const {
  const unsigned char *p = static_cast<const unsigned char *>(data()) + i * ir::storageBytes(dtype_);
  auto rd = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (dtype_) {
  case DType::I1: return *p ? 1.0 : 0.0;
  case DType::I8: return rd(int8_t());
  case DType::I16: return rd(int16_t());
  case DType::I32: return rd(int32_t());
  case DType::I64: return static_cast<double>(rd(int64_t()));
  case DType::U8: return rd(uint8_t());
  case DType::U16: return rd(uint16_t());
  case DType::U32: return rd(uint32_t());
  case DType::U64: return static_cast<double>(rd(uint64_t()));
  case DType::F16: return halfToFloat(rd(uint16_t()));
  case DType::BF16: return bf16ToFloat(rd(uint16_t()));
  case DType::F8E4M3: case DType::F8E5M2: return ir::fp8ToDouble(*p, dtype_);
  case DType::F32: return rd(float());
  case DType::F64: return rd(double());
  default: return 0;
  }
}

void HostArray::set(size_t i, double v) {
  unsigned char *p = static_cast<unsigned char *>(data()) + i * ir::storageBytes(dtype_);
  auto wr = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  // Integers: truncate toward zero, then wrap (through int64 / uint64, saturating outside them).
  auto asInt = [&]() -> uint64_t {
    if (std::isnan(v))
      return 0;
    double t = std::trunc(v);
    if (t < 0)
      return t <= -0x1p63 ? uint64_t(1) << 63 : static_cast<uint64_t>(static_cast<int64_t>(t));
    return t >= 0x1p64 ? ~uint64_t(0) : static_cast<uint64_t>(t);
  };
  switch (dtype_) {
  case DType::I1: *p = v != 0 ? 1 : 0; return;
  case DType::I8: case DType::U8: wr(static_cast<uint8_t>(asInt())); return;
  case DType::I16: case DType::U16: wr(static_cast<uint16_t>(asInt())); return;
  case DType::I32: case DType::U32: wr(static_cast<uint32_t>(asInt())); return;
  case DType::I64: case DType::U64: wr(asInt()); return;
  case DType::F16: wr(halfFromDouble(v)); return;
  case DType::BF16: wr(bf16FromDouble(v)); return;
  case DType::F8E4M3: case DType::F8E5M2: *p = ir::fp8FromDouble(v, dtype_); return;
  case DType::F32: wr(static_cast<float>(v)); return;
  case DType::F64: wr(v); return;
  default: return;
  }
}

std::string HostArray::str(size_t i) const {
  if (dtype_ == DType::I1)
    return get(i) != 0 ? "true" : "false";
  char buf[64];
  const unsigned char *p = static_cast<const unsigned char *>(data()) + i * ir::storageBytes(dtype_);
  if (dtype_ == DType::I64) {
    int64_t v;
    std::memcpy(&v, p, 8);
    std::snprintf(buf, sizeof buf, "%" PRId64, v);
  } else if (dtype_ == DType::U64) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    std::snprintf(buf, sizeof buf, "%" PRIu64, v);
  } else if (ir::isInteger(dtype_)) {
    std::snprintf(buf, sizeof buf, "%.0f", get(i));
  } else {
    std::snprintf(buf, sizeof buf, dtype_ == DType::F64 ? "%.17g" : "%.9g", get(i));
  }
  return buf;
}

std::string HostArray::describe() const {
  std::string s = std::string(ir::name(dtype_)) + "[";
  for (size_t d = 0; d < shape_.size(); ++d)
    s += (d ? "x" : "") + std::to_string(shape_[d]);
  return s + "]";
}

// ---------------------------------------------------------------------------------------------
// .npy

std::string npyDescr(DType t) {
  switch (t) {
  case DType::I1: return "|b1";
  case DType::I8: return "|i1";
  case DType::U8: case DType::F8E4M3: case DType::F8E5M2: return "|u1"; // fp8: its bits
  case DType::I16: return "<i2";
  case DType::I32: return "<i4";
  case DType::I64: return "<i8";
  case DType::U16: case DType::BF16: return "<u2";
  case DType::U32: return "<u4";
  case DType::U64: return "<u8";
  case DType::F16: return "<f2";
  case DType::F32: return "<f4";
  case DType::F64: return "<f8";
  default: return "";
  }
}

std::optional<DType> dtypeFromNpyDescr(const std::string &descr) {
  if (descr.size() < 3)
    return std::nullopt;
  char order = descr[0];
  std::string code = descr.substr(1);
  bool oneByte = code == "b1" || code == "i1" || code == "u1";
  if (order == '>' && !oneByte)
    return std::nullopt;
  if (order != '<' && order != '|' && order != '=' && order != '>')
    return std::nullopt;
  static const std::pair<const char *, DType> table[] = {
      {"b1", DType::I1},  {"i1", DType::I8},  {"u1", DType::U8},  {"i2", DType::I16}, {"i4", DType::I32},
      {"i8", DType::I64}, {"u2", DType::U16}, {"u4", DType::U32}, {"u8", DType::U64}, {"f2", DType::F16},
      {"f4", DType::F32}, {"f8", DType::F64}, {"V2", DType::BF16}};
  for (auto &[c, t] : table)
    if (code == c)
      return t;
  return std::nullopt;
}

namespace {

/// The text after `'key':` in a .npy header dict, or empty.
std::string headerValue(const std::string &h, const std::string &key) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos)
    k = h.find("\"" + key + "\"");
  if (k == std::string::npos)
    return "";
  size_t c = h.find(':', k);
  if (c == std::string::npos)
    return "";
  size_t s = h.find_first_not_of(" ", c + 1);
  if (s == std::string::npos)
    return "";
  if (h[s] == '\'' || h[s] == '"') {
    size_t e = h.find(h[s], s + 1);
    return e == std::string::npos ? "" : h.substr(s + 1, e - s - 1);
  }
  if (h[s] == '(') {
    size_t e = h.find(')', s);
    return e == std::string::npos ? "" : h.substr(s, e - s + 1);
  }
  size_t e = h.find_first_of(",}", s);
  std::string v = h.substr(s, e == std::string::npos ? std::string::npos : e - s);
  while (!v.empty() && v.back() == ' ')
    v.pop_back();
  return v;
}

} // namespace

namespace {

/// What a .npy header says: the dtype and the shape (C order), the stream left at the data.
struct NpyHeader {
  DType dtype = DType::Invalid;
  std::vector<int64_t> shape;
};

NpyHeader readNpyHeader(std::ifstream &in, const std::string &path) {
  if (!in)
    throw Error("cannot open '" + path + "': " + std::strerror(errno));
  auto bad = [&](const std::string &why) { return Error("'" + path + "' is not a valid .npy file: " + why); };
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw bad("missing the \\x93NUMPY magic");
  int major = static_cast<unsigned char>(magic[6]);
  uint32_t hlen = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char *>(b), 2))
      throw bad("truncated header");
    hlen = b[0] | (uint32_t(b[1]) << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char *>(b), 4))
      throw bad("truncated header");
    hlen = b[0] | (uint32_t(b[1]) << 8) | (uint32_t(b[2]) << 16) | (uint32_t(b[3]) << 24);
  } else {
    throw bad("unsupported format version " + std::to_string(major));
  }
  if (hlen > (1u << 20))
    throw bad("header too large");
  std::string h(hlen, '\0');
  if (!in.read(h.data(), hlen))
    throw bad("truncated header");
  std::string descr = headerValue(h, "descr");
  std::string fortran = headerValue(h, "fortran_order");
  std::string shapeText = headerValue(h, "shape");
  if (descr.empty() || shapeText.empty() || shapeText[0] != '(')
    throw bad("header lacks 'descr' or 'shape'");
  auto dt = dtypeFromNpyDescr(descr);
  if (!dt)
    throw Error("'" + path + "': unsupported dtype '" + descr +
                "' (supported: little-endian b1 i1 i2 i4 i8 u1 u2 u4 u8 f2 f4 f8)");
  std::vector<int64_t> shape;
  std::string inner = shapeText.substr(1, shapeText.size() - 2);
  std::stringstream ss(inner);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    size_t a = tok.find_first_not_of(" "), b = tok.find_last_not_of(" L");
    if (a == std::string::npos)
      continue;
    tok = tok.substr(a, b - a + 1);
    char *end = nullptr;
    long long v = std::strtoll(tok.c_str(), &end, 10);
    if (!end || *end || v < 0)
      throw bad("bad shape " + shapeText);
    shape.push_back(v);
  }
  if (fortran == "True") {
    int big = 0;
    for (int64_t d : shape)
      big += d > 1;
    if (big > 1)
      throw Error("'" + path + "' is in Fortran order; save it in C order (numpy.ascontiguousarray)");
  }
  return {*dt, shape};
}

} // namespace

DType readNpyDType(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return readNpyHeader(in, path).dtype;
}

HostArray readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  NpyHeader h = readNpyHeader(in, path);
  DType *dt = &h.dtype;
  HostArray a(h.dtype, h.shape);
  if (a.bytes() && !in.read(static_cast<char *>(a.data()), static_cast<std::streamsize>(a.bytes())))
    throw Error("'" + path + "' is truncated: " + a.describe() + " needs " + std::to_string(a.bytes()) +
                " bytes of data, the file has " + std::to_string(in.gcount()));
  if (*dt == DType::I1) {
    auto *p = static_cast<unsigned char *>(a.data());
    for (size_t i = 0; i < a.numElements(); ++i)
      p[i] = p[i] != 0;
  }
  return a;
}

void writeNpy(const std::string &path, const HostArray &a) {
  std::string shape = "(";
  for (size_t d = 0; d < a.shape().size(); ++d)
    shape += std::to_string(a.shape()[d]) + (a.shape().size() == 1 ? "," : d + 1 < a.shape().size() ? ", " : "");
  shape += ")";
  std::string h = "{'descr': '" + npyDescr(a.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw Error("cannot write '" + path + "': " + std::strerror(errno));
  out.write("\x93NUMPY\x01\x00", 8);
  unsigned char len[2] = {static_cast<unsigned char>(h.size() & 0xff), static_cast<unsigned char>(h.size() >> 8)};
  out.write(reinterpret_cast<char *>(len), 2);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  if (a.bytes())
    out.write(static_cast<const char *>(a.data()), static_cast<std::streamsize>(a.bytes()));
  if (!out)
    throw Error("cannot write '" + path + "'");
}

// ---------------------------------------------------------------------------------------------
// Generated arrays

std::optional<DType> parseArrayDType(const std::string &s) { return ir::parseDTypeName(s); }

std::optional<HostArray> makeArray(const std::string &spec, DType pointee, uint64_t seed) {
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  std::string p;
  while (std::getline(ss, p, ':'))
    parts.push_back(p);
  if (!spec.empty() && spec.back() == ':')
    parts.push_back("");
  if (parts.empty())
    return std::nullopt;
  const std::string &kind = parts[0];
  if (kind != "zeros" && kind != "ones" && kind != "rand" && kind != "full")
    return std::nullopt;
  const char *usage = "expected zeros:[DTYPE:]SHAPE, ones:[DTYPE:]SHAPE, rand:[DTYPE:]SHAPE or "
                      "full:VALUE:[DTYPE:]SHAPE with SHAPE like 1024 or 128x1024";
  size_t first = kind == "full" ? 2 : 1;
  if (parts.size() < first + 1 || parts.size() > first + 2)
    throw Error("bad array spec '" + spec + "': " + usage);
  DType dt = pointee;
  if (parts.size() == first + 2) {
    auto d = parseArrayDType(parts[first]);
    if (!d)
      throw Error("bad array spec '" + spec + "': unknown dtype '" + parts[first] + "'");
    if (*d != pointee)
      throw Error("array spec '" + spec + "' makes " + ir::name(*d) + " elements but the parameter points to " +
                  ir::name(pointee));
    dt = *d;
  }
  std::vector<int64_t> shape;
  std::stringstream sh(parts.back());
  while (std::getline(sh, p, 'x')) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(p.c_str(), &end, 10);
    if (p.empty() || !end || *end || v <= 0 || errno)
      throw Error("bad shape '" + parts.back() + "' in '" + spec + "': dims must be positive integers, e.g. 128x1024");
    shape.push_back(v);
  }
  if (shape.empty())
    throw Error("bad array spec '" + spec + "': " + usage);
  HostArray a(dt, shape);
  size_t n = a.numElements();
  if (kind == "ones") {
    for (size_t i = 0; i < n; ++i)
      a.set(i, 1.0);
  } else if (kind == "full") {
    const std::string &v = parts[1];
    double x;
    char *end = nullptr;
    if (v == "true" || v == "True") {
      x = 1;
    } else if (v == "false" || v == "False") {
      x = 0;
    } else if (ir::isInteger(dt) && v.find_first_of(".eEn") == std::string::npos) {
      errno = 0;
      long long iv = std::strtoll(v.c_str(), &end, 0);
      if (v.empty() || *end || errno)
        throw Error("bad value '" + v + "' in '" + spec + "'");
      // Write the exact integer (doubles lose precision past 2^53).
      for (size_t i = 0; i < n; ++i)
        std::memcpy(static_cast<char *>(a.data()) + i * ir::storageBytes(dt), &iv, ir::storageBytes(dt));
      return a;
    } else {
      x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end)
        throw Error("bad value '" + v + "' in '" + spec + "'");
    }
    for (size_t i = 0; i < n; ++i)
      a.set(i, x);
  } else if (kind == "rand") {
    std::mt19937_64 rng(seed);
    if (ir::isFloat(dt)) {
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      for (size_t i = 0; i < n; ++i)
        a.set(i, u(rng));
    } else {
      int lo = dt == DType::I1 ? 0 : ir::isSigned(dt) ? -8 : 0, hi = dt == DType::I1 ? 1 : ir::isSigned(dt) ? 8 : 16;
      std::uniform_int_distribution<int> u(lo, hi);
      for (size_t i = 0; i < n; ++i)
        a.set(i, u(rng));
    }
  }
  return a;
}

} // namespace tle::cpu
