// Reading specialisations back from tlec modules: __tle_metadata out of a cubin's ELF symbol table
// or a PTX initializer, parsed into a LaunchSpec.
#include "tle/Driver/Launcher.h"
#include "tle/Runtime/Metadata.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tle::driver {

namespace {

template <class T> bool readLE(const std::string &b, uint64_t off, T &out) {
  if (off > b.size() || b.size() - off < sizeof(T))
    return false;
  std::memcpy(&out, b.data() + off, sizeof(T)); // ELF64 little-endian, as on every CUDA host
  return true;
}

/// The bytes of symbol `name` of a 64-bit little-endian ELF image, or false.
bool elfSymbolBytes(const std::string &img, const std::string &name, std::string &out, std::string &error) {
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0;
  if (img.size() < 64 || img[4] != 2 || img[5] != 1 || !readLE(img, 0x28, shoff) ||
      !readLE(img, 0x3A, shentsize) || !readLE(img, 0x3C, shnum) || shentsize < 64) {
    error = "not a 64-bit little-endian ELF file";
    return false;
  }
  struct Section {
    uint32_t type = 0, link = 0;
    uint64_t offset = 0, size = 0, addr = 0, entsize = 0;
  };
  std::vector<Section> sections(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t h = shoff + uint64_t(i) * shentsize;
    Section &s = sections[i];
    if (!readLE(img, h + 4, s.type) || !readLE(img, h + 0x10, s.addr) || !readLE(img, h + 0x18, s.offset) ||
        !readLE(img, h + 0x20, s.size) || !readLE(img, h + 0x28, s.link) || !readLE(img, h + 0x38, s.entsize)) {
      error = "truncated ELF section table";
      return false;
    }
  }
  for (const Section &symtab : sections) {
    if (symtab.type != 2 /*SHT_SYMTAB*/ || symtab.link >= sections.size())
      continue;
    const Section &strtab = sections[symtab.link];
    uint64_t ent = symtab.entsize ? symtab.entsize : 24;
    for (uint64_t off = 0; off + 24 <= symtab.size; off += ent) {
      uint32_t nameOff = 0;
      uint16_t shndx = 0;
      uint64_t value = 0, size = 0;
      uint64_t base = symtab.offset + off;
      if (!readLE(img, base, nameOff) || !readLE(img, base + 6, shndx) || !readLE(img, base + 8, value) ||
          !readLE(img, base + 16, size))
        break;
      if (nameOff >= strtab.size || strtab.offset + nameOff >= img.size())
        continue;
      const char *sym = img.data() + strtab.offset + nameOff;
      size_t maxLen = img.size() - (strtab.offset + nameOff);
      if (strnlen(sym, maxLen) != name.size() || name.compare(0, name.size(), sym, name.size()) != 0)
        continue;
      if (shndx == 0 || shndx >= sections.size()) {
        error = "symbol " + name + " is not defined in a section";
        return false;
      }
      const Section &sec = sections[shndx];
      uint64_t rel = value >= sec.addr ? value - sec.addr : value;
      if (sec.type == 8 /*SHT_NOBITS*/ || rel > sec.size || sec.size - rel < size ||
          sec.offset + rel + size > img.size()) {
        error = "symbol " + name + " has no initialised bytes in the image";
        return false;
      }
      out = img.substr(sec.offset + rel, size);
      return true;
    }
  }
  error = "no symbol " + name + " (was it compiled by tlec?)";
  return false;
}

/// The initializer bytes of `.global ... NAME[N] = {b, b, ...};` in PTX text.
bool ptxArrayBytes(const std::string &ptx, const std::string &name, std::string &out, std::string &error) {
  size_t at = ptx.find(name + "[");
  if (at == std::string::npos) {
    error = "no " + name + " array (was it compiled by tlec?)";
    return false;
  }
  size_t open = ptx.find('{', at), close = ptx.find('}', at), semi = ptx.find(';', at);
  if (open == std::string::npos || close == std::string::npos || close < open || semi < open) {
    error = name + " has no initializer";
    return false;
  }
  const char *p = ptx.data() + open + 1, *end = ptx.data() + close;
  while (p < end) {
    if (*p < '0' || *p > '9') {
      ++p;
      continue;
    }
    unsigned v = 0;
    while (p < end && *p >= '0' && *p <= '9')
      v = v * 10 + unsigned(*p++ - '0');
    out.push_back(static_cast<char>(v));
  }
  return true;
}

} // namespace

bool readImageMetadata(const std::string &image, std::string &json, bool &isPtx, std::string &error) {
  std::string bytes;
  isPtx = !(image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0);
  bool ok = isPtx ? ptxArrayBytes(image, metadata::kSymbol, bytes, error)
                  : elfSymbolBytes(image, metadata::kSymbol, bytes, error);
  if (!ok)
    return false;
  json = bytes.substr(0, bytes.find('\0'));
  return true;
}

bool specFromMetadata(const std::string &text, LaunchImage image, LaunchSpec &spec, std::string &error) {
  using json = nlohmann::ordered_json;
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string &what) {
    error = "invalid __tle_metadata: " + what;
    return false;
  };
  if (!doc.is_object())
    return bad("not a JSON object");
  if (doc.value("format", "") != metadata::kFormat)
    return bad("\"format\" is not \"tle-module\"");
  if (!doc["version"].is_number_integer() || doc["version"].get<int>() > metadata::kVersion)
    return bad("unsupported \"version\"");
  if (!doc["target"].is_string())
    return bad("no \"target\"");
  const json &kernels = doc["kernels"];
  if (!kernels.is_array() || kernels.size() != 1)
    return bad("a launcher needs a module with exactly one kernel");
  try {
    const json &k = kernels[0];
    spec = LaunchSpec();
    spec.kernel = k.at("name").get<std::string>();
    spec.numWarps = k.at("num_warps").get<int>();
    spec.numStages = k.value("num_stages", 0);
    std::vector<LaunchArg> runtime;
    for (const json &p : k.at("params"))
      runtime.push_back({p.at("name").get<std::string>(), p.at("type").get<std::string>(),
                         p.value("divisibility", int64_t(1)), false});
    std::map<size_t, LaunchArg> ones;
    if (k.contains("equal_to_1"))
      for (const json &p : k.at("equal_to_1"))
        ones[p.at("index").get<size_t>()] = {p.at("name").get<std::string>(), p.at("type").get<std::string>(), 1,
                                             true};
    size_t total = runtime.size() + ones.size(), next = 0;
    for (size_t i = 0; i < total; ++i) {
      auto one = ones.find(i);
      if (one != ones.end())
        spec.args.push_back(one->second);
      else if (next < runtime.size())
        spec.args.push_back(runtime[next++]);
      else
        return bad("\"equal_to_1\" index out of range");
    }
    if (k.contains("constexprs"))
      for (auto it = k.at("constexprs").begin(); it != k.at("constexprs").end(); ++it)
        if (!std::any_of(spec.args.begin(), spec.args.end(),
                         [&](const LaunchArg &a) { return a.equalToOne && a.name == it.key(); }))
          spec.constexprs.push_back({it.key(), it.value().dump()}); // `:1` parameters are arguments
    if (k.contains("grid")) {
      for (const json &g : k.at("grid"))
        spec.grid.push_back(g.get<std::string>());
      if (spec.grid.size() != 3)
        return bad("\"grid\" must have 3 expressions");
    }
  } catch (const json::exception &e) {
    return bad(e.what());
  }
  image.arch = doc["target"].get<std::string>();
  spec.images.push_back(std::move(image));
  return true;
}

namespace {

bool readWholeFile(const std::string &path, std::string &bytes, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  bytes = ss.str();
  return true;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The byte arrays of a generated launcher source (`name[] = {0x7f,0x45,...};`), in order: the
/// modules it embeds (a PTX module with its terminating NUL).
std::vector<std::string> embeddedArrays(const std::string &c) {
  std::vector<std::string> out;
  for (size_t at = c.find("[] = {"); at != std::string::npos; at = c.find("[] = {", at + 1)) {
    size_t p = at + 6, end = c.find('}', p);
    if (end == std::string::npos)
      break;
    std::string bytes;
    bool onlyBytes = true;
    while (p < end && onlyBytes) {
      while (p < end && (c[p] == ',' || c[p] == ' ' || c[p] == '\n'))
        ++p;
      if (p >= end)
        break;
      if (end - p < 4 || c[p] != '0' || c[p + 1] != 'x' || !std::isxdigit((unsigned char)c[p + 2]) ||
          !std::isxdigit((unsigned char)c[p + 3])) {
        onlyBytes = false;
        break;
      }
      bytes.push_back(char(std::stoi(c.substr(p + 2, 2), nullptr, 16)));
      p += 4;
    }
    if (onlyBytes && !bytes.empty())
      out.push_back(std::move(bytes));
  }
  return out;
}

/// A launcher header tlec wrote for Triton's `-o PREFIX` (PREFIX.<hash>_<suffix>.h): its modules
/// are embedded in the source file next to it (PREFIX.<hash>_<suffix>.c, or .cpp).
bool readHeaderSpecs(const std::string &path, std::vector<LaunchSpec> &specs, std::string &error) {
  std::string header;
  if (!readWholeFile(path, header, error))
    return false;
  if (header.find("tt-linker:") != std::string::npos && header.find("generated by tlec") == std::string::npos) {
    error = path + ": a launcher header Triton generated; tle-link links modules tlec compiled: run the same "
                   "command line with tlec instead of python -m triton.tools.compile";
    return false;
  }
  std::string stem = path.substr(0, path.size() - 2), source, sourcePath;
  for (const char *ext : {".c", ".cpp"})
    if (readWholeFile(stem + ext, source, error)) {
      sourcePath = stem + ext;
      break;
    }
  if (sourcePath.empty()) {
    error = path + ": a launcher header, whose modules are embedded in its source file: cannot open '" + stem +
            ".c' (tlec -o PREFIX writes both)";
    return false;
  }
  std::vector<std::string> images = embeddedArrays(source);
  if (images.empty()) {
    error = sourcePath + ": embeds no module (was it written by tlec -o PREFIX?)";
    return false;
  }
  for (std::string &bytes : images) {
    LaunchImage image;
    image.origin = sourcePath;
    bool ptx = bytes.size() < 4 || std::memcmp(bytes.data(), "\x7f" "ELF", 4) != 0;
    if (ptx && !bytes.empty() && bytes.back() == '\0')
      bytes.pop_back();
    image.bytes = std::move(bytes);
    std::string json;
    LaunchSpec spec;
    if (!readImageMetadata(image.bytes, json, image.ptx, error) || !specFromMetadata(json, std::move(image), spec, error)) {
      error = sourcePath + ": " + error;
      return false;
    }
    specs.push_back(std::move(spec));
  }
  return true;
}

} // namespace

bool readSpecFile(const std::string &path, LaunchSpec &spec, std::string &error) {
  LaunchImage image;
  if (!readWholeFile(path, image.bytes, error))
    return false;
  image.origin = path;
  std::string json;
  if (!readImageMetadata(image.bytes, json, image.ptx, error) ||
      !specFromMetadata(json, std::move(image), spec, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

bool readSpecInput(const std::string &path, std::vector<LaunchSpec> &specs, std::string &error) {
  if (endsWith(path, ".h"))
    return readHeaderSpecs(path, specs, error);
  LaunchSpec spec;
  if (!readSpecFile(path, spec, error))
    return false;
  specs.push_back(std::move(spec));
  return true;
}

std::string LaunchSpec::key() const {
  std::ostringstream s;
  s << kernel << '|' << numWarps << '|' << numStages << '|';
  for (auto &a : args)
    s << a.name << ':' << a.type << ':' << a.divisibility << ':' << a.equalToOne << ',';
  s << '|';
  for (auto &[n, v] : constexprs)
    s << n << '=' << v << ',';
  s << '|';
  for (auto &g : grid)
    s << g << ';';
  s << '|';
  for (auto &w : when)
    s << w << ';';
  return s.str();
}

std::string LaunchSpec::describe() const {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) {
    const LaunchArg &a = args[i];
    s += (i ? ", " : "") + a.type + (a.equalToOne ? ":1" : a.divisibility > 1 ? ":" + std::to_string(a.divisibility) : "") +
         " " + a.name;
  }
  if (!constexprs.empty()) {
    s += ";";
    for (size_t i = 0; i < constexprs.size(); ++i)
      s += (i ? ", " : " ") + constexprs[i].first + "=" + constexprs[i].second;
  }
  s += "; " + std::to_string(numWarps) + (numWarps == 1 ? " warp" : " warps");
  if (numStages)
    s += ", " + std::to_string(numStages) + " stages";
  for (size_t i = 0; i < when.size(); ++i)
    s += (i ? ", " : "; when ") + when[i];
  return s;
}

bool groupSpecs(std::vector<LaunchSpec> &specs, std::string &error) {
  std::vector<LaunchSpec> grouped;
  std::map<std::string, size_t> index;
  for (LaunchSpec &s : specs) {
    auto [it, fresh] = index.emplace(s.key(), grouped.size());
    if (fresh) {
      grouped.push_back(std::move(s));
      continue;
    }
    LaunchSpec &g = grouped[it->second];
    for (LaunchImage &img : s.images) {
      for (const LaunchImage &have : g.images)
        if (have.arch == img.arch) {
          error = "two images of one specialisation of " + g.kernel + " (" + g.describe() + ") target " + img.arch +
                  ": " + have.origin + " and " + img.origin;
          return false;
        }
      g.images.push_back(std::move(img));
    }
  }
  specs = std::move(grouped);
  return true;
}

} // namespace tle::driver
