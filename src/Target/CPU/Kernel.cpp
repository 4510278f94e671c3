// CPU kernels: O2 over the lowered module, ORC LLJIT compilation, argument checks, the runtime
// helpers generated code calls (tile frame, bounds checks, failures) and the grid's thread pool.
#include "HostMath.h"
#include "Lowering.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

namespace tle::cpu {

using ir::DType;

std::string ArgValue::str() const {
  if (kind == Kind::Pointer) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "pointer %p", pointer);
    return std::string(buf) + (sized ? " (" + std::to_string(bytes) + " bytes)" : "");
  }
  return std::string(ir::name(dtype)) + " scalar";
}

namespace {

// ---------------------------------------------------------------------------------------------
// Run state shared by the worker threads, reached from the helpers through a thread-local.

struct BufferRange {
  uintptr_t begin, end;
  size_t param;
};

struct RunState {
  const std::string *kernel = nullptr;
  const std::vector<detail::Site> *sites = nullptr;
  const std::vector<ir::Param> *params = nullptr;
  std::vector<BufferRange> buffers;
  std::atomic<bool> failed{false};
  std::atomic<uint64_t> oobCount{0};
  std::mutex mu;
  std::string error;
  const std::function<void(const std::string &)> *printSink = nullptr;

  void fail(const std::string &msg) {
    std::lock_guard<std::mutex> g(mu);
    if (error.empty())
      error = msg;
    failed = true;
  }
  std::string at(int site) const {
    if (!sites || site < 0 || static_cast<size_t>(site) >= sites->size())
      return "";
    const detail::Site &s = (*sites)[static_cast<size_t>(site)];
    return s.where.empty() ? "" : " at " + s.where;
  }
  std::string what(int site) const {
    if (!sites || site < 0 || static_cast<size_t>(site) >= sites->size())
      return "access";
    return (*sites)[static_cast<size_t>(site)].what;
  }
};

thread_local RunState *tlsRun = nullptr;

/// The per-thread tile frame: grown on demand, kept for the thread's lifetime.
struct Frame {
  void *p = nullptr;
  size_t bytes = 0;
  ~Frame() { std::free(p); }
};
thread_local Frame tlsFrame;

extern "C" void *tleCpuFrame(uint64_t bytes) {
  if (bytes <= tlsFrame.bytes)
    return tlsFrame.p;
  std::free(tlsFrame.p);
  size_t rounded = (bytes + 63) / 64 * 64;
  tlsFrame.p = std::aligned_alloc(64, rounded);
  tlsFrame.bytes = tlsFrame.p ? rounded : 0;
  if (!tlsFrame.p && tlsRun)
    tlsRun->fail("kernel '" + *tlsRun->kernel + "' ran out of memory: its tiles need " + std::to_string(bytes) +
                 " bytes per thread");
  return tlsFrame.p;
}

extern "C" int32_t tleCpuCheck(const void *addr, uint64_t bytes, int32_t site, int32_t px, int32_t py, int32_t pz) {
  RunState *s = tlsRun;
  if (!s)
    return 1;
  auto a = reinterpret_cast<uintptr_t>(addr);
  for (const BufferRange &r : s->buffers)
    if (a >= r.begin && a + bytes <= r.end)
      return 1;
  if (s->oobCount.fetch_add(1) != 0)
    return 0;
  // The first out-of-bounds access: say where it falls relative to the nearest buffer.
  std::ostringstream msg;
  msg << "out-of-bounds " << s->what(site) << " in kernel '" << *s->kernel << "'" << s->at(site) << " (program id "
      << px << ", " << py << ", " << pz << "): address 0x" << std::hex << a << std::dec << " (" << bytes
      << " bytes) is outside every buffer passed to the kernel";
  const BufferRange *near = nullptr;
  uintptr_t best = UINTPTR_MAX;
  for (const BufferRange &r : s->buffers) {
    uintptr_t d = a >= r.end ? a - r.end : r.begin >= a + bytes ? r.begin - a : 0;
    if (d < best)
      best = d, near = &r;
  }
  if (near) {
    const ir::Param &p = (*s->params)[near->param];
    unsigned eb = ir::storageBytes(p.type.pointee);
    auto elems = static_cast<int64_t>((near->end - near->begin) / eb);
    auto diff = static_cast<int64_t>(a - near->begin);
    msg << "; nearest is '" << p.name << "' (" << elems << " x " << ir::name(p.type.pointee) << "), of which it is element "
        << (diff >= 0 ? diff / eb : -((-diff + eb - 1) / eb));
  }
  s->fail(msg.str());
  return 0;
}

extern "C" void tleCpuFail(int32_t site, int64_t value) {
  if (RunState *s = tlsRun)
    s->fail("kernel '" + *s->kernel + "': " + s->what(site) + s->at(site) + " has a non-positive step (" +
            std::to_string(value) + "); for loops need step > 0");
}

/// The value of an fp16 or bf16 bit pattern.
double halfToDouble(uint16_t h, DType t) {
  if (t == DType::BF16) {
    uint32_t w = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &w, 4);
    return f;
  }
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

/// One element (or the bare prefix) of a tl.device_print, in Triton's format:
/// "pid (X, Y, Z) idx (I, J)<prefix>[(operand K) ]<value>".
extern "C" void tleCpuPrint(int32_t site, int32_t operand, uint64_t bits, const int64_t *index, int32_t px, int32_t py,
                            int32_t pz) {
  RunState *s = tlsRun;
  if (!s || !s->sites || site < 0 || static_cast<size_t>(site) >= s->sites->size())
    return;
  const detail::Site &st = (*s->sites)[static_cast<size_t>(site)];
  char buf[128];
  std::snprintf(buf, sizeof buf, "pid (%d, %d, %d)", px, py, pz);
  std::string line = buf;
  if (operand >= 0 && static_cast<size_t>(operand) < st.types.size()) {
    const ir::Type &t = st.types[static_cast<size_t>(operand)];
    line += " idx (";
    for (size_t d = 0; d < t.shape.size(); ++d) {
      // Each index padded to the digits of its dimension (Triton: ceil(log10(dim))).
      int width = t.shape[d] > 1 ? static_cast<int>(std::ceil(std::log10(static_cast<double>(t.shape[d])))) : 0;
      std::snprintf(buf, sizeof buf, "%s%*lld", d ? ", " : "", width, static_cast<long long>(index[d]));
      line += buf;
    }
    line += ")" + st.text;
    if (st.types.size() > 1)
      line += "(operand " + std::to_string(operand) + ") ";
    ir::ScalarType et = t.elem;
    unsigned w = et.isPointer() ? 64 : ir::bitWidth(et.dtype);
    if (et.isPointer()) {
      std::snprintf(buf, sizeof buf, "%p", reinterpret_cast<void *>(static_cast<uintptr_t>(bits)));
    } else if (st.hex) {
      std::snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>(w / 4), static_cast<unsigned long long>(bits));
    } else if (ir::isFloat(et.dtype)) {
      double v;
      if (et.dtype == DType::F64) {
        std::memcpy(&v, &bits, 8);
      } else if (et.dtype == DType::F32) {
        float f;
        auto b32 = static_cast<uint32_t>(bits);
        std::memcpy(&f, &b32, 4);
        v = f;
      } else {
        v = halfToDouble(static_cast<uint16_t>(bits), et.dtype);
      }
      std::snprintf(buf, sizeof buf, "%f", v);
    } else if (ir::isSigned(et.dtype)) {
      auto v = static_cast<int64_t>(w < 64 && (bits >> (w - 1)) & 1 ? bits | (~uint64_t(0) << w) : bits);
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    } else {
      std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(bits));
    }
    line += buf;
  } else {
    line += st.text;
  }
  static std::mutex outMu;
  std::lock_guard<std::mutex> g(outMu);
  if (s->printSink && *s->printSink) {
    (*s->printSink)(line);
  } else {
    std::fputs((line + "\n").c_str(), stdout);
    std::fflush(stdout);
  }
}

/// A failed tl.device_assert: the run fails with the message (the first one wins).
extern "C" void tleCpuAssert(int32_t site, const int64_t *index, int32_t px, int32_t py, int32_t pz) {
  RunState *s = tlsRun;
  if (!s)
    return;
  std::string msg = "kernel '" + *s->kernel + "': device assertion failed" + s->at(site) + " (program id " +
                    std::to_string(px) + ", " + std::to_string(py) + ", " + std::to_string(pz);
  if (s->sites && site >= 0 && static_cast<size_t>(site) < s->sites->size()) {
    const detail::Site &st = (*s->sites)[static_cast<size_t>(site)];
    if (!st.types.empty() && st.types[0].isTile()) {
      msg += ", element (";
      for (size_t d = 0; d < st.types[0].shape.size(); ++d)
        msg += (d ? ", " : "") + std::to_string(index[d]);
      msg += ")";
    }
    msg += ")" + (st.text.empty() ? std::string() : ": " + st.text);
  } else {
    msg += ")";
  }
  s->fail(msg);
}

// ---------------------------------------------------------------------------------------------
// LLVM setup

void initNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string errorText(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

void optimize(llvm::Module &m, llvm::TargetMachine &tm, unsigned level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = level >= 2;
  // No SLP vectorization: LLVM 19's SLP vectorizer narrows `uitofp (add nuw nsw (zext i8 x to
  // i32), -1000)` to 16 bits (its minimum-bitwidth analysis), so (x_u8.to(tl.uint32) - 1000)
  // .to(tl.float32) gave 64576 instead of 4294966272 (tests/lit/cpu/difftest_u32_sub_to_float.tle,
  // found by tle-difftest). Tile loops are vectorised by the loop vectorizer.
  pto.SLPVectorization = false;
  llvm::PassBuilder pb(&tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel ol = level == 0   ? llvm::OptimizationLevel::O0
                               : level == 1 ? llvm::OptimizationLevel::O1
                               : level == 2 ? llvm::OptimizationLevel::O2
                                            : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm =
      level == 0 ? pb.buildO0DefaultPipeline(ol) : pb.buildPerModuleDefaultPipeline(ol);
  mpm.run(m, mam);
}

template <class F> llvm::orc::ExecutorSymbolDef symbolFor(F *fn) {
  return {llvm::orc::ExecutorAddr::fromPtr(reinterpret_cast<void *>(fn)),
          llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
}

} // namespace

// ---------------------------------------------------------------------------------------------

struct Kernel::Impl {
  using Entry = void (*)(const uint64_t *, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t);
  std::string name;
  std::vector<ir::Param> params;
  std::string ir;
  std::vector<detail::Site> sites;
  bool checkBounds = false;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  Entry entry = nullptr;
};

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kernel::~Kernel() = default;
const std::string &Kernel::name() const { return impl_->name; }
const std::vector<ir::Param> &Kernel::params() const { return impl_->params; }
const std::string &Kernel::llvmIR() const { return impl_->ir; }

std::unique_ptr<llvm::Module> emitLLVM(const ir::Function &f, llvm::LLVMContext &ctx, DiagnosticEngine &diags,
                                       const CompileOptions &options) {
  detail::Lowered l;
  if (!detail::lower(f, ctx, diags, options, l))
    return nullptr;
  return std::move(l.module);
}

std::unique_ptr<Kernel> Kernel::compile(const ir::Function &f, DiagnosticEngine &diags, const CompileOptions &options) {
  initNativeTarget();
  auto impl = std::make_unique<Impl>();
  impl->name = f.name;
  impl->params = f.params;
  impl->checkBounds = options.checkBounds;
  auto ctx = std::make_unique<llvm::LLVMContext>();
  detail::Lowered l;
  if (!detail::lower(f, *ctx, diags, options, l))
    return nullptr;
  impl->sites = std::move(l.sites);

  auto fail = [&](const std::string &what, llvm::Error e) -> std::unique_ptr<Kernel> {
    diags.error({}, "cpu target: " + what + " for kernel '" + f.name + "' failed: " + errorText(std::move(e)));
    return nullptr;
  };
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    return fail("detecting the host", jtmb.takeError());
  jtmb->setCodeGenOptLevel(options.optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive
                           : options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                                                   : llvm::CodeGenOptLevel::Default);
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    return fail("creating the host target machine", tm.takeError());
  llvm::Module &m = *l.module;
  m.setDataLayout((*tm)->createDataLayout());
  m.setTargetTriple((*tm)->getTargetTriple().str());
  std::string features = (*tm)->getTargetFeatureString().str();
  std::string cpu = (*tm)->getTargetCPU().str();
  for (llvm::Function &fn : m) {
    if (fn.isDeclaration())
      continue;
    fn.addFnAttr("target-cpu", cpu);
    if (!features.empty())
      fn.addFnAttr("target-features", features);
  }
  optimize(m, **tm, options.optLevel);
  if (options.keepIR) {
    llvm::raw_string_ostream os(impl->ir);
    m.print(os, nullptr);
  }

  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit)
    return fail("creating the JIT", jit.takeError());
  llvm::orc::JITDylib &jd = (*jit)->getMainJITDylib();
  auto &es = (*jit)->getExecutionSession();
  llvm::orc::MangleAndInterner mangle(es, (*jit)->getDataLayout());
  llvm::orc::SymbolMap syms;
  syms[mangle(detail::kFrameFn)] = symbolFor(&tleCpuFrame);
  syms[mangle(detail::kCheckFn)] = symbolFor(&tleCpuCheck);
  syms[mangle(detail::kFailFn)] = symbolFor(&tleCpuFail);
  syms[mangle(detail::kPrintFn)] = symbolFor(&tleCpuPrint);
  syms[mangle(detail::kAssertFn)] = symbolFor(&tleCpuAssert);
  // Library functions LLVM lowers math intrinsics and copies to, and the libdevice stand-ins,
  // bound explicitly so that the JIT needs nothing from the process's dynamic symbol table.
  for (const detail::HostSymbol &h : detail::hostSymbols())
    syms[mangle(h.name)] = {llvm::orc::ExecutorAddr::fromPtr(h.address),
                            llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  if (auto e = jd.define(llvm::orc::absoluteSymbols(std::move(syms))))
    return fail("binding runtime helpers", std::move(e));
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (gen)
    jd.addGenerator(std::move(*gen));
  else
    llvm::consumeError(gen.takeError());
  if (auto e = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(l.module), std::move(ctx))))
    return fail("adding the module to the JIT", std::move(e));
  auto sym = (*jit)->lookup(l.entryName);
  if (!sym)
    return fail("compiling", sym.takeError());
  impl->entry = sym->toPtr<Impl::Entry>();
  impl->jit = std::move(*jit);
  return std::unique_ptr<Kernel>(new Kernel(std::move(impl)));
}

// ---------------------------------------------------------------------------------------------
// Running

void Kernel::run(const Grid &grid, const std::vector<ArgValue> &args, const RunOptions &options) const {
  const Impl &k = *impl_;
  const std::string who = "kernel '" + k.name + "'";
  if (grid.x < 1 || grid.y < 1 || grid.z < 1 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
    throw Error(who + ": bad grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
                std::to_string(grid.z) + "): x must be in 1..2^31-1, y and z in 1..65535");
  if (args.size() != k.params.size()) {
    std::string names;
    for (auto &p : k.params)
      names += (names.empty() ? "" : ", ") + p.name;
    throw Error(who + " expects " + std::to_string(k.params.size()) + " arguments (" + names + ") but was given " +
                std::to_string(args.size()));
  }
  RunState state;
  state.kernel = &k.name;
  state.sites = &k.sites;
  state.params = &k.params;
  state.printSink = &options.printSink;
  std::vector<uint64_t> slots(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::Param &p = k.params[i];
    const ArgValue &a = args[i];
    std::string which = who + ": argument " + std::to_string(i) + " ('" + p.name + "', " + p.type.str() + ")";
    if (p.type.isPointer()) {
      if (a.kind != ArgValue::Kind::Pointer)
        throw Error(which + " needs a pointer, got a " + a.str());
      auto addr = reinterpret_cast<uintptr_t>(a.pointer);
      unsigned eb = ir::storageBytes(p.type.pointee);
      if (addr % eb)
        throw Error(which + ": address " + a.str() + " is not aligned to its " + std::to_string(eb) + "-byte elements");
      if (p.divisibility > 1 && addr % static_cast<uint64_t>(p.divisibility))
        throw Error(which + ": the signature promises " + std::to_string(p.divisibility) +
                    "-byte alignment but the address is not a multiple of it");
      if (k.checkBounds && !a.sized)
        throw Error(which + ": bounds checking needs the size of every pointer argument; this one has none");
      if (a.sized && a.bytes)
        state.buffers.push_back({addr, addr + a.bytes, i});
      slots[i] = addr;
      continue;
    }
    if (a.kind != ArgValue::Kind::Scalar)
      throw Error(which + " needs a scalar, got a " + a.str());
    if (a.dtype != p.type.dtype)
      throw Error(which + " needs an " + std::string(ir::name(p.type.dtype)) + " scalar, got " + ir::name(a.dtype));
    uint64_t bits = a.bits;
    unsigned w = ir::bitWidth(p.type.dtype);
    if (w < 64)
      bits &= (uint64_t(1) << w) - 1;
    if (p.divisibility > 1 && ir::isInteger(p.type.dtype)) {
      int64_t v = ir::isSigned(p.type.dtype) && w < 64 && (bits >> (w - 1)) ? static_cast<int64_t>(bits | (~uint64_t(0) << w))
                                                                           : static_cast<int64_t>(bits);
      if (v % p.divisibility)
        throw Error(which + ": the signature promises a multiple of " + std::to_string(p.divisibility) + ", got " +
                    std::to_string(v));
    }
    slots[i] = bits;
  }

  uint64_t total = uint64_t(grid.x) * grid.y * grid.z;
  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<uint64_t>(threads, total));
  std::atomic<uint64_t> next{0};
  auto worker = [&] {
    RunState *saved = tlsRun;
    tlsRun = &state;
    for (;;) {
      if (state.failed.load(std::memory_order_relaxed))
        break;
      uint64_t i = next.fetch_add(1);
      if (i >= total)
        break;
      auto px = static_cast<int32_t>(i % grid.x);
      auto py = static_cast<int32_t>((i / grid.x) % grid.y);
      auto pz = static_cast<int32_t>(i / (uint64_t(grid.x) * grid.y));
      k.entry(slots.data(), px, py, pz, static_cast<int32_t>(grid.x), static_cast<int32_t>(grid.y),
              static_cast<int32_t>(grid.z));
    }
    tlsRun = saved;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error &) {
      break; // fewer threads; the caller's thread still runs its share
    }
  }
  worker();
  for (auto &t : pool)
    t.join();
  if (state.failed) {
    uint64_t more = state.oobCount > 1 ? state.oobCount - 1 : 0;
    throw Error(state.error + (more ? " (and " + std::to_string(more) + " more out-of-bounds accesses)" : ""));
  }
}

} // namespace tle::cpu
