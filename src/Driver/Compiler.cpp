// The compilation pipeline: parse, specialise, verify, assign layouts, emit LLVM IR, PTX, cubin.
#include "tle/Driver/Compiler.h"
#include "tle/Driver/LaunchFacts.h"
#include "tle/Driver/ModuleFiles.h"
#include "tle/Frontend/Parser.h"
#include "tle/IR/IR.h"
#include "tle/IR/Parser.h"
#include "tle/Sema/Specialize.h"
#include "tle/Target/NVPTX/NVPTXBackend.h"
#include "tle/Transforms/PassRegistry.h"
#include "tle/Transforms/VerifyBarriers.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace tle::driver {

std::optional<Emit> parseEmit(const std::string &s) {
  if (s == "tokens") return Emit::Tokens;
  if (s == "ast") return Emit::Ast;
  if (s == "tile") return Emit::Tile;
  if (s == "gpu") return Emit::Gpu;
  if (s == "llvm") return Emit::LLVM;
  if (s == "ptx") return Emit::PTX;
  if (s == "cubin") return Emit::Cubin;
  return std::nullopt;
}

std::optional<Emit> emitForPath(const std::string &path) {
  auto ends = [&](const std::string &suf) {
    return path.size() >= suf.size() && path.compare(path.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends(".tokens")) return Emit::Tokens;
  if (ends(".ast")) return Emit::Ast;
  if (ends(".gpu.tir")) return Emit::Gpu;
  if (ends(".tir")) return Emit::Tile;
  if (ends(".ll")) return Emit::LLVM;
  if (ends(".ptx")) return Emit::PTX;
  if (ends(".cubin")) return Emit::Cubin;
  return std::nullopt;
}

namespace {

/// Runs `f`'s mbarrier protocol at compile time (transforms::checkBarrierProtocols): a wait that
/// can never return is an error here, not a hang on the GPU. A debug build (bounded waits) gets a
/// warning and the kernel, whose waits then trap on the GPU with their line; a buffer overwritten
/// while a wgmma or TMA store may read it stays an error. `afterPasses`: the protocols the tile-IR
/// passes made, checked after the GPU stage; a finding there is the compiler's own (an internal
/// error), and the warnings about the user's mbarriers, given before the passes, are not repeated.
/// False after an error.
bool barrierProtocolHolds(const ir::Function &f, DiagnosticEngine &diags, bool afterPasses = false) {
  bool failed = false;
  for (const transforms::BarrierFinding &b : transforms::checkBarrierProtocols(f)) {
    if (afterPasses && b.notFollowed)
      continue;
    std::string what = (afterPasses ? "internal error: after the compiler's pipelining, " : "") + b.message;
    // A debug build keeps a kernel that would hang (its bounded waits trap), not one that races.
    bool keep = b.warning || (f.boundedWaits && !b.race);
    if (b.warning)
      diags.warning(b.loc, what);
    else if (keep)
      diags.warning(b.loc, what + " (a debug build: compiled with bounded waits)");
    else
      diags.error(b.loc, what);
    failed |= !keep;
    for (const auto &[loc, note] : b.notes)
      diags.note(loc, note);
  }
  return !failed;
}

/// The first raw_call of `f` (TLE-Raw's native code), or null.
const ir::Op *firstRawCall(ir::Function &f) {
  const ir::Op *raw = nullptr;
  ir::walk(f.body, [&](ir::Op &op) { raw = raw ? raw : op.kind == ir::OpKind::RawCall ? &op : nullptr; });
  return raw;
}

/// An LLVM fatal error (instruction selection failed) in a kernel with native code, reported at
/// the raw call with LLVM's reason as a note; the process then ends with status 1 (LLVM would
/// abort: a fatal error may not return to the compiler).
struct RawFatalErrors {
  DiagnosticEngine *diags;
  const ir::Op *call;
  static void report(void *self, const char *reason, bool) {
    auto *r = static_cast<RawFatalErrors *>(self);
    r->diags->error(r->call->loc, "LLVM's NVPTX backend cannot compile the kernel, which inlines this tle.raw call's "
                                  "native code (an intrinsic or instruction this target lacks?)");
    r->diags->note(r->call->loc, std::string("LLVM ERROR: ") + reason);
    std::exit(1);
  }
};

/// sema::specialize, then the tile IR's rules that TLE-Struct's explicit ops let a kernel break
/// (a wgmma result read while in flight, a barrier id of the partitions' own, ...): such a
/// violation is the kernel's error, reported at its op's line; null after any error.
std::unique_ptr<ir::Function> specializeChecked(const ast::Module &mod, const sema::SpecializeOptions &so,
                                                DiagnosticEngine &diags) {
  std::unique_ptr<ir::Function> fn = sema::specialize(mod, so, diags);
  if (!fn || diags.numErrors())
    return nullptr;
  SourceLoc where;
  if (std::string v = ir::verify(*fn, where); !v.empty() && where.valid()) {
    diags.error(where, v);
    return nullptr;
  }
  if (!barrierProtocolHolds(*fn, diags))
    return nullptr;
  return fn;
}

/// Runs passes with --print-after / --print-after-all / --time-passes and verifies the tile IR
/// after each tile-IR pass (a failure there is an internal error).
class PassRunner {
public:
  PassRunner(const CompileOptions &o, std::ostream &err) : o_(o), err_(err) {}
  ~PassRunner() {
    if (!o_.timePasses || times_.empty())
      return;
    double total = 0;
    for (auto &[n, t] : times_)
      total += t;
    err_ << "===-------------------------------------------------------------------------===\n"
         << "  tlec pass execution timing report (wall time)\n"
         << "===-------------------------------------------------------------------------===\n";
    char line[128];
    for (auto &[n, t] : times_) {
      std::snprintf(line, sizeof line, "  %10.3f ms  %5.1f%%  %s\n", t * 1e3, total > 0 ? 100.0 * t / total : 0.0, n.c_str());
      err_ << line;
    }
    std::snprintf(line, sizeof line, "  %10.3f ms  100.0%%  total\n", total * 1e3);
    err_ << line;
  }

  /// Times `body`; for tile-IR passes (`fn` non-null) verifies and prints the IR afterwards
  /// (with its layouts once it has them). Returns false after an internal verification error.
  template <typename F>
  bool run(const std::string &name, const std::unique_ptr<ir::Function> *fnSlot, F &&body) {
    auto t0 = std::chrono::steady_clock::now();
    body();
    times_.push_back({name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
    if (!fnSlot || !*fnSlot)
      return true;
    ir::Function *fn = fnSlot->get();
    if (std::string v = ir::verify(*fn); !v.empty()) {
      err_ << "tlec: error: internal error: invalid tile IR after " << name << ": " << v << "\n";
      return false;
    }
    bool print = o_.printAfterAll ||
                 std::find(o_.printAfter.begin(), o_.printAfter.end(), name) != o_.printAfter.end();
    if (print) {
      err_ << "// ----- IR after " << name << " ----- //\n";
      ir::print(err_, *fn, !fn->layouts.empty());
    }
    return true;
  }

private:
  const CompileOptions &o_;
  std::ostream &err_;
  std::vector<std::pair<std::string, double>> times_;
};

/// Reports a --pass or --print-after name that names no pass of the table (--print-after also
/// takes `specialize`, the step that makes the tile IR). Returns false after an error.
bool checkPassNames(const CompileOptions &o, DiagnosticEngine &diags) {
  for (const std::string &p : o.passes)
    if (!transforms::findPass(p)) {
      diags.error({}, "unknown pass '" + p + "' in --pass (tile-IR passes: " + transforms::passNameList() + ")");
      return false;
    }
  for (const std::string &p : o.printAfter)
    if (p != "specialize" && !transforms::findPass(p)) {
      diags.error({}, "unknown pass '" + p + "' in --print-after (passes that print tile IR: specialize, " +
                          transforms::passNameList() + ")");
      return false;
    }
  return true;
}

/// Writes `text` to the output file, or to `out` for "-" / empty.
bool writeOutput(const CompileOptions &o, const std::string &text, std::ostream &out, DiagnosticEngine &diags) {
  if (o.output.empty() || o.output == "-") {
    // Flushed here, so that a failed write (standard output redirected to a full disk) is an
    // error rather than an exit status of 0 with the output lost.
    errno = 0;
    out << text;
    out.flush();
    if (!out) {
      diags.error({}, "cannot write to standard output" + (errno ? std::string(": ") + std::strerror(errno) : ""));
      return false;
    }
    return true;
  }
  errno = 0;
  std::ofstream f(o.output, std::ios::binary);
  if (!f) {
    diags.error({}, "cannot open output file '" + o.output + "'" + (errno ? std::string(": ") + std::strerror(errno) : ""));
    return false;
  }
  // Closed here, so that a failed write (a full disk, /dev/full) is reported, not lost in the
  // destructor's flush.
  f << text;
  f.close();
  if (!f) {
    diags.error({}, "cannot write output file '" + o.output + "'" + (errno ? std::string(": ") + std::strerror(errno) : ""));
    return false;
  }
  return true;
}

} // namespace

int compile(const CompileOptions &o, std::ostream &out, std::ostream &err) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  diags.setStream(err);
  try {
    if (!nvptx::isSupportedArch(o.arch)) {
      diags.error({}, "unsupported --arch '" + o.arch + "' (supported: sm_80, sm_90a)");
      return 1;
    }
    if (o.numWarps < 1 || o.numWarps > 32 || (o.numWarps & (o.numWarps - 1))) {
      diags.error({}, "--num-warps must be a power of two between 1 and 32, got " + std::to_string(o.numWarps));
      return 1;
    }
    if (!checkPassNames(o, diags))
      return 1;
    if (!o.tritonPrefix.empty() && o.emit != Emit::Cubin && o.emit != Emit::PTX) {
      diags.error({}, "-o " + o.tritonPrefix + " (a launcher prefix, as Triton's -o) needs --emit=cubin or ptx");
      return 1;
    }
    if (o.emit == Emit::Cubin && (o.output.empty() || o.output == "-") && o.tritonPrefix.empty()) {
      diags.error({}, "a cubin is binary: give an output file with -o");
      return 1;
    }
    if (!o.depfile.empty() && (o.output.empty() || o.output == "-")) {
      diags.error({}, "--depfile needs an output file (-o): it is the depfile's target");
      return 1;
    }
    if ((!o.emitHeader.empty() || !o.emitHeaderC.empty()) && o.emit != Emit::Cubin && o.emit != Emit::PTX) {
      diags.error({}, "--emit-header and --emit-header-c need a cubin or PTX output (-o FILE.cubin or FILE.ptx)");
      return 1;
    }
    std::string ioErr;
    uint32_t file = sm.loadFile(o.input, ioErr);
    if (file && o.fromTile && o.emit == Emit::Tokens) {
      diags.error({}, "--emit=tokens needs Python source, not tile IR");
      return 1;
    }
    if (!file) {
      diags.error({}, ioErr);
      return 1;
    }
    if (o.emit == Emit::Tokens) {
      std::ostringstream s;
      frontend::dumpTokens(file, s, diags);
      return writeOutput(o, s.str(), out, diags) ? 0 : 1;
    }
    PassRunner passes(o, err);
    ModuleFiles imports(diags); // the modules the input imports (alive until specialisation ends)
    std::vector<std::string> rawSources; // the TLE-Raw source files the kernel's calls compiled
    std::unique_ptr<ir::Function> fn;
    LaunchFacts launch; // -g, -ns and `:1` parameters, for the metadata and launchers
    if (o.fromTile) {
      if (o.emit == Emit::Ast) {
        diags.error({}, "--emit=ast needs Python source, not tile IR");
        return 1;
      }
      fn = ir::parseFunction(file, diags);
      SourceLoc where;
      if (std::string v = ir::verify(*fn, where); !v.empty())
        diags.fatal(where.valid() ? where : fn->loc, "invalid tile IR: " + v);
      if (!barrierProtocolHolds(*fn, diags))
        return 1;
      launch = collectLaunchFacts(o, nullptr, *fn, sm, diags);
    } else {
      ast::ASTContext actx;
      ast::Module mod = frontend::parseModule(file, actx, diags);
      if (o.emit == Emit::Ast) {
        std::ostringstream s;
        ast::printModule(s, mod);
        return writeOutput(o, s.str(), out, diags) ? 0 : 1;
      }
      sema::SpecializeOptions so;
      so.kernel = o.kernel;
      so.signature = o.signature;
      so.defines = o.defines;
      so.argTypes = o.argTypes;
      so.numWarps = o.numWarps;
      so.debug = o.debug;
      so.arch = o.arch;
      // TLE-Raw functions, for the GPU target; their source files are dependencies too (--depfile).
      so.compileRaw = [&rawSources](const ir::RawSource &src) {
        ir::RawResult r = nvptx::compileRaw(src);
        if (r.fn)
          rawSources.insert(rawSources.end(), r.fn->dependencies.begin(), r.fn->dependencies.end());
        else if (!src.path.empty())
          rawSources.push_back(src.path);
        return r;
      };
      imports.attach(so, o.importPath);
      if (!passes.run("specialize", &fn, [&] { fn = specializeChecked(mod, so, diags); }))
        return 2;
      if (!fn)
        return 1;
      const ast::Module *home = imports.moduleOfFile(fn->loc.file); // a kernel the input imports
      launch = collectLaunchFacts(o, home ? home : &mod, *fn, sm, diags);
    }
    launch.sourceHash = imports.sourceHash(file);
    if (!o.depfile.empty()) {
      std::vector<std::string> deps = imports.paths();
      deps.insert(deps.end(), rawSources.begin(), rawSources.end());
      if (!writeDepfile(o.depfile, o.output, o.input, deps, diags))
        return 1;
    }
    if (o.numStages)
      fn->numStages = *o.numStages;
    fn->arch = o.arch;
    fn->fpFusion = o.fpFusion;
    // Tile-IR passes: the default pipeline's (tle/Transforms/PassRegistry.h), or the ones --pass names.
    bool explicitPasses = !o.passes.empty();
    std::vector<std::string> order = explicitPasses ? o.passes : transforms::defaultPipeline();
    transforms::PassContext context{&diags, o.layoutStats ? &err : nullptr};
    // Runs `p`: 0 when it went well, 1 after an error it reported, 2 after an internal error.
    auto runPass = [&](const transforms::PassInfo &p) {
      unsigned errors = diags.numErrors();
      if (!passes.run(p.name, &fn, [&] { p.run(*fn, context); }))
        return 2;
      return diags.numErrors() > errors ? 1 : 0;
    };
    // Gpu-stage IR (its tiles have layouts: --emit=gpu's output, or written so) starts at the gpu
    // stage: the default pipeline's tile-stage passes and assign-layouts ran before it was printed.
    const bool gpuStageInput = !fn->layouts.empty();
    for (const std::string &name : order) {
      const transforms::PassInfo &p = *transforms::findPass(name); // checked by checkPassNames
      if (!explicitPasses && p.has(transforms::kAssignsLayouts) && o.emit == Emit::Tile)
        break;
      if (!explicitPasses && gpuStageInput && !p.has(transforms::kBeforeEmit))
        continue;
      if (p.has(transforms::kNeedsLayouts) && fn->layouts.empty()) {
        diags.error({}, "pass '" + name + "' needs layouts: run assign-layouts before it (--pass=assign-layouts," +
                            name + ") or give it gpu-stage tile IR");
        return 1;
      }
      if (int rc = runPass(p))
        return rc;
    }
    bool hasLayouts = !fn->layouts.empty();
    if (o.emit == Emit::Tile || (o.emit == Emit::Gpu && explicitPasses)) {
      std::ostringstream s;
      ir::print(s, *fn, hasLayouts);
      return writeOutput(o, s.str(), out, diags) ? 0 : 1;
    }
    // Layouts assigned only now (a --pass list without assign-layouts): the tile-stage op the
    // backend has no lowering for is rewritten first (lower-histograms does nothing without one).
    if (!hasLayouts)
      for (const char *name : {"lower-histograms", "assign-layouts"})
        if (int rc = runPass(*transforms::findPass(name)))
          return rc;
    // The backend translates the GPU stage's ops: the passes that create them run before it
    // even when --pass names others (they add nothing where they already ran), and again after
    // layouts assigned only now (scratch and pipeline decisions read layouts).
    if (explicitPasses)
      for (const transforms::PassInfo &p : transforms::passRegistry())
        if (p.has(transforms::kBeforeEmit) &&
            (!hasLayouts || std::find(order.begin(), order.end(), p.name) == order.end()))
          if (int rc = runPass(p))
            return rc;
    // The protocols the passes made (pipelines' mbarriers, warp-specialised loops) are checked as
    // the user's are: a hang or race there is the compiler's fault, reported before any GPU runs it.
    if (!fn->pipelines.empty() && !gpuStageInput && !barrierProtocolHolds(*fn, diags, /*afterPasses=*/true))
      return 2;
    // The gpu stage: the tile IR after the last GPU pass, before any LLVM.
    if (o.emit == Emit::Gpu) {
      std::ostringstream s;
      ir::print(s, *fn, /*withLayouts=*/true);
      return writeOutput(o, s.str(), out, diags) ? 0 : 1;
    }
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m;
    passes.run("emit-llvm", nullptr, [&] { m = nvptx::emitLLVM(*fn, ctx, o.arch, launch, diags); });
    if (o.emit == Emit::LLVM) {
      std::string text;
      llvm::raw_string_ostream os(text);
      m->print(os, nullptr);
      os.flush();
      return writeOutput(o, text, out, diags) ? 0 : 1;
    }
    std::string ptx;
    // LLVM's backend ends the process on code it cannot select; in a kernel with native code that
    // code is the likely cause: the error is reported at its call.
    RawFatalErrors rawErrors{&diags, firstRawCall(*fn)};
    std::optional<llvm::ScopedFatalErrorHandler> handler;
    if (rawErrors.call)
      handler.emplace(RawFatalErrors::report, &rawErrors);
    passes.run("llvm-codegen", nullptr, [&] { ptx = nvptx::emitPTX(*m, o.arch, o.fpFusion); });
    handler.reset();
    if (o.emit == Emit::PTX && !o.tritonPrefix.empty())
      return writeTritonLauncher(o, ptx, diags) ? 0 : 1;
    if (o.emit == Emit::PTX)
      return writeOutput(o, ptx, out, diags) && writeLaunchHeaders(o, ptx, diags) ? 0 : 1;
    std::string cubin, error;
    bool assembled = false;
    passes.run("ptxas", nullptr, [&] { assembled = nvptx::assembleCubin(ptx, o.arch, o.ptxas, cubin, error); });
    if (!assembled) {
      // A kernel with native code (TLE-Raw) most likely fails in it: its inline PTX is the one
      // part the compiler did not write. Report at the call, with ptxas's log as the note.
      if (const ir::Op *raw = firstRawCall(*fn)) {
        diags.error(raw->loc, "ptxas rejected the kernel, which inlines this tle.raw call's native code (check the "
                              "inline PTX of its function)");
        while (!error.empty() && std::isspace(static_cast<unsigned char>(error.back())))
          error.pop_back();
        diags.note(raw->loc, error);
      } else {
        diags.error({}, error);
      }
      return 1;
    }
    if (!o.tritonPrefix.empty())
      return writeTritonLauncher(o, cubin, diags) ? 0 : 1;
    return writeOutput(o, cubin, out, diags) && writeLaunchHeaders(o, cubin, diags) ? 0 : 1;
  } catch (CompileAborted &) {
    return 1;
  }
}

std::unique_ptr<ir::Function> compileToTile(uint32_t file, const CompileOptions &o, DiagnosticEngine &diags) {
  try {
    std::unique_ptr<ir::Function> fn;
    if (o.fromTile) {
      fn = ir::parseFunction(file, diags);
    } else {
      ast::ASTContext actx;
      ast::Module mod = frontend::parseModule(file, actx, diags);
      sema::SpecializeOptions so;
      so.kernel = o.kernel;
      so.signature = o.signature;
      so.defines = o.defines;
      so.argTypes = o.argTypes;
      so.numWarps = o.numWarps;
      so.debug = o.debug;
      ModuleFiles imports(diags);
      imports.attach(so, o.importPath);
      fn = specializeChecked(mod, so, diags);
    }
    if (!fn || diags.numErrors())
      return nullptr;
    if (std::string v = ir::verify(*fn); !v.empty()) {
      diags.error({}, "invalid tile IR: " + v);
      return nullptr;
    }
    // The CPU target runs the passes of the table marked for it (fp8 dot widening, TMA store
    // marking, mask versioning, their cleanups) where the GPU pipeline runs them, so that its
    // results are those of the same tile IR (and the CPU tests check the transformations).
    transforms::PassContext context{&diags, nullptr};
    for (const std::string &name : transforms::cpuPipeline()) {
      transforms::findPass(name)->run(*fn, context);
      if (std::string v = ir::verify(*fn); !v.empty()) {
        diags.error({}, "internal error: invalid tile IR after " + name + ": " + v);
        return nullptr;
      }
    }
    return fn;
  } catch (CompileAborted &) {
    return nullptr;
  }
}

} // namespace tle::driver
