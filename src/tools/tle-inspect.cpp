// tle-inspect: shows what a cubin or PTX module holds: its kernels, their parameters and launch
// metadata, and the resources the assembler gave them (registers, spills, shared memory, cluster).
#include "StdoutCheck.h"
#include "tle/Driver/Inspect.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

/// Inputs larger than this are refused before reading (a cubin of one kernel is far smaller).
constexpr std::streamoff kMaxInputBytes = 256ll << 20;

/// `message` with bytes that are not printable ASCII (from a damaged file's names) as \xNN.
std::string printable(const std::string &message) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : message) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
      continue;
    }
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

int fail(const std::string &message) {
  std::cerr << "tle-inspect: error: " << printable(message) << "\n";
  return 1;
}

} // namespace

namespace {

int runTool(int argc, char **argv) {
  CLI::App app{"tle-inspect: show the kernels of a cubin or PTX module: parameters and types, grid, num_warps, "
               "num_stages, shared memory, registers and spills (from the cubin's own ELF sections), cluster, "
               "cooperative launch, tensor maps, target, compiler version and source hash; no CUDA toolkit needed",
               "tle-inspect"};
  app.set_version_flag("--version", std::string("tle-inspect ") + TLE_VERSION);
  std::vector<std::string> inputs;
  bool json = false;
  app.add_option("modules", inputs, "modules to inspect (.cubin or .ptx, e.g. written by tlec)")->required();
  app.add_flag("--json", json, "write one JSON document per module (an array when several are given)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  std::string out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string &path = inputs[i];
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      return fail("'" + path + "' is a directory, not a module");
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
      return fail("cannot open '" + path + "'");
    std::streamoff size = in.tellg();
    if (size < 0)
      return fail("cannot read '" + path + "'");
    if (size > kMaxInputBytes)
      return fail(path + ": larger than 256 MiB; not a module tlec writes");
    if (size == 0)
      return fail(path + ": an empty file, not a module");
    in.seekg(0);
    std::ostringstream ss;
    ss << in.rdbuf();
    if (!in && !in.eof())
      return fail("cannot read '" + path + "'");
    tle::driver::InspectReport report;
    std::string error;
    if (!tle::driver::inspectModule(ss.str(), path, report, error))
      return fail(path + ": " + error);
    if (!json) {
      out += (i ? "\n" : "") + tle::driver::inspectText(report);
      continue;
    }
    std::string doc = tle::driver::inspectJSON(report);
    out += inputs.size() == 1 ? doc : (i ? ",\n" : "[\n") + doc.substr(0, doc.size() - 1);
  }
  if (json && inputs.size() > 1)
    out += "\n]\n";
  std::cout << out;
  return 0;
}

} // namespace

int main(int argc, char **argv) { return tle::tools::exitChecked("tle-inspect", runTool(argc, argv)); }
