// Frontend entry points: runs the ANTLR parser with TLE's syntax-error reporting and builds the AST.
#include "tle/Frontend/Parser.h"

#include "ASTBuilder.h"
#include "TokenSource.h"

#include "TLEParser.h"

#include <ostream>

namespace tle::frontend {

using antlr4::Token;
using grammar::TLEParser;

namespace {

/// The deepest rule nesting the recursive-descent parser may reach (each bracket level costs
/// about 17 rules; kMaxBracketDepth brackets fit well within it).
constexpr size_t kMaxRuleDepth = 4000;

/// Thrown out of the parser at the first syntax error.
struct SyntaxAbort {
  SourceLoc loc;
  std::string message;
  bool atEof;
};

SourceLoc locOf(uint32_t file, const Token *t) {
  return SourceLoc{file, static_cast<uint32_t>(t->getLine()), static_cast<uint32_t>(t->getCharPositionInLine() + 1)};
}

/// How a token is named in "unexpected X" messages.
std::string describeToken(const Token *t) {
  switch (t->getType()) {
  case Token::EOF: return "end of file";
  case TLEParser::NEWLINE: return "end of line";
  case TLEParser::INDENT: return "indent";
  case TLEParser::DEDENT: return "dedent";
  default: break;
  }
  std::string text = t->getText();
  if (text.size() > 30)
    text = text.substr(0, 27) + "...";
  for (char &c : text)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  return "'" + text + "'";
}

/// How an expected token type is named in "expected X" messages.
std::string describeExpected(const antlr4::dfa::Vocabulary &vocab, size_t type) {
  switch (type) {
  case Token::EOF: return "end of file";
  case TLEParser::NEWLINE: return "end of line";
  case TLEParser::INDENT: return "an indented block";
  case TLEParser::NAME: return "a name";
  case TLEParser::STRING: return "a string";
  default: break;
  }
  std::string lit = vocab.getLiteralName(type);
  return lit.empty() ? vocab.getSymbolicName(type) : lit;
}

/// Replaces ANTLR's recovery with one clear message at the first error, then aborts.
class ErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
  explicit ErrorStrategy(uint32_t file) : file_(file) {}

protected:
  void reportNoViableAlternative(antlr4::Parser *p, const antlr4::NoViableAltException &e) override {
    fail(p, e.getOffendingToken());
  }
  void reportInputMismatch(antlr4::Parser *p, const antlr4::InputMismatchException &e) override {
    fail(p, e.getOffendingToken());
  }
  void reportFailedPredicate(antlr4::Parser *p, const antlr4::FailedPredicateException &e) override {
    fail(p, e.getOffendingToken());
  }
  void reportUnwantedToken(antlr4::Parser *p) override { fail(p, p->getCurrentToken()); }
  void reportMissingToken(antlr4::Parser *p) override { fail(p, p->getCurrentToken()); }

private:
  uint32_t file_;

  /// The first token of the logical line that contains token index `i` (skipping the
  /// NEWLINE that ends it when `i` is that NEWLINE's successor).
  static const Token *lineStart(antlr4::TokenStream *ts, size_t i, bool skipNewline) {
    const Token *first = nullptr;
    bool skipping = skipNewline;
    while (i-- > 0) {
      const Token *t = ts->get(i);
      size_t ty = t->getType();
      if (skipping && ty == TLEParser::NEWLINE)
        continue;
      skipping = false;
      if (ty == TLEParser::NEWLINE || ty == TLEParser::INDENT || ty == TLEParser::DEDENT)
        break;
      first = t;
    }
    return first;
  }

  /// The keyword of the compound-statement header starting at `t` ("if", "def", ...), or "".
  static std::string headerKeyword(antlr4::TokenStream *ts, const Token *t) {
    if (!t)
      return {};
    if (t->getType() == TLEParser::ASYNC && t->getTokenIndex() + 1 < ts->size())
      t = ts->get(t->getTokenIndex() + 1);
    switch (t->getType()) {
    case TLEParser::IF: case TLEParser::ELIF: case TLEParser::ELSE: case TLEParser::WHILE:
    case TLEParser::FOR: case TLEParser::TRY: case TLEParser::EXCEPT: case TLEParser::FINALLY:
    case TLEParser::WITH: case TLEParser::DEF: case TLEParser::CLASS: case TLEParser::MATCH: case TLEParser::CASE:
      return t->getText();
    default:
      return {};
    }
  }

  static bool startsOperand(size_t t) {
    return t == TLEParser::NAME || t == TLEParser::STRING || t == TLEParser::DECIMAL_INTEGER ||
           t == TLEParser::HEX_INTEGER || t == TLEParser::OCT_INTEGER || t == TLEParser::BIN_INTEGER ||
           t == TLEParser::FLOAT_NUMBER || t == TLEParser::IMAG_NUMBER || t == TLEParser::NONE ||
           t == TLEParser::TRUE || t == TLEParser::FALSE || t == TLEParser::OPEN_PAREN ||
           t == TLEParser::OPEN_BRACK || t == TLEParser::OPEN_BRACE;
  }

  static bool endsOperand(size_t t) {
    return t == TLEParser::NAME || t == TLEParser::STRING || t == TLEParser::DECIMAL_INTEGER ||
           t == TLEParser::HEX_INTEGER || t == TLEParser::OCT_INTEGER || t == TLEParser::BIN_INTEGER ||
           t == TLEParser::FLOAT_NUMBER || t == TLEParser::IMAG_NUMBER || t == TLEParser::NONE ||
           t == TLEParser::TRUE || t == TLEParser::FALSE || t == TLEParser::CLOSE_PAREN ||
           t == TLEParser::CLOSE_BRACK || t == TLEParser::CLOSE_BRACE;
  }

  /// True when the parser is inside a call, subscript or display (where items take commas).
  static bool insideBrackets(antlr4::ParserRuleContext *ctx) {
    for (; ctx; ctx = dynamic_cast<antlr4::ParserRuleContext *>(ctx->parent))
      if (dynamic_cast<TLEParser::CallTrailerContext *>(ctx) || dynamic_cast<TLEParser::SubscriptTrailerContext *>(ctx) ||
          dynamic_cast<TLEParser::ParenAtomContext *>(ctx) || dynamic_cast<TLEParser::ListAtomContext *>(ctx) ||
          dynamic_cast<TLEParser::BraceAtomContext *>(ctx) || dynamic_cast<TLEParser::TypedargslistContext *>(ctx))
        return true;
    return false;
  }

  static std::string headerDescription(const std::string &kw) {
    if (kw == "def")
      return "function definition";
    if (kw == "class")
      return "class definition";
    return "'" + kw + "' statement";
  }

  std::string message(antlr4::Parser *p, const Token *bad) {
    antlr4::TokenStream *ts = p->getTokenStream();
    size_t type = bad->getType();
    if (type == TLEParser::INDENT)
      return "unexpected indent";
    // The expected set describes the current token; NoViableAlt errors may point further on.
    bool atCurrent = p->getCurrentToken() && p->getCurrentToken()->getTokenIndex() == bad->getTokenIndex();
    antlr4::misc::IntervalSet expected;
    if (atCurrent)
      expected = p->getExpectedTokens();
    if (expected.contains(size_t(TLEParser::INDENT))) {
      const Token *start = lineStart(ts, bad->getTokenIndex(), true);
      std::string kw = headerKeyword(ts, start);
      if (kw.empty())
        return "expected an indented block";
      return "expected an indented block after " + headerDescription(kw) + " on line " +
             std::to_string(start->getLine());
    }
    std::string kw = headerKeyword(ts, lineStart(ts, bad->getTokenIndex(), false));
    if (expected.contains(size_t(TLEParser::COLON)) &&
        (expected.size() == 1 || (type == TLEParser::NEWLINE && !kw.empty()))) {
      if (kw == "if" || kw == "elif" || kw == "while")
        return "expected ':' after '" + kw + "' condition";
      if (kw == "def")
        return "expected ':' after the function signature";
      if (kw == "class")
        return "expected ':' after the class header";
      if (kw == "for" || kw == "with" || kw == "except")
        return "expected ':' at the end of the '" + kw + "' clause";
      if (!kw.empty())
        return "expected ':' after '" + kw + "'";
      return "expected ':'";
    }
    if (type == Token::EOF)
      return "unexpected end of file";
    if (type == TLEParser::IF && bad->getTokenIndex() > 0) {
      size_t prev = ts->get(bad->getTokenIndex() - 1)->getType();
      if (prev != TLEParser::NEWLINE && prev != TLEParser::INDENT && prev != TLEParser::DEDENT)
        return "expected 'else' after 'if' expression";
    }
    if (startsOperand(type) && bad->getTokenIndex() > 0 &&
        endsOperand(ts->get(bad->getTokenIndex() - 1)->getType()) && insideBrackets(p->getContext()))
      return "unexpected " + describeToken(bad) + "; perhaps a ',' is missing before it";
    if (expected.size() == 1 && !expected.contains(size_t(TLEParser::NEWLINE)))
      return "expected " + describeExpected(p->getVocabulary(), expected.getMinElement()) + ", found " +
             describeToken(bad);
    if (expected.contains(size_t(TLEParser::NAME)) && expected.contains(size_t(TLEParser::DECIMAL_INTEGER)) &&
        type != TLEParser::NAME)
      return "expected an expression, found " + describeToken(bad);
    if (type == TLEParser::NEWLINE)
      return "unexpected end of line";
    if (type == TLEParser::DEDENT)
      return "unexpected dedent";
    return "unexpected " + describeToken(bad);
  }

  [[noreturn]] void fail(antlr4::Parser *p, const Token *bad) {
    if (!bad)
      bad = p->getCurrentToken();
    throw SyntaxAbort{locOf(file_, bad), message(p, bad), bad->getType() == Token::EOF};
  }
};

/// Stops the parser before deep nesting (e.g. thousands of unary operators) exhausts the stack.
class DepthGuard : public antlr4::tree::ParseTreeListener {
public:
  DepthGuard(uint32_t file, antlr4::Parser &p) : file_(file), parser_(p) {}
  void enterEveryRule(antlr4::ParserRuleContext *) override {
    if (++depth_ > kMaxRuleDepth)
      throw SyntaxAbort{locOf(file_, parser_.getCurrentToken()), "expression or statement is too deeply nested",
                        false};
  }
  void exitEveryRule(antlr4::ParserRuleContext *) override { --depth_; }
  void visitTerminal(antlr4::tree::TerminalNode *) override {}
  void visitErrorNode(antlr4::tree::ErrorNode *) override {}

private:
  uint32_t file_;
  antlr4::Parser &parser_;
  size_t depth_ = 0;
};

/// Writes `text` with quotes, backslashes and control characters escaped.
void writeEscaped(std::ostream &os, const std::string &text) {
  static const char *hex = "0123456789abcdef";
  for (unsigned char c : text) {
    switch (c) {
    case '\n': os << "\\n"; break;
    case '\r': os << "\\r"; break;
    case '\t': os << "\\t"; break;
    case '\\': os << "\\\\"; break;
    case '\'': os << "\\'"; break;
    default:
      if (c < 0x20 || c == 0x7f)
        os << "\\x" << hex[c >> 4] << hex[c & 15];
      else
        os << c;
    }
  }
}

} // namespace

ast::Module parseModule(uint32_t file, ast::ASTContext &ctx, DiagnosticEngine &diags) {
  const std::string &text = diags.sources().text(file);
  checkUtf8(file, text, diags);
  antlr4::ANTLRInputStream input(text);
  input.name = diags.sources().path(file);
  IndentingTokenSource source(file, diags.sources(), &input);
  antlr4::CommonTokenStream tokens(&source);
  TLEParser parser(&tokens);
  parser.removeErrorListeners();
  parser.setErrorHandler(std::make_shared<ErrorStrategy>(file));
  DepthGuard guard(file, parser);
  parser.addParseListener(&guard);

  TLEParser::File_inputContext *tree = nullptr;
  try {
    tree = parser.file_input();
  } catch (const SyntaxAbort &e) {
    // A lexical error truncates the token stream with EOF; when the parser trips over that
    // EOF, the lexical error is the real cause.
    if (source.error().set && e.atEof)
      diags.fatal(source.error().loc, source.error().message);
    diags.fatal(e.loc, e.message);
  } catch (const std::exception &e) {
    const Token *t = parser.getCurrentToken();
    diags.fatal(t ? locOf(file, t) : SourceLoc{file, 0, 0}, std::string("internal parser error: ") + e.what());
  }
  if (source.error().set)
    diags.fatal(source.error().loc, source.error().message);
  parser.removeParseListeners();
  return buildModule(file, tree, ctx, diags);
}

namespace {

/// Parses `text`, which starts at `at` (column 2 or more on line 1) in file `file`, as one
/// expression whose tokens carry their locations in the file. Syntax errors are reported there,
/// their messages after `prefix`; one at the text's end names `closer` (the character after it
/// in the file, or "" for the end of the text).
ast::Expr *parseExpressionAt(uint32_t file, SourceLoc at, const std::string &text, ast::ASTContext &ctx,
                             DiagnosticEngine &diags, const std::string &prefix, const std::string &closer) {
  // Parenthesised and padded with newlines and spaces so that the text's tokens sit at their
  // line and column in the file (inside brackets, line breaks and indentation mean nothing).
  std::string padded = "(";
  if (at.line <= 1) {
    padded += std::string(at.col > 2 ? at.col - 2 : 0, ' ');
  } else {
    padded += std::string(at.line - 1, '\n');
    padded += std::string(at.col - 1, ' ');
  }
  padded += text + "\n)";
  antlr4::ANTLRInputStream input(padded);
  input.name = diags.sources().path(file);
  IndentingTokenSource source(file, diags.sources(), &input);
  antlr4::CommonTokenStream tokens(&source);
  TLEParser parser(&tokens);
  parser.removeErrorListeners();
  parser.setErrorHandler(std::make_shared<ErrorStrategy>(file));
  DepthGuard guard(file, parser);
  parser.addParseListener(&guard);
  TLEParser::Eval_inputContext *tree = nullptr;
  try {
    tree = parser.eval_input();
  } catch (const SyntaxAbort &e) {
    if (source.error().set && e.atEof)
      diags.fatal(source.error().loc, source.error().message);
    // The closing parenthesis (on a line of its own) and the end are ours: an error there is
    // at the text's end.
    SourceLoc end = at;
    for (char ch : text) {
      if (ch == '\n') {
        ++end.line;
        end.col = 1;
      } else if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) {
        ++end.col;
      }
    }
    if (e.atEof || e.loc.line > end.line) {
      std::string msg = e.message;
      if (size_t k = msg.find("')'"); k != std::string::npos)
        msg.replace(k, 3, closer.empty() ? "the end" : "'" + closer + "'");
      diags.fatal(end, prefix + msg);
    }
    diags.fatal(e.loc, prefix + e.message);
  } catch (const std::exception &e) {
    diags.fatal(at, std::string("internal parser error: ") + e.what());
  }
  if (source.error().set)
    diags.fatal(source.error().loc, source.error().message);
  parser.removeParseListeners();
  return buildExpression(file, tree, ctx, diags);
}

} // namespace

ast::Expr *parseFieldExpression(uint32_t file, SourceLoc at, const std::string &text, ast::ASTContext &ctx,
                                DiagnosticEngine &diags) {
  return parseExpressionAt(file, at, text, ctx, diags, "f-string: ", "}");
}

ast::Expr *parseExpression(uint32_t file, SourceLoc at, const std::string &text, ast::ASTContext &ctx,
                           DiagnosticEngine &diags) {
  checkUtf8(file, diags.sources().text(file), diags);
  return parseExpressionAt(file, at, text, ctx, diags, "", "");
}

void dumpTokens(uint32_t file, std::ostream &os, DiagnosticEngine &diags) {
  const std::string &text = diags.sources().text(file);
  checkUtf8(file, text, diags);
  antlr4::ANTLRInputStream input(text);
  input.name = diags.sources().path(file);
  IndentingTokenSource source(file, diags.sources(), &input);
  const antlr4::dfa::Vocabulary &vocab = source.vocabulary();
  while (true) {
    std::unique_ptr<Token> t = source.nextToken();
    if (source.error().set)
      diags.fatal(source.error().loc, source.error().message);
    size_t type = t->getType();
    std::string kind = type == Token::EOF ? "EOF" : vocab.getSymbolicName(type);
    os << t->getLine() << ':' << t->getCharPositionInLine() + 1 << ' ' << kind << " '";
    writeEscaped(os, type == Token::EOF ? std::string() : t->getText());
    os << "'\n";
    if (type == Token::EOF)
      break;
  }
}

} // namespace tle::frontend
