// Shared helper of the unit tests that run passes and analyses on hand-written tile IR.
#pragma once

#include "tle/IR/IR.h"
#include "tle/IR/Parser.h"

#include <catch2/catch.hpp>

#include <memory>
#include <sstream>
#include <string>

namespace tle::testing {

/// Parses `text` as one tile-IR function (file name t.tir); a parse error fails the test with
/// the parser's diagnostics.
inline std::unique_ptr<ir::Function> parseTileIR(const std::string &text) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  uint32_t file = sm.addFile("t.tir", text);
  try {
    return ir::parseFunction(file, diags);
  } catch (const CompileAborted &) {
    FAIL("does not parse: " << err.str());
  }
  return nullptr;
}

} // namespace tle::testing
