// Private to the frontend: the indentation-aware Python token source over the generated lexer.
#pragma once

#include "tle/Support/Diagnostics.h"

#include "TLELexer.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace tle::frontend {

/// Limits that keep the recursive-descent parser and everything after it off the stack's edge.
/// (Python itself stops at 200 nested brackets and 100 indentation levels.)
constexpr size_t kMaxBracketDepth = 200;
constexpr size_t kMaxIndentDepth = 100;
/// Tokens of one source text (the lexer's, comments and line breaks inside brackets included):
/// the parse tree costs about 1.5 KB of memory per token, so a 16 MiB file of short statements
/// would need some 20 GB; 500,000 tokens (about 750 MB) is ten times a large kernel module.
constexpr size_t kMaxTokens = 500000;

/// The first lexical error of a file. After it the token source yields only EOF, so that the
/// parser either stops at an earlier syntax error or runs into that EOF.
struct LexError {
  bool set = false;
  SourceLoc loc;
  std::string message;
};

/// Wraps the raw ANTLR lexer and produces the token stream the parser expects:
///  - NEWLINE only at the end of a logical line (not inside (), [], {}, not for blank or
///    comment-only lines); one synthetic NEWLINE before EOF when the last line has none;
///  - INDENT / DEDENT when the indentation of a logical line grows / shrinks (tabs advance to
///    the next multiple of 8; a tab/space mix whose meaning depends on the tab size is an
///    error, as in Python); every open block is closed with DEDENTs at EOF;
///  - MATCH / CASE for the soft keywords where they start a match statement (a logical line
///    `match ...:`) or a case block (a line `case ...` directly inside a match statement);
///  - located errors for unindents that match no outer level, unterminated strings,
///    unbalanced or too deeply nested brackets, characters that start no token, and a text of
///    more than kMaxTokens tokens (at the first token past the limit).
class IndentingTokenSource : public antlr4::TokenSource {
public:
  IndentingTokenSource(uint32_t file, const SourceManager &sm, antlr4::CharStream *input);

  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return lexer_.getLine(); }
  size_t getCharPositionInLine() override { return lexer_.getCharPositionInLine(); }
  antlr4::CharStream *getInputStream() override { return lexer_.getInputStream(); }
  std::string getSourceName() override { return lexer_.getSourceName(); }
  antlr4::TokenFactory<antlr4::CommonToken> *getTokenFactory() override { return lexer_.getTokenFactory(); }

  /// The first lexical error, if any.
  const LexError &error() const { return error_; }
  /// The vocabulary of the raw lexer (token names for dumps and messages).
  const antlr4::dfa::Vocabulary &vocabulary() const { return lexer_.getVocabulary(); }

private:
  struct Bracket {
    char ch;
    SourceLoc loc;
  };

  SourceLoc locOf(const antlr4::Token &t) const;
  std::unique_ptr<antlr4::Token> synthetic(size_t type, const antlr4::Token &at, const std::string &text);
  void fail(SourceLoc loc, std::string message);
  /// Emits INDENT/DEDENT (into pending_) for a logical line whose first token is `t`.
  void handleIndentation(const antlr4::Token &t);
  /// Checks bracket balance for `t` and updates the bracket stack.
  void trackBrackets(const antlr4::Token &t);
  void checkString(const antlr4::Token &t);
  /// Turns a NAME `match` / `case` that starts a logical line into MATCH / CASE when it starts
  /// a match statement / case block.
  void softKeyword(antlr4::Token &t);
  /// True when the logical line after token `t` ends with ':' (scanned with a second lexer).
  bool lineEndsWithColon(const antlr4::Token &t);
  std::string describeBadChar(const antlr4::Token &t) const;

  uint32_t file_;
  const SourceManager &sm_;
  grammar::TLELexer lexer_;
  std::deque<std::unique_ptr<antlr4::Token>> pending_;
  std::vector<unsigned> indents_{0};    // columns with tab size 8
  std::vector<unsigned> altIndents_{0}; // columns with tab size 1 (to detect tab/space mixes)
  std::vector<Bracket> brackets_;
  std::vector<unsigned> caseLevels_; // indentation of the case blocks of open match statements
  bool matchHeader_ = false;         // the previous logical line was `match ...:`
  bool atLineStart_ = true;
  bool done_ = false;
  size_t tokens_ = 0; ///< raw tokens read so far (kMaxTokens)
  LexError error_;
};

/// Checks that `text` is valid UTF-8 (ANTLR's input stream needs it); on failure reports the
/// first bad byte through `diags` and throws CompileAborted.
void checkUtf8(uint32_t file, const std::string &text, DiagnosticEngine &diags);

} // namespace tle::frontend
