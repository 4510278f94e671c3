// tle-link: links specialisations of a kernel (tlec cubin / PTX modules) into one typed launcher or dispatcher.
#include "tle/Driver/Launcher.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>

namespace {

int fail(const std::string &message) {
  std::cerr << "tle-link: error: " << message << "\n";
  return 1;
}

bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  if (f) {
    f << text;
    f.close(); // a failed flush (a full disk) is an error too
  }
  return static_cast<bool>(f);
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The requirements a specialisation's hints put on the arguments (`:16` and `:1` parameters).
int hintCount(const tle::driver::LaunchSpec &spec) {
  int n = 0;
  for (const tle::driver::LaunchArg &a : spec.args)
    n += a.equalToOne || a.divisibility > 1;
  return n;
}

/// True when the file name of `path` has an extension (a dot after its first character).
bool hasExtension(const std::string &path) {
  size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = name.find_last_of('.');
  return dot != std::string::npos && dot > 0;
}

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// `text` without leading and trailing blanks.
std::string trim(const std::string &text) {
  size_t b = text.find_first_not_of(" \t"), e = text.find_last_not_of(" \t");
  return b == std::string::npos ? "" : text.substr(b, e - b + 1);
}

/// Attaches each --when "I: PRED; PRED" to module I (before modules of one specialisation are
/// grouped: the predicates are part of what makes a specialisation). The predicates themselves
/// are checked by the launcher generator.
bool attachPredicates(const std::vector<std::string> &when, std::vector<tle::driver::LaunchSpec> &specs,
                      std::string &error) {
  for (const std::string &w : when) {
    size_t colon = w.find(':');
    std::string index = trim(w.substr(0, colon == std::string::npos ? 0 : colon));
    if (colon == std::string::npos || index.empty() || index.find_first_not_of("0123456789") != std::string::npos ||
        index.size() > 6 || std::stoul(index) >= specs.size()) {
      error = "--when \"" + w + "\": expected \"I: PRED; ...\" with I the position of a module (0 to " +
              std::to_string(specs.size() - 1) + ")";
      return false;
    }
    std::string rest = w.substr(colon + 1);
    for (size_t pos = 0; pos <= rest.size();) {
      size_t semi = rest.find(';', pos);
      std::string pred = trim(rest.substr(pos, semi == std::string::npos ? std::string::npos : semi - pos));
      if (!pred.empty())
        specs[std::stoul(index)].when.push_back(pred);
      if (semi == std::string::npos)
        break;
      pos = semi + 1;
    }
  }
  return true;
}

/// Appends the variants of a dispatch table (`tle-bench --tune --dispatch`: {"format":
/// "tle-dispatch", "variants": [{"module": FILE, "when": ["M <= 64", ...]}, ...]}, module paths
/// relative to the table) to the inputs, with their predicates as --when entries.
bool readTable(const std::string &path, std::vector<std::string> &inputs, std::vector<std::string> &when,
               std::string &error) {
  std::ifstream f(path);
  if (!f) {
    error = "--table: cannot read '" + path + "'";
    return false;
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(f);
  } catch (const std::exception &e) {
    error = "--table " + path + ": invalid JSON: " + e.what();
    return false;
  }
  if (!doc.is_object() || doc.value("format", "") != "tle-dispatch" || !doc.contains("variants") ||
      !doc["variants"].is_array() || doc["variants"].empty()) {
    error = "--table " + path + ": not a dispatch table (expected {\"format\": \"tle-dispatch\", \"variants\": [...]})";
    return false;
  }
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  for (size_t i = 0; i < doc["variants"].size(); ++i) {
    const nlohmann::json &v = doc["variants"][i];
    if (!v.is_object() || !v.contains("module") || !v["module"].is_string()) {
      error = "--table " + path + ": variants[" + std::to_string(i) + "] has no \"module\" file";
      return false;
    }
    std::string module = v["module"].get<std::string>();
    inputs.push_back(!module.empty() && module[0] == '/' ? module : dir + module);
    std::string preds;
    for (const nlohmann::json &p : v.value("when", nlohmann::json::array())) {
      if (!p.is_string()) {
        error = "--table " + path + ": variants[" + std::to_string(i) + "].when must be a list of predicates";
        return false;
      }
      preds += (preds.empty() ? "" : "; ") + p.get<std::string>();
    }
    if (!preds.empty())
      when.push_back(std::to_string(inputs.size() - 1) + ": " + preds);
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  using namespace tle::driver;
  CLI::App app{"tle-link: link specialisations of one kernel (cubin or PTX modules written by tlec, for one or "
               "more targets) into a typed launcher; several specialisations get a dispatcher that launches the "
               "first one whose requirements the arguments meet",
               "tle-link"};
  app.set_version_flag("--version", std::string("tle-link ") + TLE_VERSION);
  std::vector<std::string> inputs;
  std::string header, source, cHeader, cSource, name;
  app.add_option("modules", inputs, "tlec modules (.cubin or .ptx), or launcher headers tlec -o PREFIX wrote (.h, "
                                    "their modules embedded in the .c next to them, as Triton's link takes); the "
                                    "same specialisation for several targets is one specialisation; order = dispatch "
                                    "order (or --table)");
  std::string unusedPrefix;
  app.add_option("-o,--output,--out", header,
                 "C++ launcher header to write (FILE.h, .hpp, .hh); without an extension, Triton's link spelling: "
                 "write the C launcher OUT.h and its definitions OUT.c");
  app.add_option("--prefix", unusedPrefix, "accepted for Triton's link command line, which ignores it too");
  app.add_option("--source", source, "also write the C++ definitions to this file (the header then only declares)");
  app.add_option("--c-header", cHeader, "C launcher header to write");
  app.add_option("--c-source", cSource, "also write the C definitions to this file (the C header then only declares)");
  app.add_option("-n,--name", name, "launcher function name (default: the kernel's name)");
  std::vector<std::string> when;
  app.add_option("--when", when,
                 "\"I: PRED; PRED...\": shape predicates on integer arguments that module I (0-based, in "
                 "command-line order) also requires to be chosen, e.g. --when \"0: M <= 64; N % 128 == 0\" "
                 "(comparisons < <= > >= == != with an integer, or NAME % D == R); repeatable")
      ->type_name("\"I: PRED; ...\"");
  std::string table;
  app.add_option("--table", table,
                 "a dispatch table written by `tle-bench --tune --dispatch` (JSON): its variants' modules, in its "
                 "order after any modules given, each with its shape predicates")
      ->type_name("FILE.json");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  // Triton's `link.py ... -o OUT` writes OUT.h and OUT.c (C).
  if (!header.empty() && !hasExtension(header)) {
    if (!cHeader.empty() || !source.empty() || !cSource.empty())
      return fail("-o " + header + " (no extension: Triton's OUT.h and OUT.c) cannot be combined with --source, "
                  "--c-header or --c-source");
    cHeader = header + ".h";
    cSource = header + ".c";
    header.clear();
  }
  if (header.empty() && cHeader.empty())
    return fail("nothing to write: give -o HEADER (C++) and/or --c-header HEADER (C)");
  if (!source.empty() && header.empty())
    return fail("--source needs -o HEADER");
  if (!cSource.empty() && cHeader.empty())
    return fail("--c-source needs --c-header HEADER");
  if (!name.empty() && !isValidLauncherName(name))
    return fail("'" + name + "' cannot name a launcher: use a C identifier that is not a keyword");

  std::string error;
  if (!table.empty() && !readTable(table, inputs, when, error))
    return fail(error);
  if (inputs.empty())
    return fail("no modules: give tlec modules or launcher headers, or --table FILE.json");
  std::vector<LaunchSpec> specs;
  for (const std::string &in : inputs)
    if (!readSpecInput(in, specs, error))
      return fail(error);
  if (!attachPredicates(when, specs, error))
    return fail(error);
  if (!groupSpecs(specs, error))
    return fail(error);
  // Triton's link tries the specialisations with more hints first, whatever the order of the
  // headers (a shell glob sorts them by hash); so does tle-link when it is given only headers.
  if (std::all_of(inputs.begin(), inputs.end(), [](const std::string &in) { return endsWith(in, ".h"); }))
    std::stable_sort(specs.begin(), specs.end(),
                     [](const LaunchSpec &a, const LaunchSpec &b) { return hintCount(a) > hintCount(b); });

  bool warned = false;
  for (int lang = 0; lang < 2; ++lang) {
    const std::string &h = lang == 0 ? header : cHeader;
    const std::string &s = lang == 0 ? source : cSource;
    if (h.empty())
      continue;
    LauncherOptions o;
    o.name = name;
    o.language = lang == 0 ? LauncherLanguage::Cxx : LauncherLanguage::C;
    o.split = !s.empty();
    o.headerInclude = baseName(h); // the source sits next to its header
    o.generator = std::string("tle-link ") + TLE_VERSION;
    LauncherFiles files;
    std::vector<std::string> warnings;
    if (!generateLauncher(specs, o, files, error, warnings))
      return fail(error);
    if (!warned)
      for (auto &w : warnings)
        std::cerr << "tle-link: warning: " << w << "\n";
    warned = true;
    if (!writeFile(h, files.header))
      return fail("cannot write '" + h + "'");
    if (!s.empty() && !writeFile(s, files.source))
      return fail("cannot write '" + s + "'");
  }
  return 0;
}
