// Fuzz target for libtle_rt's module loading: __tle_metadata documents, cubin images around them and PTX text, through the mock driver.
//
// The first byte of an input says what the rest is (a letter, so the seeds in
// corpus-runtime/ read as text; any other byte picks a mode by its value):
//   'J'  a __tle_metadata document, given to parseModuleMetadata; every kernel it describes then
//        goes through the launch checks (signature, constexprs, argument count, types, values).
//   'C'  a __tle_metadata document that the target wraps into a minimal ELF cubin (the bytes,
//        NUL-terminated, as the symbol __tle_metadata): the image is loaded as an engine loads a
//        module file (Module::fromImage, the C ABI's tle_rt_module_load_data and a module cache),
//        and every kernel the metadata describes is looked up and launched once on the mock
//        driver with arguments of its parameter types (pointers to a buffer, integers 64), so
//        launch-time TMA descriptors are built too.
//   'c'  the same without the terminating NUL (libtle_rt must refuse the document, not read on).
//   'P'  PTX text, loaded with Module::fromPtx and, from an exact-size buffer without a NUL, with
//        tle_rt_module_cache_get and tle_rt_module_load_data (which must not read past the size);
//        the mock driver reads `.entry NAME(` lines and `__tle_metadata[N] = {...}` byte lists.
// Only libtle_rt's own errors (tle::rt::Error and the C ABI's error statuses) are expected; a
// crash, a sanitizer report, or any other exception is a finding. The driver is the mock
// (libtle-mock-cuda.so, TLE_RT_CUDA_DRIVER) with its kernel emulation off
// (TLE_MOCK_CUDA_NO_EMULATION): no GPU is needed. Images with the ELF or fatbin magic in 'P'
// inputs are not loaded: the driver reads an ELF image by the sizes in its own headers, which
// libtle_rt does not check (the real driver does).
#include "tle/Runtime/ModuleCache.h"
#include "tle/Runtime/Runtime.h"
#include "tle/Runtime/tle_rt.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#ifndef TLE_FUZZ_MOCK_DRIVER
#error "TLE_FUZZ_MOCK_DRIVER (the path of libtle-mock-cuda.so) must be defined"
#endif

namespace rt = tle::rt;

namespace {

void put16(std::string &b, size_t at, uint16_t v) { std::memcpy(&b[at], &v, 2); }
void put32(std::string &b, size_t at, uint32_t v) { std::memcpy(&b[at], &v, 4); }
void put64(std::string &b, size_t at, uint64_t v) { std::memcpy(&b[at], &v, 8); }

/// A minimal 64-bit little-endian ELF image (EM_CUDA) whose symbol __tle_metadata holds the
/// bytes `md`: the header, the bytes, a string table, a symbol table and four section headers.
std::string cubinWith(const std::string &md) {
  auto align8 = [](size_t n) { return (n + 7) & ~size_t(7); };
  const std::string strtab = std::string("\0__tle_metadata\0", 16);
  size_t dataOff = 64, strOff = align8(dataOff + md.size()), symOff = align8(strOff + strtab.size());
  size_t shOff = symOff + 2 * 24, total = shOff + 4 * 64;
  std::string b(total, '\0');
  std::memcpy(&b[0], "\x7f" "ELF\x02\x01\x01", 7);
  put16(b, 0x10, 2);   // ET_EXEC
  put16(b, 0x12, 190); // EM_CUDA
  put32(b, 0x14, 1);
  put64(b, 0x28, shOff);
  put16(b, 0x34, 64);
  put16(b, 0x3A, 64);
  put16(b, 0x3C, 4);
  put16(b, 0x3E, 2);
  std::memcpy(&b[dataOff], md.data(), md.size());
  std::memcpy(&b[strOff], strtab.data(), strtab.size());
  // Symbol 1: __tle_metadata, a global object in section 1 at its start.
  put32(b, symOff + 24, 1);
  b[symOff + 24 + 4] = 0x11; // STB_GLOBAL, STT_OBJECT
  put16(b, symOff + 24 + 6, 1);
  put64(b, symOff + 24 + 16, md.size());
  auto section = [&](unsigned i, uint32_t type, uint64_t off, uint64_t size, uint32_t link, uint64_t entsize) {
    size_t h = shOff + 64 * i;
    put32(b, h + 4, type);
    put64(b, h + 0x18, off);
    put64(b, h + 0x20, size);
    put32(b, h + 0x28, link);
    put64(b, h + 0x38, entsize);
  };
  section(1, 1 /*SHT_PROGBITS*/, dataOff, md.size(), 0, 0);
  section(2, 3 /*SHT_STRTAB*/, strOff, strtab.size(), 0, 0);
  section(3, 2 /*SHT_SYMTAB*/, symOff, 2 * 24, 2, 24);
  return b;
}

/// The device, a stream and a 4 KiB buffer of the mock driver, made once.
struct Env {
  rt::Device device{0};
  rt::Stream stream{device};
  rt::DeviceBuffer buffer{device, 4096};
  rt::ModuleCache cache{4};
  tle_rt_module_cache cCache = nullptr;
  Env() { tle_rt_module_cache_create(4, &cCache); }
};

Env &env() {
  static Env *e = new Env; // never destroyed: the driver may be gone at exit
  return *e;
}

/// Argument bytes for every parameter of `k` (pointers: the buffer; integers: 64; floats: 1.0;
/// bool: true; descriptors: zeros) and pointers to them, as launchRaw takes them.
struct Args {
  std::vector<uint64_t> slots;
  std::vector<rt::TensorMap> maps;
  std::vector<void *> ptrs;
  explicit Args(const rt::KernelInfo &k) : slots(k.params.size()), maps(k.params.size()), ptrs(k.params.size()) {
    for (size_t i = 0; i < k.params.size(); ++i) {
      const rt::ParamType &t = k.params[i].type;
      ptrs[i] = &slots[i];
      if (t.pointer) {
        slots[i] = env().buffer.address();
      } else if (t.kind == rt::ScalarKind::TensorMap) {
        ptrs[i] = &maps[i];
      } else if (t.kind == rt::ScalarKind::Float && t.bits == 32) {
        float one = 1.0f;
        std::memcpy(&slots[i], &one, 4);
      } else if (t.kind == rt::ScalarKind::Float && t.bits == 64) {
        double one = 1.0;
        std::memcpy(&slots[i], &one, 8);
      } else if (t.kind == rt::ScalarKind::Bool) {
        slots[i] = 1;
      } else {
        slots[i] = 64;
      }
    }
  }
};

/// What an engine asks of a parsed kernel before a launch, none of which may fail on metadata
/// that parsed.
void checkKernelInfo(const rt::KernelInfo &k) {
  (void)k.signature();
  (void)k.threadsPerBlock();
  for (const auto &c : k.constexprs)
    (void)k.constexprInt(c.first);
  for (const rt::ParamInfo &p : k.params)
    (void)p.type.cppName();
  Args a(k);
  try {
    rt::checkArgCount(k, a.ptrs.size());
    for (size_t i = 0; i < k.params.size(); ++i) {
      rt::checkArgType(k, i, {true, rt::ScalarKind::Int, 64, "void *"});
      rt::checkArgValue(k, i, a.ptrs[i]);
    }
  } catch (const rt::ArgumentError &) {
  }
}

/// Looks up and launches every kernel of `m` once.
void launchAll(const rt::Module &m) {
  if (!m.hasMetadata())
    return;
  for (const rt::KernelInfo &info : m.info().kernels) {
    try {
      checkKernelInfo(info);
      rt::Kernel k = m.kernel(info.name);
      Args a(k.info());
      k.launchRaw(rt::Grid(1, 1, 1), env().stream, a.ptrs.data(), a.ptrs.size());
    } catch (const rt::Error &) {
    }
  }
}

/// The C ABI's view of a loaded module: its metadata text and every kernel's parameters.
void walkCModule(tle_rt_module m) {
  if (!m)
    return;
  (void)tle_rt_module_metadata(m);
  try {
    if (const char *md = tle_rt_module_metadata(m)) {
      rt::ModuleInfo info = rt::parseModuleMetadata(md);
      for (const rt::KernelInfo &ki : info.kernels) {
        tle_rt_kernel k = nullptr;
        if (tle_rt_module_get_kernel(m, ki.name.c_str(), &k) != TLE_RT_SUCCESS)
          continue;
        for (size_t i = 0; i < tle_rt_kernel_num_params(k); ++i) {
          (void)tle_rt_kernel_param_name(k, i);
          (void)tle_rt_kernel_param_type(k, i);
        }
        (void)tle_rt_kernel_block_threads(k);
        (void)tle_rt_kernel_shared_bytes(k);
        tle_rt_kernel_release(k);
      }
    }
  } catch (const rt::Error &) {
  }
  tle_rt_module_unload(m);
}

void fuzzMetadata(const std::string &doc) {
  try {
    rt::ModuleInfo info = rt::parseModuleMetadata(doc);
    (void)info.find("kernel");
    for (const rt::KernelInfo &k : info.kernels)
      checkKernelInfo(k);
  } catch (const rt::MetadataError &) {
  }
}

void fuzzCubin(std::string doc, bool terminate) {
  if (terminate)
    doc.push_back('\0');
  std::string image = cubinWith(doc);
  try {
    launchAll(rt::Module::fromImage(env().device, image.data(), image.size()));
  } catch (const rt::Error &) {
  }
  try {
    rt::Module a = env().cache.getImage(env().device, image.data(), image.size());
    rt::Module b = env().cache.getImage(env().device, image.data(), image.size()); // a hit
    (void)(a == b);
    env().cache.clear();
  } catch (const rt::Error &) {
  }
  tle_rt_module m = nullptr;
  if (tle_rt_module_load_data(0, image.data(), image.size(), &m) == TLE_RT_SUCCESS)
    walkCModule(m);
}

void fuzzPtx(const std::string &text) {
  if (text.size() >= 4 && (std::memcmp(text.data(), "\x7f" "ELF", 4) == 0 || std::memcmp(text.data(), "\x50\xed\x55\xba", 4) == 0))
    return;
  try {
    launchAll(rt::Module::fromPtx(env().device, text));
  } catch (const rt::Error &) {
  }
  if (text.empty())
    return;
  // An exact-size copy without a NUL: a read past `size` is a heap overflow ASan reports.
  std::unique_ptr<char[]> exact(new char[text.size()]);
  std::memcpy(exact.get(), text.data(), text.size());
  tle_rt_module m = nullptr;
  if (tle_rt_module_cache_get(env().cCache, 0, exact.get(), text.size(), &m) == TLE_RT_SUCCESS)
    walkCModule(m);
  tle_rt_module_cache_clear(env().cCache);
  m = nullptr;
  if (tle_rt_module_load_data(0, exact.get(), text.size(), &m) == TLE_RT_SUCCESS)
    walkCModule(m);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  setenv("TLE_RT_CUDA_DRIVER", TLE_FUZZ_MOCK_DRIVER, 0);
  setenv("TLE_MOCK_CUDA_NO_EMULATION", "1", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0 || size > 256 * 1024)
    return -1;
  std::string rest(reinterpret_cast<const char *>(data) + 1, size - 1);
  switch (data[0]) {
  case 'J':
    fuzzMetadata(rest);
    break;
  case 'C':
    fuzzCubin(rest, true);
    break;
  case 'c':
    fuzzCubin(rest, false);
    break;
  case 'P':
    fuzzPtx(rest);
    break;
  default:
    switch (data[0] % 4) {
    case 0: fuzzMetadata(rest); break;
    case 1: fuzzCubin(rest, true); break;
    case 2: fuzzCubin(rest, false); break;
    default: fuzzPtx(rest); break;
    }
  }
  return 0;
}
