// The NVPTX target driver: module set-up (annotations, metadata), O3 + NVPTX codegen to PTX,
// and ptxas for cubins.
#include "tle/Target/NVPTX/NVPTXBackend.h"
#include "tle/Support/ChildProcess.h"
#include "tle/Target/NVPTX/KernelMetadata.h"
#include "tle/Runtime/Metadata.h"
#include "Emitter.h"
#include "tle/Transforms/DotLowering.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <llvm/Support/CommandLine.h>

#include <cstdlib>
#include <functional>
#include <mutex>

namespace tle::nvptx {

namespace {

const char *kTriple = "nvptx64-nvidia-cuda";
/// Module metadata carrying a clustered kernel's cluster dims from emitLLVM to emitPTX.
const char *kClusterMetadata = "tle.cluster";

void initNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // 32-bit pointers for shared, constant and local memory (their windows are smaller than
    // 4 GiB): shared addresses stay 32-bit values, so ptxas folds constant offsets into the
    // address operands of ld/st.shared and cp.async instead of rebuilding each address from a
    // 64-bit base.
    if (auto *opt = llvm::cl::getRegisteredOptions().lookup("nvptx-short-ptr"))
      opt->addOccurrence(0, "nvptx-short-ptr", "true");
  });
}

/// PTX ISA version features: sm_90a needs PTX 8.0, sm_80 PTX 7.0.
// PTX ISA 7.4 (CUDA 11.4) for sm_80: createpolicy and the L1/L2 eviction qualifiers of
// tl.load / tl.store hints need it.
const char *ptxFeatures(const std::string &arch) { return arch == "sm_90a" ? "+ptx80" : "+ptx74"; }

/// The NVPTX target machine for `arch`. `fpFusion` (Triton's enable_fp_fusion, which sets the
/// same option): floating-point multiplies and adds that LLVM leaves unfused are printed without
/// a rounding suffix (`mul.f32`, not `mul.rn.f32`), so that ptxas may still contract them; a
/// multiply whose product is also used elsewhere (a masked score `s * scale + where(m, 0, -inf)`
/// after InstCombine's select fold) is otherwise pinned to separate roundings.
std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const std::string &arch, bool fpFusion = true) {
  initNVPTX();
  std::string err;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (!t)
    return nullptr;
  llvm::TargetOptions opts;
  if (fpFusion)
    opts.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  return std::unique_ptr<llvm::TargetMachine>(t->createTargetMachine(kTriple, arch, ptxFeatures(arch), opts,
                                                                     std::nullopt, std::nullopt,
                                                                     llvm::CodeGenOptLevel::Aggressive));
}

void annotate(llvm::Module &m, llvm::Function *k, const char *key, int value) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Metadata *md[] = {llvm::ValueAsMetadata::get(k), llvm::MDString::get(ctx, key),
                          llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))};
  m.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
}

std::string findLibdevice() {
  if (const char *env = std::getenv("TLE_LIBDEVICE"); env && *env)
    return env;
#ifdef TLE_DEFAULT_LIBDEVICE
  if (llvm::sys::fs::exists(TLE_DEFAULT_LIBDEVICE))
    return TLE_DEFAULT_LIBDEVICE;
#endif
  const char *homes[] = {std::getenv("CUDA_HOME"), "/usr/local/cuda"};
  for (const char *home : homes) {
    if (!home || !*home)
      continue;
    std::string p = std::string(home) + "/nvvm/libdevice/libdevice.10.bc";
    if (llvm::sys::fs::exists(p))
      return p;
  }
  return "";
}

void linkLibdevice(llvm::Module &m, DiagnosticEngine &diags) {
  std::string path = findLibdevice();
  std::string first;
  for (llvm::Function &fn : m)
    if (fn.isDeclaration() && fn.getName().starts_with("__nv_")) {
      first = fn.getName().str();
      break;
    }
  if (path.empty())
    diags.fatal({}, "the kernel calls " + first + ", which comes from libdevice (CUDA toolkit), but libdevice.10.bc was "
                    "not found: set TLE_LIBDEVICE or CUDA_HOME");
  llvm::SMDiagnostic err;
  std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(path, err, m.getContext());
  if (!lib)
    diags.fatal({}, "cannot read libdevice '" + path + "': " + err.getMessage().str());
  lib->setTargetTriple(m.getTargetTriple());
  lib->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded))
    diags.fatal({}, "linking libdevice '" + path + "' failed");
  for (llvm::Function &fn : m)
    if (!fn.isDeclaration() && fn.getCallingConv() != llvm::CallingConv::PTX_Kernel)
      fn.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &g : m.globals())
    if (g.getName() != metadata::kSymbol && !g.isDeclaration() && g.getAddressSpace() != 3)
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
  // libdevice's __nvvm_reflect("__CUDA_FTZ") reads this flag: no flush-to-zero.
  m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
}

/// After linking libdevice: every `__nv_*` function an ExternCall named (`callers`, with a
/// call's location) is libdevice's, and is called with libdevice's parameter and result types
/// (a user's extern_elementwise declares them). Located errors otherwise.
void checkLibdeviceCalls(llvm::Module &m, const std::map<std::string, SourceLoc> &callers, DiagnosticEngine &diags) {
  for (const auto &[symbol, loc] : callers) {
    llvm::Function *fn = m.getFunction(symbol);
    if (!fn)
      continue;
    if (fn->isDeclaration())
      diags.fatal(loc, "extern_elementwise(): '" + symbol + "' is not a libdevice function");
    for (llvm::User *u : fn->users()) {
      auto *call = llvm::dyn_cast<llvm::CallInst>(u);
      if (!call || call->getFunctionType() == fn->getFunctionType())
        continue;
      std::string want, got;
      llvm::raw_string_ostream w(want), g(got);
      fn->getFunctionType()->print(w);
      call->getFunctionType()->print(g);
      diags.fatal(loc, "extern_elementwise(): libdevice's '" + symbol + "' is " + w.str() + ", but the call's dtypes "
                       "make it " + g.str());
    }
  }
}

} // namespace

using ir::kMaxElementsPerThread;

/// The most multiply-adds one tl.dot on the CUDA cores (FMA) may give each thread: its
/// accumulator elements per thread times K, each one instruction (128x128x32 on 4 warps is 4096).
constexpr int64_t kMaxFmaPerThread = 16384;

/// Reports, at the op that defines it, a tile value whose layout gives each thread more than
/// kMaxElementsPerThread distinct elements (a located user error; compilation stops). Registers
/// that repeat another's element (a zero register basis: an FMA dot's operand holds each element
/// once per accumulator column or row that reads it) are one value and are not counted.
void checkElementsPerThread(const ir::Function &f, DiagnosticEngine &diags) {
  bool failed = false;
  auto distinct = [](const ir::Layout &l) {
    return int64_t(l.numRegs()) >> __builtin_popcount(static_cast<unsigned>(ir::replicatedRegisterBits(l)));
  };
  std::function<void(const ir::Block &)> visit = [&](const ir::Block &b) {
    for (const auto &op : b.ops) {
      if (!failed && op->kind == ir::OpKind::Dot && op->result()->layout &&
          transforms::planDot(*op, f.numWarps).kind == transforms::DotPlan::Kind::Fma) {
        int64_t K = op->operands[0]->type.shape.back();
        int64_t fmas = int64_t(op->result()->layout->numRegs()) * K;
        if (fmas > kMaxFmaPerThread) {
          diags.error(op->loc, "this tl.dot runs on the CUDA cores (FMA: input_precision=\"ieee\", fp64, integer "
                               "types other than int8 / uint8 into int32, or int8 with K not a multiple of 32) and "
                               "needs " + std::to_string(fmas) + " multiply-adds per thread (" +
                                   std::to_string(op->result()->layout->numRegs()) + " accumulator elements times K = " +
                                   std::to_string(K) + "), more than the " + std::to_string(kMaxFmaPerThread) +
                                   " tlec allows; use smaller blocks or more warps (-w)");
          failed = true;
        }
      }
      for (const auto &r : op->results) {
        int64_t held = !failed && r->type.isTile() && r->layout ? distinct(*r->layout) : 0;
        if (held > kMaxElementsPerThread) {
          int64_t threads = 32 * int64_t(f.numWarps);
          // Layouts that repeat elements across threads (an FMA tl.dot's operands: every thread
          // holds all of K for its rows or columns) hold more per thread than an even share.
          bool repeated = held * threads > r->type.numElements();
          diags.error(op->loc, "a tile of " + std::to_string(r->type.numElements()) + " elements holds " +
                                   std::to_string(held) + " elements per thread over " + std::to_string(threads) +
                                   " threads (num_warps " + std::to_string(f.numWarps) +
                                   (repeated ? "; its layout repeats elements across threads, as the operands of a "
                                               "tl.dot on the CUDA cores do" : "") +
                                   "), more than the " + std::to_string(kMaxElementsPerThread) +
                                   " tlec allows; use a smaller block or more warps (-w)");
          failed = true;
        }
      }
      for (const auto &reg : op->regions)
        visit(*reg);
    }
  };
  visit(f.body);
  if (failed)
    throw CompileAborted();
}

/// Whether `b` (or a region nested in it) has a tl.dot.
bool containsDot(const ir::Block &b) {
  for (const auto &op : b.ops) {
    if (op->kind == ir::OpKind::Dot)
      return true;
    for (const auto &r : op->regions)
      if (containsDot(*r))
        return true;
  }
  return false;
}

/// A kernel's parameters must fit the 4096 bytes of parameter space of the PTX ISA versions tlec
/// emits (7.4 and 8.0; 8.1 raised it); past that ptxas fails with no source location. Each
/// parameter at its ABI alignment, TMA descriptors (byval) at their own size.
static void checkParamSpace(const ir::Function &f, const llvm::Function &k, DiagnosticEngine &diags) {
  constexpr uint64_t kMaxParamBytes = 4096;
  const llvm::DataLayout &dl = k.getParent()->getDataLayout();
  uint64_t bytes = 0;
  for (const llvm::Argument &a : k.args()) {
    llvm::Type *t = a.hasByValAttr() ? a.getParamByValType() : a.getType();
    bytes = llvm::alignTo(bytes, dl.getABITypeAlign(t).value()) + dl.getTypeAllocSize(t);
  }
  if (bytes > kMaxParamBytes)
    diags.fatal(f.loc, "kernel '" + f.name + "' takes " + std::to_string(bytes) + " bytes of parameters (" +
                           std::to_string(k.arg_size()) + " parameters), more than the " +
                           std::to_string(kMaxParamBytes) + " bytes of parameter space a kernel has; pass fewer "
                           "parameters (e.g. one base pointer and offsets)");
}

bool isSupportedArch(const std::string &arch) { return arch == "sm_80" || arch == "sm_90a"; }

std::unique_ptr<llvm::Module> emitLLVM(ir::Function &f, llvm::LLVMContext &ctx, const std::string &arch,
                                       const LaunchFacts &launch, DiagnosticEngine &diags) {
  auto m = std::make_unique<llvm::Module>(f.name, ctx);
  m->setTargetTriple(kTriple);
  if (auto tm = makeTargetMachine(arch))
    m->setDataLayout(tm->createDataLayout());
  checkElementsPerThread(f, diags);
  Emitter e(f, *m, diags);
  e.arch = arch;
  llvm::Function *k = e.run();
  // The kernel's launch metadata, now that the emitter has set its resources.
  const KernelMetadata md = describeKernel(f, arch, launch);
  k->setName(md.symbol); // PTX accepts only ASCII identifiers; the metadata keeps the source name
  int threads = 32 * md.launchWarps();
  annotate(*m, k, "kernel", 1);
  // TMA descriptors are grid constants (CUDA's __grid_constant__): their address is the
  // param's own, not a local copy's. Indices are 1-based.
  if (!md.tensorMaps.empty()) {
    llvm::LLVMContext &ctx = m->getContext();
    std::vector<llvm::Metadata *> idx;
    for (size_t i = 0; i < md.tensorMaps.size(); ++i)
      idx.push_back(llvm::ConstantAsMetadata::get(
          llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), md.params.size() + i + 1)));
    llvm::Metadata *md[] = {llvm::ValueAsMetadata::get(k), llvm::MDString::get(ctx, "grid_constant"),
                            llvm::MDNode::get(ctx, idx)};
    m->getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
  }
  annotate(*m, k, "reqntidx", threads);
  // Cluster dims: LLVM 19 has no annotation for them, so emitPTX writes the directives.
  if (md.cluster != std::array<int, 3>{1, 1, 1}) {
    if (arch == "sm_80")
      diags.fatal(f.loc, "kernel '" + f.name + "' uses thread-block clusters of " + std::to_string(md.cluster[0]) +
                             " CTAs, which need sm_90 or newer; here the target is " + arch);
    std::vector<llvm::Metadata *> dims;
    for (int d : md.cluster)
      dims.push_back(llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), d)));
    m->getOrInsertNamedMetadata(kClusterMetadata)->addOperand(llvm::MDNode::get(ctx, dims));
  }
  // Kernels with tl.dot get a minimum of one CTA per SM, so that ptxas may give the
  // accumulators and operand fragments up to 255 registers instead of budgeting for more CTAs
  // and spilling. Other kernels get no hint: with it ptxas spends registers freely (layernorm
  // forward at 8K columns: 80 instead of 64) and memory-bound kernels lose occupancy.
  if (containsDot(f.body))
    annotate(*m, k, "minctasm", 1);
  // A warp-specialised kernel's registers per thread at launch (`.maxnreg`), which its roles
  // then redistribute with setmaxnreg.
  if (md.maxRegisters)
    annotate(*m, k, "maxnreg", md.maxRegisters);
  // TLE-Raw: the native functions' modules, before libdevice (CUDA code may call it).
  int64_t rawShared = 0;
  if (!e.rawModules_.empty())
    rawShared = linkRawModules(*m, std::move(e.rawModules_), e.rawCallers_, threads, diags);
  // libdevice: functions the kernel calls (`__nv_*`) are linked in and made internal, so that
  // the O3 pipeline (NVVMReflect first) inlines and specialises them.
  bool needsLibdevice = false;
  for (llvm::Function &fn : *m)
    needsLibdevice |= fn.isDeclaration() && fn.getName().starts_with("__nv_");
  if (needsLibdevice) {
    linkLibdevice(*m, diags);
    checkLibdeviceCalls(*m, e.externCallers_, diags);
  }
  // Resource checks that must be compile-time errors, not launch failures.
  checkParamSpace(f, *k, diags);
  constexpr int64_t kMaxShared = 227 * 1024; // sm_90 opt-in limit per block (sm_80: 163 KiB)
  int64_t limit = arch == "sm_80" ? 163 * 1024 : kMaxShared;
  if (md.sharedBytes + rawShared > limit)
    diags.fatal(f.loc, "kernel '" + f.name + "' needs " + std::to_string(md.sharedBytes + rawShared) +
                           " bytes of shared memory" +
                           (rawShared ? " (" + std::to_string(rawShared) + " of them its tle.raw functions' own)" : "") +
                           ", more than the " + std::to_string(limit) + " bytes " + arch +
                           " allows per block; use smaller blocks or fewer stages (-ns)");
  // Self-description: the metadata document as a NUL-terminated .global byte array.
  std::string json = toJSON(md);
  auto *init = llvm::ConstantDataArray::getString(ctx, json, /*AddNull=*/true);
  auto *g = new llvm::GlobalVariable(*m, init->getType(), true, llvm::GlobalValue::ExternalLinkage, init,
                                     metadata::kSymbol, nullptr, llvm::GlobalValue::NotThreadLocal, 1);
  g->setAlignment(llvm::Align(1));
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(*m, &es)) {
    es.flush();
    diags.fatal({}, "internal error: invalid LLVM IR for kernel '" + f.name + "': " + err);
  }
  return m;
}

std::string emitPTX(llvm::Module &m, const std::string &arch, bool fpFusion) {
  auto tm = makeTargetMachine(arch, fpFusion);
  m.setDataLayout(tm->createDataLayout());
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
  }
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile);
  pm.run(m);
  std::string ptx(out.str());
  // A clustered kernel declares its cluster (PTX ISA §11.4, .explicitcluster and
  // .reqnctapercluster), so that a launch with other cluster dims fails instead of misbehaving.
  if (llvm::NamedMDNode *cl = m.getNamedMetadata(kClusterMetadata); cl && cl->getNumOperands() == 1) {
    std::string dims;
    for (const llvm::MDOperand &d : cl->getOperand(0)->operands())
      dims += (dims.empty() ? "" : ", ") +
              std::to_string(llvm::mdconst::extract<llvm::ConstantInt>(d)->getZExtValue());
    size_t at = ptx.find(".reqntid");
    if (at != std::string::npos) {
      size_t eol = ptx.find('\n', at);
      ptx.insert(eol == std::string::npos ? ptx.size() : eol + 1, ".explicitcluster\n.reqnctapercluster " + dims + "\n");
    }
  }
  return ptx;
}

namespace {

std::string findPtxas(const std::string &override) {
  if (!override.empty())
    return override;
  if (const char *env = std::getenv("TLE_PTXAS"); env && *env)
    return env;
#ifdef TLE_DEFAULT_PTXAS
  if (llvm::sys::fs::can_execute(TLE_DEFAULT_PTXAS))
    return TLE_DEFAULT_PTXAS;
#endif
  if (const char *home = std::getenv("CUDA_HOME"); home && *home) {
    std::string p = std::string(home) + "/bin/ptxas";
    if (llvm::sys::fs::can_execute(p))
      return p;
  }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  return "";
}

} // namespace

bool assembleCubin(const std::string &ptx, const std::string &arch, const std::string &ptxasPath, std::string &cubin,
                   std::string &error) {
  std::string ptxas = findPtxas(ptxasPath);
  if (ptxas.empty()) {
    error = "cannot produce a cubin: ptxas from the CUDA toolkit was not found (set TLE_PTXAS or CUDA_HOME, "
            "or use --emit=ptx / an .ptx output)";
    return false;
  }
  llvm::SmallString<128> in, out, log;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("tle", "ptx", fd, in) || llvm::sys::fs::createTemporaryFile("tle", "cubin", out) ||
      llvm::sys::fs::createTemporaryFile("tle", "log", log)) {
    error = "cannot create temporary files for ptxas";
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  std::string archFlag = "-arch=" + arch;
  std::vector<llvm::StringRef> argv = {ptxas, archFlag, "-O3", "-o", out, in};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string execErr;
  int rc = runChildProcess(ptxas, argv, redirects, /*secondsToWait=*/0, execErr);
  auto logText = llvm::MemoryBuffer::getFile(log);
  std::string logStr = logText ? std::string((*logText)->getBuffer()) : "";
  bool ok = rc == 0;
  if (ok) {
    auto buf = llvm::MemoryBuffer::getFile(out, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buf) {
      ok = false;
      error = "ptxas produced no output";
    } else {
      cubin.assign((*buf)->getBufferStart(), (*buf)->getBufferSize());
      // A program that exits 0 without writing a cubin (a wrong --ptxas) must not give an empty
      // or foreign output file.
      if (cubin.size() < 4 || cubin.compare(0, 4, "\x7f" "ELF") != 0) {
        ok = false;
        error = "ptxas (" + ptxas + ") exited successfully but wrote no cubin (" + std::to_string(cubin.size()) +
                " bytes, not an ELF image); is it the CUDA toolkit's ptxas?";
        cubin.clear();
      }
    }
  } else {
    error = "ptxas failed (" + ptxas + " " + archFlag + ")" + (execErr.empty() ? "" : ": " + execErr) +
            (logStr.empty() ? "" : ":\n" + logStr);
  }
  llvm::sys::fs::remove(in);
  llvm::sys::fs::remove(out);
  llvm::sys::fs::remove(log);
  return ok;
}

} // namespace tle::nvptx
