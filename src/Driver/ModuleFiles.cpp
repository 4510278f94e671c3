// Imported modules' files for specialisation, and the depfile that lists them.
#include "tle/Driver/ModuleFiles.h"
#include "tle/Frontend/Parser.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>

#include <fstream>

namespace tle::driver {

sema::LoadedModule ModuleFiles::load(const std::string &path) {
  std::string error;
  uint32_t file = diags_.sources().loadFile(path, error);
  if (!file)
    return {nullptr, error};
  paths_.push_back(path);
  modules_.push_back(frontend::parseModule(file, ctx_, diags_));
  return {&modules_.back(), ""};
}

sema::LoadedModule ModuleFiles::loadText(const std::string &path, const std::string &text) {
  uint32_t file = diags_.sources().addFile(path, text);
  modules_.push_back(frontend::parseModule(file, ctx_, diags_));
  return {&modules_.back(), ""};
}

const ast::Module *ModuleFiles::moduleOfFile(uint32_t file) const {
  for (const ast::Module &m : modules_)
    if (m.file == file)
      return &m;
  return nullptr;
}

std::string ModuleFiles::sourceHash(uint32_t input) const {
  llvm::SHA256 sha;
  auto add = [&](const std::string &text) {
    sha.update(std::to_string(text.size()) + "\n");
    sha.update(text);
  };
  add(diags_.sources().text(input));
  for (const ast::Module &m : modules_)
    add(diags_.sources().text(m.file));
  return llvm::toHex(sha.final(), /*LowerCase=*/true);
}

void ModuleFiles::attach(sema::SpecializeOptions &so, const std::vector<std::string> &importPath) {
  so.importPath = importPath;
  so.loadModule = [this](const std::string &path) { return load(path); };
  so.loadText = [this](const std::string &path, const std::string &text) { return loadText(path, text); };
  so.parseExpression = [this](uint32_t file, SourceLoc at, const std::string &text) -> const ast::Expr * {
    return frontend::parseExpression(file, at, text, ctx_, diags_);
  };
}

namespace {

/// A path as a Make rule spells it.
std::string escapeMake(const std::string &path) {
  std::string r;
  for (char c : path) {
    if (c == ' ' || c == '#')
      r += '\\';
    if (c == '$')
      r += '$';
    r += c;
  }
  return r;
}

} // namespace

bool writeDepfile(const std::string &depfile, const std::string &target, const std::string &input,
                  const std::vector<std::string> &imported, DiagnosticEngine &diags) {
  std::ofstream f(depfile);
  f << escapeMake(target) << ":";
  f << " " << escapeMake(input);
  for (const std::string &p : imported)
    f << " \\\n  " << escapeMake(p);
  f << "\n";
  if (!f) {
    diags.error({}, "cannot write the depfile '" + depfile + "'");
    return false;
  }
  return true;
}

} // namespace tle::driver
