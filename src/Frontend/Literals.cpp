// Decoding of Python numeric and string literal tokens (values, escapes, prefixes).
#include "Literals.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <limits>

namespace tle::frontend {

namespace {

std::string withoutUnderscores(std::string_view text) {
  std::string s;
  s.reserve(text.size());
  for (char c : text)
    if (c != '_')
      s.push_back(c);
  return s;
}

int digitValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return 99;
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

/// Reads exactly `n` hex digits at `body[i]`; returns false when there are fewer.
bool readHex(std::string_view body, size_t i, size_t n, uint32_t &value) {
  value = 0;
  if (i + n > body.size())
    return false;
  for (size_t k = 0; k < n; ++k) {
    int d = digitValue(body[i + k]);
    if (d > 15)
      return false;
    value = value * 16 + static_cast<uint32_t>(d);
  }
  return true;
}

/// Processes the backslash escapes of a non-raw literal body. On error returns a message and
/// sets `errorAt` to the offset of the backslash within `body`.
std::string unescape(std::string_view body, bool isBytes, std::string &out, size_t &errorAt) {
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 == body.size()) {
      out.push_back(c);
      continue;
    }
    size_t at = i;
    char e = body[++i];
    switch (e) {
    case '\n': break;
    case '\r':
      if (i + 1 < body.size() && body[i + 1] == '\n')
        ++i;
      break;
    case '\\': out.push_back('\\'); break;
    case '\'': out.push_back('\''); break;
    case '"': out.push_back('"'); break;
    case 'a': out.push_back('\a'); break;
    case 'b': out.push_back('\b'); break;
    case 'f': out.push_back('\f'); break;
    case 'n': out.push_back('\n'); break;
    case 'r': out.push_back('\r'); break;
    case 't': out.push_back('\t'); break;
    case 'v': out.push_back('\v'); break;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
      uint32_t v = 0;
      size_t k = 0;
      while (k < 3 && i + k < body.size() && body[i + k] >= '0' && body[i + k] <= '7')
        v = v * 8 + static_cast<uint32_t>(body[i + k++] - '0');
      i += k - 1;
      if (isBytes)
        out.push_back(static_cast<char>(v & 0xFF));
      else
        appendUtf8(out, v);
      break;
    }
    case 'x': {
      uint32_t v;
      if (!readHex(body, i + 1, 2, v)) {
        errorAt = at;
        return "invalid \\x escape: expected two hexadecimal digits";
      }
      i += 2;
      if (isBytes)
        out.push_back(static_cast<char>(v));
      else
        appendUtf8(out, v);
      break;
    }
    case 'u':
    case 'U': {
      if (isBytes) { // not an escape in bytes literals
        out.push_back('\\');
        out.push_back(e);
        break;
      }
      size_t n = e == 'u' ? 4 : 8;
      uint32_t v;
      if (!readHex(body, i + 1, n, v)) {
        errorAt = at;
        return std::string("invalid \\") + e + " escape: expected " + std::to_string(n) + " hexadecimal digits";
      }
      if (v > 0x10FFFF) {
        errorAt = at;
        return "invalid \\U escape: code point is past U+10FFFF";
      }
      i += n;
      appendUtf8(out, v);
      break;
    }
    default:
      // Unknown escapes (and \N{...}, whose names we do not resolve) keep their backslash.
      out.push_back('\\');
      out.push_back(e);
      break;
    }
  }
  return {};
}

/// True when an f-string body has a replacement field (a `{` that is not `{{`).
bool hasReplacementField(std::string_view body) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '{')
      continue;
    if (i + 1 < body.size() && body[i + 1] == '{') {
      ++i;
      continue;
    }
    return true;
  }
  return false;
}

std::string collapseBraces(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    out.push_back(s[i]);
    if ((s[i] == '{' || s[i] == '}') && i + 1 < s.size() && s[i + 1] == s[i])
      ++i;
  }
  return out;
}

} // namespace

bool parseIntLiteral(std::string_view text, int64_t &value, bool *unsigned64) {
  std::string s = withoutUnderscores(text);
  int base = 10;
  size_t i = 0;
  if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'o' || s[1] == 'O' || s[1] == 'b' ||
                                      s[1] == 'B')) {
    char p = static_cast<char>(s[1] | 0x20);
    base = p == 'x' ? 16 : p == 'o' ? 8 : 2;
    i = 2;
  }
  uint64_t v = 0;
  const uint64_t limit = unsigned64 ? std::numeric_limits<uint64_t>::max()
                                    : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  for (; i < s.size(); ++i) {
    uint64_t d = static_cast<uint64_t>(digitValue(s[i]));
    if (d >= static_cast<uint64_t>(base))
      return false;
    if (v > (limit - d) / static_cast<uint64_t>(base))
      return false;
    v = v * static_cast<uint64_t>(base) + d;
  }
  value = static_cast<int64_t>(v);
  if (unsigned64)
    *unsigned64 = v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  return true;
}

double parseFloatLiteral(std::string_view text) {
  std::string s = withoutUnderscores(text);
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && ptr == s.data() + s.size())
    return v;
  // Out of range (or a form from_chars does not take): strtod gives inf / 0 like Python.
  return std::strtod(s.c_str(), nullptr);
}

std::string splitFString(std::string_view body, bool raw, std::vector<FStringPiece> &out, size_t &errorOffset) {
  std::string pending; // literal source text not yet decoded
  size_t pendingAt = 0;
  auto flush = [&]() -> std::string {
    if (pending.empty())
      return {};
    FStringPiece p;
    if (raw) {
      p.text = pending;
    } else {
      size_t at = 0;
      std::string err = unescape(pending, false, p.text, at);
      if (!err.empty()) {
        errorOffset = pendingAt + at;
        return err;
      }
    }
    out.push_back(std::move(p));
    pending.clear();
    return {};
  };
  auto fail = [&](size_t at, const char *msg) {
    errorOffset = at;
    return std::string(msg);
  };
  size_t i = 0;
  while (i < body.size()) {
    char c = body[i];
    if ((c == '{' || c == '}') && i + 1 < body.size() && body[i + 1] == c) {
      if (pending.empty())
        pendingAt = i;
      pending += c;
      i += 2;
      continue;
    }
    if (c == '}')
      return fail(i, "f-string: single '}' is not allowed");
    if (c != '{') {
      if (pending.empty())
        pendingAt = i;
      pending += c;
      if (c == '\\' && !raw && i + 1 < body.size() && body[i + 1] != '{') // an escape pair stays whole
        pending += body[++i];
      ++i;
      continue;
    }
    if (std::string err = flush(); !err.empty())
      return err;
    // A replacement field: the expression runs to a '!', ':', '=' or '}' outside brackets/quotes.
    size_t start = i + 1, k = start;
    int depth = 0;
    char quote = 0;
    size_t end = std::string_view::npos;
    bool selfDoc = false;
    for (; k < body.size(); ++k) {
      char d = body[k];
      if (quote) {
        if (d == quote)
          quote = 0;
        continue;
      }
      if (d == '\'' || d == '"') {
        quote = d;
      } else if (d == '(' || d == '[' || d == '{') {
        ++depth;
      } else if ((d == ')' || d == ']' || d == '}') && depth > 0) {
        --depth;
      } else if (depth == 0 && (d == '}' || d == ':')) {
        end = k;
        break;
      } else if (depth == 0 && d == '!' && !(k + 1 < body.size() && body[k + 1] == '=')) {
        end = k;
        break;
      } else if (depth == 0 && d == '=' && !(k + 1 < body.size() && body[k + 1] == '=') &&
                 !(k > start && std::string_view("=!<>").find(body[k - 1]) != std::string_view::npos)) {
        size_t after = k + 1;
        while (after < body.size() && (body[after] == ' ' || body[after] == '\t'))
          ++after;
        if (after < body.size() && (body[after] == '}' || body[after] == '!' || body[after] == ':')) {
          selfDoc = true;
          end = k;
          break;
        }
      }
    }
    if (end == std::string_view::npos)
      return fail(i, "f-string: expecting '}'");
    FStringPiece f;
    f.field = true;
    f.offset = start;
    f.text.assign(body.substr(start, end - start));
    if (f.text.find_first_not_of(" \t\r\n") == std::string::npos)
      return fail(start, "f-string: empty expression not allowed");
    k = end;
    if (selfDoc) {
      ++k;
      while (k < body.size() && (body[k] == ' ' || body[k] == '\t'))
        ++k;
      f.label.assign(body.substr(start, k - start));
      f.conversion = 'r';
    }
    if (k < body.size() && body[k] == '!') {
      if (k + 1 >= body.size() || std::string_view("rsa").find(body[k + 1]) == std::string_view::npos)
        return fail(k, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
      f.conversion = body[k + 1];
      k += 2;
    }
    if (k < body.size() && body[k] == ':') {
      size_t specStart = ++k;
      while (k < body.size() && body[k] != '}') {
        if (body[k] == '{')
          return fail(k, "f-string: a replacement field inside a format spec is not supported");
        ++k;
      }
      f.spec.assign(body.substr(specStart, k - specStart));
      if (selfDoc && f.conversion == 'r' && body[end + 1] != '!')
        f.conversion = 0; // `{x=:spec}` formats the value, not its repr
    }
    if (k >= body.size() || body[k] != '}')
      return fail(i, "f-string: expecting '}'");
    out.push_back(std::move(f));
    i = k + 1;
  }
  return flush();
}

std::string decodeStringToken(std::string_view text, StringPiece &out, size_t &errorOffset) {
  size_t q = 0;
  while (q < text.size() && text[q] != '\'' && text[q] != '"') {
    char p = static_cast<char>(text[q] | 0x20);
    out.isBytes |= p == 'b';
    out.isRaw |= p == 'r';
    out.isFormat |= p == 'f';
    ++q;
  }
  size_t quoteLen = text.size() >= q + 6 && text.substr(q, 3) == std::string(3, text[q]) ? 3 : 1;
  if (text.size() < q + 2 * quoteLen) // cannot happen for lexer-produced tokens
    return "malformed string literal";
  std::string_view body = text.substr(q + quoteLen, text.size() - q - 2 * quoteLen);
  if (out.isFormat && hasReplacementField(body)) {
    out.hasFields = true;
    out.value.assign(body);
    return {};
  }
  std::string decoded;
  if (out.isRaw) {
    decoded.assign(body);
  } else {
    size_t at = 0;
    std::string err = unescape(body, out.isBytes, decoded, at);
    if (!err.empty()) {
      errorOffset = q + quoteLen + at;
      return err;
    }
  }
  out.value = out.isFormat ? collapseBraces(decoded) : decoded;
  return {};
}

} // namespace tle::frontend
