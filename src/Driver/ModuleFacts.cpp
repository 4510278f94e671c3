// A module's own facts for tle-inspect: a cubin's ELF header, notes, sections and .nv.info
// attributes (read with LLVM's bounds-checked ELF reader), or a PTX module's directives.
#include "tle/Driver/Inspect.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELF.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Error.h>

#include <cstring>
#include <map>

namespace tle::driver {

namespace {

using ELF = llvm::object::ELF64LE;
using ELFFile = llvm::object::ELFFile<ELF>;

// .nv.info attribute formats and the attributes tle-inspect reads. An attribute is a format byte,
// an attribute byte and a 16-bit field: the value itself (EIFMT_HVAL), unused (EIFMT_NVAL), or the
// byte count of the value that follows (EIFMT_SVAL).
constexpr uint8_t kFmtNone = 0x01, kFmtByte = 0x02, kFmtHalf = 0x03, kFmtSized = 0x04;
constexpr uint8_t kAttrRequiredBlock = 0x10;  // EIATTR_REQNTID: 3 x u32
constexpr uint8_t kAttrFrameSize = 0x11;      // EIATTR_FRAME_SIZE: symbol, bytes
constexpr uint8_t kAttrMinStackSize = 0x12;   // EIATTR_MIN_STACK_SIZE: symbol, bytes
constexpr uint8_t kAttrParamInfo = 0x17;      // EIATTR_KPARAM_INFO: one per parameter
constexpr uint8_t kAttrParamBankSize = 0x19;  // EIATTR_CBANK_PARAM_SIZE: half value
constexpr uint8_t kAttrMaxRegCount = 0x1b;    // EIATTR_MAXREG_COUNT: half value
constexpr uint8_t kAttrMaxStackSize = 0x23;   // EIATTR_MAX_STACK_SIZE: symbol, bytes
constexpr uint8_t kAttrRegCount = 0x2f;       // EIATTR_REGCOUNT: symbol, registers
constexpr uint8_t kAttrClusterDims = 0x3d;    // EIATTR_CTA_PER_CLUSTER: 3 x u32
constexpr uint8_t kAttrExplicitCluster = 0x3e; // EIATTR_EXPLICIT_CLUSTER: no value
constexpr unsigned kCudaEntry = 0x10;         // st_other of a kernel entry symbol (STO_CUDA_ENTRY)

/// One .nv.info attribute: its attribute byte, format and value bytes (the 16-bit field for
/// formats without a sized value).
struct Attribute {
  uint8_t format = 0, attr = 0;
  llvm::ArrayRef<uint8_t> value;
  uint16_t half = 0;
};

uint32_t u32At(llvm::ArrayRef<uint8_t> b, size_t off) {
  uint32_t v = 0;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

/// Splits a .nv.info section into attributes; false on an unknown format or a value that runs past
/// the section's end.
bool splitAttributes(llvm::ArrayRef<uint8_t> b, std::vector<Attribute> &out, std::string &error) {
  size_t at = 0;
  while (at < b.size()) {
    if (b.size() - at < 4) {
      error = "truncated attribute at byte " + std::to_string(at);
      return false;
    }
    Attribute a;
    a.format = b[at];
    a.attr = b[at + 1];
    a.half = uint16_t(b[at + 2] | (b[at + 3] << 8));
    at += 4;
    if (a.format == kFmtSized) {
      if (b.size() - at < a.half) {
        error = "attribute 0x" + llvm::utohexstr(a.attr) + " runs past the section's end";
        return false;
      }
      a.value = b.slice(at, a.half);
      at += a.half;
    } else if (a.format != kFmtNone && a.format != kFmtByte && a.format != kFmtHalf) {
      error = "unknown attribute format " + std::to_string(a.format) + " at byte " + std::to_string(at - 4);
      return false;
    }
    out.push_back(a);
  }
  return true;
}

/// The three u32 of a sized attribute, if it holds them.
std::optional<std::array<int64_t, 3>> dims(const Attribute &a) {
  if (a.format != kFmtSized || a.value.size() < 12)
    return std::nullopt;
  return std::array<int64_t, 3>{u32At(a.value, 0), u32At(a.value, 4), u32At(a.value, 8)};
}

/// Applies a kernel's own .nv.info.<symbol> attributes.
void applyKernelAttributes(const std::vector<Attribute> &attrs, KernelResources &k) {
  for (const Attribute &a : attrs) {
    switch (a.attr) {
    case kAttrRequiredBlock:
      if (auto d = dims(a))
        k.requiredBlock = d;
      break;
    case kAttrClusterDims:
      if (auto d = dims(a))
        k.cluster = d;
      break;
    case kAttrExplicitCluster:
      k.explicitCluster = true;
      break;
    case kAttrParamInfo:
      ++k.paramCount;
      break;
    case kAttrParamBankSize:
      if (a.format == kFmtHalf)
        k.paramBytes = a.half;
      break;
    case kAttrMaxRegCount:
      if (a.format == kFmtHalf)
        k.maxRegisters = a.half;
      break;
    default:
      break;
    }
  }
}

/// Applies the module-wide .nv.info attributes (symbol index, value) to the kernels they name.
void applyModuleAttributes(const std::vector<Attribute> &attrs, std::map<uint32_t, KernelResources *> &bySymbol) {
  for (const Attribute &a : attrs) {
    if (a.format != kFmtSized || a.value.size() < 8)
      continue;
    auto it = bySymbol.find(u32At(a.value, 0));
    if (it == bySymbol.end())
      continue;
    int64_t v = u32At(a.value, 4);
    KernelResources &k = *it->second;
    if (a.attr == kAttrRegCount)
      k.registers = int(v);
    else if (a.attr == kAttrFrameSize)
      k.frameBytes = v;
    else if (a.attr == kAttrMinStackSize)
      k.minStackBytes = v;
    else if (a.attr == kAttrMaxStackSize)
      k.maxStackBytes = v;
  }
}

/// The printable strings of a note's description (NUL-separated), e.g. the assembler's name,
/// release and options in .note.nv.tkinfo.
std::vector<std::string> noteStrings(llvm::ArrayRef<uint8_t> desc) {
  std::vector<std::string> out;
  std::string cur;
  for (uint8_t c : desc) {
    if (c >= 0x20 && c < 0x7f) {
      cur += char(c);
      continue;
    }
    if (cur.size() >= 2)
      out.push_back(cur);
    cur.clear();
  }
  if (cur.size() >= 2)
    out.push_back(cur);
  return out;
}

std::string message(llvm::Error e) { return llvm::toString(std::move(e)); }

/// The assembler's name, release and options from .note.nv.tkinfo.
void readToolkitNote(const ELFFile &elf, const ELF::Shdr &sec, ModuleFacts &facts) {
  llvm::Error err = llvm::Error::success();
  for (const auto &note : elf.notes(sec, err)) {
    std::vector<std::string> s = noteStrings(note.getDesc(sec.sh_addralign));
    if (s.size() >= 2)
      facts.assembler = s[0] + ": " + s[1];
    if (!s.empty() && s.back()[0] == '-')
      facts.assemblerOptions = s.back().substr(0, s.back().find_last_not_of(' ') + 1);
  }
  llvm::consumeError(std::move(err)); // a damaged note only loses the toolkit line
}

/// The architecture of a cubin's ELF header: sm_NN from e_flags (bits 8-15 from ELF ABI
/// version 8, bits 0-7 before it).
std::string elfArch(const ELF::Ehdr &h) {
  unsigned abi = h.e_ident[llvm::ELF::EI_ABIVERSION];
  unsigned sm = abi >= 8 ? (h.e_flags >> 8) & 0xff : h.e_flags & 0xff;
  return "sm_" + std::to_string(sm);
}

/// The kernel entries of the symbol table, and a map from symbol index to each.
bool readEntries(const ELFFile &elf, llvm::ArrayRef<ELF::Shdr> sections, ModuleFacts &facts,
                 std::map<uint32_t, size_t> &bySymbol, std::string &error) {
  for (const ELF::Shdr &sec : sections) {
    if (sec.sh_type != llvm::ELF::SHT_SYMTAB)
      continue;
    auto syms = elf.symbols(&sec);
    auto strtab = elf.getStringTableForSymtab(sec, sections);
    if (!syms || !strtab) {
      error = "bad symbol table: " + message(syms ? strtab.takeError() : syms.takeError());
      return false;
    }
    uint32_t index = 0;
    for (const ELF::Sym &sym : *syms) {
      if (sym.getType() == llvm::ELF::STT_FUNC && (sym.st_other & kCudaEntry)) {
        auto name = sym.getName(*strtab);
        if (!name) {
          error = "bad symbol name: " + message(name.takeError());
          return false;
        }
        bySymbol[index] = facts.kernels.size();
        facts.kernels.push_back({});
        facts.kernels.back().symbol = name->str();
        facts.kernels.back().codeBytes = int64_t(sym.st_size);
      }
      ++index;
    }
  }
  return true;
}

bool readCubin(const std::string &bytes, ModuleFacts &facts, std::string &error) {
  const auto *ident = reinterpret_cast<const unsigned char *>(bytes.data());
  if (bytes.size() < sizeof(ELF::Ehdr) || ident[llvm::ELF::EI_CLASS] != llvm::ELF::ELFCLASS64 ||
      ident[llvm::ELF::EI_DATA] != llvm::ELF::ELFDATA2LSB) {
    error = "not a 64-bit little-endian ELF file (a cubin is one)";
    return false;
  }
  auto elf = ELFFile::create(llvm::StringRef(bytes.data(), bytes.size()));
  if (!elf) {
    error = "malformed ELF: " + message(elf.takeError());
    return false;
  }
  const ELF::Ehdr &h = elf->getHeader();
  if (h.e_machine != llvm::ELF::EM_CUDA) {
    error = "an ELF file for machine " + std::to_string(h.e_machine) + ", not a cubin (EM_CUDA, 190)";
    return false;
  }
  facts.arch = elfArch(h);
  facts.elfAbiVersion = h.e_ident[llvm::ELF::EI_ABIVERSION];
  auto sections = elf->sections();
  if (!sections) {
    error = "malformed ELF section table: " + message(sections.takeError());
    return false;
  }
  std::map<uint32_t, size_t> entryIndex;
  if (!readEntries(*elf, *sections, facts, entryIndex, error))
    return false;
  std::map<std::string, KernelResources *> byName;
  std::map<uint32_t, KernelResources *> bySymbol;
  for (auto &[sym, i] : entryIndex) {
    bySymbol[sym] = &facts.kernels[i];
    byName[facts.kernels[i].symbol] = &facts.kernels[i];
  }
  for (const ELF::Shdr &sec : *sections) {
    auto name = elf->getSectionName(sec);
    if (!name) {
      error = "bad section name: " + message(name.takeError());
      return false;
    }
    if (sec.sh_type == llvm::ELF::SHT_NOTE && *name == ".note.nv.tkinfo") {
      readToolkitNote(*elf, sec, facts);
      continue;
    }
    if (name->starts_with(".nv.shared.")) {
      auto k = byName.find(name->drop_front(strlen(".nv.shared.")).str());
      if (k != byName.end())
        k->second->staticSharedBytes = int64_t(sec.sh_size);
      continue;
    }
    if (*name != ".nv.info" && !name->starts_with(".nv.info."))
      continue;
    auto content = elf->getSectionContents(sec);
    if (!content) {
      error = "section " + name->str() + ": " + message(content.takeError());
      return false;
    }
    std::vector<Attribute> attrs;
    if (!splitAttributes(*content, attrs, error)) {
      error = "section " + name->str() + ": " + error;
      return false;
    }
    if (*name == ".nv.info") {
      applyModuleAttributes(attrs, bySymbol);
      continue;
    }
    auto k = byName.find(name->drop_front(strlen(".nv.info.")).str());
    if (k != byName.end())
      applyKernelAttributes(attrs, *k->second);
  }
  return true;
}

// --- PTX: the directives of the module and of each .entry.

/// The rest of the line after `directive` at `at`, trimmed.
std::string lineAfter(const std::string &t, size_t at, size_t skip) {
  size_t eol = t.find('\n', at);
  std::string s = t.substr(at + skip, eol == std::string::npos ? std::string::npos : eol - at - skip);
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r;");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// "128, 1, 1" or "128" as three dimensions.
std::optional<std::array<int64_t, 3>> ptxDims(const std::string &s) {
  std::array<int64_t, 3> d = {1, 1, 1};
  size_t i = 0, at = 0;
  while (i < 3 && at < s.size()) {
    size_t end = s.find(',', at);
    std::string part = s.substr(at, end == std::string::npos ? std::string::npos : end - at);
    char *stop = nullptr;
    long long v = std::strtoll(part.c_str(), &stop, 10);
    if (stop == part.c_str() || v < 0)
      return std::nullopt;
    d[i++] = v;
    if (end == std::string::npos)
      break;
    at = end + 1;
  }
  return d;
}

/// One .entry: its name, its parameters (up to the closing parenthesis) and the performance
/// directives between them and its body's brace.
KernelResources ptxEntry(const std::string &t, size_t at, size_t &next) {
  KernelResources k;
  size_t nameAt = t.find_first_not_of(" \t", at + strlen(".entry"));
  size_t nameEnd = nameAt == std::string::npos ? std::string::npos : t.find_first_of(" \t\r\n(", nameAt);
  if (nameAt != std::string::npos)
    k.symbol = t.substr(nameAt, nameEnd == std::string::npos ? std::string::npos : nameEnd - nameAt);
  size_t close = t.find(')', at), body = t.find('{', at);
  size_t paramsEnd = std::min(close, body);
  for (size_t p = t.find(".param", at); p != std::string::npos && p < paramsEnd; p = t.find(".param", p + 1))
    ++k.paramCount;
  next = body == std::string::npos ? t.size() : body;
  size_t from = paramsEnd == std::string::npos ? next : paramsEnd;
  std::string head = from < next ? t.substr(from, next - from) : "";
  auto directive = [&](const char *d) {
    size_t p = head.find(d);
    return p == std::string::npos ? std::optional<std::string>() : lineAfter(head, p, strlen(d));
  };
  if (auto v = directive(".reqntid"))
    k.requiredBlock = ptxDims(*v);
  if (auto v = directive(".maxnreg"))
    if (auto d = ptxDims(*v))
      k.maxRegisters = int((*d)[0]);
  if (auto v = directive(".reqnctapercluster"))
    k.cluster = ptxDims(*v);
  k.explicitCluster = head.find(".explicitcluster") != std::string::npos;
  return k;
}

/// Where directive `d` opens a line (after blanks), or npos.
size_t directiveAt(const std::string &t, const char *d) {
  for (size_t at = t.find(d); at != std::string::npos; at = t.find(d, at + 1)) {
    size_t line = t.find_last_of('\n', at == 0 ? 0 : at - 1);
    line = at == 0 ? 0 : line == std::string::npos ? 0 : line + 1;
    if (t.find_first_not_of(" \t", line) == at)
      return at;
  }
  return std::string::npos;
}

bool readPTX(const std::string &t, ModuleFacts &facts, std::string &error) {
  size_t version = directiveAt(t, ".version"), target = directiveAt(t, ".target");
  if (version == std::string::npos || target == std::string::npos || t.find('\0') != std::string::npos) {
    error = "neither a cubin (ELF) nor PTX text (no lines opening with .version and .target)";
    return false;
  }
  facts.ptx = true;
  facts.ptxVersion = lineAfter(t, version, strlen(".version"));
  std::string arch = lineAfter(t, target, strlen(".target"));
  facts.arch = arch.substr(0, arch.find(','));
  for (size_t at = t.find(".entry", target); at != std::string::npos;) {
    size_t next = at;
    facts.kernels.push_back(ptxEntry(t, at, next));
    at = t.find(".entry", std::max(next, at + 1));
  }
  return true;
}

} // namespace

bool readModuleFacts(const std::string &bytes, ModuleFacts &facts, std::string &error) {
  facts = ModuleFacts();
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "\x7f" "ELF", 4) == 0)
    return readCubin(bytes, facts, error);
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "\x50\xed\x55\xba", 4) == 0) {
    error = "a fatbinary: give one of the cubins inside it (tlec writes one cubin per target)";
    return false;
  }
  return readPTX(bytes, facts, error);
}

} // namespace tle::driver
