// Private to the frontend: decoding of Python numeric and string literal tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tle::frontend {

/// Parses the text of an integer token (decimal, 0x, 0o, 0b; underscores allowed). Returns
/// false when the value does not fit in int64.
bool parseIntLiteral(std::string_view text, int64_t &value);

/// Parses the text of a float token (`1.`, `.5`, `1e-3`, underscores allowed). Values past the
/// double range become infinity and tiny ones zero, as in Python.
double parseFloatLiteral(std::string_view text);

/// One decoded string token.
struct StringPiece {
  bool isBytes = false;
  bool isRaw = false;
  bool isFormat = false;   // f-string
  bool hasFields = false;  // f-string with at least one replacement field `{...}`
  std::string value;       // escapes processed (raw text for f-strings with fields)
};

/// Decodes the text of a STRING token (prefix, quotes, escapes). Returns an empty string on
/// success and an error message otherwise; `errorOffset` is then the byte offset of the bad
/// escape within `text`.
std::string decodeStringToken(std::string_view text, StringPiece &out, size_t &errorOffset);

} // namespace tle::frontend
