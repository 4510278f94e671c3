// Reading kernel resource usage (registers, stack frame, static shared memory) from cubin ELF sections (see Cubin.h).
#include "Cubin.h"

#include "Expr.h"
#include "TuneCache.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace tle::bench {

namespace {

enum : uint8_t {
  EIFMT_NVAL = 0x01,
  EIFMT_BVAL = 0x02,
  EIFMT_HVAL = 0x03,
  EIFMT_SVAL = 0x04,
};
enum : uint8_t {
  EIATTR_MAX_THREADS = 0x05,
  EIATTR_FRAME_SIZE = 0x11,
  EIATTR_REGCOUNT = 0x2f,
};

template <class T> T rd(const std::string &b, size_t at) {
  if (at + sizeof(T) > b.size())
    throw BenchError("truncated cubin (read past the end)");
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

struct Section {
  std::string name;
  uint32_t type = 0, link = 0;
  uint64_t offset = 0, size = 0;
};

} // namespace

CubinResources readCubinResources(const std::string &elf, const std::string &kernel) {
  if (elf.size() < 64 || elf.compare(0, 4, "\x7f" "ELF") != 0 || elf[4] != 2)
    throw BenchError("not an ELF64 cubin");
  const uint64_t shoff = rd<uint64_t>(elf, 0x28);
  const uint16_t shentsize = rd<uint16_t>(elf, 0x3a), shnum = rd<uint16_t>(elf, 0x3c),
                 shstrndx = rd<uint16_t>(elf, 0x3e);
  if (shentsize < 64 || shstrndx >= shnum)
    throw BenchError("malformed cubin section table");
  std::vector<Section> secs(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    size_t h = size_t(shoff) + size_t(i) * shentsize;
    secs[i].type = rd<uint32_t>(elf, h + 4);
    secs[i].offset = rd<uint64_t>(elf, h + 24);
    secs[i].size = rd<uint64_t>(elf, h + 32);
    secs[i].link = rd<uint32_t>(elf, h + 40);
    secs[i].name = std::to_string(rd<uint32_t>(elf, h)); // resolved below
  }
  auto cstr = [&](const Section &tab, uint32_t off) {
    size_t at = size_t(tab.offset) + off;
    if (at >= elf.size())
      throw BenchError("malformed cubin string table");
    return std::string(elf.c_str() + at);
  };
  for (Section &s : secs)
    s.name = cstr(secs[shstrndx], uint32_t(std::stoul(s.name)));

  // The kernel's symbol index in .symtab (the .nv.info records refer to it).
  int64_t symIndex = -1;
  for (const Section &s : secs) {
    if (s.type != 2 /* SHT_SYMTAB */ || s.link >= secs.size())
      continue;
    for (uint64_t k = 0; k * 24 < s.size; ++k) {
      size_t e = size_t(s.offset + k * 24);
      if (cstr(secs[s.link], rd<uint32_t>(elf, e)) == kernel) {
        symIndex = int64_t(k);
        break;
      }
    }
  }
  if (symIndex < 0)
    throw BenchError(fmt::format("the cubin has no symbol '{}'", kernel));

  CubinResources r;
  auto walk = [&](const Section &s, bool perKernel) {
    size_t at = size_t(s.offset), end = size_t(s.offset + s.size);
    while (at + 4 <= end) {
      uint8_t format = uint8_t(elf[at]), attr = uint8_t(elf[at + 1]);
      uint16_t val = rd<uint16_t>(elf, at + 2);
      size_t data = at + 4;
      at = data + (format == EIFMT_SVAL ? val : 0);
      if (format != EIFMT_SVAL)
        continue;
      if (!perKernel && (attr == EIATTR_REGCOUNT || attr == EIATTR_FRAME_SIZE) && val >= 8 &&
          rd<uint32_t>(elf, data) == uint32_t(symIndex)) {
        uint32_t v = rd<uint32_t>(elf, data + 4);
        if (attr == EIATTR_REGCOUNT)
          r.registers = int(v);
        else
          r.localBytes = int64_t(v);
      } else if (perKernel && attr == EIATTR_MAX_THREADS && val >= 12) {
        r.maxThreads = int(rd<uint32_t>(elf, data) * rd<uint32_t>(elf, data + 4) * rd<uint32_t>(elf, data + 8));
      }
    }
  };
  for (const Section &s : secs) {
    if (s.name == ".nv.info")
      walk(s, false);
    else if (s.name == ".nv.info." + kernel)
      walk(s, true);
    else if (s.name == ".nv.shared." + kernel)
      r.staticSharedBytes = int64_t(s.size);
    else if (s.name == ".text." + kernel && s.offset + s.size <= elf.size())
      r.codeHash = fnv1aHex(elf.substr(size_t(s.offset), size_t(s.size)));
  }
  return r;
}

CubinResources readCubinResourcesFile(const std::string &path, const std::string &kernel) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw BenchError("cannot read " + path);
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  try {
    return readCubinResources(data, kernel);
  } catch (const BenchError &e) {
    throw BenchError(path + ": " + e.what());
  }
}

} // namespace tle::bench
