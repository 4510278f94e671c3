// TLE-Raw (FlagTree's TLE-Raw, ../shared/reference/tle.md §4): native functions compiled to LLVM
// IR (compileRaw), called by raw_call ops (Emitter::emitRawCall) and linked into the kernel's
// module, where the O3 pipeline inlines them (linkRawModules).
//
// CUDA goes through clang's CUDA mode of the LLVM version this compiler is built with (Debian's
// clang-19): `-x cuda --cuda-device-only -emit-llvm` against the CUDA toolkit's headers, without
// libdevice (the backend links it when the kernel needs it). clang 19 knows CUDA up to 12.5; the
// toolkit's 13.x headers compile with it except for one header clang's wrapper still includes and
// CUDA 13 dropped with texture references (texture_fetch_functions.h), which an empty stand-in
// replaces when the toolkit lacks it.
#include "Emitter.h"
#include "tle/Support/ChildProcess.h"
#include "RawEffects.h"
#include "tle/Target/NVPTX/NVPTXBackend.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Attributes.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/xxhash.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace tle::nvptx {

namespace {

/// clang for CUDA: $TLE_CLANG, else the clang-19 found at build time, else clang-19 on PATH.
std::string findClang() {
  if (const char *env = std::getenv("TLE_CLANG"); env && *env)
    return env;
#ifdef TLE_DEFAULT_CLANG
  if (llvm::sys::fs::exists(TLE_DEFAULT_CLANG))
    return TLE_DEFAULT_CLANG;
#endif
  if (auto p = llvm::sys::findProgramByName("clang-19"))
    return *p;
  return "";
}

/// The CUDA toolkit whose headers CUDA sources include: $CUDA_HOME, else the one found at build
/// time, else /usr/local/cuda.
std::string findCudaRoot() {
  if (const char *env = std::getenv("CUDA_HOME"); env && *env)
    return env;
#ifdef TLE_DEFAULT_CUDA_ROOT
  if (llvm::sys::fs::exists(TLE_DEFAULT_CUDA_ROOT "/include/cuda.h"))
    return TLE_DEFAULT_CUDA_ROOT;
#endif
  if (llvm::sys::fs::exists("/usr/local/cuda/include/cuda.h"))
    return "/usr/local/cuda";
  return "";
}

/// A temporary directory removed with everything in it when this goes out of scope.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() {
    if (llvm::sys::fs::createUniqueDirectory("tle-raw", path))
      path.clear();
  }
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
  std::string file(const char *name) const { return (path + "/" + name).str(); }
};

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

/// The files of a make-style dependency list `text` (clang -MD's `target: dep dep \` lines),
/// those of the temporary directory `tmp` left out.
std::vector<std::string> parseDepfile(const std::string &text, const std::string &tmp) {
  std::vector<std::string> deps;
  size_t colon = text.find(": ");
  std::string cur;
  auto flush = [&]() {
    if (!cur.empty() && cur.rfind(tmp, 0) != 0)
      deps.push_back(cur);
    cur.clear();
  };
  for (size_t i = colon == std::string::npos ? text.size() : colon + 2; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '\\' && i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '#')) {
      cur += text[++i]; // an escaped space or hash in a file name
    } else if (ch == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i; // a line continuation
    } else if (ch == ' ' || ch == '\n' || ch == '\t') {
      flush();
    } else {
      cur += ch;
    }
  }
  flush();
  return deps;
}

/// clang's CUDA mode on `src` (a file, or the inline text written to one): the LLVM IR text and
/// the files it read (`deps`), or an error with clang's diagnostics.
ir::RawResult compileCuda(const ir::RawSource &src, std::string &llvmText, std::vector<std::string> &deps) {
  std::string clang = findClang();
  if (clang.empty())
    return {std::nullopt, "CUDA functions need clang-19 (Debian's clang-19, installed by scripts/setup.sh), "
                          "which was not found: install it or set TLE_CLANG", ""};
  std::string cuda = findCudaRoot();
  if (cuda.empty())
    return {std::nullopt, "CUDA functions need the CUDA toolkit's headers, which were not found: set CUDA_HOME", ""};
  TempDir tmp;
  if (tmp.path.empty())
    return {std::nullopt, "cannot create a temporary directory for clang", ""};
  std::string input = src.path;
  if (input.empty()) {
    input = tmp.file("raw.cu");
    if (!writeFile(input, src.text))
      return {std::nullopt, "cannot write the inline CUDA source to a temporary file", ""};
  }
  std::vector<std::string> args = {clang, "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=" + src.arch,
                                   "-nocudalib", "-O2", "-S", "-emit-llvm", "-std=c++17",
                                   "-Wno-unknown-cuda-version", "--cuda-path=" + cuda};
  if (!llvm::sys::fs::exists(cuda + "/include/texture_fetch_functions.h")) {
    std::string shim = tmp.file("shim");
    llvm::sys::fs::create_directory(shim);
    writeFile(shim + "/texture_fetch_functions.h", "// texture references: not in this toolkit\n");
    args.insert(args.end(), {"-isystem", shim});
  }
  if (!src.path.empty())
    args.push_back("-I" + llvm::sys::path::parent_path(src.path).str());
  std::string out = tmp.file("raw.ll"), log = tmp.file("clang.log"), depfile = tmp.file("raw.d");
  args.insert(args.end(), {"-MMD", "-MF", depfile, "-o", out, input});
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(log), llvm::StringRef(log)};
  std::string execErr;
  int rc = runChildProcess(clang, argv, redirects, /*secondsToWait=*/300, execErr);
  std::string diag = readFile(log);
  if (rc != 0) {
    std::string what = rc < 0 ? "could not run clang (" + clang + "): " + execErr : "clang could not compile it";
    return {std::nullopt, what, diag};
  }
  llvmText = readFile(out);
  deps = parseDepfile(readFile(depfile), tmp.path.str().str());
  return {};
}

/// The entry of `m`: the function named `want` (its symbol, or its demangled name with or without
/// parameters), else the only function with a body and external linkage (FlagTree's rule).
llvm::Function *findEntry(llvm::Module &m, const std::string &want, std::string &why) {
  std::vector<llvm::Function *> candidates;
  for (llvm::Function &fn : m) {
    if (fn.isDeclaration() || fn.hasLocalLinkage())
      continue;
    if (!want.empty()) {
      std::string full = llvm::demangle(fn.getName().str());
      std::string base = full.substr(0, full.find('('));
      if (fn.getName() != want && full != want && base != want)
        continue;
    } else if (fn.hasLinkOnceLinkage() || fn.hasWeakLinkage()) {
      continue; // inline helpers (__forceinline__, templates) are not entries
    }
    candidates.push_back(&fn);
  }
  if (candidates.size() == 1)
    return candidates[0];
  std::string names;
  for (llvm::Function &fn : m)
    if (!fn.isDeclaration() && !fn.hasLocalLinkage())
      names += (names.empty() ? "" : ", ") + llvm::demangle(fn.getName().str());
  if (names.empty())
    names = "none";
  if (!want.empty())
    why = candidates.empty() ? "defines no function '" + want + "' (it defines: " + names + ")"
                             : "defines several functions named '" + want + "': " + names;
  else
    why = candidates.empty() ? "defines no function with external linkage (it defines: " + names + ")"
                             : "defines several functions with external linkage (" + names +
                                   "): make helpers static, or name the entry with extern_func_name=";
  return nullptr;
}

ir::RawParam describeParam(llvm::Type *t) {
  ir::RawParam p;
  llvm::raw_string_ostream os(p.spelling);
  t->print(os);
  os.flush();
  if (t->isIntegerTy()) {
    p.kind = ir::RawParam::Kind::Int;
    p.bits = t->getIntegerBitWidth();
  } else if (t->isFloatingPointTy()) {
    p.kind = ir::RawParam::Kind::Float;
    p.bits = t->getPrimitiveSizeInBits();
  } else if (t->isPointerTy()) {
    p.kind = ir::RawParam::Kind::Pointer;
    p.addrSpace = t->getPointerAddressSpace();
  }
  return p;
}

/// Whether `t` is a memref descriptor struct {ptr, ptr, i64, [r x i64], [r x i64]}.
bool isMemrefStruct(llvm::Type *t) {
  auto *s = llvm::dyn_cast<llvm::StructType>(t);
  if (!s || s->getNumElements() != 5)
    return false;
  return s->getElementType(0)->isPointerTy() && s->getElementType(1)->isPointerTy() &&
         s->getElementType(2)->isIntegerTy(64) && s->getElementType(3)->isArrayTy() &&
         s->getElementType(4)->isArrayTy();
}

/// The parameter the aligned pointer of the memref built by `v` is, -1 where it is not one:
/// follows insertvalue chains (what a C++ aggregate return leaves after -O2).
int returnedParam(llvm::Value *v, const std::vector<unsigned> &path) {
  for (int depth = 0; v && depth < 64; ++depth) {
    if (auto *iv = llvm::dyn_cast<llvm::InsertValueInst>(v)) {
      llvm::ArrayRef<unsigned> idx = iv->getIndices();
      if (idx.size() <= path.size() && std::equal(idx.begin(), idx.end(), path.begin())) {
        if (idx.size() == path.size()) {
          v = iv->getInsertedValueOperand();
          break;
        }
        return returnedParam(iv->getInsertedValueOperand(), std::vector<unsigned>(path.begin() + idx.size(), path.end()));
      }
      v = iv->getAggregateOperand();
      continue;
    }
    return -1;
  }
  if (auto *a = llvm::dyn_cast_or_null<llvm::Argument>(v))
    return static_cast<int>(a->getArgNo());
  return -1;
}

/// What the entry returns: memref structs (one, or a struct of them), void, or something else.
void describeReturn(llvm::Function &fn, ir::RawFunction &r) {
  llvm::Type *t = fn.getReturnType();
  llvm::raw_string_ostream os(r.returnSpelling);
  t->print(os);
  os.flush();
  r.returnsVoid = t->isVoidTy();
  if (r.returnsVoid)
    return;
  std::vector<std::vector<unsigned>> paths;
  if (isMemrefStruct(t)) {
    paths.push_back({1});
  } else if (auto *s = llvm::dyn_cast<llvm::StructType>(t)) {
    for (unsigned i = 0; i < s->getNumElements(); ++i)
      if (isMemrefStruct(s->getElementType(i)))
        paths.push_back({i, 1});
    if (paths.size() != s->getNumElements())
      return; // not memrefs: the caller reports it
  } else {
    return;
  }
  llvm::Value *ret = nullptr;
  for (llvm::BasicBlock &bb : fn)
    if (auto *ri = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator()))
      ret = ret ? nullptr : ri->getReturnValue(); // one return only: several are not traced
  for (const auto &p : paths)
    r.returnedParams.push_back(ret ? returnedParam(ret, p) : -1);
}

} // namespace

ir::RawResult compileRaw(const ir::RawSource &src) {
  std::string text;
  std::vector<std::string> deps;
  if (src.dialect == "cuda") {
    ir::RawResult r = compileCuda(src, text, deps);
    if (!r.error.empty())
      return r;
  } else if (src.dialect == "llvm") {
    text = src.text;
    if (!src.path.empty())
      deps.push_back(src.path);
  } else {
    return {std::nullopt, "unknown raw dialect '" + src.dialect + "' (tlec compiles \"cuda\" and \"llvm\")", ""};
  }
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic err;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(text, err, ctx);
  if (!m) {
    std::string where = src.path.empty() ? "<source>" : src.path;
    return {std::nullopt, "the LLVM IR does not parse",
            where + ":" + std::to_string(err.getLineNo()) + ":" + std::to_string(err.getColumnNo() + 1) + ": " +
                err.getMessage().str()};
  }
  std::string why;
  llvm::Function *entry = findEntry(*m, src.externName, why);
  if (!entry)
    return {std::nullopt, "the module " + why, ""};
  ir::RawFunction fn;
  fn.dependencies = deps;
  fn.name = llvm::demangle(entry->getName().str());
  fn.name = fn.name.substr(0, fn.name.find('('));
  for (llvm::Argument &a : entry->args())
    fn.params.push_back(describeParam(a.getType()));
  describeReturn(*entry, fn);
  fn.sharedEffects = rawSharedEffects(*entry);
  // A symbol of its own: two raw functions of one kernel may share a name.
  uint64_t h = llvm::xxh3_64bits(text + "\n" + entry->getName().str());
  fn.symbol = "__tle_raw_" + llvm::utohexstr(h, /*LowerCase=*/true);
  entry->setName(fn.symbol);
  llvm::raw_string_ostream os(fn.module);
  m->print(os, nullptr);
  os.flush();
  return {fn, "", ""};
}

llvm::Function *Emitter::rawCallee(const ir::Op &op) {
  const std::string &sym = op.rawSymbol();
  if (llvm::Function *f = m.getFunction(sym))
    return f;
  llvm::SMDiagnostic err;
  std::unique_ptr<llvm::Module> raw = llvm::parseAssemblyString(op.rawModule(), err, ctx);
  if (!raw)
    diags.fatal(op.loc, "invalid LLVM module in raw_call '" + sym + "': line " + std::to_string(err.getLineNo()) +
                            ": " + err.getMessage().str());
  llvm::Function *def = raw->getFunction(sym);
  if (!def || def->isDeclaration())
    diags.fatal(op.loc, "raw_call's LLVM module does not define '" + sym + "'");
  llvm::Function *decl = llvm::Function::Create(def->getFunctionType(), llvm::GlobalValue::ExternalLinkage, sym, m);
  rawModules_.push_back(std::move(raw));
  rawCallers_[sym] = op.loc;
  return decl;
}

void Emitter::emitRawCall(const ir::Op &op) {
  llvm::Function *callee = rawCallee(op);
  std::vector<std::vector<int64_t>> shapes = op.rawMemrefs();
  std::vector<llvm::Value *> args;
  std::map<size_t, std::pair<llvm::Value *, llvm::Type *>> fragments; // operand -> its array
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const ir::Value *x = op.operands[i];
    if (x->type.isTile()) {
      // A fragment: the thread's registers (fragmentLayout: register r is its element r) in an
      // array of the entry block, which SROA turns back into registers once the call is inlined.
      const std::vector<llvm::Value *> &rs = regs(x);
      llvm::Type *ety = llvmType(x->type.elem);
      auto *aty = llvm::ArrayType::get(ety, rs.size());
      llvm::IRBuilder<> E(entry_, entry_->getFirstInsertionPt());
      llvm::Value *arr = E.CreateAlloca(aty, nullptr, "fragment");
      for (size_t r = 0; r < rs.size(); ++r)
        B.CreateStore(rs[r], B.CreateConstInBoundsGEP2_32(aty, arr, 0, unsigned(r)));
      fragments[i] = {arr, aty};
      args.insert(args.end(), {arr, arr, B.getInt64(0), B.getInt64(int64_t(rs.size())), B.getInt64(1)});
      continue;
    }
    llvm::Value *v = scalar(x);
    if (shapes[i].empty()) {
      args.push_back(v);
      continue;
    }
    // FlagTree's memref expansion: allocated and aligned pointer, offset, sizes, row-major strides.
    args.insert(args.end(), {v, v, B.getInt64(0)});
    for (int64_t d : shapes[i])
      args.push_back(B.getInt64(d));
    std::vector<int64_t> strides(shapes[i].size(), 1);
    for (size_t d = strides.size() - 1; d > 0; --d)
      strides[d - 1] = strides[d] * shapes[i][d];
    for (int64_t s : strides)
      args.push_back(B.getInt64(s));
  }
  llvm::FunctionType *fty = callee->getFunctionType();
  if (args.size() != fty->getNumParams())
    diags.fatal(op.loc, "raw_call passes " + std::to_string(args.size()) + " values to '" + op.rawSymbol() +
                            "', which takes " + std::to_string(fty->getNumParams()));
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Type *want = fty->getParamType(i);
    if (args[i]->getType() == want)
      continue;
    if (args[i]->getType()->isPointerTy() && want->isPointerTy() &&
        (want->getPointerAddressSpace() == 0 || args[i]->getType()->getPointerAddressSpace() == 0))
      args[i] = B.CreateAddrSpaceCast(args[i], want); // a generic pointer parameter (plain C++)
    else if (args[i]->getType()->isIntegerTy() && want->isIntegerTy())
      args[i] = B.CreateSExtOrTrunc(args[i], want);
    else
      diags.fatal(op.loc, "raw_call argument " + std::to_string(i) + " does not fit '" + op.rawSymbol() + "'");
  }
  // Convergent: every thread of the CTA makes the call at this point, and native code may hold
  // barriers and warp-synchronous instructions that no transformation may make conditional.
  B.CreateCall(callee, args)->addFnAttr(llvm::Attribute::Convergent);
  for (size_t k = 0; k < op.results.size(); ++k) { // the fragments as the call left them
    auto [arr, aty] = fragments.at(size_t(op.rawResultOperands()[k]));
    std::vector<llvm::Value *> out;
    for (unsigned r = 0; r < aty->getArrayNumElements(); ++r)
      out.push_back(B.CreateLoad(aty->getArrayElementType(), B.CreateConstInBoundsGEP2_32(aty, arr, 0, r)));
    vals_[op.result(unsigned(k))] = out;
  }
}

/// Why `raw` cannot be linked into a kernel: a function or global it uses that nothing defines
/// (not an intrinsic, libdevice's `__nv_*`, or the CUDA device runtime's printf / assert / malloc),
/// which would fail in ptxas or when the module is loaded; empty when there is none.
std::string unresolvedSymbol(const llvm::Module &raw) {
  static const std::set<std::string> runtime = {"vprintf", "__assertfail", "malloc", "free", "__nvvm_reflect"};
  for (const llvm::Function &fn : raw)
    if (fn.isDeclaration() && !fn.isIntrinsic() && !fn.getName().starts_with("__nv_") &&
        !runtime.count(fn.getName().str()) && !fn.use_empty())
      return "function '" + llvm::demangle(fn.getName().str()) + "'";
  for (const llvm::GlobalVariable &g : raw.globals())
    if (g.isDeclaration() && !g.use_empty())
      return "global '" + g.getName().str() + "'";
  return "";
}

/// Calls of the intrinsic `name` in `m` (none when the module does not declare it).
static std::vector<llvm::CallInst *> readsOf(llvm::Module &m, const char *name) {
  std::vector<llvm::CallInst *> calls;
  if (llvm::Function *read = m.getFunction(name); read && read->isDeclaration())
    for (llvm::User *u : read->users())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(u))
        calls.push_back(call);
  return calls;
}

/// The block geometry the kernel's `.reqntid threads, 1, 1` fixes (a launch with another block
/// size fails before any code runs), given to the native code: %ntid reads become (threads, 1, 1),
/// %tid.y / %tid.z reads 0, and %tid.x reads carry the range [0, threads).
static void foldBlockGeometry(llvm::Module &m, int threads) {
  const std::pair<const char *, int> constants[] = {{"llvm.nvvm.read.ptx.sreg.ntid.x", threads},
                                                    {"llvm.nvvm.read.ptx.sreg.ntid.y", 1},
                                                    {"llvm.nvvm.read.ptx.sreg.ntid.z", 1},
                                                    {"llvm.nvvm.read.ptx.sreg.tid.y", 0},
                                                    {"llvm.nvvm.read.ptx.sreg.tid.z", 0}};
  for (auto [name, value] : constants)
    for (llvm::CallInst *call : readsOf(m, name)) {
      call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), value));
      call->eraseFromParent();
    }
  for (llvm::CallInst *call : readsOf(m, "llvm.nvvm.read.ptx.sreg.tid.x")) {
    llvm::Type *t = call->getType();
    llvm::MDBuilder mdb(m.getContext());
    call->setMetadata(llvm::LLVMContext::MD_range,
                      mdb.createRange(llvm::APInt(t->getIntegerBitWidth(), 0), llvm::APInt(t->getIntegerBitWidth(), threads)));
  }
}

int64_t linkRawModules(llvm::Module &m, std::vector<std::unique_ptr<llvm::Module>> raws,
                       const std::map<std::string, SourceLoc> &callers, int threads, DiagnosticEngine &diags) {
  std::set<std::string> entries;
  int64_t staticShared = 0;
  for (auto &raw : raws) {
    raw->setTargetTriple(m.getTargetTriple());
    raw->setDataLayout(m.getDataLayout());
    // Module flags, identification and annotations are clang's, not the kernel's (two
    // modules' flags could conflict); target attributes would make the inliner refuse.
    for (const char *md : {"llvm.module.flags", "llvm.ident", "nvvmir.version", "nvvm.annotations"})
      if (llvm::NamedMDNode *n = raw->getNamedMetadata(md))
        raw->eraseNamedMetadata(n);
    SourceLoc at; // a call of this module's entry
    for (llvm::Function &fn : *raw) {
      fn.removeFnAttr("target-cpu");
      fn.removeFnAttr("target-features");
      fn.removeFnAttr("tune-cpu");
      if (fn.isDeclaration())
        continue;
      if (auto c = callers.find(fn.getName().str()); c != callers.end()) {
        entries.insert(c->first); // a raw_call's callee (Emitter::rawCallee declared it)
        at = c->second;
        continue;
      }
      // Helpers: internal, under a name of their own, so that none stands for a function of the
      // kernel's (a helper named like a libdevice function must not replace or clash with it).
      fn.setLinkage(llvm::GlobalValue::InternalLinkage);
      fn.setName("__tle_raw_helper." + fn.getName());
    }
    if (std::string sym = unresolvedSymbol(*raw); !sym.empty())
      diags.fatal(at, "the tle.raw function's native code uses " + sym + ", which neither it nor the kernel defines");
    const llvm::DataLayout &dl = m.getDataLayout();
    for (llvm::GlobalVariable &g : raw->globals()) {
      if (g.isDeclaration())
        continue;
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
      if (g.getAddressSpace() == 3) // its __shared__ variables: static shared memory of the kernel
        staticShared += int64_t(dl.getTypeAllocSize(g.getValueType()));
    }
    if (llvm::Linker::linkModules(m, std::move(raw)))
      diags.fatal(at, "linking this tle.raw function's LLVM module into the kernel failed");
  }
  for (const std::string &e : entries)
    if (llvm::Function *fn = m.getFunction(e)) {
      fn->setLinkage(llvm::GlobalValue::InternalLinkage);
      fn->removeFnAttr(llvm::Attribute::NoInline);
      fn->removeFnAttr(llvm::Attribute::OptimizeNone);
      fn->addFnAttr(llvm::Attribute::AlwaysInline);
      fn->addFnAttr(llvm::Attribute::Convergent);
    }
  foldBlockGeometry(m, threads);
  return staticShared;
}

} // namespace tle::nvptx
