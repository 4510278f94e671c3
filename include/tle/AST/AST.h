// The TLE abstract syntax tree: a Python-module AST with a source location on every node.
//
// The frontend (the only code that sees ANTLR types) builds this tree; Sema reads it. Nodes
// are owned by an ASTContext arena and refer to each other by raw pointer. Kinds are checked
// with llvm::isa / llvm::dyn_cast (each class has `classof`).
#pragma once

#include "tle/Support/Diagnostics.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace tle::ast {

class Node {
public:
  enum class Kind {
    // Expressions
    Name, IntLit, FloatLit, BoolLit, NoneLit, StringLit, Attribute, Call, Subscript, Slice,
    Binary, Unary, Compare, BoolOp, IfExp, Tuple, List, Dict, Lambda, Comp, Named, Starred, FString, OtherExpr,
    ExprFirst = Name, ExprLast = OtherExpr,
    // Statements
    ExprStmt, Assign, AugAssign, AnnAssign, Return, If, For, While, Pass, Break, Continue,
    FunctionDef, Import, ImportFrom, Assert, Try, OtherStmt,
    StmtFirst = ExprStmt, StmtLast = OtherStmt,
  };
  Node(Kind k, SourceLoc loc) : kind_(k), loc_(loc) {}
  virtual ~Node() = default;
  Kind kind() const { return kind_; }
  SourceLoc loc() const { return loc_; }

private:
  Kind kind_;
  SourceLoc loc_;
};

struct Expr : Node {
  using Node::Node;
  static bool classof(const Node *n) { return n->kind() >= Kind::ExprFirst && n->kind() <= Kind::ExprLast; }
};

struct Stmt : Node {
  using Node::Node;
  static bool classof(const Node *n) { return n->kind() >= Kind::StmtFirst && n->kind() <= Kind::StmtLast; }
};

#define TLE_AST_CLASSOF(K) \
  static bool classof(const Node *n) { return n->kind() == Kind::K; }

// ---------------------------------------------------------------------------------------------
// Expressions

/// An identifier: `x`, `tl`.
struct NameExpr : Expr {
  std::string name;
  NameExpr(SourceLoc l, std::string n) : Expr(Kind::Name, l), name(std::move(n)) {}
  TLE_AST_CLASSOF(Name)
};

/// An integer literal (decimal, hex, octal, binary; underscores allowed). Values that do not
/// fit in int64 are rejected by the frontend with a located error.
struct IntLit : Expr {
  int64_t value;
  /// A literal in [2**63, 2**64): `value` holds its bits; it is a uint64 constant (Triton's
  /// to_tensor types such a literal uint64), not a compile-time int.
  bool unsigned64 = false;
  IntLit(SourceLoc l, int64_t v, bool u = false) : Expr(Kind::IntLit, l), value(v), unsigned64(u) {}
  TLE_AST_CLASSOF(IntLit)
};

struct FloatLit : Expr {
  double value;
  FloatLit(SourceLoc l, double v) : Expr(Kind::FloatLit, l), value(v) {}
  TLE_AST_CLASSOF(FloatLit)
};

struct BoolLit : Expr {
  bool value;
  BoolLit(SourceLoc l, bool v) : Expr(Kind::BoolLit, l), value(v) {}
  TLE_AST_CLASSOF(BoolLit)
};

struct NoneLit : Expr {
  explicit NoneLit(SourceLoc l) : Expr(Kind::NoneLit, l) {}
  TLE_AST_CLASSOF(NoneLit)
};

/// A string literal after concatenation of adjacent pieces and escape processing
/// (f-strings are kept as their raw text).
struct StringLit : Expr {
  std::string value;
  StringLit(SourceLoc l, std::string v) : Expr(Kind::StringLit, l), value(std::move(v)) {}
  TLE_AST_CLASSOF(StringLit)
};

/// `base.attr`; the location is that of the attribute name.
struct AttributeExpr : Expr {
  Expr *base;
  std::string attr;
  AttributeExpr(SourceLoc l, Expr *b, std::string a) : Expr(Kind::Attribute, l), base(b), attr(std::move(a)) {}
  TLE_AST_CLASSOF(Attribute)
};

/// A keyword argument `name=value` of a call.
struct Keyword {
  SourceLoc loc;
  std::string name;
  Expr *value;
};

/// `callee(args..., name=value...)`; the location is that of the opening parenthesis's callee.
struct CallExpr : Expr {
  Expr *callee;
  std::vector<Expr *> args;
  std::vector<Keyword> keywords;
  CallExpr(SourceLoc l, Expr *c) : Expr(Kind::Call, l), callee(c) {}
  TLE_AST_CLASSOF(Call)
};

/// `lower:upper:step` inside a subscript; any part may be null.
struct SliceExpr : Expr {
  Expr *lower = nullptr, *upper = nullptr, *step = nullptr;
  explicit SliceExpr(SourceLoc l) : Expr(Kind::Slice, l) {}
  TLE_AST_CLASSOF(Slice)
};

/// `base[i0, i1, ...]`; each index is an Expr, a SliceExpr or a NoneLit.
struct SubscriptExpr : Expr {
  Expr *base;
  std::vector<Expr *> indices;
  SubscriptExpr(SourceLoc l, Expr *b) : Expr(Kind::Subscript, l), base(b) {}
  TLE_AST_CLASSOF(Subscript)
};

enum class BinaryOp { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, MatMul, Shl, Shr, BitAnd, BitOr, BitXor };
/// The Python spelling of a binary operator ("+", "//", ...).
const char *spelling(BinaryOp op);

/// `lhs op rhs`; the location is that of the operator.
struct BinaryExpr : Expr {
  BinaryOp op;
  Expr *lhs, *rhs;
  BinaryExpr(SourceLoc l, BinaryOp o, Expr *a, Expr *b) : Expr(Kind::Binary, l), op(o), lhs(a), rhs(b) {}
  TLE_AST_CLASSOF(Binary)
};

enum class UnaryOp { Neg, Pos, Not, Invert };
const char *spelling(UnaryOp op);

struct UnaryExpr : Expr {
  UnaryOp op;
  Expr *operand;
  UnaryExpr(SourceLoc l, UnaryOp o, Expr *e) : Expr(Kind::Unary, l), op(o), operand(e) {}
  TLE_AST_CLASSOF(Unary)
};

enum class CompareOp { Lt, Le, Gt, Ge, Eq, Ne, Is, IsNot, In, NotIn };
const char *spelling(CompareOp op);

/// A (possibly chained) comparison `a < b <= c`: operands.size() == ops.size() + 1.
struct CompareExpr : Expr {
  std::vector<CompareOp> ops;
  std::vector<Expr *> operands;
  std::vector<SourceLoc> opLocs;
  explicit CompareExpr(SourceLoc l) : Expr(Kind::Compare, l) {}
  TLE_AST_CLASSOF(Compare)
};

/// `a and b and c` / `a or b`.
struct BoolOpExpr : Expr {
  bool isAnd;
  std::vector<Expr *> values;
  BoolOpExpr(SourceLoc l, bool a) : Expr(Kind::BoolOp, l), isAnd(a) {}
  TLE_AST_CLASSOF(BoolOp)
};

/// `then if cond else otherwise`.
struct IfExpExpr : Expr {
  Expr *cond, *thenExpr, *elseExpr;
  IfExpExpr(SourceLoc l, Expr *c, Expr *t, Expr *e) : Expr(Kind::IfExp, l), cond(c), thenExpr(t), elseExpr(e) {}
  TLE_AST_CLASSOF(IfExp)
};

struct TupleExpr : Expr {
  std::vector<Expr *> elts;
  explicit TupleExpr(SourceLoc l) : Expr(Kind::Tuple, l) {}
  TLE_AST_CLASSOF(Tuple)
};

struct ListExpr : Expr {
  std::vector<Expr *> elts;
  explicit ListExpr(SourceLoc l) : Expr(Kind::List, l) {}
  TLE_AST_CLASSOF(List)
};

/// `{key: value, ...}` (a dict display without `**` unpacking); keys[i] maps to values[i].
struct DictExpr : Expr {
  std::vector<Expr *> keys, values;
  explicit DictExpr(SourceLoc l) : Expr(Kind::Dict, l) {}
  TLE_AST_CLASSOF(Dict)
};

/// A list comprehension `[elt for target in iter if cond ...]` or a generator expression
/// `(elt for ...)`: its `for` clauses in order (the first outermost), each with its conditions.
struct CompExpr : Expr {
  struct For {
    Expr *target = nullptr;
    Expr *iter = nullptr;
    std::vector<Expr *> ifs;
  };
  Expr *elt = nullptr;
  std::vector<For> fors;
  bool generator = false;
  explicit CompExpr(SourceLoc l) : Expr(Kind::Comp, l) {}
  TLE_AST_CLASSOF(Comp)
};

/// An assignment expression `name := value`: binds `name` and is the value.
struct NamedExpr : Expr {
  std::string name;
  Expr *value;
  NamedExpr(SourceLoc l, std::string n, Expr *v) : Expr(Kind::Named, l), name(std::move(n)), value(v) {}
  TLE_AST_CLASSOF(Named)
};

/// `lambda params: body` (parameter names only).
struct LambdaExpr : Expr {
  std::vector<std::string> params;
  Expr *body;
  LambdaExpr(SourceLoc l, Expr *b) : Expr(Kind::Lambda, l), body(b) {}
  TLE_AST_CLASSOF(Lambda)
};

/// `*value` in a call or target list.
struct StarredExpr : Expr {
  Expr *value;
  StarredExpr(SourceLoc l, Expr *v) : Expr(Kind::Starred, l), value(v) {}
  TLE_AST_CLASSOF(Starred)
};

/// One piece of an f-string: literal text (escapes processed, `{{` / `}}` collapsed), or a
/// replacement field `{value!conversion:spec}` (`{value=}` keeps its source text as `label`).
struct FStringPart {
  std::string literal;   ///< the text, when `value` is null
  Expr *value = nullptr; ///< the field's expression
  char conversion = 0;   ///< 'r', 's', 'a', or 0
  std::string spec;      ///< the format spec after ':' (literal; no nested fields)
  std::string label;     ///< `{x = }`: the text "x = " printed before the value
};

/// An f-string with replacement fields (adjacent literals concatenated into it):
/// `f"BLOCK={BLOCK} too small"`; the location is that of its first string token.
struct FStringExpr : Expr {
  std::vector<FStringPart> parts;
  /// A problem Python reports as a SyntaxError (a single '}', a bad field) or that TLE does not
  /// support (a field inside a format spec): an error only where the f-string is evaluated, so
  /// that host code with such f-strings still compiles.
  std::string error;
  SourceLoc errorLoc;
  explicit FStringExpr(SourceLoc l) : Expr(Kind::FString, l) {}
  TLE_AST_CLASSOF(FString)
};

/// Syntax the parser accepts but the AST does not model (comprehensions, set displays,
/// await, yield, ...). `what` names the construct for diagnostics.
struct OtherExpr : Expr {
  std::string what;
  OtherExpr(SourceLoc l, std::string w) : Expr(Kind::OtherExpr, l), what(std::move(w)) {}
  TLE_AST_CLASSOF(OtherExpr)
};

// ---------------------------------------------------------------------------------------------
// Statements

using Block = std::vector<Stmt *>;

struct ExprStmt : Stmt {
  Expr *value;
  ExprStmt(SourceLoc l, Expr *v) : Stmt(Kind::ExprStmt, l), value(v) {}
  TLE_AST_CLASSOF(ExprStmt)
};

/// `t1 = t2 = value`; targets are Name, Attribute, Subscript, Tuple or List expressions.
struct AssignStmt : Stmt {
  std::vector<Expr *> targets;
  Expr *value;
  AssignStmt(SourceLoc l, Expr *v) : Stmt(Kind::Assign, l), value(v) {}
  TLE_AST_CLASSOF(Assign)
};

/// `target op= value`; location is that of the operator.
struct AugAssignStmt : Stmt {
  Expr *target;
  BinaryOp op;
  Expr *value;
  AugAssignStmt(SourceLoc l, Expr *t, BinaryOp o, Expr *v) : Stmt(Kind::AugAssign, l), target(t), op(o), value(v) {}
  TLE_AST_CLASSOF(AugAssign)
};

/// `target: annotation [= value]`.
struct AnnAssignStmt : Stmt {
  Expr *target, *annotation, *value;
  AnnAssignStmt(SourceLoc l, Expr *t, Expr *a, Expr *v) : Stmt(Kind::AnnAssign, l), target(t), annotation(a), value(v) {}
  TLE_AST_CLASSOF(AnnAssign)
};

struct ReturnStmt : Stmt {
  Expr *value; // may be null
  ReturnStmt(SourceLoc l, Expr *v) : Stmt(Kind::Return, l), value(v) {}
  TLE_AST_CLASSOF(Return)
};

/// `if cond: body elif ...: ... else: orelse` (elif is an IfStmt nested in orelse).
struct IfStmt : Stmt {
  Expr *cond;
  Block body, orelse;
  IfStmt(SourceLoc l, Expr *c) : Stmt(Kind::If, l), cond(c) {}
  TLE_AST_CLASSOF(If)
};

struct ForStmt : Stmt {
  Expr *target, *iter;
  Block body, orelse;
  ForStmt(SourceLoc l, Expr *t, Expr *i) : Stmt(Kind::For, l), target(t), iter(i) {}
  TLE_AST_CLASSOF(For)
};

struct WhileStmt : Stmt {
  Expr *cond;
  Block body, orelse;
  WhileStmt(SourceLoc l, Expr *c) : Stmt(Kind::While, l), cond(c) {}
  TLE_AST_CLASSOF(While)
};

struct PassStmt : Stmt {
  explicit PassStmt(SourceLoc l) : Stmt(Kind::Pass, l) {}
  TLE_AST_CLASSOF(Pass)
};
struct BreakStmt : Stmt {
  explicit BreakStmt(SourceLoc l) : Stmt(Kind::Break, l) {}
  TLE_AST_CLASSOF(Break)
};
struct ContinueStmt : Stmt {
  explicit ContinueStmt(SourceLoc l) : Stmt(Kind::Continue, l) {}
  TLE_AST_CLASSOF(Continue)
};

/// One parameter of a `def`. `star` is 1 for `*args`, 2 for `**kwargs`, 0 otherwise.
struct Param {
  SourceLoc loc;
  std::string name;
  Expr *annotation = nullptr;
  Expr *defaultValue = nullptr;
  int star = 0;
  bool keywordOnly = false;
};

/// `@decorators def name(params) -> returns: body`; location is that of the name.
struct FunctionDef : Stmt {
  std::string name;
  std::vector<Param> params;
  std::vector<Expr *> decorators;
  Expr *returns = nullptr;
  Block body;
  FunctionDef(SourceLoc l, std::string n) : Stmt(Kind::FunctionDef, l), name(std::move(n)) {}
  TLE_AST_CLASSOF(FunctionDef)
};

/// `import a.b.c as d, e` — one alias per name; `asname` empty when absent.
struct ImportAlias {
  SourceLoc loc;
  std::string name;   // dotted
  std::string asname; // may be empty
};

struct ImportStmt : Stmt {
  std::vector<ImportAlias> names;
  explicit ImportStmt(SourceLoc l) : Stmt(Kind::Import, l) {}
  TLE_AST_CLASSOF(Import)
};

/// `from module import names`; `level` counts leading dots; a `*` import has one alias "*".
struct ImportFromStmt : Stmt {
  std::string module;
  int level = 0;
  std::vector<ImportAlias> names;
  explicit ImportFromStmt(SourceLoc l) : Stmt(Kind::ImportFrom, l) {}
  TLE_AST_CLASSOF(ImportFrom)
};

struct AssertStmt : Stmt {
  Expr *test, *msg;
  AssertStmt(SourceLoc l, Expr *t, Expr *m) : Stmt(Kind::Assert, l), test(t), msg(m) {}
  TLE_AST_CLASSOF(Assert)
};

/// One `except [type [as name]]:` clause of a TryStmt; `type` is null for a bare `except:`.
struct ExceptHandler {
  SourceLoc loc;
  Expr *type = nullptr;
  std::string name; ///< the `as` name; empty when absent
  Block body;
};

/// `try: body except ...: handlers else: orelse finally: finalbody`. Only module-level
/// definitions read it (kernels reject it).
struct TryStmt : Stmt {
  Block body;
  std::vector<ExceptHandler> handlers;
  Block orelse, finalbody;
  explicit TryStmt(SourceLoc l) : Stmt(Kind::Try, l) {}
  TLE_AST_CLASSOF(Try)
};

/// A statement the parser accepts but the AST does not model (class, with, global,
/// del, raise, async, ...). `what` names it ("class definition", "with statement").
struct OtherStmt : Stmt {
  std::string what;
  std::string name; ///< a class definition's class name (module-level code binds it); else empty
  const Expr *raised = nullptr; ///< a raise statement's exception (null for a bare `raise`)
  OtherStmt(SourceLoc l, std::string w) : Stmt(Kind::OtherStmt, l), what(std::move(w)) {}
  TLE_AST_CLASSOF(OtherStmt)
};

#undef TLE_AST_CLASSOF

/// A parsed source file.
struct Module {
  uint32_t file = 0;
  Block body;
};

/// Owns every node of one or more modules.
class ASTContext {
public:
  template <typename T, typename... Args> T *make(Args &&...args) {
    auto node = std::make_unique<T>(std::forward<Args>(args)...);
    T *raw = node.get();
    nodes_.push_back(std::move(node));
    return raw;
  }

private:
  std::vector<std::unique_ptr<Node>> nodes_;
};

/// Calls `fn` with the name of every NameExpr under statement `s` (its expressions, nested
/// blocks and functions, decorators and annotations), in source order: the names it reads or
/// binds, not attributes, keywords or strings.
void forEachNameUse(const Stmt &s, const std::function<void(const std::string &)> &fn);

/// Writes an indented, deterministic dump of `m` (for `tlec --emit=ast`): one node per line
/// with its kind, its `line:col` and its scalar fields.
void printModule(std::ostream &os, const Module &m);

} // namespace tle::ast
