// Python modules built into the compiler: what a kernel imports from a library that is not
// installed where it is compiled (torch's Inductor helpers), written for this compiler in
// src/Sema/Bundled/ and embedded at build time (cmake/TLEEmbedModules.cmake).
#pragma once

#include <string>
#include <vector>

namespace tle::sema {

/// One built-in module: its dotted name, its path under src/Sema/Bundled (shown in diagnostics
/// as "<tle>/PATH") and its Python text.
struct BundledModule {
  const char *name;
  const char *path;
  const char *text;
};

/// Every built-in module (generated from src/Sema/Bundled/**.py).
const std::vector<BundledModule> &bundledModules();

/// The built-in module named `name` (dotted), or null.
const BundledModule *bundledModule(const std::string &name);

} // namespace tle::sema
