// The compilation pipeline: parse, specialise, verify, assign layouts, emit LLVM IR, PTX, cubin.
#include "tle/Driver/Compiler.h"
#include "tle/Frontend/Parser.h"
#include "tle/IR/IR.h"
#include "tle/Sema/Specialize.h"
#include "tle/Target/NVPTX/NVPTXBackend.h"
#include "tle/Transforms/Canonicalize.h"
#include "tle/Transforms/LayoutAssignment.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <fstream>
#include <iostream>
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

/// Writes `text` to the output file, or to `out` for "-" / empty.
bool writeOutput(const CompileOptions &o, const std::string &text, std::ostream &out, DiagnosticEngine &diags) {
  if (o.output.empty() || o.output == "-") {
    out << text;
    return true;
  }
  std::ofstream f(o.output, std::ios::binary);
  if (!f) {
    diags.error({}, "cannot open output file '" + o.output + "'");
    return false;
  }
  f << text;
  return static_cast<bool>(f);
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
    if (o.emit == Emit::Cubin && (o.output.empty() || o.output == "-")) {
      diags.error({}, "a cubin is binary: give an output file with -o");
      return 1;
    }
    std::string ioErr;
    uint32_t file = sm.loadFile(o.input, ioErr);
    if (!file) {
      diags.error({}, ioErr);
      return 1;
    }
    if (o.emit == Emit::Tokens) {
      std::ostringstream s;
      frontend::dumpTokens(file, s, diags);
      return writeOutput(o, s.str(), out, diags) ? 0 : 1;
    }
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
    so.numWarps = o.numWarps;
    std::unique_ptr<ir::Function> fn = sema::specialize(mod, so, diags);
    transforms::canonicalize(*fn);
    if (std::string v = ir::verify(*fn); !v.empty()) {
      diags.error({}, "internal error: invalid tile IR after specialisation: " + v);
      return 2;
    }
    if (o.emit == Emit::Tile) {
      std::ostringstream s;
      ir::print(s, *fn);
      return writeOutput(o, s.str(), out, diags) ? 0 : 1;
    }

    transforms::assignLayouts(*fn);
    if (std::string v = ir::verify(*fn); !v.empty()) {
      diags.error({}, "internal error: invalid tile IR after layout assignment: " + v);
      return 2;
    }
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = nvptx::emitLLVM(*fn, ctx, o.arch, diags);
    if (o.emit == Emit::Gpu) {
      std::ostringstream s;
      ir::print(s, *fn, /*withLayouts=*/true);
      return writeOutput(o, s.str(), out, diags) ? 0 : 1;
    }
    if (o.emit == Emit::LLVM) {
      std::string text;
      llvm::raw_string_ostream os(text);
      m->print(os, nullptr);
      os.flush();
      return writeOutput(o, text, out, diags) ? 0 : 1;
    }
    std::string ptx = nvptx::emitPTX(*m, o.arch);
    if (o.emit == Emit::PTX)
      return writeOutput(o, ptx, out, diags) ? 0 : 1;
    std::string cubin, error;
    if (!nvptx::assembleCubin(ptx, o.arch, o.ptxas, cubin, error)) {
      diags.error({}, error);
      return 1;
    }
    return writeOutput(o, cubin, out, diags) ? 0 : 1;
  } catch (CompileAborted &) {
    return 1;
  }
}

} // namespace tle::driver
