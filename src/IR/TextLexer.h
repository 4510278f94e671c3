// Internal to the IR library: the lexer of the tile IR text form (tokens with their source
// locations), used by Parser.cpp.
#pragma once

#include "tle/Support/Diagnostics.h"

#include <cctype>
#include <cstdint>
#include <string>

namespace tle::ir::text {

/// One token: an identifier, a value name (%x.1), a number, punctuation, `->`, a string or the end.
struct Tok {
  enum Kind { Ident, Value, Number, Punct, Arrow, Str, End } kind = End;
  std::string text;
  SourceLoc loc;
};

/// Splits the text of file `file` into tokens, skipping whitespace and `//` and `#` comments; next()
/// returns End at the end of the text.
class Lexer {
public:
  Lexer(const std::string &text, uint32_t file) : s_(text), file_(file) {}

  Tok next() {
    skipSpace();
    Tok t;
    t.loc = {file_, line_, col_};
    if (i_ >= s_.size())
      return t;
    char c = s_[i_];
    if (c == '-' && i_ + 1 < s_.size() && s_[i_ + 1] == '>') {
      advance(2);
      t.kind = Tok::Arrow;
      t.text = "->";
      return t;
    }
    if (c == '"') {
      // A string with C escapes (\\ \" \n \t \xHH); `text` is its value.
      advance(1);
      while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\n') {
        char ch = s_[i_];
        if (ch == '\\' && i_ + 1 < s_.size()) {
          char e = s_[i_ + 1];
          if (e == 'n') {
            t.text += '\n';
          } else if (e == 't') {
            t.text += '\t';
          } else if (e == 'x' && i_ + 3 < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_ + 2])) &&
                     std::isxdigit(static_cast<unsigned char>(s_[i_ + 3]))) {
            t.text += static_cast<char>(std::stoi(s_.substr(i_ + 2, 2), nullptr, 16));
            advance(2);
          } else {
            t.text += e;
          }
          advance(2);
          continue;
        }
        t.text += ch;
        advance(1);
      }
      if (i_ < s_.size() && s_[i_] == '"') {
        advance(1);
        t.kind = Tok::Str;
      } else {
        t.kind = Tok::Punct; // unterminated: the parser reports it
        t.text = "\"";
      }
      return t;
    }
    if (c == '%') {
      size_t st = i_;
      advance(1);
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.'))
        advance(1);
      t.kind = Tok::Value;
      t.text = s_.substr(st, i_ - st);
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || ((c == '-' || c == '+') && i_ + 1 < s_.size() &&
                                                        (std::isdigit(static_cast<unsigned char>(s_[i_ + 1])) || s_[i_ + 1] == 'i'))) {
      size_t st = i_;
      advance(1);
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                                ((s_[i_] == '-' || s_[i_] == '+') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))))
        advance(1);
      t.kind = Tok::Number;
      t.text = s_.substr(st, i_ - st);
      return t;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '@' || c == '*') {
      size_t st = i_;
      advance(1);
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
        advance(1);
      t.kind = Tok::Ident;
      t.text = s_.substr(st, i_ - st);
      return t;
    }
    advance(1);
    t.kind = Tok::Punct;
    t.text = std::string(1, c);
    return t;
  }

private:
  void advance(size_t n) {
    for (size_t k = 0; k < n && i_ < s_.size(); ++k, ++i_) {
      if (s_[i_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
    }
  }
  bool layoutToken() const {
    bool name = i_ + 2 < s_.size() && s_[i_ + 1] == 'L' && std::isdigit(static_cast<unsigned char>(s_[i_ + 2]));
    return name || s_.compare(i_, 8, "#linear<") == 0;
  }
  void skipSpace() {
    for (;;) {
      while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
        advance(1);
      if (i_ + 1 < s_.size() && s_[i_] == '/' && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n')
          advance(1);
        continue;
      }
      // `#` starts a comment, except a layout's: `#Lk` (a name) and `#linear<` (Layout::str).
      if (i_ < s_.size() && s_[i_] == '#' && !layoutToken()) {
        while (i_ < s_.size() && s_[i_] != '\n')
          advance(1);
        continue;
      }
      return;
    }
  }
  const std::string &s_;
  uint32_t file_;
  size_t i_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

} // namespace tle::ir::text
