// Writes typed C++ and C launchers (and dispatchers over several specialisations) for tlec modules.
#include "tle/Driver/Launcher.h"
#include "tle/Driver/GridExpr.h"
#include "tle/Driver/ShapePredicate.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace tle::driver {

namespace {

const std::set<std::string> &keywords() {
  static const std::set<std::string> k = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "restrict", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
      "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
      "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      "_Bool", "_Complex", "_Imaginary", "_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn",
      "_Static_assert", "_Thread_local"};
  return k;
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

/// A kernel parameter name as a C identifier that cannot clash with the launcher's own names.
std::string argIdent(const std::string &name) {
  static const std::set<std::string> own = {"stream", "grid", "device", "grid_x", "grid_y", "grid_z",
                                            "graph", "deps", "num_deps", "node"};
  if (keywords().count(name) || own.count(name) || name.rfind("tle_", 0) == 0)
    return name + "_";
  return name;
}

/// The C++ type of a launcher argument of Triton type `t`.
std::string cxxType(const std::string &t) {
  if (!t.empty() && t[0] == '*')
    return "tle::launcher::Pointer";
  static const std::map<std::string, std::string> m = {
      {"i1", "bool"},        {"i8", "int8_t"},     {"i16", "int16_t"},   {"i32", "int32_t"},
      {"i64", "int64_t"},    {"u8", "uint8_t"},    {"u16", "uint16_t"},  {"u32", "uint32_t"},
      {"u64", "uint64_t"},   {"fp16", "tle::rt::Half"}, {"bf16", "tle::rt::BFloat16"},
      {"fp32", "float"},     {"fp64", "double"}};
  auto it = m.find(t);
  return it == m.end() ? "" : it->second;
}

/// The C type of a launcher argument of Triton type `t` (fp16/bf16 as their uint16_t bits).
std::string cType(const std::string &t) {
  if (!t.empty() && t[0] == '*')
    return "uint64_t";
  if (t == "fp16" || t == "bf16")
    return "uint16_t";
  std::string c = cxxType(t);
  return c;
}

bool isIntegerType(const std::string &t) { return !t.empty() && (t[0] == 'i' || t[0] == 'u') && t != "i1"; }
bool isSignedType(const std::string &t) { return !t.empty() && t[0] == 'i'; }

std::string cString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// The bytes of `img` (plus a NUL for PTX) as a C initializer list, 20 per line.
std::string byteList(const LaunchImage &img) {
  std::string out;
  std::string bytes = img.bytes;
  if (img.ptx)
    bytes.push_back('\0');
  char buf[8];
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(buf, sizeof buf, "0x%02x,", static_cast<unsigned char>(bytes[i]));
    out += (i % 20 == 0 ? "\n    " : "") + std::string(buf);
  }
  return out + "\n";
}

/// `text` as a doc comment wrapped at 100 columns: `/// ...` lines (C++) or a `/** ... */` block (C).
std::string docComment(const std::string &text, bool cxx) {
  const std::string lead = cxx ? "/// " : " * ";
  std::vector<std::string> lines(1);
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (!lines.back().empty() && lead.size() + lines.back().size() + 1 + w.size() > 100)
      lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : " ") + w;
  }
  std::string out;
  if (cxx) {
    for (auto &l : lines)
      out += lead + l + "\n";
    return out;
  }
  if (lines.size() == 1 && lines[0].size() + 7 <= 100)
    return "/** " + lines[0] + " */\n";
  out = "/**\n";
  for (auto &l : lines)
    out += lead + l + "\n";
  return out + " */\n";
}

struct Generator {
  const std::vector<LaunchSpec> &specs;
  const LauncherOptions &o;
  std::string name, kernelName, prefix;
  bool cxx = true, dispatch = false, computedGrid = false;
  std::vector<std::string> idents; ///< argument identifiers
  std::vector<std::map<std::string, GridBinding>> bindings;
  std::vector<std::vector<std::string>> gridC; ///< per spec: 3 C expressions
  /// Per spec: its shape predicates and the index of the argument each reads.
  std::vector<std::vector<std::pair<ShapePredicate, size_t>>> preds;

  Generator(const std::vector<LaunchSpec> &s, const LauncherOptions &opt) : specs(s), o(opt) {}

  bool prepare(std::string &error, std::vector<std::string> &warnings) {
    if (specs.empty()) {
      error = "no specialisations to generate a launcher for";
      return false;
    }
    const LaunchSpec &first = specs[0];
    kernelName = first.kernel;
    name = o.name.empty() ? first.kernel : o.name;
    if (!isValidLauncherName(name)) {
      error = "'" + name + "' cannot name a launcher: use a C identifier that is not a keyword";
      return false;
    }
    cxx = o.language == LauncherLanguage::Cxx;
    dispatch = specs.size() > 1;
    prefix = (cxx ? "tle_launcher_" : "tle_launcher_c_") + name;
    for (auto &a : first.args) {
      if (cxxType(a.type).empty()) {
        error = "parameter '" + a.name + "' of " + first.kernel + " has type '" + a.type +
                "', which launchers do not support";
        return false;
      }
      idents.push_back(argIdent(a.name));
    }
    size_t withGrid = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
      const LaunchSpec &s = specs[i];
      if (s.images.empty()) {
        error = "specialisation " + std::to_string(i) + " has no image";
        return false;
      }
      bool same = s.args.size() == first.args.size();
      for (size_t a = 0; same && a < s.args.size(); ++a)
        same = s.args[a].name == first.args[a].name && s.args[a].type == first.args[a].type;
      if (!same) {
        error = "the specialisations do not share one launcher signature: spec 0 (" + first.images[0].origin +
                ") has (" + first.describe() + ") but spec " + std::to_string(i) + " (" + s.images[0].origin +
                ") has (" + s.describe() + ")";
        return false;
      }
      withGrid += !s.grid.empty();
    }
    if (withGrid && withGrid != specs.size()) {
      error = "give every specialisation a grid (-g) or none: " + std::to_string(withGrid) + " of " +
              std::to_string(specs.size()) + " have one";
      return false;
    }
    computedGrid = withGrid == specs.size();
    for (size_t i = 0; i < specs.size(); ++i)
      if (!prepareGrid(i, error) || !preparePredicates(i, error))
        return false;
    // A specialisation is unreachable when an earlier one accepts everything it accepts.
    for (size_t j = 1; j < specs.size(); ++j)
      for (size_t i = 0; i < j; ++i)
        if (implies(specs[j], specs[i])) {
          warnings.push_back("specialisation " + std::to_string(j) + " (" + specs[j].describe() +
                             ") is never chosen: specialisation " + std::to_string(i) + " (" + specs[i].describe() +
                             ") accepts every argument it accepts; list more specific specialisations first");
          break;
        }
    return true;
  }

  /// Parses the shape predicates of spec `i`; each must read an integer argument of the launcher.
  bool preparePredicates(size_t i, std::string &error) {
    std::vector<std::pair<ShapePredicate, size_t>> out;
    const std::vector<LaunchArg> &args = specs[0].args;
    for (const std::string &text : specs[i].when) {
      auto p = parseShapePredicate(text, error);
      if (!p) {
        error = "specialisation " + std::to_string(i) + ": " + error;
        return false;
      }
      size_t a = 0;
      while (a < args.size() && !(args[a].name == p->name && isIntegerType(args[a].type)))
        ++a;
      if (a == args.size()) {
        std::string ints;
        for (auto &arg : args)
          if (isIntegerType(arg.type))
            ints += (ints.empty() ? "" : ", ") + arg.name;
        error = "specialisation " + std::to_string(i) + ": shape predicate '" + text + "': '" + p->name +
                "' is not an integer argument of the launcher (its integer arguments: " +
                (ints.empty() ? "none" : ints) + ")";
        return false;
      }
      out.emplace_back(*p, a);
    }
    preds.push_back(std::move(out));
    return true;
  }

  /// True when every argument `later` accepts is accepted by `earlier`.
  static bool implies(const LaunchSpec &later, const LaunchSpec &earlier) {
    for (const std::string &w : earlier.when) // a predicate `later` lacks may reject what it accepts
      if (std::find(later.when.begin(), later.when.end(), w) == later.when.end())
        return false;
    for (size_t a = 0; a < later.args.size(); ++a) {
      const LaunchArg &l = later.args[a], &e = earlier.args[a];
      if (e.equalToOne && !l.equalToOne)
        return false;
      if (!e.equalToOne && e.divisibility > 1 && !(l.divisibility % e.divisibility == 0 && !l.equalToOne))
        return false;
    }
    return true;
  }

  bool prepareGrid(size_t i, std::string &error) {
    const LaunchSpec &s = specs[i];
    std::map<std::string, GridBinding> b;
    for (size_t a = 0; a < s.args.size(); ++a) {
      if (s.args[a].equalToOne)
        b[s.args[a].name] = {true, 1, ""};
      else if (isIntegerType(s.args[a].type))
        b[s.args[a].name] = {false, 0, ""};
    }
    for (auto &[n, v] : s.constexprs) {
      if (v == "true" || v == "false")
        b[n] = {true, v == "true", ""};
      else if (!v.empty() && v.find_first_not_of("-0123456789") == std::string::npos)
        b[n] = {true, std::stoll(v), ""};
    }
    bindings.push_back(b);
    std::vector<std::string> dims;
    if (!s.grid.empty()) {
      std::string text = s.grid[0] + ", " + s.grid[1] + ", " + s.grid[2];
      GridError ge;
      auto g = parseGrid(text, &ge);
      if (!g) {
        error = "grid '" + text + "' of specialisation " + std::to_string(i) + ": " + ge.message;
        return false;
      }
      if (auto bad = checkGridNames(*g, b, "")) {
        error = "grid '" + text + "' of specialisation " + std::to_string(i) + ": " + bad->message;
        return false;
      }
      // Parameter names become the (possibly renamed) argument identifiers.
      std::map<std::string, GridBinding> renamed = b;
      for (size_t a = 0; a < s.args.size(); ++a)
        if (renamed.count(s.args[a].name))
          renamed[s.args[a].name].ident = idents[a];
      for (size_t d = 0; d < 3; ++d) {
        std::string c = gridToC(*g->dims[d], renamed, "&tle_ctx");
        dims.push_back(c);
      }
    }
    gridC.push_back(dims);
    return true;
  }

  std::string specFn(size_t i) const { return dispatch ? name + "_spec" + std::to_string(i) : name; }
  std::string gridText(size_t i) const {
    const LaunchSpec &s = specs[i];
    return s.grid.empty() ? "" : s.grid[0] + ", " + s.grid[1] + ", " + s.grid[2];
  }
  std::string label(size_t i) const {
    return (dispatch ? "spec " + std::to_string(i) + " " : "") + "[" + specs[i].describe() + "]";
  }

  // ---- parameter lists ---------------------------------------------------------------------------

  std::string params(bool withGrid) const {
    std::string s = cxx ? "tle::rt::Stream &stream" : "int device, void *stream";
    if (withGrid)
      s += cxx ? ", tle::rt::Grid grid" : ", unsigned grid_x, unsigned grid_y, unsigned grid_z";
    for (size_t a = 0; a < idents.size(); ++a)
      s += ", " + (cxx ? cxxType(specs[0].args[a].type) : cType(specs[0].args[a].type)) + " " + idents[a];
    return s;
  }
  /// params() of the raw-stream overload: a CUstream / cudaStream_t instead of a tle::rt::Stream.
  std::string rawParams(bool withGrid) const {
    return "CUstream_st *stream" + params(withGrid).substr(std::string("tle::rt::Stream &stream").size());
  }
  /// params() of a graph-node function: the graph and its dependencies, the device unless the
  /// graph is a tle::rt::Graph (C++), the grid when `withGrid`, the arguments; C adds the node's
  /// out-parameter last.
  std::string nodeParams(bool withGrid, bool rawGraph = true) const {
    std::string head = !cxx       ? "void *graph, void *const *deps, size_t num_deps, int device"
                       : rawGraph ? "CUgraph_st *graph, tle::rt::GraphDeps deps, const tle::rt::Device &device"
                                  : "tle::rt::Graph &graph, tle::rt::GraphDeps deps";
    std::string launch = params(withGrid);
    std::string rest = launch.substr(std::string(cxx ? "tle::rt::Stream &stream" : "int device, void *stream").size());
    return head + rest + (cxx ? "" : ", void **node");
  }
  /// The arguments a graph-node function forwards (`lead` names the graph, dependencies and device).
  std::string nodeForward(bool withGrid, const std::string &lead) const {
    std::string s = lead;
    if (withGrid)
      s += cxx ? ", grid" : ", grid_x, grid_y, grid_z";
    for (auto &id : idents)
      s += ", " + id;
    return s + (cxx ? "" : ", node");
  }
  std::string argParams() const {
    std::string s;
    for (size_t a = 0; a < idents.size(); ++a)
      s += (a ? ", " : "") + (cxx ? cxxType(specs[0].args[a].type) : cType(specs[0].args[a].type)) + " " + idents[a];
    return s.empty() ? (cxx ? "" : "void") : s;
  }
  std::string forward(bool withGrid) const {
    std::string s = cxx ? "stream" : "device, stream";
    if (withGrid)
      s += cxx ? ", grid" : ", grid_x, grid_y, grid_z";
    for (auto &id : idents)
      s += ", " + id;
    return s;
  }
  std::string dispatchArgs() const {
    std::string s;
    for (size_t a = 0; a < idents.size(); ++a) {
      const std::string &t = specs[0].args[a].type;
      std::string v;
      if (cxx)
        v = "tle::launcher::dispatchArg(" + idents[a] + ")";
      else if (t[0] == '*')
        v = "tle_launcher_arg_pointer(" + idents[a] + ")";
      else if (isIntegerType(t))
        v = std::string(isSignedType(t) ? "tle_launcher_arg_signed(" : "tle_launcher_arg_unsigned(") + idents[a] + ")";
      else if (t == "i1")
        v = "tle_launcher_arg_unsigned(" + idents[a] + ")";
      else
        v = "tle_launcher_arg_float(" + idents[a] + ")";
      s += v + ", ";
    }
    return s + (cxx ? "tle_launcher_arg{}" : "tle_launcher_arg_other()"); // sentinel: never empty
  }
  std::string nargs() const { return std::to_string(idents.size()); }

  // ---- documentation -------------------------------------------------------------------------------

  std::string specComment(size_t i) const {
    const LaunchSpec &s = specs[i];
    std::ostringstream c;
    c << "//   " << (dispatch ? "spec " + std::to_string(i) + ": " : "") << s.kernel << "(" << s.describe() << ")\n";
    std::string req;
    for (auto &a : s.args) {
      if (a.equalToOne)
        req += (req.empty() ? "" : ", ") + a.name + " == 1";
      else if (a.divisibility > 1)
        req += (req.empty() ? "" : ", ") + a.name +
               (a.type[0] == '*' ? " " + std::to_string(a.divisibility) + "-byte aligned"
                                 : " % " + std::to_string(a.divisibility) + " == 0");
    }
    for (auto &[p, a] : preds[i])
      req += (req.empty() ? "" : ", ") + p.text;
    c << "//     requires: " << (req.empty() ? "nothing" : req) << "\n";
    if (!s.grid.empty())
      c << "//     grid: (" << gridText(i) << ")\n";
    c << "//     images:";
    for (auto &img : s.images)
      c << " " << img.arch << (img.ptx ? " PTX" : " cubin") << " (" << img.bytes.size() << " bytes)";
    c << "\n";
    return c.str();
  }

  std::string banner(const char *what) const {
    std::ostringstream h;
    h << "// " << name << ": " << what << " for the TLE kernel " << kernelName << ", generated by "
      << (o.generator.empty() ? "tlec" : o.generator) << "; do not edit.\n//\n";
    h << "// " << (dispatch ? "Dispatches over these specialisations, first match wins:\n" : "Specialisation:\n");
    for (size_t i = 0; i < specs.size(); ++i)
      h << specComment(i);
    return h.str();
  }

  // ---- C++ -----------------------------------------------------------------------------------------

  std::string cxxDeclarations() const {
    std::ostringstream h;
    std::string guard = "TLE_LAUNCHER_" + name + "_H";
    h << banner("typed C++ launcher");
    h << "//\n// Definitions: " << (o.split ? "in the generated source file; link it (or the library it is in)."
                                           : "compiled in the one source file that defines "
                                             "TLE_LAUNCHER_IMPLEMENTATION before including this header.")
      << "\n// Errors are thrown as tle::rt exceptions (tle/Runtime/Runtime.h); see docs/aot.md.\n";
    h << "#ifndef " << guard << "\n#define " << guard << "\n\n#include \"tle/Runtime/Launcher.h\"\n\n#include <cstdint>\n\n";
    auto declPair = [&](const std::string &fn, const std::string &what, size_t specForGrid, bool any) {
      if (computedGrid) {
        h << docComment("Launches " + what + " on `stream` with the grid (" +
                            (any ? "of the chosen specialisation" : gridText(specForGrid)) +
                            ") computed from the arguments; a zero dimension launches nothing. Throws "
                            "tle::rt::ArgumentError when an argument breaks a requirement or the grid is invalid, "
                            "and what tle::rt::Kernel::launch throws.",
                        true);
        h << "void " << fn << "(" << params(false) << ");\n";
      }
      h << docComment("Launches " + what + " on `stream` with an explicit `grid` (a zero dimension launches "
                      "nothing). Throws as the launch with a computed grid.",
                      true);
      h << "void " << fn << "(" << params(true) << ");\n";
      h << docComment("The launches above on a raw CUstream / cudaStream_t (nullptr: the legacy default stream); "
                      "the device is the stream's (tle::rt::Device::ofStream).",
                      true);
      if (computedGrid)
        h << "void " << fn << "(" << rawParams(false) << ");\n";
      h << "void " << fn << "(" << rawParams(true) << ");\n";
      h << docComment("Adds the launch above as a kernel node of CUDA graph `graph` (a CUgraph / cudaGraph_t) on "
                      "`device`, after `deps`, and returns the node; a zero grid dimension adds an empty node with "
                      "the same dependencies instead. The kernel" + std::string(dispatch ? "s" : "") +
                          " must be loaded first (" + name +
                          "_load(device)): otherwise throws tle::rt::Error naming it. Throws as the launch "
                          "otherwise.",
                      true);
      if (computedGrid)
        h << "tle::rt::GraphNode " << fn << "_node(" << nodeParams(false) << ");\n";
      h << "tle::rt::GraphNode " << fn << "_node(" << nodeParams(true) << ");\n";
      h << docComment("The same on a tle::rt::Graph (Graph::create), on the graph's device.", true);
      if (computedGrid)
        h << "tle::rt::GraphNode " << fn << "_node(" << nodeParams(false, false) << ");\n";
      h << "tle::rt::GraphNode " << fn << "_node(" << nodeParams(true, false) << ");\n";
    };
    if (dispatch) {
      declPair(name, kernelName + " through the first specialisation whose requirements the arguments meet (the "
                         "ArgumentError of a failed dispatch names every specialisation and the argument it rejects)",
               0, true);
      h << "\n";
    }
    for (size_t i = 0; i < specs.size(); ++i) {
      declPair(specFn(i), dispatch ? "specialisation " + std::to_string(i) + " of " + kernelName : kernelName, i, false);
      h << "\n";
    }
    h << docComment("The index of the specialisation " + name +
                        " launches for these arguments, or -1 when none accepts them (needs no GPU).",
                    true);
    h << "int " << name << "_select(" << argParams() << ");\n\n";
    h << docComment("The same index, with `*why` (when not null) set to which specialisation and why: the "
                    "reason each earlier one rejects the arguments (a broken promise or a false shape "
                    "predicate), e.g. \"" + name + ": spec 1 [...] chosen; spec 0 [...] rejected: 'M' (= 100) breaks "
                    "M <= 64\".",
                    true);
    h << "int " << name << "_select(" << argParamsThen("std::string *why") << ");\n\n";
    h << "/// Loads the kernel" << (dispatch ? "s" : "") << " on `device` now instead of at the first launch.\n";
    h << "void " << name << "_load(const tle::rt::Device &device);\n\n";
    h << docComment(std::string("Releases the loaded kernel") + (dispatch ? "s" : "") +
                        "; not while other threads launch through them.",
                    true);
    h << "void " << name << "_unload();\n\n";
    h << "#endif // " << guard << "\n";
    return h.str();
  }

  std::string cxxDefinitions() const {
    std::ostringstream d;
    d << "namespace {\nnamespace " << prefix << " {\n\n";
    for (size_t i = 0; i < specs.size(); ++i) {
      const LaunchSpec &s = specs[i];
      std::string is = std::to_string(i);
      d << "// " << label(i) << "\n";
      for (size_t m = 0; m < s.images.size(); ++m)
        d << "__attribute__((aligned(64))) const unsigned char image" << is << "_" << m << "[] = {"
          << byteList(s.images[m]) << "};\n";
      d << "const tle_launcher_image images" << is << "[] = {\n";
      for (size_t m = 0; m < s.images.size(); ++m)
        d << "    {" << cString(s.images[m].arch) << ", image" << is << "_" << m << ", sizeof(image" << is << "_" << m
          << ")" << (s.images[m].ptx ? " - 1" : "") << ", " << s.images[m].ptx << "},\n";
      d << "};\n";
      d << "tle::launcher::LazyKernel kernel" << is << "(" << cString(dispatch ? name + " (spec " + is + ")" : name)
        << ", " << cString(s.kernel) << ", images" << is << ", " << s.images.size() << ", "
        << cString(name + "_load") << ");\n";
      d << requirementTable(i) << "\n";
    }
    d << "const tle_launcher_spec specs[] = {\n";
    for (size_t i = 0; i < specs.size(); ++i)
      d << "    {" << cString(label(i)) << ", requirements" << i << predicateFields(i, "predicates") << "},\n";
    d << "};\n\n} // namespace " << prefix << "\n} // namespace\n\n";

    for (size_t i = 0; i < specs.size(); ++i) {
      const LaunchSpec &s = specs[i];
      std::string fn = specFn(i), is = std::to_string(i);
      d << "void " << fn << "(" << params(true) << ") {\n";
      d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
      d << "  tle::launcher::requireSpec(" << cString(name) << ", " << prefix << "::specs[" << i << "], tle_args, " << nargs()
        << ");\n";
      d << "  if (tle::launcher::emptyGrid(grid))\n    return;\n";
      d << "  " << prefix << "::kernel" << is << ".get(stream).launch(grid, stream";
      for (size_t a = 0; a < s.args.size(); ++a)
        if (!s.args[a].equalToOne)
          d << ", " << idents[a] << (s.args[a].type[0] == '*' ? ".ptr()" : "");
      d << ");\n}\n\n";
      if (computedGrid) {
        d << "void " << fn << "(" << params(false) << ") {\n";
        d << "  tle_launcher_grid_ctx tle_ctx{};\n";
        d << "  const int64_t tle_x = " << gridC[i][0] << ";\n";
        d << "  const int64_t tle_y = " << gridC[i][1] << ";\n";
        d << "  const int64_t tle_z = " << gridC[i][2] << ";\n";
        d << "  " << fn << "(stream, tle::launcher::makeGrid(" << cString(name) << ", " << cString(gridText(i))
          << ", tle_ctx, tle_x, tle_y, tle_z)";
        for (auto &id : idents)
          d << ", " << id;
        d << ");\n}\n\n";
      }
      cxxNodeDefinitions(d, i);
    }
    auto dispatcher = [&](bool withGrid) {
      d << "void " << name << "(" << params(withGrid) << ") {\n";
      d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
      d << "  switch (tle::launcher::selectOrThrow(" << cString(name) << ", " << cString(kernelName) << ", " << prefix
        << "::specs, " << specs.size() << ", tle_args, " << nargs() << ")) {\n";
      for (size_t i = 0; i < specs.size(); ++i)
        d << "  " << (i + 1 == specs.size() ? "default" : "case " + std::to_string(i)) << ":\n    return "
          << specFn(i) << "(" << forward(withGrid) << ");\n";
      d << "  }\n}\n\n";
    };
    if (dispatch) {
      if (computedGrid)
        dispatcher(false);
      dispatcher(true);
      if (computedGrid)
        cxxNodeDispatcher(d, false);
      cxxNodeDispatcher(d, true);
    }
    // The tle::rt::Graph overloads of the graph-node functions forward with the graph's device.
    for (size_t i = 0; i <= specs.size(); ++i) {
      if (i == specs.size() && !dispatch)
        break;
      std::string fn = (i == specs.size() ? name : specFn(i)) + "_node";
      for (bool withGrid : {false, true}) {
        if (!withGrid && !computedGrid)
          continue;
        d << "tle::rt::GraphNode " << fn << "(" << nodeParams(withGrid, false) << ") {\n";
        d << "  return " << fn << "(" << nodeForward(withGrid, "graph.graph(), deps, graph.device()") << ");\n}\n\n";
      }
    }
    // The raw-stream overloads wrap the stream (finding its device once) and forward.
    auto raw = [&](const std::string &fn, bool withGrid) {
      d << "void " << fn << "(" << rawParams(withGrid) << ") {\n";
      d << "  tle::rt::Stream tle_stream = tle::rt::Stream::wrap(stream);\n";
      d << "  " << fn << "(tle_stream" << forward(withGrid).substr(std::string("stream").size()) << ");\n}\n\n";
    };
    for (size_t i = 0; i <= specs.size(); ++i) {
      if (i == specs.size() && !dispatch)
        break;
      std::string fn = i == specs.size() ? name : specFn(i);
      if (computedGrid)
        raw(fn, false);
      raw(fn, true);
    }
    d << "int " << name << "_select(" << argParams() << ") {\n";
    d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
    d << "  return tle_launcher_select(" << prefix << "::specs, " << specs.size() << ", tle_args, " << nargs() << ");\n}\n\n";
    d << "int " << name << "_select(" << argParamsThen("std::string *why") << ") {\n";
    d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
    d << "  int tle_chosen = -1;\n";
    d << "  std::string tle_why = tle::launcher::explainChoice(" << cString(name) << ", " << cString(kernelName)
      << ", " << prefix << "::specs, " << specs.size() << ", tle_args, " << nargs() << ", &tle_chosen);\n";
    d << "  if (why)\n    *why = tle_why;\n  return tle_chosen;\n}\n\n";
    d << "void " << name << "_load(const tle::rt::Device &device) {\n";
    for (size_t i = 0; i < specs.size(); ++i)
      d << "  " << prefix << "::kernel" << i << ".get(device);\n";
    d << "}\n\nvoid " << name << "_unload() {\n";
    for (size_t i = 0; i < specs.size(); ++i)
      d << "  " << prefix << "::kernel" << i << ".unload();\n";
    d << "}\n";
    return d.str();
  }

  /// The C++ graph-node functions of spec `i`: checked as the launch, an empty node for an empty
  /// grid, else a kernel node of the kernel already loaded on `device`.
  void cxxNodeDefinitions(std::ostringstream &d, size_t i) const {
    const LaunchSpec &s = specs[i];
    std::string fn = specFn(i) + "_node", is = std::to_string(i);
    d << "tle::rt::GraphNode " << fn << "(" << nodeParams(true) << ") {\n";
    d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
    d << "  tle::launcher::requireSpec(" << cString(name) << ", " << prefix << "::specs[" << i << "], tle_args, "
      << nargs() << ");\n";
    d << "  if (tle::launcher::emptyGrid(grid))\n    return tle::rt::addEmptyGraphNode(graph, deps);\n";
    d << "  return " << prefix << "::kernel" << is << ".loaded(device).addNode(grid, graph, deps";
    for (size_t a = 0; a < s.args.size(); ++a)
      if (!s.args[a].equalToOne)
        d << ", " << idents[a] << (s.args[a].type[0] == '*' ? ".ptr()" : "");
    d << ");\n}\n\n";
    if (!computedGrid)
      return;
    d << "tle::rt::GraphNode " << fn << "(" << nodeParams(false) << ") {\n";
    d << "  tle_launcher_grid_ctx tle_ctx{};\n";
    for (int k = 0; k < 3; ++k)
      d << "  const int64_t tle_" << "xyz"[k] << " = " << gridC[i][k] << ";\n";
    d << "  return " << fn << "(graph, deps, device, tle::launcher::makeGrid(" << cString(name) << ", "
      << cString(gridText(i)) << ", tle_ctx, tle_x, tle_y, tle_z)";
    for (auto &id : idents)
      d << ", " << id;
    d << ");\n}\n\n";
  }

  /// The C++ dispatcher of the graph-node functions (a raw CUgraph and a device).
  void cxxNodeDispatcher(std::ostringstream &d, bool withGrid) const {
    d << "tle::rt::GraphNode " << name << "_node(" << nodeParams(withGrid) << ") {\n";
    d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
    d << "  switch (tle::launcher::selectOrThrow(" << cString(name) << ", " << cString(kernelName) << ", " << prefix
      << "::specs, " << specs.size() << ", tle_args, " << nargs() << ")) {\n";
    for (size_t i = 0; i < specs.size(); ++i)
      d << "  " << (i + 1 == specs.size() ? "default" : "case " + std::to_string(i)) << ":\n    return " << specFn(i)
        << "_node(" << nodeForward(withGrid, "graph, deps, device") << ");\n";
    d << "  }\n}\n\n";
  }

  /// The predicate fields of spec `i`'s tle_launcher_spec initialiser (none without predicates).
  std::string predicateFields(size_t i, const std::string &table) const {
    if (preds[i].empty())
      return cxx ? ", nullptr, 0" : ", NULL, 0";
    return ", " + table + std::to_string(i) + ", " + std::to_string(preds[i].size());
  }

  /// The parameters of NAME_select's explaining form: the arguments, then `tail`.
  std::string argParamsThen(const std::string &tail) const {
    std::string a = argParams();
    return a.empty() || a == "void" ? tail : a + ", " + tail;
  }

  std::string requirementTable(size_t i) const {
    std::ostringstream d;
    const LaunchSpec &s = specs[i];
    d << (cxx ? "" : "static ") << "const tle_launcher_requirement " << (cxx ? "" : prefix + "_") << "requirements" << i
      << "[] = {\n";
    for (auto &a : s.args) {
      const char *kind = a.equalToOne ? "TLE_LAUNCHER_EQUAL_TO_ONE"
                         : a.divisibility > 1 && (a.type[0] == '*' || isIntegerType(a.type)) ? "TLE_LAUNCHER_MULTIPLE_OF"
                                                                                               : "TLE_LAUNCHER_ANY";
      d << "    {" << cString(a.name) << ", " << kind << ", " << (a.equalToOne ? 1 : a.divisibility) << "},\n";
    }
    d << "    {" << (cxx ? "nullptr" : "NULL") << ", TLE_LAUNCHER_ANY, 0}, /* sentinel */\n};\n";
    if (!preds[i].empty()) {
      d << (cxx ? "" : "static ") << "const tle_launcher_predicate " << (cxx ? "" : prefix + "_") << "predicates" << i
        << "[] = {\n";
      for (auto &[p, a] : preds[i])
        d << "    {" << cString(p.text) << ", " << a << ", " << p.opMacro() << ", INT64_C(" << p.value << "), INT64_C("
          << p.modulus << ")},\n";
      d << "};\n";
    }
    return d.str();
  }

  // ---- C -------------------------------------------------------------------------------------------

  std::string cDeclarations() const {
    std::ostringstream h;
    std::string guard = "TLE_LAUNCHER_C_" + name + "_H";
    h << banner("C launcher");
    h << "//\n// Definitions: " << (o.split ? "in the generated source file; link it (or the library it is in)."
                                           : "compiled in the one source file that defines "
                                             "TLE_LAUNCHER_IMPLEMENTATION before including this header.")
      << "\n// Every function returns a tle_rt_status; on failure tle_launcher_last_error() says why. Pointers are\n"
      << "// CUdeviceptr values, fp16/bf16 scalars their uint16_t bits, `stream` a CUstream (NULL: the legacy\n"
      << "// default stream) of device `device`. See docs/aot.md.\n";
    h << "#ifndef " << guard << "\n#define " << guard << "\n\n#include \"tle/Runtime/tle_launcher.h\"\n\n"
      << "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
    auto declPair = [&](const std::string &fn, const std::string &what) {
      if (computedGrid) {
        h << docComment("Launches " + what + " with the grid computed from the arguments (a zero dimension "
                                             "launches nothing).",
                        false);
        h << "tle_rt_status " << fn << "(" << params(false) << ");\n";
      }
      h << docComment("Launches " + what + " on grid (grid_x, grid_y, grid_z) (a zero dimension launches nothing).",
                      false);
      h << "tle_rt_status " << fn << "_grid(" << params(true) << ");\n";
      h << docComment("Adds the launch" + std::string(computedGrid ? "es" : "") + " above as a kernel node of CUDA "
                      "graph `graph` (a CUgraph / cudaGraph_t) after the `num_deps` nodes at `deps`, on device "
                      "`device`; the new CUgraphNode into *node (a zero grid dimension adds an empty node with those "
                      "dependencies). The kernel" + std::string(dispatch ? "s" : "") + " must be loaded first (" +
                          name + "_load(device)); otherwise TLE_RT_ERROR_INVALID_ARGUMENT naming it.",
                      false);
      if (computedGrid)
        h << "tle_rt_status " << fn << "_node(" << nodeParams(false) << ");\n";
      h << "tle_rt_status " << fn << "_node_grid(" << nodeParams(true) << ");\n";
    };
    if (dispatch) {
      declPair(name, kernelName + " through the first specialisation whose requirements the arguments meet");
      h << "\n";
    }
    for (size_t i = 0; i < specs.size(); ++i) {
      declPair(specFn(i), dispatch ? "specialisation " + std::to_string(i) + " of " + kernelName : kernelName);
      h << "\n";
    }
    h << docComment("The index of the specialisation " + name + " launches for these arguments, or -1 (needs no GPU).",
                    false);
    h << "int " << name << "_select(" << argParams() << ");\n\n";
    h << docComment("The same index, with `why` (`cap` bytes) set to which specialisation and why, as the C++ "
                    "launcher's " + name + "_select(..., std::string *why).",
                    false);
    h << "int " << name << "_select_why(char *why, size_t cap" << (idents.empty() ? "" : ", " + argParams())
      << ");\n\n";
    h << docComment(std::string("Loads the kernel") + (dispatch ? "s" : "") +
                        " on device `device` now instead of at the first launch.",
                    false);
    h << "tle_rt_status " << name << "_load(int device);\n\n";
    h << docComment(std::string("Releases the loaded kernel") + (dispatch ? "s" : "") +
                        "; not while other threads launch through them.",
                    false);
    h << "void " << name << "_unload(void);\n\n";
    h << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* " << guard << " */\n";
    return h.str();
  }

  std::string cDefinitions() const {
    std::ostringstream d;
    for (size_t i = 0; i < specs.size(); ++i) {
      const LaunchSpec &s = specs[i];
      std::string is = std::to_string(i), img = prefix + "_image" + is + "_";
      d << "/* " << label(i) << " */\n";
      for (size_t m = 0; m < s.images.size(); ++m)
        d << "static __attribute__((aligned(64))) const unsigned char " << img << m << "[] = {" << byteList(s.images[m])
          << "};\n";
      d << "static const tle_launcher_image " << prefix << "_images" << is << "[] = {\n";
      for (size_t m = 0; m < s.images.size(); ++m)
        d << "    {" << cString(s.images[m].arch) << ", " << img << m << ", sizeof(" << img << m << ")"
          << (s.images[m].ptx ? " - 1" : "") << ", " << s.images[m].ptx << "},\n";
      d << "};\n";
      d << "static tle_launcher_lazy_kernel " << prefix << "_kernel" << is << " = TLE_LAUNCHER_LAZY_KERNEL_INIT("
        << cString(s.kernel) << ", " << prefix << "_images" << is << ", " << s.images.size() << ");\n";
      d << requirementTable(i) << "\n";
    }
    d << "static const tle_launcher_spec " << prefix << "_specs[] = {\n";
    for (size_t i = 0; i < specs.size(); ++i)
      d << "    {" << cString(label(i)) << ", " << prefix << "_requirements" << i
        << predicateFields(i, prefix + "_predicates") << "},\n";
    d << "};\n\n";

    for (size_t i = 0; i < specs.size(); ++i) {
      const LaunchSpec &s = specs[i];
      std::string fn = specFn(i), is = std::to_string(i);
      std::string who = cString(dispatch ? name + " (spec " + is + ")" : name);
      d << "tle_rt_status " << fn << "_grid(" << params(true) << ") {\n";
      d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
      d << "  tle_rt_kernel tle_kernel;\n  tle_rt_status tle_status;\n";
      d << "  size_t tle_count = 0;\n";
      d << "  void *tle_params[" << (s.args.size() + 1) << "];\n";
      d << "  tle_status = tle_launcher_require_spec(" << who << ", &" << prefix << "_specs[" << i << "], tle_args, "
        << nargs() << ");\n";
      d << "  if (tle_status != TLE_RT_SUCCESS)\n    return tle_status;\n";
      d << "  if (grid_x == 0 || grid_y == 0 || grid_z == 0)\n    return TLE_RT_SUCCESS;\n";
      d << "  tle_status = tle_launcher_get_kernel_for_stream(&" << prefix << "_kernel" << is << ", " << who << ", "
        << cString(name + "_load") << ", device, stream, &tle_kernel);\n";
      d << "  if (tle_status != TLE_RT_SUCCESS)\n    return tle_status;\n";
      for (size_t a = 0; a < s.args.size(); ++a)
        if (!s.args[a].equalToOne)
          d << "  tle_params[tle_count++] = &" << idents[a] << ";\n";
      d << "  tle_status = tle_rt_launch(tle_kernel, grid_x, grid_y, grid_z, stream, tle_params, tle_count);\n";
      d << "  return tle_status == TLE_RT_SUCCESS ? tle_status : tle_launcher_fail_rt(" << who << ", tle_status);\n}\n\n";
      if (computedGrid) {
        d << "tle_rt_status " << fn << "(" << params(false) << ") {\n";
        d << "  tle_launcher_grid_ctx tle_ctx = {0};\n  int64_t tle_dims[3];\n  unsigned tle_grid[3];\n";
        for (int k = 0; k < 3; ++k)
          d << "  tle_dims[" << k << "] = " << gridC[i][k] << ";\n";
        d << "  if (!tle_launcher_grid_or_fail(&tle_ctx, tle_dims, " << cString(name) << ", " << cString(gridText(i))
          << ", tle_grid))\n    return TLE_RT_ERROR_INVALID_ARGUMENT;\n";
        d << "  return " << fn << "_grid(device, stream, tle_grid[0], tle_grid[1], tle_grid[2]";
        for (auto &id : idents)
          d << ", " << id;
        d << ");\n}\n\n";
      }
      cNodeDefinitions(d, i);
    }
    auto dispatcher = [&](bool withGrid) {
      d << "tle_rt_status " << name << (withGrid ? "_grid" : "") << "(" << params(withGrid) << ") {\n";
      d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
      d << "  switch (tle_launcher_select_or_fail(" << cString(name) << ", " << cString(kernelName) << ", " << prefix
        << "_specs, " << specs.size() << ", tle_args, " << nargs() << ")) {\n";
      for (size_t i = 0; i < specs.size(); ++i)
        d << "  case " << i << ":\n    return " << specFn(i) << (withGrid ? "_grid" : "") << "(" << forward(withGrid)
          << ");\n";
      d << "  default:\n    return TLE_RT_ERROR_INVALID_ARGUMENT;\n  }\n}\n\n";
    };
    if (dispatch) {
      if (computedGrid)
        dispatcher(false);
      dispatcher(true);
      for (bool withGrid : {false, true}) {
        if (!withGrid && !computedGrid)
          continue;
        std::string suffix = withGrid ? "_node_grid" : "_node";
        d << "tle_rt_status " << name << suffix << "(" << nodeParams(withGrid) << ") {\n";
        d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
        d << "  switch (tle_launcher_select_or_fail(" << cString(name) << ", " << cString(kernelName) << ", " << prefix
          << "_specs, " << specs.size() << ", tle_args, " << nargs() << ")) {\n";
        for (size_t i = 0; i < specs.size(); ++i)
          d << "  case " << i << ":\n    return " << specFn(i) << suffix << "("
            << nodeForward(withGrid, "graph, deps, num_deps, device") << ");\n";
        d << "  default:\n    return TLE_RT_ERROR_INVALID_ARGUMENT;\n  }\n}\n\n";
      }
    }
    d << "int " << name << "_select(" << argParams() << ") {\n";
    d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
    d << "  return tle_launcher_select(" << prefix << "_specs, " << specs.size() << ", tle_args, " << nargs()
      << ");\n}\n\n";
    d << "int " << name << "_select_why(char *why, size_t cap" << (idents.empty() ? "" : ", " + argParams()) << ") {\n";
    d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
    d << "  return tle_launcher_explain_choice(why, cap, " << cString(name) << ", " << cString(kernelName) << ", "
      << prefix << "_specs, " << specs.size() << ", tle_args, " << nargs() << ");\n}\n\n";
    d << "tle_rt_status " << name << "_load(int device) {\n  tle_rt_kernel tle_kernel;\n  tle_rt_status tle_status;\n";
    for (size_t i = 0; i < specs.size(); ++i)
      d << "  if ((tle_status = tle_launcher_get_kernel(&" << prefix << "_kernel" << i << ", "
        << cString(dispatch ? name + " (spec " + std::to_string(i) + ")" : name)
        << ", device, &tle_kernel)) != TLE_RT_SUCCESS)\n    return tle_status;\n";
    d << "  return TLE_RT_SUCCESS;\n}\n\nvoid " << name << "_unload(void) {\n";
    for (size_t i = 0; i < specs.size(); ++i)
      d << "  tle_launcher_unload(&" << prefix << "_kernel" << i << ");\n";
    d << "}\n";
    return d.str();
  }

  /// The C graph-node functions of spec `i` (as cxxNodeDefinitions, with status codes).
  void cNodeDefinitions(std::ostringstream &d, size_t i) const {
    const LaunchSpec &s = specs[i];
    std::string fn = specFn(i), is = std::to_string(i);
    std::string who = cString(dispatch ? name + " (spec " + is + ")" : name);
    d << "tle_rt_status " << fn << "_node_grid(" << nodeParams(true) << ") {\n";
    d << "  const tle_launcher_arg tle_args[] = {" << dispatchArgs() << "};\n";
    d << "  tle_rt_kernel tle_kernel;\n  tle_rt_status tle_status;\n  size_t tle_count = 0;\n";
    d << "  void *tle_params[" << (s.args.size() + 1) << "];\n";
    d << "  tle_status = tle_launcher_require_spec(" << who << ", &" << prefix << "_specs[" << i << "], tle_args, "
      << nargs() << ");\n";
    d << "  if (tle_status != TLE_RT_SUCCESS)\n    return tle_status;\n";
    d << "  if (grid_x == 0 || grid_y == 0 || grid_z == 0) {\n";
    d << "    tle_status = tle_rt_graph_add_empty_node(graph, deps, num_deps, node);\n";
    d << "    return tle_status == TLE_RT_SUCCESS ? tle_status : tle_launcher_fail_rt(" << who << ", tle_status);\n  }\n";
    d << "  tle_status = tle_launcher_get_loaded_kernel(&" << prefix << "_kernel" << is << ", " << who << ", "
      << cString(name + "_load") << ", device, &tle_kernel);\n";
    d << "  if (tle_status != TLE_RT_SUCCESS)\n    return tle_status;\n";
    for (size_t a = 0; a < s.args.size(); ++a)
      if (!s.args[a].equalToOne)
        d << "  tle_params[tle_count++] = &" << idents[a] << ";\n";
    d << "  tle_status = tle_rt_graph_add_kernel_node(tle_kernel, graph, deps, num_deps, grid_x, grid_y, grid_z, "
         "tle_params, tle_count, node);\n";
    d << "  return tle_status == TLE_RT_SUCCESS ? tle_status : tle_launcher_fail_rt(" << who << ", tle_status);\n}\n\n";
    if (!computedGrid)
      return;
    d << "tle_rt_status " << fn << "_node(" << nodeParams(false) << ") {\n";
    d << "  tle_launcher_grid_ctx tle_ctx = {0};\n  int64_t tle_dims[3];\n  unsigned tle_grid[3];\n";
    for (int k = 0; k < 3; ++k)
      d << "  tle_dims[" << k << "] = " << gridC[i][k] << ";\n";
    d << "  if (!tle_launcher_grid_or_fail(&tle_ctx, tle_dims, " << cString(name) << ", " << cString(gridText(i))
      << ", tle_grid))\n    return TLE_RT_ERROR_INVALID_ARGUMENT;\n";
    d << "  return " << fn << "_node_grid(graph, deps, num_deps, device, tle_grid[0], tle_grid[1], tle_grid[2]";
    for (auto &id : idents)
      d << ", " << id;
    d << ", node);\n}\n\n";
  }

  void emit(LauncherFiles &out) const {
    std::string decls = cxx ? cxxDeclarations() : cDeclarations();
    std::string defs = cxx ? cxxDefinitions() : cDefinitions();
    std::string implGuard = std::string(cxx ? "TLE_LAUNCHER_" : "TLE_LAUNCHER_C_") + name + "_IMPL";
    if (!o.split) {
      out.header = decls + "\n#if defined(TLE_LAUNCHER_IMPLEMENTATION) && !defined(" + implGuard + ")\n#define " +
                   implGuard + "\n\n" + defs + "\n#endif // " + implGuard + "\n";
      out.source.clear();
      return;
    }
    out.header = decls;
    std::string comment = cxx ? "// " : "/* ";
    std::string end = cxx ? "" : " */";
    out.source = comment + name + ": definitions of the " + (cxx ? "C++" : "C") + " launcher declared in " +
                 o.headerInclude + " (generated by " + (o.generator.empty() ? "tlec" : o.generator) +
                 "; do not edit)." + end + "\n#include \"" + o.headerInclude + "\"\n\n" + defs;
  }
};

} // namespace

bool isValidLauncherName(const std::string &name) { return isIdentifier(name) && !keywords().count(name); }

bool generateLauncher(const std::vector<LaunchSpec> &specs, const LauncherOptions &options, LauncherFiles &out,
                      std::string &error, std::vector<std::string> &warnings) {
  Generator g(specs, options);
  if (!g.prepare(error, warnings))
    return false;
  g.emit(out);
  return true;
}

} // namespace tle::driver
