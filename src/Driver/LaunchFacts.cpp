// Launch facts: -ns, checked -g expressions and `:1` parameters, for the kernel's metadata; the
// launcher headers tlec writes next to a cubin or PTX output.
#include "tle/Driver/LaunchFacts.h"
#include "tle/AST/AST.h"
#include "tle/Driver/GridExpr.h"
#include "tle/Driver/Launcher.h"
#include "tle/IR/IR.h"
#include "tle/Sema/Specialize.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Casting.h>
#include <llvm/Support/SHA256.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace tle::driver {

namespace {

/// The kernel's parameter names in declaration order, from the module's @jit function `name`.
std::vector<std::string> declaredParams(const ast::Module &module, const std::string &name) {
  for (const ast::Stmt *s : module.body)
    if (auto *f = llvm::dyn_cast<ast::FunctionDef>(s); f && f->name == name) {
      std::vector<std::string> out;
      for (const ast::Param &p : f->params)
        out.push_back(p.name);
      return out;
    }
  return {};
}

/// The parameters `:1` hints specialised away, with their positions among the launcher arguments.
std::vector<LaunchFacts::EqualToOne> equalToOneParams(const CompileOptions &o, const ast::Module &module,
                                                      const ir::Function &fn, DiagnosticEngine &diags) {
  std::vector<LaunchFacts::EqualToOne> out;
  if (!o.signature)
    return out;
  std::vector<std::string> names = declaredParams(module, fn.name);
  SourceManager quietSm;
  DiagnosticEngine quiet(quietSm); // the signature was checked (and reported) by specialisation
  std::ostringstream sink;
  quiet.setStream(sink);
  auto sig = sema::parseSignature(*o.signature, quiet);
  if (!sig || names.empty())
    return out;
  // The signature lists every parameter, or every parameter -D does not give (as Specialize).
  bool skipDefined = sig->size() != names.size();
  std::set<std::string> runtime;
  for (const ir::Param &p : fn.params)
    runtime.insert(p.name);
  size_t entry = 0, index = 0;
  for (const std::string &n : names) {
    bool defined = o.defines.count(n) > 0;
    if (skipDefined && defined)
      continue;
    if (entry >= sig->size())
      break;
    const sema::SignatureEntry &e = (*sig)[entry++];
    if (defined)
      continue;
    if (runtime.count(n)) {
      ++index;
      continue;
    }
    if (e.kind == sema::SignatureEntry::Kind::TensorDesc) { // base, a shape and a stride per dim but the last
      index += 2 * e.blockShape.size();
      continue;
    }
    if (e.kind == sema::SignatureEntry::Kind::Tuple) { // its runtime elements, flattened
      index += sema::runtimeLeaves(e);
      continue;
    }
    if (e.kind == sema::SignatureEntry::Kind::Runtime && e.specializedToOne)
      out.push_back({n, e.type.str(), index++});
  }
  return out;
}

/// Checks the -g text against the kernel and splits it into three dimensions.
std::vector<std::string> checkedGrid(const CompileOptions &o, const ir::Function &fn,
                                     const std::vector<LaunchFacts::EqualToOne> &ones, SourceManager &sm,
                                     DiagnosticEngine &diags) {
  uint32_t file = sm.addFile("-g", o.grid);
  auto fail = [&](const GridError &e) {
    diags.fatal({file, 1, static_cast<uint32_t>(e.column + 1)}, e.message);
  };
  GridError err;
  auto grid = parseGrid(o.grid, &err);
  if (!grid)
    fail(err);
  std::map<std::string, GridBinding> names;
  std::map<std::string, std::string> unusable;
  std::string usable;
  auto use = [&](const std::string &n, GridBinding b) {
    names[n] = b;
    usable += (usable.empty() ? "" : ", ") + n;
  };
  for (const ir::Param &p : fn.params) {
    if (!p.type.isPointer() && ir::isInteger(p.type.dtype) && p.type.dtype != ir::DType::I1)
      use(p.name, {false, 0, ""});
    else
      unusable[p.name] = "parameter '" + p.name + "' has type " + p.type.str();
  }
  for (auto &one : ones)
    use(one.name, {true, 1, ""});
  for (auto &[n, v] : fn.constexprs) {
    if (names.count(n))
      continue;
    bool isInt = !v.empty() && v.find_first_not_of("-0123456789") == std::string::npos && v != "-";
    if (isInt)
      use(n, {true, std::stoll(v), ""});
    else if (v == "True" || v == "False")
      use(n, {true, v == "True", ""});
    else
      unusable[n] = "constexpr '" + n + "' is " + v + ", not an integer";
  }
  if (auto bad = checkGridNames(*grid, names, usable, unusable))
    fail(*bad);
  if (auto bad = checkGridConstants(*grid, names))
    fail(*bad);
  return {grid->dimText(0), grid->dimText(1), grid->dimText(2)};
}

bool writeFile(const std::string &path, const std::string &text, DiagnosticEngine &diags) {
  errno = 0;
  std::ofstream f(path, std::ios::binary);
  if (f) {
    f << text;
    f.close(); // a failed flush (a full disk) is an error too
  }
  if (!f) {
    diags.error({}, "cannot write '" + path + "'" + (errno ? std::string(": ") + std::strerror(errno) : ""));
    return false;
  }
  return true;
}

} // namespace

LaunchFacts collectLaunchFacts(const CompileOptions &o, const ast::Module *module, const ir::Function &fn,
                               SourceManager &sm, DiagnosticEngine &diags) {
  LaunchFacts f;
  f.numStages = o.numStages;
  if (module)
    f.equalToOne = equalToOneParams(o, *module, fn, diags);
  if (!o.grid.empty())
    f.grid = checkedGrid(o, fn, f.equalToOne, sm, diags);
  return f;
}

bool writeLaunchHeaders(const CompileOptions &o, const std::string &image, DiagnosticEngine &diags) {
  if (o.emitHeader.empty() && o.emitHeaderC.empty())
    return true;
  LaunchImage img;
  img.bytes = image;
  img.origin = o.output;
  std::string json, error;
  LaunchSpec spec;
  if (!readImageMetadata(image, json, img.ptx, error) || !specFromMetadata(json, std::move(img), spec, error)) {
    diags.error({}, "cannot write a launcher: " + error);
    return false;
  }
  for (int lang = 0; lang < 2; ++lang) {
    const std::string &path = lang == 0 ? o.emitHeader : o.emitHeaderC;
    if (path.empty())
      continue;
    LauncherOptions lo;
    lo.name = o.launcherName;
    lo.language = lang == 0 ? LauncherLanguage::Cxx : LauncherLanguage::C;
    lo.generator = std::string("tlec ") + TLE_VERSION;
    LauncherFiles files;
    std::vector<std::string> warnings;
    if (!generateLauncher({spec}, lo, files, error, warnings)) {
      diags.error({}, error);
      return false;
    }
    if (!writeFile(path, files.header, diags))
      return false;
  }
  return true;
}

TritonNames tritonNames(const std::string &signature, int numWarps, int numStages) {
  std::vector<std::string> items;
  std::stringstream ss(signature);
  for (std::string item; std::getline(ss, item, ',');) {
    size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    items.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
  }
  if (!signature.empty() && signature.back() == ',')
    items.push_back("");
  std::string joined;
  for (const std::string &i : items)
    joined += i + " ";
  joined += "warps" + std::to_string(numWarps) + "xstages" + std::to_string(numStages);
  TritonNames n;
  auto digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(joined));
  n.hash = llvm::toHex(digest, /*LowerCase=*/true).substr(0, 8);
  for (size_t i = 0; i < items.size(); ++i) {
    size_t colon = items[i].rfind(':');
    if (colon == std::string::npos)
      continue;
    std::string hint = items[i].substr(colon + 1);
    if (hint == "16")
      n.suffix += std::to_string(i) + "d";
    else if (hint == "1")
      n.suffix += std::to_string(i) + "c";
  }
  return n;
}

std::string withSuffix(const std::string &prefix, const std::string &suffix) {
  size_t slash = prefix.find_last_of('/');
  size_t nameAt = slash == std::string::npos ? 0 : slash + 1;
  size_t dot = prefix.find_last_of('.');
  if (dot != std::string::npos && dot > nameAt && dot + 1 < prefix.size())
    return prefix.substr(0, dot) + suffix;
  return prefix + suffix;
}

bool writeTritonLauncher(const CompileOptions &o, const std::string &image, DiagnosticEngine &diags) {
  LaunchImage img;
  img.bytes = image;
  img.origin = o.tritonPrefix;
  std::string json, error;
  LaunchSpec spec;
  if (!readImageMetadata(image, json, img.ptx, error) || !specFromMetadata(json, std::move(img), spec, error)) {
    diags.error({}, "cannot write a launcher: " + error);
    return false;
  }
  TritonNames n = tritonNames(o.signature.value_or(""), o.numWarps, o.numStages.value_or(3));
  std::string tag = n.hash + "_" + n.suffix;
  std::string header = withSuffix(o.tritonPrefix, "." + tag + ".h"), source = withSuffix(o.tritonPrefix, "." + tag + ".c");
  LauncherOptions lo;
  lo.name = (o.launcherName.empty() ? spec.kernel : o.launcherName) + "_" + tag;
  lo.language = LauncherLanguage::C;
  lo.split = true;
  size_t slash = header.find_last_of('/');
  lo.headerInclude = slash == std::string::npos ? header : header.substr(slash + 1);
  lo.generator = std::string("tlec ") + TLE_VERSION;
  if (!isValidLauncherName(lo.name)) {
    diags.error({}, "'" + lo.name + "' cannot name a launcher: give -on NAME, a C identifier");
    return false;
  }
  LauncherFiles files;
  std::vector<std::string> warnings;
  if (!generateLauncher({spec}, lo, files, error, warnings)) {
    diags.error({}, error);
    return false;
  }
  return writeFile(header, files.header, diags) && writeFile(source, files.source, diags);
}

} // namespace tle::driver
