// tlec: the TLE compiler command line.
#include "tle/Driver/Compiler.h"
#include "tle/Transforms/PassRegistry.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace {

/// The help's list of tile-IR passes, one per line with its summary, and the default pipeline.
std::string passesHelp() {
  using namespace tle::transforms;
  size_t width = 0;
  for (const PassInfo &p : passRegistry())
    width = std::max(width, std::string(p.name).size());
  std::string text = "Tile-IR passes (--pass, --print-after; --print-after also takes specialize):\n";
  for (const PassInfo &p : passRegistry())
    text += "  " + std::string(p.name) + std::string(width + 2 - std::string(p.name).size(), ' ') + p.summary + "\n";
  std::string order;
  for (const std::string &n : defaultPipeline())
    order += (order.empty() ? "" : ", ") + n;
  return text + "Default pipeline: " + order + "\n";
}

/// The architecture of Triton's target spelling "cuda:CC:32", or empty when tlec has none for it.
std::string archForTarget(const std::string &target) {
  if (target == "cuda:80:32" || target == "cuda:80")
    return "sm_80";
  if (target == "cuda:90:32" || target == "cuda:90")
    return "sm_90a";
  return "";
}

} // namespace

int main(int argc, char **argv) {
  using namespace tle::driver;
  CLI::App app{"tlec: compile TLE / Triton kernels (Python syntax) to tile IR, LLVM IR, PTX or cubin", "tlec"};
  app.set_version_flag("--version", std::string("tlec ") + TLE_VERSION);
  CompileOptions o;
  std::string emit;
  std::vector<std::string> defines;
  app.add_option("input", o.input, "kernel source (.tle or a Triton .py file)")->required();
  app.add_option("-o,--output,--out-path", o.output,
                 "output file ('-' for standard output); its extension picks the stage (.tokens .ast .tir .gpu.tir "
                 ".ll .ptx .cubin) unless --emit is given; without one, Triton's prefix: write the C launcher "
                 "PREFIX.<hash>_<suffix>.h and .c with the module embedded");
  app.add_option("--emit", emit, "stage to emit: tokens, ast, tile, gpu, llvm, ptx, cubin")
      ->check(CLI::IsMember({"tokens", "ast", "tile", "gpu", "llvm", "ptx", "cubin"}));
  app.add_option("-I", o.importPath,
                 "directory searched for imported modules (repeatable; searched in order, after the input's "
                 "package root: the parent of its outermost directory with an __init__.py)");
  app.add_option("--depfile", o.depfile, "-MF: also write a Make-style depfile: the output, depending on the input and "
                                         "every module file it imports");
  app.add_option("-n,--kernel,--kernel-name", o.kernel, "kernel to compile (default: the file's only @jit kernel, or the only one no other @jit function names)");
  app.add_option("-s,--signature", o.signature,
                 "Triton AOT signature, one entry per parameter: '*fp32:16, *fp32:16, i32, 1024' "
                 "(types, ':16' divisibility hints, ':1' for an integer equal to 1, literals or expressions for "
                 "constexprs)");
  app.add_option("-D", defines, "constexpr parameter value, NAME=VALUE (repeatable): a literal or an expression "
                                "evaluated in the kernel's module, e.g. mesh=BLOCK_CLUSTER_MESH, DTYPE=tl.bfloat16");
  app.add_option("-w,--num-warps", o.numWarps, "warps per program (power of two, 1-32; default 4)");
  app.add_option("--arch", o.arch, "target architecture: sm_80 or sm_90a (default sm_90a)");
  std::string target;
  app.add_option("-t,--target", target, "Triton's target spelling BACKEND:ARCH:WARP_SIZE: cuda:80:32 (sm_80) or "
                                        "cuda:90:32 (sm_90a)");
  std::string from;
  app.add_option("--from", from, "input kind: python (default) or tile (tile IR text; the default for .tir inputs)")
      ->check(CLI::IsMember({"python", "tile"}));
  app.add_option("--pass", o.passes, "run only these tile-IR passes (listed below), in order, instead of the default "
                                     "pipeline; repeatable or comma-separated")
      ->delimiter(',');
  app.add_option("--print-after", o.printAfter, "print the IR (on stderr) after the named pass (listed below, or "
                                                "specialize); repeatable or comma-separated")
      ->delimiter(',');
  app.add_flag("--print-after-all", o.printAfterAll, "print the tile IR after every tile-IR pass");
  app.add_flag("--debug", o.debug,
               "debug build (Triton's debug=True): runtime assert and tl.device_assert trap when false; "
               "otherwise they are compiled out");
  bool noFpFusion = false;
  app.add_flag("--no-fp-fusion", noFpFusion,
               "do not contract a*b+c into fma on the GPU (Triton's enable_fp_fusion=False; default: contract)");
  app.add_flag("--time-passes", o.timePasses, "report the wall time of every pipeline step on stderr");
  app.add_flag("--layout-stats", o.layoutStats,
               "after layout assignment, print on stderr the tiles given layouts, the convert_layout ops "
               "inserted and the conversions avoided (registers renumbered, index arithmetic recomputed)");
  app.add_option("--ptxas", o.ptxas, "ptxas to use for cubins (default: $TLE_PTXAS, then the CUDA toolkit)");
  // Ahead-of-time options, spelled as Triton's AOT compiler spells them (docs/aot.md).
  int numStages = -1;
  app.add_option("-g,--grid", o.grid, "launch grid over parameter names and constexprs, e.g. 'cdiv(n, 1024), 1, 1' "
                                     "(+ - * // %, cdiv, min, max); recorded in the metadata and used by launchers");
  app.add_option("--num-stages", numStages, "-ns: software-pipelining stages of tl.dot operand loads in loops (default 3; 1 turns it off)")
      ->check(CLI::Range(1, 16));
  app.add_option("--emit-header", o.emitHeader, "also write a typed C++ launcher header (needs a .cubin or .ptx output)");
  app.add_option("--emit-header-c", o.emitHeaderC, "also write a C launcher header (needs a .cubin or .ptx output)");
  app.add_option("--out-name", o.launcherName, "-on: the launcher's function name (default: the kernel's name)");
  app.footer(passesHelp());
  // Triton's two-letter single-dash options.
  std::vector<std::string> args(argv, argv + argc);
  for (std::string &a : args) {
    for (auto [from, to] : {std::pair<const char *, const char *>{"-ns", "--num-stages"},
                            {"-on", "--out-name"},
                            {"-MF", "--depfile"}}) {
      std::string f = from;
      if (a == f || a.rfind(f + "=", 0) == 0)
        a = to + a.substr(f.size());
    }
  }
  std::vector<char *> argp;
  for (std::string &a : args)
    argp.push_back(a.data());
  try {
    app.parse(static_cast<int>(argp.size()), argp.data());
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  for (auto &d : defines) {
    auto eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "tlec: error: -D expects NAME=VALUE, got '" << d << "'\n";
      return 1;
    }
    o.defines[d.substr(0, eq)] = d.substr(eq + 1);
  }
  if (numStages > 0)
    o.numStages = numStages;
  if (!target.empty()) {
    std::string arch = archForTarget(target);
    if (arch.empty()) {
      std::cerr << "tlec: error: unsupported --target '" << target << "' (supported: cuda:80:32 for sm_80, "
                << "cuda:90:32 for sm_90a)\n";
      return 1;
    }
    if (app.count("--arch") && o.arch != arch) {
      std::cerr << "tlec: error: --target " << target << " means --arch " << arch << ", but --arch " << o.arch
                << " is given too\n";
      return 1;
    }
    o.arch = arch;
  }
  o.fpFusion = !noFpFusion;
  auto endsWith = [](const std::string &s, const std::string &suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
  };
  o.fromTile = from == "tile" || (from.empty() && endsWith(o.input, ".tir"));
  // Tile IR carries its own kernel, num_warps and specialisation: these options would change nothing.
  for (const char *flag : {"-n", "-s", "-D", "-w"})
    if (o.fromTile && app.count(flag))
      std::cerr << "tlec: warning: " << flag << " is ignored for tile IR input (the function's own attributes decide)\n";
  if (!emit.empty()) {
    o.emit = *parseEmit(emit);
  } else if (!o.output.empty() && o.output != "-") {
    auto e = emitForPath(o.output);
    o.emit = e ? *e : Emit::Cubin;
  } else {
    o.emit = Emit::PTX;
  }
  // Triton's -o PREFIX: an output with no stage extension names the launcher pair instead.
  // (--emit of another stage writes that stage to the file, whatever its name; so does a path
  // that is a device or a pipe, such as /dev/null, beside which no launcher is written.)
  std::error_code ec;
  const bool special = !o.output.empty() && o.output != "-" && std::filesystem::exists(o.output, ec) &&
                       !std::filesystem::is_regular_file(o.output, ec) && !std::filesystem::is_directory(o.output, ec);
  if (!o.output.empty() && o.output != "-" && !emitForPath(o.output) && !special &&
      (emit.empty() || o.emit == Emit::Cubin || o.emit == Emit::PTX)) {
    o.tritonPrefix = o.output;
    o.output.clear();
  }
  return compile(o, std::cout, std::cerr);
}
