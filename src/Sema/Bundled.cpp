// Lookup of the compiler's built-in Python modules (Bundled.h); their table is generated.
#include "Bundled.h"

namespace tle::sema {

const BundledModule *bundledModule(const std::string &name) {
  for (const BundledModule &m : bundledModules())
    if (name == m.name)
      return &m;
  return nullptr;
}

} // namespace tle::sema
