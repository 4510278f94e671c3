// The conformance cases known to fail, with the reason (docs/conformance.md lists them too).
// A listed case that passes is reported (XPASS) and fails the run, so the list stays current.
#include "Harness.h"

namespace tle::conformance {

const std::vector<KnownFailure> &knownFailures() {
  static const std::vector<KnownFailure> list = {
  };
  return list;
}

} // namespace tle::conformance
