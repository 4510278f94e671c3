// The indentation-aware token source: NEWLINE/INDENT/DEDENT, line joining and lexical errors.
#include "TokenSource.h"

#include <cstdio>

namespace tle::frontend {

using antlr4::Token;
using grammar::TLELexer;

namespace {
std::string hex(uint32_t v, int width) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*X", width, v);
  return buf;
}
} // namespace

IndentingTokenSource::IndentingTokenSource(uint32_t file, const SourceManager &sm, antlr4::CharStream *input)
    : file_(file), sm_(sm), lexer_(input) {
  lexer_.removeErrorListeners();
}

SourceLoc IndentingTokenSource::locOf(const Token &t) const {
  return SourceLoc{file_, static_cast<uint32_t>(t.getLine()), static_cast<uint32_t>(t.getCharPositionInLine() + 1)};
}

std::unique_ptr<Token> IndentingTokenSource::synthetic(size_t type, const Token &at, const std::string &text) {
  size_t start = at.getStartIndex();
  return antlr4::CommonTokenFactory::DEFAULT->create({this, nullptr}, type, text,
                                                     Token::DEFAULT_CHANNEL, start, start - 1, at.getLine(),
                                                     at.getCharPositionInLine());
}

void IndentingTokenSource::fail(SourceLoc loc, std::string message) {
  if (error_.set)
    return;
  error_.set = true;
  error_.loc = loc;
  error_.message = std::move(message);
}

std::string IndentingTokenSource::describeBadChar(const Token &t) const {
  std::string text = t.getText();
  unsigned char c = text.empty() ? 0 : static_cast<unsigned char>(text[0]);
  if (c == 0)
    return "source code cannot contain null bytes";
  if (c == '\\')
    return "unexpected character after line continuation character";
  if (c < 0x20 || c == 0x7f)
    return "invalid non-printable character U+" + hex(c, 4);
  if (c < 0x80)
    return "invalid character '" + text + "'";
  // Decode the code point for the message.
  uint32_t cp = 0;
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  cp = c & (0xFF >> (n + 1));
  for (size_t i = 1; i < n && i < text.size(); ++i)
    cp = (cp << 6) | (static_cast<unsigned char>(text[i]) & 0x3F);
  return "invalid character '" + text + "' (U+" + hex(cp, 4) + ")";
}

void IndentingTokenSource::handleIndentation(const Token &t) {
  // Measure the whitespace that starts the token's physical line (tabs to multiples of 8; a
  // form feed resets the count, as in CPython).
  std::string_view line = sm_.lineText(file_, static_cast<uint32_t>(t.getLine()));
  if (t.getLine() == 1 && line.substr(0, 3) == "\xEF\xBB\xBF")
    line.remove_prefix(3);
  unsigned col = 0, alt = 0;
  for (char c : line) {
    if (c == ' ') {
      ++col;
      ++alt;
    } else if (c == '\t') {
      col = (col / 8 + 1) * 8;
      ++alt;
    } else if (c == '\f') {
      col = alt = 0;
    } else {
      break;
    }
  }
  SourceLoc loc = locOf(t);
  if (col == indents_.back()) {
    if (alt != altIndents_.back())
      fail(loc, "inconsistent use of tabs and spaces in indentation");
    return;
  }
  if (col > indents_.back()) {
    if (alt <= altIndents_.back())
      return fail(loc, "inconsistent use of tabs and spaces in indentation");
    if (indents_.size() > kMaxIndentDepth)
      return fail(loc, "too many levels of indentation (the limit is " + std::to_string(kMaxIndentDepth) + ")");
    if (matchHeader_)
      caseLevels_.push_back(col);
    indents_.push_back(col);
    altIndents_.push_back(alt);
    pending_.push_back(synthetic(TLELexer::INDENT, t, ""));
    return;
  }
  while (indents_.size() > 1 && col < indents_.back()) {
    indents_.pop_back();
    altIndents_.pop_back();
    pending_.push_back(synthetic(TLELexer::DEDENT, t, ""));
  }
  while (!caseLevels_.empty() && caseLevels_.back() > col)
    caseLevels_.pop_back();
  if (col != indents_.back())
    return fail(loc, "unindent does not match any outer indentation level");
  if (alt != altIndents_.back())
    fail(loc, "inconsistent use of tabs and spaces in indentation");
}

void IndentingTokenSource::trackBrackets(const Token &t) {
  char open = 0, close = 0;
  switch (t.getType()) {
  case TLELexer::OPEN_PAREN: open = '('; break;
  case TLELexer::OPEN_BRACK: open = '['; break;
  case TLELexer::OPEN_BRACE: open = '{'; break;
  case TLELexer::CLOSE_PAREN: close = ')'; break;
  case TLELexer::CLOSE_BRACK: close = ']'; break;
  case TLELexer::CLOSE_BRACE: close = '}'; break;
  default: return;
  }
  SourceLoc loc = locOf(t);
  if (open) {
    if (brackets_.size() >= kMaxBracketDepth)
      return fail(loc, "too many nested parentheses (the limit is " + std::to_string(kMaxBracketDepth) + ")");
    brackets_.push_back({open, loc});
    return;
  }
  if (brackets_.empty())
    return fail(loc, std::string("unmatched '") + close + "'");
  Bracket b = brackets_.back();
  char expected = b.ch == '(' ? ')' : b.ch == '[' ? ']' : '}';
  if (close != expected) {
    std::string where = b.loc.line == loc.line ? "" : " on line " + std::to_string(b.loc.line);
    return fail(loc, std::string("closing parenthesis '") + close + "' does not match opening parenthesis '" + b.ch +
                         "'" + where);
  }
  brackets_.pop_back();
}

void IndentingTokenSource::checkString(const Token &t) {
  // `'''abc` with no closing quotes lexes as the empty string '' followed by an unterminated
  // short string; recognise the pair here.
  std::string text = t.getText();
  size_t q = text.find_first_of("'\"");
  if (q == std::string::npos || text.size() - q != 2)
    return;
  size_t next = lexer_.getInputStream()->LA(1);
  if (next == static_cast<size_t>(static_cast<unsigned char>(text[q])))
    fail(locOf(t), "unterminated triple-quoted string literal");
}

bool IndentingTokenSource::lineEndsWithColon(const Token &t) {
  antlr4::CharStream *input = lexer_.getInputStream();
  size_t saved = input->index();
  input->seek(t.getStopIndex() + 1);
  TLELexer probe(input);
  probe.removeErrorListeners();
  size_t depth = 0, last = 0, count = 0;
  while (true) {
    std::unique_ptr<Token> k = probe.nextToken();
    size_t type = k->getType();
    if (type == Token::EOF || type == TLELexer::ERROR_CHAR || type == TLELexer::UNTERMINATED_STRING ||
        (type == TLELexer::NEWLINE && depth == 0))
      break;
    if (type == TLELexer::NEWLINE)
      continue;
    if (type == TLELexer::OPEN_PAREN || type == TLELexer::OPEN_BRACK || type == TLELexer::OPEN_BRACE)
      ++depth;
    if ((type == TLELexer::CLOSE_PAREN || type == TLELexer::CLOSE_BRACK || type == TLELexer::CLOSE_BRACE) && depth)
      --depth;
    last = type;
    ++count;
  }
  input->seek(saved);
  return count >= 2 && last == TLELexer::COLON;
}

void IndentingTokenSource::softKeyword(Token &t) {
  bool header = false;
  if (t.getType() == TLELexer::NAME) {
    std::string text = t.getText();
    auto *common = dynamic_cast<antlr4::CommonToken *>(&t);
    if (common && text == "match" && lineEndsWithColon(t)) {
      common->setType(TLELexer::MATCH);
      header = true;
    } else if (common && text == "case" && !caseLevels_.empty() && caseLevels_.back() == indents_.back()) {
      common->setType(TLELexer::CASE);
    }
  }
  matchHeader_ = header;
}

std::unique_ptr<Token> IndentingTokenSource::nextToken() {
  while (true) {
    if (!pending_.empty()) {
      std::unique_ptr<Token> t = std::move(pending_.front());
      pending_.pop_front();
      // After an error only EOF is produced; drop whatever was queued behind it.
      if (error_.set && t->getType() != Token::EOF) {
        pending_.clear();
        continue;
      }
      return t;
    }
    if (done_)
      return nullptr; // never reached: EOF is always queued last
    std::unique_ptr<Token> t = lexer_.nextToken();
    if (!error_.set && ++tokens_ > kMaxTokens && t->getType() != Token::EOF)
      fail(locOf(*t), "the source has more than " + std::to_string(kMaxTokens) +
                          " tokens (tlec's limit for one file; split it into modules)");
    if (error_.set) {
      done_ = true;
      return synthetic(Token::EOF, *t, "<EOF>");
    }
    switch (t->getType()) {
    case TLELexer::NEWLINE:
      if (!brackets_.empty() || atLineStart_)
        continue; // implicit line joining, or a blank / comment-only line
      atLineStart_ = true;
      return t;
    case Token::EOF:
      if (!brackets_.empty()) {
        const Bracket &b = brackets_.front();
        fail(b.loc, std::string("'") + b.ch + "' was never closed");
        done_ = true;
        return t;
      }
      if (!atLineStart_)
        pending_.push_back(synthetic(TLELexer::NEWLINE, *t, ""));
      while (indents_.size() > 1) {
        indents_.pop_back();
        pending_.push_back(synthetic(TLELexer::DEDENT, *t, ""));
      }
      pending_.push_back(std::move(t));
      done_ = true;
      continue;
    case TLELexer::ERROR_CHAR:
      fail(locOf(*t), describeBadChar(*t));
      done_ = true;
      return synthetic(Token::EOF, *t, "<EOF>");
    case TLELexer::LEADING_ZERO_INTEGER:
      fail(locOf(*t), "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal "
                      "integers");
      done_ = true;
      return synthetic(Token::EOF, *t, "<EOF>");
    case TLELexer::UNTERMINATED_STRING:
      fail(locOf(*t), "unterminated string literal");
      done_ = true;
      return synthetic(Token::EOF, *t, "<EOF>");
    default:
      break;
    }
    if (atLineStart_) {
      handleIndentation(*t);
      softKeyword(*t);
      atLineStart_ = false;
    }
    trackBrackets(*t);
    if (t->getType() == TLELexer::STRING)
      checkString(*t);
    if (error_.set) {
      pending_.clear();
      done_ = true;
      return synthetic(Token::EOF, *t, "<EOF>");
    }
    pending_.push_back(std::move(t));
  }
}

void checkUtf8(uint32_t file, const std::string &text, DiagnosticEngine &diags) {
  uint32_t line = 1, col = 1;
  size_t i = 0, n = text.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len != 0 && i + len <= n;
    uint32_t cp = len == 1 ? c : len ? (c & (0xFF >> (len + 1))) : 0;
    for (size_t k = 1; ok && k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(text[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Reject overlong forms, surrogates and values past U+10FFFF.
    if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
               (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF))
      ok = false;
    if (!ok)
      diags.fatal(SourceLoc{file, line, col}, "invalid UTF-8 byte 0x" + hex(c, 2) + " in source file");
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    i += len;
  }
}

} // namespace tle::frontend
