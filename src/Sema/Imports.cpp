// Imports: the import search path, the user modules found on it (each run once, with the
// module-scope rules of ModuleScope.cpp), relative imports and the attributes of user modules.
#include "Imports.h"
#include "Bundled.h"

#include <llvm/Support/Casting.h>

#include <cctype>
#include <filesystem>
#include <system_error>

using llvm::dyn_cast;
namespace fs = std::filesystem;

namespace tle::sema {

const Env &UserModule::names() const { return running ? running->globals : globals; }

const std::map<std::string, std::vector<const ast::CallExpr *>> &UserModule::wrapperNames() const {
  return running ? running->kernelWrappers_ : kernelWrappers;
}

const std::map<std::string, Specializer::Unresolved> &UserModule::unresolvedNames() const {
  return running ? running->unresolvedGlobals_ : unresolved;
}

bool languageImport(const std::string &name) {
  std::string head = name.substr(0, name.find('.'));
  return head == "triton" || head == "libdevice" || head == "torch" || head == "pathlib" || head == "os";
}

namespace {

bool sameLoc(SourceLoc a, SourceLoc b) { return a.file == b.file && a.line == b.line && a.col == b.col; }

/// Whether module-level code of `b` binds `name`: an assignment, a `def`, a class or an import
/// other than the one at `self` (also in its `if`, `try` and loop bodies), whether or not it
/// has run yet.
bool bindsAtModuleLevel(const ast::Block &b, const std::string &name, SourceLoc self) {
  std::set<std::string> assigned;
  collectAssigned(b, assigned);
  if (assigned.count(name))
    return true;
  for (const ast::Stmt *s : b) {
    if (auto *f = dyn_cast<ast::FunctionDef>(s); f && f->name == name)
      return true;
    if (auto *o = dyn_cast<ast::OtherStmt>(s); o && o->name == name)
      return true;
    if (auto *im = dyn_cast<ast::ImportStmt>(s))
      for (const ast::ImportAlias &a : im->names)
        if ((a.asname.empty() ? a.name.substr(0, a.name.find('.')) : a.asname) == name)
          return true;
    if (auto *im = dyn_cast<ast::ImportFromStmt>(s))
      for (const ast::ImportAlias &a : im->names)
        if (!sameLoc(a.loc, self) && (a.name == "*" || (a.asname.empty() ? a.name : a.asname) == name))
          return true;
    if (auto *i = dyn_cast<ast::IfStmt>(s); i && (bindsAtModuleLevel(i->body, name, self) || bindsAtModuleLevel(i->orelse, name, self)))
      return true;
    if (auto *t = dyn_cast<ast::TryStmt>(s)) {
      bool any = bindsAtModuleLevel(t->body, name, self) || bindsAtModuleLevel(t->orelse, name, self) ||
                 bindsAtModuleLevel(t->finalbody, name, self);
      for (const ast::ExceptHandler &h : t->handlers)
        any = any || bindsAtModuleLevel(h.body, name, self);
      if (any)
        return true;
    }
  }
  return false;
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

bool isFile(const fs::path &p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool isDir(const fs::path &p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

/// The `__init__.py` (or `__init__.tle`) of a package directory; empty when `dir` is none.
fs::path packageInit(const fs::path &dir) {
  for (const char *f : {"__init__.py", "__init__.tle"})
    if (isFile(dir / f))
      return dir / f;
  return {};
}

/// Where a module lives: a package (a directory with __init__), a module file (.py, .tle), or a
/// namespace package (a directory without __init__, taken only when no directory of the search
/// holds one of the others, as in Python).
struct Location {
  enum class Kind { None, Package, Module, Namespace } kind = Kind::None;
  fs::path file; ///< the __init__ or module file
  fs::path dir;  ///< a package's directory
};

Location locateIn(const fs::path &dir, const std::string &name) {
  fs::path sub = dir / name;
  if (isDir(sub))
    if (fs::path init = packageInit(sub); !init.empty())
      return {Location::Kind::Package, init, sub};
  for (const char *ext : {".py", ".tle"})
    if (isFile(dir / (name + ext)))
      return {Location::Kind::Module, dir / (name + ext), {}};
  if (isDir(sub))
    return {Location::Kind::Namespace, {}, sub};
  return {};
}

Location locate(const std::vector<std::string> &dirs, const std::string &name) {
  Location ns;
  for (const std::string &d : dirs) {
    Location l = locateIn(d, name);
    if (l.kind == Location::Kind::Package || l.kind == Location::Kind::Module)
      return l;
    if (l.kind == Location::Kind::Namespace && ns.kind == Location::Kind::None)
      ns = l;
  }
  return ns;
}

/// The key a file is run once under.
std::string canonicalPath(const fs::path &p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal().string() : c.string();
}

/// `p` absolute and normalised, without a trailing separator.
fs::path absoluteDir(const fs::path &p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec).lexically_normal();
  if (!a.has_filename() && a.has_parent_path() && a != a.root_path())
    a = a.parent_path();
  return a;
}

std::string join(const std::vector<std::string> &parts, const char *sep) {
  std::string r;
  for (const std::string &p : parts)
    r += (r.empty() ? "" : sep) + p;
  return r;
}

/// `name` without its last dotted component ("" for a top-level name).
std::string parentName(const std::string &name) {
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? "" : name.substr(0, dot);
}

/// Reads the module `name` found at `l` (through SpecializeOptions::loadModule) and registers it
/// under its file's key; null with the reason in `why` when it cannot be read. A syntax error in
/// it is reported with a note at the import `at`.
UserModule *newModule(Specializer &s, const std::string &name, const Location &l, const std::string &key, SourceLoc at,
                      std::string &why) {
  ModuleTable &t = *s.modules_;
  bool package = l.kind != Location::Kind::Module;
  std::string path = l.kind == Location::Kind::Namespace ? "" : l.file.string();
  const ast::Module *code = nullptr;
  if (!path.empty()) {
    if (!s.opts.loadModule) {
      why = "cannot read module '" + name + "' (" + path + "): no module loader";
      return nullptr;
    }
    LoadedModule loaded;
    try {
      loaded = s.opts.loadModule(path);
    } catch (CompileAborted &) {
      if (at.valid())
        s.diags.note(at, "in module '" + name + "', imported here");
      throw;
    }
    if (!loaded.module) {
      why = "cannot read module '" + name + "': " + loaded.error;
      return nullptr;
    }
    code = loaded.module;
  }
  auto owned = std::make_unique<UserModule>();
  UserModule *m = owned.get();
  t.owned.push_back(std::move(owned));
  m->name = name;
  m->package = package ? name : parentName(name);
  m->path = path;
  m->dir = package ? l.dir.string() : "";
  m->ast = code;
  t.byPath[key] = m;
  if (code)
    t.byFile[code->file] = m;
  return m;
}

/// The built-in module `b` (Bundled.h), read from its text through
/// SpecializeOptions::loadText and registered under its name; null with the reason in `why`
/// when there is no such loader.
UserModule *newBundledModule(Specializer &s, const BundledModule &b, std::string &why) {
  if (!s.opts.loadText) {
    why = "no module named '" + std::string(b.name) + "' (built-in modules need a module loader)";
    return nullptr;
  }
  std::string path = std::string("<tle>/") + b.path;
  LoadedModule loaded = s.opts.loadText(path, b.text);
  if (!loaded.module) {
    why = "cannot read the built-in module '" + std::string(b.name) + "': " + loaded.error;
    return nullptr;
  }
  ModuleTable &t = *s.modules_;
  auto owned = std::make_unique<UserModule>();
  UserModule *m = owned.get();
  t.owned.push_back(std::move(owned));
  m->name = b.name;
  m->package = parentName(b.name);
  m->path = path;
  m->ast = loaded.module;
  t.byName[m->name] = m;
  t.byPath[path] = m;
  t.byFile[loaded.module->file] = m;
  return m;
}

/// Runs module `m`'s statements with a specializer of its own (sharing `importer`'s module
/// table) and keeps its names. While it runs, `m` is partially initialised: its names so far.
void runModule(Specializer &importer, UserModule &m, SourceLoc at) {
  ModuleTable &t = *importer.modules_;
  if (!m.ast) { // a namespace package: a directory of modules, no code
    m.state = UserModule::State::Done;
    return;
  }
  if (t.stack.size() >= ModuleTable::kMaxDepth)
    importer.fail(at, "imports nest more than " + std::to_string(ModuleTable::kMaxDepth) + " modules deep (importing '" +
                          m.name + "'; each import runs the module inside the one importing it)");
  Specializer s(*m.ast, importer.opts, importer.diags);
  s.modules_ = importer.modules_;
  s.self_ = &m;
  s.globals["triton"] = SVal::module("triton");
  // The kernel's file is never "__main__": host code under `if __name__ == "__main__"` is skipped.
  s.globals["__name__"] = SVal::str(&m == t.main ? "__tle__" : m.name);
  { // __file__: the module's path, absolute (raw declarations find their sources from it)
    std::error_code ec;
    fs::path self = fs::absolute(fs::path(importer.diags.sources().path(m.ast->file)), ec);
    s.globals["__file__"] = SVal::str(self.lexically_normal().string());
  }
  m.state = UserModule::State::Running;
  m.running = &s;
  t.stack.emplace_back(&m, at);
  struct Leave {
    ModuleTable &t;
    UserModule &m;
    ~Leave() {
      t.stack.pop_back();
      m.running = nullptr;
    }
  } leave{t, m};
  s.defineModuleBlock(m.ast->body, nullptr);
  m.globals = std::move(s.globals);
  m.unresolved = std::move(s.unresolvedGlobals_);
  m.guessed = std::move(s.guessedGlobals_);
  m.jitFns = std::move(s.jitFns);
  m.kernelWrappers = std::move(s.kernelWrappers_);
  m.state = UserModule::State::Done;
}

} // namespace

UserModule *Specializer::userModule(const std::string &name) const {
  if (!modules_)
    return nullptr;
  auto it = modules_->byName.find(name);
  return it == modules_->byName.end() ? nullptr : it->second;
}

void Specializer::runMainModule() {
  modules_ = std::make_shared<ModuleTable>();
  ModuleTable &t = *modules_;
  fs::path file(diags.sources().path(mod.file));
  fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  // The package root: the parent of the outermost directory above the file with an __init__.
  // Directories without one between packages (or between the file and the nearest package above
  // it) are namespace subpackages (PEP 420: triton_kernels' matmul_details, TransformerEngine's
  // common): climbed through when all are identifiers and a package lies above them.
  std::vector<std::string> packages;
  fs::path root = absoluteDir(dir);
  for (;;) {
    std::vector<std::string> gap;
    fs::path p = root;
    while (packageInit(p).empty() && p.has_parent_path() && p != p.parent_path() &&
           isIdentifier(p.filename().string())) {
      gap.insert(gap.begin(), p.filename().string());
      p = p.parent_path();
    }
    if (packageInit(p).empty() || !isIdentifier(p.filename().string()))
      break; // no package above: the walk ends at `root`
    packages.insert(packages.begin(), gap.begin(), gap.end());
    while (!packageInit(p).empty() && isIdentifier(p.filename().string()) && p.has_parent_path()) {
      packages.insert(packages.begin(), p.filename().string());
      p = p.parent_path();
    }
    root = p;
  }
  t.searchPath.push_back(packages.empty() ? dir.string() : root.string());
  if (!packages.empty() && packageInit(absoluteDir(dir)).empty())
    t.searchPath.push_back(dir.string()); // a namespace portion's modules, as a script's directory
  t.searchPath.insert(t.searchPath.end(), opts.importPath.begin(), opts.importPath.end());

  auto owned = std::make_unique<UserModule>();
  UserModule &m = *owned;
  t.owned.push_back(std::move(owned));
  std::string stem = file.stem().string();
  bool isInit = stem == "__init__" && !packages.empty();
  m.package = join(packages, ".");
  m.name = isInit ? m.package : m.package.empty() ? stem : m.package + "." + stem;
  m.path = canonicalPath(file);
  m.dir = isInit ? dir.string() : "";
  m.ast = &mod;
  t.main = &m;
  t.byName[m.name] = &m;
  t.byPath[m.path] = &m;
  t.byFile[mod.file] = &m;
  // Its packages first, as Python imports a module of a package (their __init__ may import it).
  std::string why;
  importModule(m.name, {}, why);
  if (m.state == UserModule::State::NotStarted)
    runModule(*this, m, {});
  globals = m.globals;
  unresolvedGlobals_ = m.unresolved;
  guessedGlobals_ = m.guessed;
  jitFns = m.jitFns;
  kernelWrappers_ = m.kernelWrappers;
  self_ = &m;
}

UserModule *Specializer::importModule(const std::string &name, SourceLoc at, std::string &why) {
  ModuleTable &t = *modules_;
  if (auto f = t.failed.find(name); f != t.failed.end()) {
    why = f->second.why;
    return nullptr;
  }
  auto failWith = [&](std::string reason) -> UserModule * {
    why = std::move(reason);
    t.failed[name] = Unresolved(why, at.valid() ? std::vector<Note>{{at, "imported here"}} : std::vector<Note>{});
    return nullptr;
  };
  if (const BundledModule *b = bundledModule(name)) { // built in: not searched for, no packages
    UserModule *m = userModule(name);
    if (!m && !(m = newBundledModule(*this, *b, why)))
      return failWith(why);
    if (m->state == UserModule::State::NotStarted)
      runModule(*this, *m, at);
    return m;
  }
  UserModule *parent = nullptr;
  for (size_t start = 0;;) {
    size_t dot = name.find('.', start);
    std::string prefix = name.substr(0, dot);
    std::string part = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    UserModule *m = userModule(prefix);
    if (!m) {
      if (parent && parent->dir.empty())
        return failWith("no module named '" + prefix + "' ('" + parent->name + "' is not a package)");
      std::vector<std::string> dirs = parent ? std::vector<std::string>{parent->dir} : t.searchPath;
      Location l = isIdentifier(part) ? locate(dirs, part) : Location{};
      if (l.kind == Location::Kind::None)
        return failWith("no module named '" + prefix + "' (searched: " + join(dirs, ", ") + ")");
      std::string key = canonicalPath(l.kind == Location::Kind::Namespace ? l.dir : l.file);
      if (auto p = t.byPath.find(key); p != t.byPath.end()) {
        m = p->second; // the same file under another name: it runs once
      } else {
        m = newModule(*this, prefix, l, key, at, why);
        if (!m)
          return failWith(why);
      }
      t.byName[prefix] = m;
    }
    if (m->state == UserModule::State::NotStarted)
      runModule(*this, *m, at);
    parent = m;
    if (dot == std::string::npos)
      return m;
    start = dot + 1;
  }
}

void Specializer::importNames(const ast::ImportStmt *s, std::set<std::string> *bound) {
  // `import a.b.c` binds `a` (a, a.b and a.b.c are imported); `import a.b.c as d` binds `d` to
  // a.b.c. A module not on the search path (numpy) is bound as a module TLE does not know:
  // an error only where a kernel uses it (missingModule says why), and a `try` runs its handler.
  for (auto &a : s->names) {
    std::string head = a.name.substr(0, a.name.find('.'));
    std::string why;
    if (!languageImport(a.name) || bundledModule(a.name))
      importModule(a.name, a.loc, why);
    defineGlobal(a.asname.empty() ? head : a.asname, SVal::module(a.asname.empty() ? head : a.name), "", bound);
  }
}

void Specializer::importFrom(const ast::ImportFromStmt *s, std::set<std::string> *bound) {
  // A relative import starts from the running module's package.
  std::string base = s->module, why;
  if (s->level > 0) {
    std::string pkg = self_ ? self_->package : "";
    for (int up = 1; up < s->level && !pkg.empty(); ++up)
      pkg = parentName(pkg);
    if (!self_ || self_->package.empty())
      why = "attempted relative import with no known parent package";
    else if (pkg.empty())
      why = "attempted relative import beyond top-level package";
    else
      base = s->module.empty() ? pkg : pkg + "." + s->module;
  }
  UserModule *m = nullptr;
  bool language = s->level == 0 && languageImport(base) && !bundledModule(base);
  if (why.empty() && !language && !(m = importModule(base, s->loc(), why)) &&
      s->level == 0)
    why.clear(); // a module TLE does not know (numpy): its attributes, as for the language's modules
  std::string shown = std::string(size_t(s->level), '.') + s->module;
  for (auto &a : s->names) {
    std::string name = a.asname.empty() ? a.name : a.asname;
    if (m) {
      if (a.name == "*")
        importStar(*m, bound);
      else
        importOne(*m, a.name, name, a.loc, bound);
    } else if (a.name == "*") {
      continue;
    } else if (!why.empty()) {
      defineGlobal(name, std::nullopt,
                   Unresolved("could not be imported from " + shown + ": " + why, {{a.loc, "imported here"}}), bound);
    } else {
      // `from triton.language import float32` binds the attribute; `from triton import language
      // as tl` the submodule. A name TLE does not have is an error only where a kernel reads it.
      std::optional<SVal> v = quietAttribute(SVal::module(base), a.name, a.loc, why);
      defineGlobal(name, v, v ? Unresolved() : Unresolved("was imported from " + base + ": " + why), bound);
      why.clear();
    }
  }
}

std::string Specializer::missingModule(const std::string &path, std::vector<Note> &notes) const {
  if (!modules_)
    return "";
  for (std::string p = path; !p.empty(); p = parentName(p))
    if (auto it = modules_->failed.find(p); it != modules_->failed.end()) {
      notes.insert(notes.end(), it->second.notes.begin(), it->second.notes.end());
      return ": " + it->second.why;
    }
  return "";
}

void Specializer::importOne(UserModule &m, const std::string &attr, const std::string &name, SourceLoc loc,
                            std::set<std::string> *bound) {
  const Env &ns = m.names();
  if (auto it = ns.find(attr); it != ns.end()) {
    defineGlobal(name, it->second, "", bound);
    if (auto g = m.guessed.find(attr); g != m.guessed.end()) {
      Unresolved u = g->second;
      u.why = "was imported from " + m.name + ", where '" + attr + "' " + u.why;
      u.notes.push_back({loc, "imported here"});
      guessedGlobals_[name] = u;
    }
    return;
  }
  const auto &unresolved = m.unresolvedNames();
  if (auto it = unresolved.find(attr); it != unresolved.end()) {
    Unresolved u = it->second;
    u.why = "was imported from " + m.name + ", where '" + attr + "' " + u.why;
    u.notes.push_back({loc, "imported here"});
    defineGlobal(name, std::nullopt, u, bound);
    return;
  }
  // `from pkg import mod`: a submodule.
  std::string why;
  if (!m.dir.empty() && importModule(m.name + "." + attr, loc, why)) {
    defineGlobal(name, SVal::module(m.name + "." + attr), "", bound);
    return;
  }
  if (m.state == UserModule::State::Running) {
    // Python's ImportError: inside a module-level `try` its handler runs (FlagGems' optional
    // extension: the name is left unknown, which makes the `try` run it); otherwise an error
    // when the package's own source binds the name later (an import cycle). A name it never
    // binds, with no Python submodule, is a compiled extension (`from . import _C`): unknown,
    // an error only where a kernel reads it, as `import pkg._C` is.
    Unresolved u = circularImport(m, attr);
    if (moduleTryDepth_ == 0 && !m.dir.empty() && m.ast && !bindsAtModuleLevel(m.ast->body, attr, loc)) {
      defineGlobal(name, std::nullopt,
                   Unresolved("could not be imported: package '" + m.name + "' has no Python submodule '" + attr +
                                  "' (a compiled extension module is not loaded at compile time)",
                              {{loc, "imported here"}}),
                   bound);
      return;
    }
    if (moduleTryDepth_ == 0)
      fail(loc, u.why, u.notes);
    u.why = "could not be imported: " + u.why;
    u.notes.insert(u.notes.begin(), {loc, "imported here"});
    defineGlobal(name, std::nullopt, u, bound);
    return;
  }
  defineGlobal(name, std::nullopt,
               Unresolved("could not be imported: module '" + m.name + "'" + (m.path.empty() ? "" : " (" + m.path + ")") +
                              " has no name '" + attr + "'",
                          {{loc, "imported here"}}),
               bound);
}

void Specializer::importStar(UserModule &m, std::set<std::string> *bound) {
  // `__all__` when the module defines it (a tuple or list of names), else its public names.
  std::vector<std::string> names;
  const Env &ns = m.names();
  if (auto all = ns.find("__all__"); all != ns.end() && all->second.kind == SVal::Kind::Tuple) {
    for (const SVal &n : all->second.elts)
      if (n.kind == SVal::Kind::Str)
        names.push_back(n.s);
  } else {
    for (auto &[n, v] : ns)
      if (n[0] != '_')
        names.push_back(n);
    for (auto &[n, u] : m.unresolvedNames())
      if (n[0] != '_')
        names.push_back(n);
  }
  for (const std::string &n : names)
    importOne(m, n, n, {}, bound);
}

Specializer::Unresolved Specializer::circularImport(const UserModule &m, const std::string &attr) const {
  const auto &stack = modules_->stack;
  std::vector<std::string> chain;
  std::vector<Note> notes;
  bool inCycle = false;
  for (auto &[mod, at] : stack) {
    inCycle = inCycle || mod == &m;
    if (!inCycle)
      continue;
    chain.push_back(mod->name);
    if (at.valid())
      notes.push_back({at, "'" + mod->name + "' is imported here"});
  }
  chain.push_back(m.name);
  return Unresolved("cannot import name '" + attr + "' from partially initialized module '" + m.name +
                        "' (an import cycle: " + join(chain, " -> ") + ")",
                    notes);
}

SVal Specializer::moduleAttribute(const UserModule &m, const std::string &attr, SourceLoc loc) {
  const Env &ns = m.names();
  if (auto it = ns.find(attr); it != ns.end())
    return it->second;
  if (UserModule *sub = userModule(m.name + "." + attr))
    return SVal::module(sub->name);
  const auto &unresolved = m.unresolvedNames();
  if (auto it = unresolved.find(attr); it != unresolved.end())
    fail(loc, "'" + m.name + "." + attr + "' " + it->second.why, it->second.notes);
  fail(loc, "module '" + m.name + "' has no attribute '" + attr + "'");
}

void Specializer::passRunningModule(Specializer &other) {
  if (!self_)
    return;
  if (self_->running == this)
    self_->running = &other;
  else if (self_->running == &other)
    self_->running = this;
}

std::string Specializer::homeModuleName(const ast::FunctionDef *f) const {
  if (!modules_)
    return "";
  auto it = modules_->byFile.find(f->loc().file);
  return it == modules_->byFile.end() || it->second == self_ ? "" : it->second->name;
}

Specializer::SavedGlobals Specializer::enterHomeModule(const ast::FunctionDef *f) {
  SavedGlobals saved;
  if (!modules_)
    return saved;
  auto it = modules_->byFile.find(f->loc().file);
  if (it == modules_->byFile.end() || it->second == self_)
    return saved;
  UserModule *home = it->second;
  saved.swapped = true;
  saved.globals = std::move(globals);
  saved.unresolved = std::move(unresolvedGlobals_);
  saved.self = self_;
  globals = home->names();
  unresolvedGlobals_ = home->unresolvedNames();
  self_ = home;
  return saved;
}

void Specializer::leaveHomeModule(SavedGlobals &saved) {
  if (!saved.swapped)
    return;
  globals = std::move(saved.globals);
  unresolvedGlobals_ = std::move(saved.unresolved);
  self_ = saved.self;
  saved.swapped = false;
}

} // namespace tle::sema
