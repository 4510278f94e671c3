// Parse tree to AST: one builder function per grammar rule, plus target/parameter checks.
#include "ASTBuilder.h"

#include "Literals.h"
#include "NestingCheck.h"

#include <llvm/Support/Casting.h>

#include <cstdio>
#include <set>
#include <sstream>
#include <utility>

namespace tle::frontend {

using namespace tle::ast;
using P = grammar::TLEParser;
using antlr4::Token;
using antlr4::tree::TerminalNode;

namespace {

class Builder {
public:
  Builder(uint32_t file, ASTContext &ctx, DiagnosticEngine &diags) : file_(file), ctx_(ctx), diags_(diags) {}

  /// The expression of a replacement field (one testlist).
  Expr *expression(P::TestlistContext *c) { return testlist(c); }

  Module module(P::File_inputContext *c) {
    Module m;
    m.file = file_;
    for (P::StmtContext *s : c->stmt())
      stmt(s, m.body);
    return m;
  }

private:
  uint32_t file_;
  ASTContext &ctx_;
  DiagnosticEngine &diags_;

  // --- helpers ---------------------------------------------------------------------------------

  SourceLoc loc(const Token *t) const {
    return SourceLoc{file_, static_cast<uint32_t>(t->getLine()), static_cast<uint32_t>(t->getCharPositionInLine() + 1)};
  }
  SourceLoc loc(TerminalNode *n) const { return loc(n->getSymbol()); }
  SourceLoc loc(antlr4::ParserRuleContext *c) const { return loc(c->getStart()); }

  /// The location `offset` bytes into the text of token `t` (which may span lines).
  SourceLoc locWithin(const Token *t, size_t offset) const {
    SourceLoc l = loc(t);
    std::string text = t->getText();
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(text[i]);
      if (c == '\n') {
        ++l.line;
        l.col = 1;
      } else if ((c & 0xC0) != 0x80) {
        ++l.col;
      }
    }
    return l;
  }

  [[noreturn]] void error(SourceLoc l, const std::string &msg) { diags_.fatal(l, msg); }

  template <typename T, typename... A> T *make(A &&...args) { return ctx_.make<T>(std::forward<A>(args)...); }

  OtherExpr *other(antlr4::ParserRuleContext *c, const char *what) { return make<OtherExpr>(loc(c), what); }
  OtherStmt *otherStmt(antlr4::ParserRuleContext *c, const char *what) { return make<OtherStmt>(loc(c), what); }

  // --- statements ------------------------------------------------------------------------------

  void stmt(P::StmtContext *c, Block &out) {
    if (P::Simple_stmtsContext *s = c->simple_stmts())
      return simpleStmts(s, out);
    out.push_back(compound(c->compound_stmt()));
  }

  void simpleStmts(P::Simple_stmtsContext *c, Block &out) {
    for (P::Simple_stmtContext *s : c->simple_stmt())
      out.push_back(simple(s));
  }

  Block block(P::BlockContext *c) {
    Block b;
    if (P::Simple_stmtsContext *s = c->simple_stmts()) {
      simpleStmts(s, b);
      return b;
    }
    for (P::StmtContext *s : c->stmt())
      stmt(s, b);
    return b;
  }

  Stmt *simple(P::Simple_stmtContext *c) {
    if (auto *s = c->expr_stmt())
      return exprStmt(s);
    if (auto *s = c->pass_stmt())
      return make<PassStmt>(loc(s));
    if (auto *s = c->break_stmt())
      return make<BreakStmt>(loc(s));
    if (auto *s = c->continue_stmt())
      return make<ContinueStmt>(loc(s));
    if (auto *s = c->return_stmt())
      return make<ReturnStmt>(loc(s), s->testlist_star_expr() ? testlistStar(s->testlist_star_expr()) : nullptr);
    if (auto *s = c->import_name())
      return importName(s);
    if (auto *s = c->import_from())
      return importFrom(s);
    if (auto *s = c->assert_stmt()) {
      std::vector<P::TestContext *> t = s->test();
      return make<AssertStmt>(loc(s), test(t[0]), t.size() > 1 ? test(t[1]) : nullptr);
    }
    if (auto *s = c->yield_stmt())
      return make<ExprStmt>(loc(s), other(s, "yield expression"));
    if (c->del_stmt())
      return otherStmt(c, "del statement");
    if (auto *r = c->raise_stmt()) {
      OtherStmt *o = otherStmt(c, "raise statement");
      if (!r->test().empty())
        o->raised = test(r->test()[0]);
      return o;
    }
    if (c->global_stmt())
      return otherStmt(c, "global statement");
    return otherStmt(c, "nonlocal statement");
  }

  Expr *assignValue(P::Assign_valueContext *c) {
    if (auto *y = c->yield_expr())
      return other(y, "yield expression");
    return testlistStar(c->testlist_star_expr());
  }

  Stmt *exprStmt(P::Expr_stmtContext *c) {
    Expr *first = testlistStar(c->testlist_star_expr());
    SourceLoc start = loc(c);
    if (P::AnnassignContext *ann = c->annassign()) {
      checkAnnotatedTarget(first);
      Expr *value = ann->assign_value() ? assignValue(ann->assign_value()) : nullptr;
      return make<AnnAssignStmt>(start, first, test(ann->test()), value);
    }
    if (P::AugassignContext *aug = c->augassign()) {
      if (!llvm::isa<NameExpr, AttributeExpr, SubscriptExpr>(first))
        error(first->loc(), "'" + describe(first) + "' is an illegal expression for augmented assignment");
      Expr *value = c->yield_expr() ? other(c->yield_expr(), "yield expression") : testlist(c->testlist());
      return make<AugAssignStmt>(loc(aug), first, augOp(aug->getStart()->getType()), value);
    }
    std::vector<P::Assign_valueContext *> values = c->assign_value();
    if (values.empty())
      return make<ExprStmt>(start, first);
    auto *s = make<AssignStmt>(start, assignValue(values.back()));
    checkTarget(first, "assign to");
    s->targets.push_back(first);
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      if (values[i]->yield_expr())
        error(loc(values[i]), "assignment to yield expression not possible");
      Expr *t = assignValue(values[i]);
      checkTarget(t, "assign to");
      s->targets.push_back(t);
    }
    return s;
  }

  static BinaryOp augOp(size_t type) {
    switch (type) {
    case P::ADD_ASSIGN: return BinaryOp::Add;
    case P::SUB_ASSIGN: return BinaryOp::Sub;
    case P::MULT_ASSIGN: return BinaryOp::Mul;
    case P::AT_ASSIGN: return BinaryOp::MatMul;
    case P::DIV_ASSIGN: return BinaryOp::Div;
    case P::MOD_ASSIGN: return BinaryOp::Mod;
    case P::AND_ASSIGN: return BinaryOp::BitAnd;
    case P::OR_ASSIGN: return BinaryOp::BitOr;
    case P::XOR_ASSIGN: return BinaryOp::BitXor;
    case P::LEFT_SHIFT_ASSIGN: return BinaryOp::Shl;
    case P::RIGHT_SHIFT_ASSIGN: return BinaryOp::Shr;
    case P::POWER_ASSIGN: return BinaryOp::Pow;
    default: return BinaryOp::FloorDiv; // IDIV_ASSIGN
    }
  }

  /// A short name of an expression kind for messages ("function call", "literal", ...).
  static std::string describe(const Expr *e) {
    switch (e->kind()) {
    case Node::Kind::Name: return "name";
    case Node::Kind::IntLit:
    case Node::Kind::FloatLit:
    case Node::Kind::StringLit:
    case Node::Kind::FString: return "literal";
    case Node::Kind::BoolLit: return llvm::cast<BoolLit>(e)->value ? "True" : "False";
    case Node::Kind::NoneLit: return "None";
    case Node::Kind::Attribute: return "attribute";
    case Node::Kind::Call: return "function call";
    case Node::Kind::Subscript: return "subscript";
    case Node::Kind::Slice: return "slice";
    case Node::Kind::Compare: return "comparison";
    case Node::Kind::IfExp: return "conditional expression";
    case Node::Kind::Tuple: return "tuple";
    case Node::Kind::List: return "list";
    case Node::Kind::Dict: return "dict";
    case Node::Kind::Lambda: return "lambda";
    case Node::Kind::Named: return "assignment expression";
    case Node::Kind::Comp: return llvm::cast<CompExpr>(e)->generator ? "generator expression" : "list comprehension";
    case Node::Kind::Starred: return "starred";
    case Node::Kind::OtherExpr: return llvm::cast<OtherExpr>(e)->what;
    default: return "expression";
    }
  }

  /// Checks an assignment / for-loop target: names, attributes, subscripts, and tuples or
  /// lists of them with at most one starred element.
  void checkTarget(Expr *e, const char *verb) {
    if (llvm::isa<NameExpr, AttributeExpr, SubscriptExpr>(e))
      return;
    if (llvm::isa<TupleExpr, ListExpr>(e)) {
      const std::vector<Expr *> &elts =
          llvm::isa<TupleExpr>(e) ? llvm::cast<TupleExpr>(e)->elts : llvm::cast<ListExpr>(e)->elts;
      bool starred = false;
      for (Expr *x : elts) {
        if (auto *s = llvm::dyn_cast<StarredExpr>(x)) {
          if (starred)
            error(s->loc(), "multiple starred expressions in assignment");
          starred = true;
          checkTarget(s->value, verb);
          continue;
        }
        checkTarget(x, verb);
      }
      return;
    }
    if (llvm::isa<StarredExpr>(e))
      error(e->loc(), "starred assignment target must be in a list or tuple");
    error(e->loc(), std::string("cannot ") + verb + " " + describe(e));
  }

  void checkAnnotatedTarget(Expr *e) {
    if (llvm::isa<NameExpr, AttributeExpr, SubscriptExpr>(e))
      return;
    if (llvm::isa<TupleExpr, ListExpr>(e))
      error(e->loc(), "only single target (not " + describe(e) + ") can be annotated");
    error(e->loc(), "illegal target for annotation");
  }

  std::string dotted(P::Dotted_nameContext *c) {
    std::string s;
    for (TerminalNode *n : c->NAME()) {
      if (!s.empty())
        s += '.';
      s += n->getText();
    }
    return s;
  }

  Stmt *importName(P::Import_nameContext *c) {
    auto *s = make<ImportStmt>(loc(c));
    for (P::Dotted_as_nameContext *d : c->dotted_as_name())
      s->names.push_back({loc(d), dotted(d->dotted_name()), d->NAME() ? d->NAME()->getText() : std::string()});
    return s;
  }

  Stmt *importFrom(P::Import_fromContext *c) {
    auto *s = make<ImportFromStmt>(loc(c));
    for (P::Import_dotsContext *d : c->import_dots())
      s->level += d->ELLIPSIS() ? 3 : 1;
    if (c->dotted_name())
      s->module = dotted(c->dotted_name());
    if (c->STAR()) {
      s->names.push_back({loc(c->STAR()), "*", ""});
      return s;
    }
    for (P::Import_as_nameContext *n : c->import_as_names()->import_as_name()) {
      std::vector<TerminalNode *> names = n->NAME();
      s->names.push_back({loc(n), names[0]->getText(), names.size() > 1 ? names[1]->getText() : std::string()});
    }
    return s;
  }

  Stmt *compound(P::Compound_stmtContext *c) {
    if (auto *s = c->if_stmt())
      return ifStmt(s);
    if (auto *s = c->while_stmt()) {
      auto *w = make<WhileStmt>(loc(s), namedexprTest(s->namedexpr_test()));
      w->body = block(s->block());
      if (s->else_clause())
        w->orelse = block(s->else_clause()->block());
      return w;
    }
    if (auto *s = c->for_stmt()) {
      Expr *target = exprlist(s->exprlist());
      checkTarget(target, "assign to");
      auto *f = make<ForStmt>(loc(s), target, testlist(s->testlist()));
      f->body = block(s->block());
      if (s->else_clause())
        f->orelse = block(s->else_clause()->block());
      return f;
    }
    if (auto *s = c->funcdef())
      return funcdef(s, {});
    if (auto *s = c->decorated())
      return decorated(s);
    if (auto *s = c->try_stmt())
      return tryStmt(s);
    if (c->with_stmt())
      return otherStmt(c, "with statement");
    if (auto *k = c->classdef())
      return classdef(k);
    if (c->match_stmt())
      return otherStmt(c, "match statement");
    P::Async_stmtContext *a = c->async_stmt();
    if (a->funcdef())
      return otherStmt(a, "async function definition");
    if (a->with_stmt())
      return otherStmt(a, "async with statement");
    return otherStmt(a, "async for statement");
  }

  Stmt *tryStmt(P::Try_stmtContext *c) {
    auto *t = make<TryStmt>(loc(c));
    t->body = block(c->block());
    for (P::Except_clauseContext *e : c->except_clause()) {
      ExceptHandler h;
      h.loc = loc(e);
      if (P::TestContext *ty = e->test())
        h.type = test(ty);
      if (e->NAME())
        h.name = e->NAME()->getText();
      h.body = block(e->block());
      t->handlers.push_back(std::move(h));
    }
    if (c->else_clause())
      t->orelse = block(c->else_clause()->block());
    if (c->finally_clause())
      t->finalbody = block(c->finally_clause()->block());
    return t;
  }

  Stmt *ifStmt(P::If_stmtContext *c) {
    auto *top = make<IfStmt>(loc(c), namedexprTest(c->namedexpr_test()));
    top->body = block(c->block());
    IfStmt *cur = top;
    for (P::Elif_clauseContext *e : c->elif_clause()) {
      auto *next = make<IfStmt>(loc(e), namedexprTest(e->namedexpr_test()));
      next->body = block(e->block());
      cur->orelse.push_back(next);
      cur = next;
    }
    if (c->else_clause())
      cur->orelse = block(c->else_clause()->block());
    return top;
  }

  Stmt *decorated(P::DecoratedContext *c) {
    std::vector<Expr *> decorators;
    for (P::DecoratorContext *d : c->decorator())
      decorators.push_back(namedexprTest(d->namedexpr_test()));
    if (auto *f = c->funcdef())
      return funcdef(f, std::move(decorators));
    if (auto *k = c->classdef())
      return classdef(k);
    return otherStmt(c->async_funcdef(), "async function definition");
  }

  /// A class definition: not evaluated, but its name is bound (module-level code leaves it unknown).
  Stmt *classdef(P::ClassdefContext *c) {
    OtherStmt *o = otherStmt(c, "class definition");
    o->name = c->NAME()->getText();
    return o;
  }

  Stmt *funcdef(P::FuncdefContext *c, std::vector<Expr *> decorators) {
    auto *f = make<FunctionDef>(loc(c->NAME()), c->NAME()->getText());
    f->decorators = std::move(decorators);
    if (P::TypedargslistContext *p = c->typedargslist())
      f->params = params(p);
    if (P::TestContext *r = c->test())
      f->returns = test(r);
    f->body = block(c->block());
    return f;
  }

  /// Parameters of a `def`, with Python's ordering rules.
  std::vector<Param> params(P::TypedargslistContext *c) {
    std::vector<Param> out;
    std::set<std::string> names;
    bool star = false, kwargs = false, slash = false, sawDefault = false, bareStar = false;
    SourceLoc bareStarLoc;
    auto add = [&](Param p) {
      if (!names.insert(p.name).second)
        error(p.loc, "duplicate argument '" + p.name + "' in function definition");
      out.push_back(std::move(p));
    };
    for (P::TparamContext *t : c->tparam()) {
      SourceLoc l = loc(t);
      if (kwargs)
        error(l, "parameters cannot follow the '**' parameter");
      std::vector<P::TestContext *> tests = t->test();
      if (t->DIV()) {
        if (slash)
          error(l, "'/' may appear only once");
        if (star)
          error(l, "'/' must be ahead of '*'");
        if (out.empty())
          error(l, "at least one parameter must precede '/'");
        slash = true;
        continue;
      }
      if (t->POWER()) {
        if (bareStar)
          error(bareStarLoc, "named parameters must follow bare '*'");
        Param p{loc(t->NAME()), t->NAME()->getText()};
        p.star = 2;
        p.annotation = tests.empty() ? nullptr : test(tests[0]);
        kwargs = true;
        add(std::move(p));
        continue;
      }
      if (t->STAR()) {
        if (star)
          error(l, "'*' may appear only once in a parameter list");
        star = true;
        if (!t->NAME()) {
          bareStar = true;
          bareStarLoc = l;
          continue;
        }
        Param p{loc(t->NAME()), t->NAME()->getText()};
        p.star = 1;
        if (P::Star_annotationContext *a = t->star_annotation())
          p.annotation = a->test() ? test(a->test()) : starExpr(a->star_expr());
        add(std::move(p));
        continue;
      }
      Param p{loc(t->NAME()), t->NAME()->getText()};
      size_t i = 0;
      if (t->COLON())
        p.annotation = test(tests[i++]);
      if (t->ASSIGN())
        p.defaultValue = test(tests[i]);
      p.keywordOnly = star;
      if (star) {
        bareStar = false;
      } else if (p.defaultValue) {
        sawDefault = true;
      } else if (sawDefault) {
        error(p.loc, "parameter without a default follows parameter with a default");
      }
      add(std::move(p));
    }
    if (bareStar)
      error(bareStarLoc, "named parameters must follow bare '*'");
    return out;
  }

  // --- expressions -----------------------------------------------------------------------------

  Expr *namedexprTest(P::Namedexpr_testContext *c) {
    if (c->WALRUS())
      return make<NamedExpr>(loc(c), c->NAME()->getText(), test(c->test()));
    return test(c->test());
  }

  Expr *test(P::TestContext *c) {
    if (P::LambdefContext *l = c->lambdef())
      return lambda(l);
    std::vector<P::Or_testContext *> ors = c->or_test();
    Expr *body = orTest(ors[0]);
    if (ors.size() == 1)
      return body;
    Expr *cond = orTest(ors[1]);
    return make<IfExpExpr>(loc(c->IF()), cond, body, test(c->test()));
  }

  Expr *lambda(P::LambdefContext *c) {
    std::vector<std::string> names;
    if (P::VarargslistContext *v = c->varargslist()) {
      std::set<std::string> seen;
      for (P::VparamContext *p : v->vparam()) {
        if (!p->NAME())
          continue; // bare '*' or '/'
        if (!seen.insert(p->NAME()->getText()).second)
          error(loc(p->NAME()), "duplicate argument '" + p->NAME()->getText() + "' in lambda");
        names.push_back(p->NAME()->getText());
      }
    }
    auto *l = make<LambdaExpr>(loc(c), test(c->test()));
    l->params = std::move(names);
    return l;
  }

  Expr *orTest(P::Or_testContext *c) {
    std::vector<P::And_testContext *> v = c->and_test();
    if (v.size() == 1)
      return andTest(v[0]);
    auto *b = make<BoolOpExpr>(loc(c->OR(0)), false);
    for (P::And_testContext *a : v)
      b->values.push_back(andTest(a));
    return b;
  }

  Expr *andTest(P::And_testContext *c) {
    std::vector<P::Not_testContext *> v = c->not_test();
    if (v.size() == 1)
      return notTest(v[0]);
    auto *b = make<BoolOpExpr>(loc(c->AND(0)), true);
    for (P::Not_testContext *n : v)
      b->values.push_back(notTest(n));
    return b;
  }

  Expr *notTest(P::Not_testContext *c) {
    if (c->NOT())
      return make<UnaryExpr>(loc(c->NOT()), UnaryOp::Not, notTest(c->not_test()));
    return comparison(c->comparison());
  }

  Expr *comparison(P::ComparisonContext *c) {
    std::vector<P::ExprContext *> operands = c->expr();
    if (operands.size() == 1)
      return expr(operands[0]);
    std::vector<P::Comp_opContext *> ops = c->comp_op();
    auto *cmp = make<CompareExpr>(loc(ops[0]));
    cmp->operands.push_back(expr(operands[0]));
    for (size_t i = 0; i < ops.size(); ++i) {
      cmp->ops.push_back(compOp(ops[i]));
      cmp->opLocs.push_back(loc(ops[i]));
      cmp->operands.push_back(expr(operands[i + 1]));
    }
    return cmp;
  }

  CompareOp compOp(P::Comp_opContext *c) {
    switch (c->getStart()->getType()) {
    case P::LESS_THAN: return CompareOp::Lt;
    case P::GREATER_THAN: return CompareOp::Gt;
    case P::EQUALS: return CompareOp::Eq;
    case P::GT_EQ: return CompareOp::Ge;
    case P::LT_EQ: return CompareOp::Le;
    case P::NOT_EQ_2: return CompareOp::Ne;
    case P::IN: return CompareOp::In;
    case P::NOT: return CompareOp::NotIn;
    case P::IS: return c->NOT() ? CompareOp::IsNot : CompareOp::Is;
    default: error(loc(c), "'<>' is not a Python 3 operator; use '!='");
    }
  }

  static BinaryOp binaryOp(size_t type) {
    switch (type) {
    case P::OR_OP: return BinaryOp::BitOr;
    case P::XOR: return BinaryOp::BitXor;
    case P::AND_OP: return BinaryOp::BitAnd;
    case P::LEFT_SHIFT: return BinaryOp::Shl;
    case P::RIGHT_SHIFT: return BinaryOp::Shr;
    case P::ADD: return BinaryOp::Add;
    case P::MINUS: return BinaryOp::Sub;
    case P::STAR: return BinaryOp::Mul;
    case P::AT: return BinaryOp::MatMul;
    case P::DIV: return BinaryOp::Div;
    case P::MOD: return BinaryOp::Mod;
    default: return BinaryOp::FloorDiv; // IDIV
    }
  }

  /// A left-associative chain `operand (op operand)*`, e.g. `a - b - c` is `(a - b) - c`.
  template <typename Sub, typename F> Expr *chain(antlr4::ParserRuleContext *c, F operand) {
    if (c->children.size() == 1)
      return operand(static_cast<Sub *>(c->children[0]));
    Expr *lhs = nullptr;
    const Token *op = nullptr;
    for (antlr4::tree::ParseTree *child : c->children) {
      if (auto *t = dynamic_cast<TerminalNode *>(child)) {
        op = t->getSymbol();
        continue;
      }
      Expr *rhs = operand(static_cast<Sub *>(child));
      lhs = lhs ? make<BinaryExpr>(loc(op), binaryOp(op->getType()), lhs, rhs) : rhs;
    }
    return lhs;
  }

  Expr *expr(P::ExprContext *c) {
    return chain<P::Xor_exprContext>(c, [&](P::Xor_exprContext *x) { return xorExpr(x); });
  }
  Expr *xorExpr(P::Xor_exprContext *c) {
    return chain<P::And_exprContext>(c, [&](P::And_exprContext *x) { return andExpr(x); });
  }
  Expr *andExpr(P::And_exprContext *c) {
    return chain<P::Shift_exprContext>(c, [&](P::Shift_exprContext *x) { return shiftExpr(x); });
  }
  Expr *shiftExpr(P::Shift_exprContext *c) {
    return chain<P::Arith_exprContext>(c, [&](P::Arith_exprContext *x) { return arithExpr(x); });
  }
  Expr *arithExpr(P::Arith_exprContext *c) {
    return chain<P::TermContext>(c, [&](P::TermContext *x) { return term(x); });
  }
  Expr *term(P::TermContext *c) {
    return chain<P::FactorContext>(c, [&](P::FactorContext *x) { return factor(x); });
  }

  Expr *factor(P::FactorContext *c) {
    if (P::PowerContext *p = c->power())
      return power(p);
    const Token *op = c->getStart();
    UnaryOp u = op->getType() == P::ADD ? UnaryOp::Pos : op->getType() == P::MINUS ? UnaryOp::Neg : UnaryOp::Invert;
    return make<UnaryExpr>(loc(op), u, factor(c->factor()));
  }

  Expr *power(P::PowerContext *c) {
    Expr *base = atomExpr(c->atom_expr());
    if (!c->POWER())
      return base;
    return make<BinaryExpr>(loc(c->POWER()), BinaryOp::Pow, base, factor(c->factor()));
  }

  Expr *starExpr(P::Star_exprContext *c) { return make<StarredExpr>(loc(c), expr(c->expr())); }

  Expr *atomExpr(P::Atom_exprContext *c) {
    if (c->AWAIT())
      return other(c, "await expression");
    Expr *e = atom(c->atom());
    SourceLoc start = loc(c->atom());
    for (P::TrailerContext *t : c->trailer()) {
      if (auto *call = dynamic_cast<P::CallTrailerContext *>(t)) {
        auto *ce = make<CallExpr>(start, e);
        if (P::ArglistContext *args = call->arglist())
          arguments(args, ce);
        e = ce;
      } else if (auto *sub = dynamic_cast<P::SubscriptTrailerContext *>(t)) {
        auto *se = make<SubscriptExpr>(loc(sub->OPEN_BRACK()), e);
        for (P::SubscriptContext *s : sub->subscriptlist()->subscript())
          se->indices.push_back(subscript(s));
        e = se;
      } else {
        auto *attr = static_cast<P::AttributeTrailerContext *>(t);
        e = make<AttributeExpr>(loc(attr->NAME()), e, attr->NAME()->getText());
      }
    }
    return e;
  }

  void arguments(P::ArglistContext *c, CallExpr *call) {
    std::vector<P::ArgumentContext *> args = c->argument();
    bool sawKeyword = false, sawKwUnpack = false;
    std::set<std::string> names;
    for (P::ArgumentContext *a : args) {
      std::vector<P::TestContext *> tests = a->test();
      if (a->ASSIGN()) {
        std::string name = a->NAME()->getText();
        if (!names.insert(name).second)
          error(loc(a->NAME()), "keyword argument repeated: " + name);
        call->keywords.push_back({loc(a->NAME()), name, test(tests[0])});
        sawKeyword = true;
        continue;
      }
      if (a->POWER()) {
        // `**mapping`: a keyword with an empty name, as in Python's own AST.
        call->keywords.push_back({loc(a->POWER()), std::string(), test(tests[0])});
        sawKwUnpack = true;
        continue;
      }
      if (a->STAR()) {
        if (sawKwUnpack)
          error(loc(a), "iterable argument unpacking follows keyword argument unpacking");
        call->args.push_back(make<StarredExpr>(loc(a->STAR()), test(tests[0])));
        continue;
      }
      if (sawKwUnpack)
        error(loc(a), "positional argument follows keyword argument unpacking");
      if (sawKeyword)
        error(loc(a), "positional argument follows keyword argument");
      if (a->comp_for()) {
        if (args.size() > 1)
          error(loc(a), "generator expression must be parenthesized");
        call->args.push_back(comprehension(loc(a), test(tests[0]), a->comp_for(), true));
      } else if (a->WALRUS()) {
        if (!dynamic_cast<P::NameAtomContext *>(nameAtomOf(tests[0])))
          error(loc(a), "the target of an assignment expression must be a name");
        call->args.push_back(make<NamedExpr>(loc(a), tests[0]->getText(), test(tests[1])));
      } else {
        call->args.push_back(test(tests[0]));
      }
    }
  }

  /// The atom of `c` when `c` is nothing but a single atom (a bare name, number, ...).
  static P::AtomContext *nameAtomOf(antlr4::ParserRuleContext *c) {
    antlr4::tree::ParseTree *t = c;
    while (t && !dynamic_cast<P::AtomContext *>(t)) {
      if (t->children.size() != 1)
        return nullptr;
      t = t->children[0];
    }
    return static_cast<P::AtomContext *>(t);
  }

  Expr *subscript(P::SubscriptContext *c) {
    if (P::Star_exprContext *s = c->star_expr())
      return starExpr(s);
    if (!c->COLON())
      return test(c->test(0));
    auto *slice = make<SliceExpr>(loc(c));
    bool afterColon = false;
    for (antlr4::tree::ParseTree *child : c->children) {
      if (dynamic_cast<TerminalNode *>(child)) {
        afterColon = true;
      } else if (auto *t = dynamic_cast<P::TestContext *>(child)) {
        (afterColon ? slice->upper : slice->lower) = test(t);
      } else if (auto *op = dynamic_cast<P::SliceopContext *>(child)) {
        if (op->test())
          slice->step = test(op->test());
      }
    }
    return slice;
  }

  /// Elements of a testlist_comp / exprlist / testlist: the children that are expressions.
  template <typename Ctx> std::vector<Expr *> elements(Ctx *c) {
    std::vector<Expr *> out;
    for (antlr4::tree::ParseTree *child : c->children) {
      if (auto *n = dynamic_cast<P::Namedexpr_testContext *>(child))
        out.push_back(namedexprTest(n));
      else if (auto *t = dynamic_cast<P::TestContext *>(child))
        out.push_back(test(t));
      else if (auto *e = dynamic_cast<P::ExprContext *>(child))
        out.push_back(expr(e));
      else if (auto *s = dynamic_cast<P::Star_exprContext *>(child))
        out.push_back(starExpr(s));
    }
    return out;
  }

  /// A comma-separated list that is a tuple when it has a comma, else its single element.
  template <typename Ctx> Expr *tupleOrSingle(Ctx *c) {
    std::vector<Expr *> elts = elements(c);
    if (elts.size() == 1 && c->COMMA().empty()) {
      if (llvm::isa<StarredExpr>(elts[0]))
        error(elts[0]->loc(), "cannot use starred expression here");
      return elts[0];
    }
    auto *t = make<TupleExpr>(elts.front()->loc());
    t->elts = std::move(elts);
    return t;
  }

  Expr *testlistStar(P::Testlist_star_exprContext *c) { return tupleOrSingle(c); }
  Expr *testlist(P::TestlistContext *c) { return tupleOrSingle(c); }
  Expr *exprlist(P::ExprlistContext *c) { return tupleOrSingle(c); }

  /// `elt for t in it [if c] [for ...]`: the clauses of a comprehension in order.
  Expr *comprehension(SourceLoc at, Expr *elt, P::Comp_forContext *c, bool generator) {
    // An async comprehension stays an unsupported expression.
    for (P::Comp_forContext *f = c; f;) {
      if (f->ASYNC())
        return other(f, generator ? "generator expression" : "list comprehension");
      P::Comp_iterContext *it = f->comp_iter();
      while (it && !it->comp_for())
        it = it->comp_if()->comp_iter();
      f = it ? it->comp_for() : nullptr;
    }
    auto *comp = make<CompExpr>(at);
    comp->elt = elt;
    comp->generator = generator;
    while (c) {
      CompExpr::For f;
      f.target = exprlist(c->exprlist());
      f.iter = orTest(c->or_test());
      P::Comp_forContext *next = nullptr;
      for (P::Comp_iterContext *it = c->comp_iter(); it;) {
        if (P::Comp_forContext *inner = it->comp_for()) {
          next = inner;
          break;
        }
        P::Comp_ifContext *ci = it->comp_if();
        f.ifs.push_back(orTest(ci->or_test()));
        it = ci->comp_iter();
      }
      comp->fors.push_back(f);
      c = next;
    }
    return comp;
  }

  Expr *atom(P::AtomContext *c) {
    if (auto *a = dynamic_cast<P::NameAtomContext *>(c))
      return make<NameExpr>(loc(a), a->NAME()->getText());
    if (auto *a = dynamic_cast<P::NumberAtomContext *>(c))
      return number(a->getStart());
    if (auto *a = dynamic_cast<P::StringAtomContext *>(c))
      return strings(a);
    if (dynamic_cast<P::NoneAtomContext *>(c))
      return make<NoneLit>(loc(c));
    if (dynamic_cast<P::TrueAtomContext *>(c))
      return make<BoolLit>(loc(c), true);
    if (dynamic_cast<P::FalseAtomContext *>(c))
      return make<BoolLit>(loc(c), false);
    if (dynamic_cast<P::EllipsisAtomContext *>(c))
      return other(c, "ellipsis");
    if (auto *a = dynamic_cast<P::ParenAtomContext *>(c)) {
      if (a->yield_expr())
        return other(a, "yield expression");
      P::Testlist_compContext *tc = a->testlist_comp();
      if (!tc)
        return make<TupleExpr>(loc(a));
      if (tc->comp_for())
        return comprehension(loc(a), elements(tc)[0], tc->comp_for(), true);
      std::vector<Expr *> elts = elements(tc);
      if (elts.size() == 1 && tc->COMMA().empty()) {
        if (llvm::isa<StarredExpr>(elts[0]))
          error(elts[0]->loc(), "cannot use starred expression here");
        return elts[0];
      }
      auto *t = make<TupleExpr>(loc(a));
      t->elts = std::move(elts);
      return t;
    }
    if (auto *a = dynamic_cast<P::ListAtomContext *>(c)) {
      P::Testlist_compContext *tc = a->testlist_comp();
      if (tc && tc->comp_for())
        return comprehension(loc(a), elements(tc)[0], tc->comp_for(), false);
      auto *l = make<ListExpr>(loc(a));
      if (tc)
        l->elts = elements(tc);
      return l;
    }
    return braces(static_cast<P::BraceAtomContext *>(c));
  }

  Expr *braces(P::BraceAtomContext *c) {
    P::DictorsetmakerContext *m = c->dictorsetmaker();
    if (!m) // `{}` is an empty dict
      return make<DictExpr>(loc(c));
    bool isDict = false, isSet = false;
    for (P::Dictorset_itemContext *item : m->dictorset_item()) {
      bool dictItem = item->COLON() || item->POWER();
      if ((dictItem && isSet) || (!dictItem && isDict))
        error(loc(item), dictItem ? "key: value pair in a set display" : "set element in a dict display");
      (dictItem ? isDict : isSet) = true;
    }
    if (m->comp_for())
      return other(c, isDict ? "dict comprehension" : "set comprehension");
    if (!isDict)
      return other(c, "set display");
    auto *d = make<DictExpr>(loc(c));
    for (P::Dictorset_itemContext *item : m->dictorset_item()) {
      if (item->POWER())
        return other(c, "dict display with ** unpacking");
      d->keys.push_back(test(item->test(0)));
      d->values.push_back(test(item->test(1)));
    }
    return d;
  }

  Expr *number(const Token *t) {
    std::string text = t->getText();
    switch (t->getType()) {
    case P::FLOAT_NUMBER: return make<FloatLit>(loc(t), parseFloatLiteral(text));
    case P::IMAG_NUMBER: return make<OtherExpr>(loc(t), "imaginary literal");
    default: break;
    }
    int64_t v = 0;
    bool u64 = false;
    if (!parseIntLiteral(text, v, &u64))
      error(loc(t), "integer literal '" + text + "' is too large (the limit is 2**64 - 1)");
    return make<IntLit>(loc(t), v, u64);
  }

  /// The message and location of the first error in quiet diagnostics of this file
  /// ("PATH:LINE:COL: error: MESSAGE").
  void firstError(const std::string &text, std::string &msg, SourceLoc &at) const {
    std::string prefix = diags_.sources().path(file_) + ":";
    size_t lineEnd = text.find('\n');
    std::string first = text.substr(0, lineEnd);
    at = SourceLoc{file_, 0, 0};
    msg = first;
    if (first.compare(0, prefix.size(), prefix) != 0)
      return;
    unsigned line = 0, col = 0;
    int used = 0;
    if (std::sscanf(first.c_str() + prefix.size(), "%u:%u: error: %n", &line, &col, &used) >= 2 && used > 0) {
      at = SourceLoc{file_, line, col};
      msg = first.substr(prefix.size() + size_t(used));
    }
  }

  /// Adjacent string tokens of which some are f-strings with fields: one FStringExpr.
  Expr *fstring(P::StringAtomContext *c) {
    auto *f = make<FStringExpr>(loc(c));
    auto addLiteral = [&](std::string text) {
      if (text.empty())
        return;
      if (!f->parts.empty() && !f->parts.back().value)
        f->parts.back().literal += text;
      else {
        FStringPart part;
        part.literal = std::move(text);
        f->parts.push_back(std::move(part));
      }
    };
    for (TerminalNode *n : c->STRING()) {
      StringPiece piece;
      size_t offset = 0;
      std::string token = n->getText();
      decodeStringToken(token, piece, offset); // checked by strings()
      if (!piece.hasFields) {
        addLiteral(piece.value);
        continue;
      }
      // The body starts after the prefix and the opening quote(s).
      size_t q = token.find_first_of("'\"");
      size_t quoteLen = token.size() >= q + 6 && token.compare(q, 3, std::string(3, token[q])) == 0 ? 3 : 1;
      size_t bodyAt = q + quoteLen;
      std::vector<FStringPiece> pieces;
      std::string err = splitFString(std::string_view(token).substr(bodyAt, token.size() - bodyAt - quoteLen),
                                     piece.isRaw, pieces, offset);
      if (!err.empty()) {
        f->error = err;
        f->errorLoc = locWithin(n->getSymbol(), bodyAt + offset);
        return f;
      }
      for (FStringPiece &p : pieces) {
        if (!p.field) {
          addLiteral(std::move(p.text));
          continue;
        }
        FStringPart part;
        // A field that does not parse is reported where the f-string is evaluated.
        DiagnosticEngine quiet(diags_.sources());
        std::ostringstream sink;
        quiet.setStream(sink);
        try {
          part.value = parseFieldExpression(file_, locWithin(n->getSymbol(), bodyAt + p.offset), p.text, ctx_, quiet);
        } catch (CompileAborted &) {
          firstError(sink.str(), f->error, f->errorLoc);
          return f;
        }
        part.conversion = p.conversion;
        part.spec = std::move(p.spec);
        part.label = std::move(p.label);
        f->parts.push_back(std::move(part));
      }
    }
    return f;
  }

  Expr *strings(P::StringAtomContext *c) {
    std::string value;
    bool anyBytes = false, anyText = false, fields = false;
    for (TerminalNode *n : c->STRING()) {
      StringPiece piece;
      size_t offset = 0;
      std::string err = decodeStringToken(n->getText(), piece, offset);
      if (!err.empty())
        error(locWithin(n->getSymbol(), offset), err);
      (piece.isBytes ? anyBytes : anyText) = true;
      fields |= piece.hasFields;
      value += piece.value;
    }
    if (anyBytes && anyText)
      error(loc(c), "cannot mix bytes and nonbytes literals");
    if (fields)
      return fstring(c);
    if (anyBytes)
      return other(c, "bytes literal");
    return make<StringLit>(loc(c), std::move(value));
  }
};

} // namespace

ast::Expr *buildExpression(uint32_t file, P::Eval_inputContext *tree, ASTContext &ctx, DiagnosticEngine &diags) {
  Builder b(file, ctx, diags);
  return b.expression(tree->testlist());
}

ast::Module buildModule(uint32_t file, P::File_inputContext *tree, ASTContext &ctx, DiagnosticEngine &diags) {
  Builder b(file, ctx, diags);
  Module m = b.module(tree);
  checkNesting(m, diags);
  return m;
}

} // namespace tle::frontend
