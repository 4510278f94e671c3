// The names a statement reads (ast::forEachNameUse): every NameExpr under it, in source order.
#include "tle/AST/AST.h"

#include <llvm/Support/Casting.h>

using llvm::cast;

namespace tle::ast {

namespace {

/// Calls `fn` on the name of every NameExpr under an expression or a statement.
class NameWalker {
public:
  explicit NameWalker(const std::function<void(const std::string &)> &fn) : fn_(fn) {}

  void expr(const Expr *e) {
    if (!e)
      return;
    using K = Node::Kind;
    switch (e->kind()) {
    case K::Name: fn_(cast<NameExpr>(e)->name); return;
    case K::Attribute: expr(cast<AttributeExpr>(e)->base); return;
    case K::Call: {
      auto *c = cast<CallExpr>(e);
      expr(c->callee);
      exprs(c->args);
      for (const Keyword &k : c->keywords)
        expr(k.value);
      return;
    }
    case K::Slice: {
      auto *s = cast<SliceExpr>(e);
      expr(s->lower), expr(s->upper), expr(s->step);
      return;
    }
    case K::Subscript: expr(cast<SubscriptExpr>(e)->base), exprs(cast<SubscriptExpr>(e)->indices); return;
    case K::Binary: expr(cast<BinaryExpr>(e)->lhs), expr(cast<BinaryExpr>(e)->rhs); return;
    case K::Unary: expr(cast<UnaryExpr>(e)->operand); return;
    case K::Compare: exprs(cast<CompareExpr>(e)->operands); return;
    case K::BoolOp: exprs(cast<BoolOpExpr>(e)->values); return;
    case K::IfExp: {
      auto *i = cast<IfExpExpr>(e);
      expr(i->cond), expr(i->thenExpr), expr(i->elseExpr);
      return;
    }
    case K::Tuple: exprs(cast<TupleExpr>(e)->elts); return;
    case K::List: exprs(cast<ListExpr>(e)->elts); return;
    case K::Dict: exprs(cast<DictExpr>(e)->keys), exprs(cast<DictExpr>(e)->values); return;
    case K::Comp: {
      auto *c = cast<CompExpr>(e);
      expr(c->elt);
      for (const CompExpr::For &f : c->fors)
        expr(f.target), expr(f.iter), exprs(f.ifs);
      return;
    }
    case K::Named: expr(cast<NamedExpr>(e)->value); return;
    case K::Lambda: expr(cast<LambdaExpr>(e)->body); return;
    case K::Starred: expr(cast<StarredExpr>(e)->value); return;
    case K::FString:
      for (const FStringPart &p : cast<FStringExpr>(e)->parts)
        expr(p.value);
      return;
    default: return; // literals and constructs without sub-expressions
    }
  }

  void stmt(const Stmt *s) {
    using K = Node::Kind;
    switch (s->kind()) {
    case K::ExprStmt: expr(cast<ExprStmt>(s)->value); return;
    case K::Assign: exprs(cast<AssignStmt>(s)->targets), expr(cast<AssignStmt>(s)->value); return;
    case K::AugAssign: expr(cast<AugAssignStmt>(s)->target), expr(cast<AugAssignStmt>(s)->value); return;
    case K::AnnAssign: {
      auto *a = cast<AnnAssignStmt>(s);
      expr(a->target), expr(a->annotation), expr(a->value);
      return;
    }
    case K::Return: expr(cast<ReturnStmt>(s)->value); return;
    case K::If: expr(cast<IfStmt>(s)->cond), block(cast<IfStmt>(s)->body), block(cast<IfStmt>(s)->orelse); return;
    case K::For: {
      auto *f = cast<ForStmt>(s);
      expr(f->target), expr(f->iter), block(f->body), block(f->orelse);
      return;
    }
    case K::While: expr(cast<WhileStmt>(s)->cond), block(cast<WhileStmt>(s)->body), block(cast<WhileStmt>(s)->orelse); return;
    case K::FunctionDef: {
      auto *f = cast<FunctionDef>(s);
      for (const Param &p : f->params)
        expr(p.annotation), expr(p.defaultValue);
      exprs(f->decorators), expr(f->returns), block(f->body);
      return;
    }
    case K::Assert: expr(cast<AssertStmt>(s)->test), expr(cast<AssertStmt>(s)->msg); return;
    case K::Try: {
      auto *t = cast<TryStmt>(s);
      block(t->body);
      for (const ExceptHandler &h : t->handlers)
        expr(h.type), block(h.body);
      block(t->orelse), block(t->finalbody);
      return;
    }
    case K::OtherStmt: expr(cast<OtherStmt>(s)->raised); return;
    default: return; // pass, break, continue, imports
    }
  }

  void block(const Block &b) {
    for (const Stmt *s : b)
      stmt(s);
  }

private:
  void exprs(const std::vector<Expr *> &es) {
    for (const Expr *e : es)
      expr(e);
  }

  const std::function<void(const std::string &)> &fn_;
};

} // namespace

void forEachNameUse(const Stmt &s, const std::function<void(const std::string &)> &fn) { NameWalker(fn).stmt(&s); }

} // namespace tle::ast
