// Host arrays for tle-run: .npy reading and writing (byte-exact headers as NumPy writes them),
// malformed files, and the zeros/ones/full/rand generators.
#include "tle/Target/CPU/CPUBackend.h"
#include "tle/Target/CPU/HostArray.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

using namespace tle;
using Catch::Matchers::Contains;

namespace {

std::string tempPath(const std::string &name) {
  const char *d = std::getenv("TMPDIR");
  return std::string(d && *d ? d : "/tmp") + "/tle-cpu-test-" + std::to_string(getpid()) + "-" + name;
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

std::string readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string errorOf(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const cpu::Error &e) {
    return e.what();
  }
  return "";
}

/// A version 1.0 .npy header as NumPy writes it (padded with spaces to a multiple of 64 bytes).
std::string npyHeader(const std::string &dict) {
  std::string h = dict;
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  return out + h;
}

} // namespace

TEST_CASE("npy: write then read back every dtype", "[cpu][npy]") {
  for (ir::DType t : {ir::DType::I1, ir::DType::I8, ir::DType::I16, ir::DType::I32, ir::DType::I64, ir::DType::U8,
                      ir::DType::U16, ir::DType::U32, ir::DType::U64, ir::DType::F16, ir::DType::BF16, ir::DType::F32,
                      ir::DType::F64}) {
    cpu::HostArray a(t, {3, 5});
    for (size_t i = 0; i < a.numElements(); ++i)
      a.set(i, double(i % 2 ? i : -double(i)) / (ir::isFloat(t) ? 4 : 1));
    std::string path = tempPath("rt.npy");
    cpu::writeNpy(path, a);
    cpu::HostArray b = cpu::readNpy(path);
    std::remove(path.c_str());
    INFO(ir::name(t));
    REQUIRE(b.shape() == std::vector<int64_t>{3, 5});
    REQUIRE(b.dtype() == (t == ir::DType::BF16 ? ir::DType::U16 : t)); // bf16 travels as its bits
    for (size_t i = 0; i < a.numElements(); ++i) {
      if (t == ir::DType::BF16)
        REQUIRE(b.get(i) == double(*reinterpret_cast<const uint16_t *>(static_cast<const char *>(a.data()) + 2 * i)));
      else
        REQUIRE(b.get(i) == a.get(i));
    }
    REQUIRE(reinterpret_cast<uintptr_t>(b.data()) % 64 == 0);
  }
}

TEST_CASE("npy: the header is NumPy's format 1.0 layout", "[cpu][npy]") {
  cpu::HostArray a(ir::DType::F32, {4});
  std::string path = tempPath("hdr.npy");
  cpu::writeNpy(path, a);
  std::string bytes = readFile(path);
  std::remove(path.c_str());
  std::string want = npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }");
  REQUIRE(bytes.size() == want.size() + 16);
  REQUIRE(bytes.substr(0, want.size()) == want);
  REQUIRE(want.size() % 64 == 0);
}

TEST_CASE("npy: files NumPy writes are read (format 2.0, 0-d, Fortran order of a vector)", "[cpu][npy]") {
  std::string path = tempPath("in.npy");
  std::string data("\x01\x00\x00\x00\x02\x00\x00\x00", 8);
  writeFile(path, npyHeader("{'descr': '<i4', 'fortran_order': True, 'shape': (2,), }") + data);
  cpu::HostArray a = cpu::readNpy(path);
  REQUIRE(a.dtype() == ir::DType::I32);
  REQUIRE(a.get(1) == 2);
  writeFile(path, npyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (), }") + std::string(8, '\0'));
  REQUIRE(cpu::readNpy(path).numElements() == 1);
  // Format 2.0: a 4-byte header length.
  std::string h = "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }";
  h.append(64 - (12 + h.size() + 1) % 64, ' ');
  h += '\n';
  std::string v2("\x93NUMPY\x02\x00", 8);
  v2 += char(h.size());
  v2 += std::string(3, '\0');
  writeFile(path, v2 + h + "abc");
  cpu::HostArray c = cpu::readNpy(path);
  REQUIRE(c.dtype() == ir::DType::U8);
  REQUIRE(c.get(2) == 'c');
  std::remove(path.c_str());
}

TEST_CASE("npy: malformed or unsupported files give clear errors", "[cpu][npy]") {
  std::string path = tempPath("bad.npy");
  CHECK_THAT(errorOf([&] { cpu::readNpy(tempPath("missing.npy")); }), Contains("cannot open"));
  writeFile(path, "not a numpy file at all");
  CHECK_THAT(errorOf([&] { cpu::readNpy(path); }), Contains("missing the \\x93NUMPY magic"));
  writeFile(path, npyHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }") + std::string(8, '\0'));
  CHECK_THAT(errorOf([&] { cpu::readNpy(path); }), Contains("unsupported dtype '>f4'"));
  writeFile(path, npyHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }") + std::string(16, '\0'));
  CHECK_THAT(errorOf([&] { cpu::readNpy(path); }), Contains("unsupported dtype '<c8'"));
  writeFile(path, npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }") + std::string(20, '\0'));
  CHECK_THAT(errorOf([&] { cpu::readNpy(path); }), Contains("is truncated: fp32[4x4] needs 64 bytes of data, the file has 20"));
  writeFile(path, npyHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }") + std::string(24, '\0'));
  CHECK_THAT(errorOf([&] { cpu::readNpy(path); }), Contains("Fortran order"));
  writeFile(path, std::string("\x93NUMPY\x01\x00\x40", 9));
  CHECK_THAT(errorOf([&] { cpu::readNpy(path); }), Contains("truncated header"));
  std::remove(path.c_str());
}

TEST_CASE("generated arrays: zeros, ones, full, rand", "[cpu][npy]") {
  REQUIRE_FALSE(cpu::makeArray("x.npy", ir::DType::F32, 0));
  auto z = cpu::makeArray("zeros:128x1024", ir::DType::F32, 0);
  REQUIRE(z);
  REQUIRE(z->shape() == std::vector<int64_t>{128, 1024});
  REQUIRE(z->get(5000) == 0);
  auto o = cpu::makeArray("ones:f16:7", ir::DType::F16, 0);
  REQUIRE(o->get(6) == 1);
  auto f = cpu::makeArray("full:0.1:bf16:3", ir::DType::BF16, 0);
  REQUIRE(f->get(2) == double(cpu::bf16ToFloat(cpu::bf16FromDouble(0.1))));
  auto big = cpu::makeArray("full:9007199254740993:i64:2", ir::DType::I64, 0);
  REQUIRE(big->str(1) == "9007199254740993");
  auto r = cpu::makeArray("rand:f32:1000", ir::DType::F32, 3);
  auto r2 = cpu::makeArray("rand:1000", ir::DType::F32, 3);
  bool different = false;
  for (size_t i = 0; i < 1000; ++i) {
    REQUIRE(r->get(i) >= -1);
    REQUIRE(r->get(i) < 1);
    REQUIRE(r->get(i) == r2->get(i)); // same seed, same values
    different = different || r->get(i) != r->get(0);
  }
  REQUIRE(different);
  auto ri = cpu::makeArray("rand:i8:1000", ir::DType::I8, 3);
  for (size_t i = 0; i < 1000; ++i)
    REQUIRE(std::abs(ri->get(i)) <= 8);
  CHECK_THAT(errorOf([] { cpu::makeArray("zeros:f16:8", ir::DType::F32, 0); }),
             Contains("makes fp16 elements but the parameter points to fp32"));
  CHECK_THAT(errorOf([] { cpu::makeArray("zeros:0x4", ir::DType::F32, 0); }), Contains("bad shape '0x4'"));
  CHECK_THAT(errorOf([] { cpu::makeArray("zeros:f32:4xq", ir::DType::F32, 0); }), Contains("bad shape"));
  CHECK_THAT(errorOf([] { cpu::makeArray("zeros:f99:4", ir::DType::F32, 0); }), Contains("unknown dtype 'f99'"));
  CHECK_THAT(errorOf([] { cpu::makeArray("full:abc:4", ir::DType::F32, 0); }), Contains("bad value 'abc'"));
  CHECK_THAT(errorOf([] { cpu::makeArray("zeros", ir::DType::F32, 0); }), Contains("expected zeros:[DTYPE:]SHAPE"));
}
