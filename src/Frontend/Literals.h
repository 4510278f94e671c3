// Private to the frontend: decoding of Python numeric and string literal tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tle::frontend {

/// Parses the text of an integer token (decimal, 0x, 0o, 0b; underscores allowed). Returns
/// false when the value does not fit in int64, or with `unsigned64` in uint64 (then set when
/// the value is past int64, `value` holding its bits).
bool parseIntLiteral(std::string_view text, int64_t &value, bool *unsigned64 = nullptr);

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

/// One piece of an f-string's body: literal text, or a replacement field.
struct FStringPiece {
  bool field = false;
  std::string text;     ///< literal: decoded text; field: the expression's source text
  size_t offset = 0;    ///< field: byte offset of the expression within the body
  char conversion = 0;  ///< 'r', 's', 'a' or 0
  std::string spec;     ///< the format spec after ':'
  std::string label;    ///< `{x=}`: the field's text through '=' and the spaces after it
};

/// Splits the body of an f-string (the text between its quotes) into literal pieces and
/// replacement fields, as Python's tokenizer does: `{{` and `}}` are braces, escapes are decoded
/// in literal pieces unless `raw`. Returns "" or an error message (with `errorOffset`, the byte
/// offset in `body`): a single '}', an empty expression, an unclosed field, a bad conversion, a
/// format spec with nested fields (not supported).
std::string splitFString(std::string_view body, bool raw, std::vector<FStringPiece> &out, size_t &errorOffset);

} // namespace tle::frontend
