// Expression-nesting limit for the AST (an explicit-stack walk over every statement).
#include "NestingCheck.h"

#include <llvm/Support/Casting.h>

#include <string>
#include <utility>
#include <vector>

namespace tle::frontend {

using namespace tle::ast;

namespace {

void exprChildren(const Expr *e, std::vector<const Expr *> &out) {
  auto add = [&](const Expr *x) {
    if (x)
      out.push_back(x);
  };
  switch (e->kind()) {
  case Node::Kind::Attribute: add(llvm::cast<AttributeExpr>(e)->base); break;
  case Node::Kind::Call: {
    auto *c = llvm::cast<CallExpr>(e);
    add(c->callee);
    for (const Expr *a : c->args)
      add(a);
    for (const Keyword &k : c->keywords)
      add(k.value);
    break;
  }
  case Node::Kind::Subscript: {
    auto *s = llvm::cast<SubscriptExpr>(e);
    add(s->base);
    for (const Expr *i : s->indices)
      add(i);
    break;
  }
  case Node::Kind::Slice: {
    auto *s = llvm::cast<SliceExpr>(e);
    add(s->lower);
    add(s->upper);
    add(s->step);
    break;
  }
  case Node::Kind::Binary: add(llvm::cast<BinaryExpr>(e)->lhs); add(llvm::cast<BinaryExpr>(e)->rhs); break;
  case Node::Kind::Unary: add(llvm::cast<UnaryExpr>(e)->operand); break;
  case Node::Kind::Compare:
    for (const Expr *x : llvm::cast<CompareExpr>(e)->operands)
      add(x);
    break;
  case Node::Kind::BoolOp:
    for (const Expr *x : llvm::cast<BoolOpExpr>(e)->values)
      add(x);
    break;
  case Node::Kind::IfExp: {
    auto *i = llvm::cast<IfExpExpr>(e);
    add(i->cond);
    add(i->thenExpr);
    add(i->elseExpr);
    break;
  }
  case Node::Kind::Tuple:
    for (const Expr *x : llvm::cast<TupleExpr>(e)->elts)
      add(x);
    break;
  case Node::Kind::List:
    for (const Expr *x : llvm::cast<ListExpr>(e)->elts)
      add(x);
    break;
  case Node::Kind::Dict:
    for (size_t i = 0; i < llvm::cast<DictExpr>(e)->keys.size(); ++i) {
      add(llvm::cast<DictExpr>(e)->keys[i]);
      add(llvm::cast<DictExpr>(e)->values[i]);
    }
    break;
  case Node::Kind::Lambda: add(llvm::cast<LambdaExpr>(e)->body); break;
  case Node::Kind::Named: add(llvm::cast<NamedExpr>(e)->value); break;
  case Node::Kind::Comp: {
    auto *c = llvm::cast<CompExpr>(e);
    add(c->elt);
    for (const CompExpr::For &f : c->fors) {
      add(f.target);
      add(f.iter);
      for (const Expr *x : f.ifs)
        add(x);
    }
    break;
  }
  case Node::Kind::Starred: add(llvm::cast<StarredExpr>(e)->value); break;
  case Node::Kind::FString:
    for (const FStringPart &p : llvm::cast<FStringExpr>(e)->parts)
      if (p.value)
        add(p.value);
    break;
  default: break;
  }
}

/// Rejects expressions nested deeper than kMaxExprDepth (iteratively, so that the check
/// itself cannot run out of stack).
class DepthChecker {
public:
  explicit DepthChecker(DiagnosticEngine &diags) : diags_(diags) {}

  void block(const Block &b) {
    for (const Stmt *s : b)
      stmt(s);
  }

private:
  DiagnosticEngine &diags_;

  void expr(const Expr *root) {
    if (!root)
      return;
    std::vector<std::pair<const Expr *, unsigned>> stack{{root, 1}};
    std::vector<const Expr *> kids;
    while (!stack.empty()) {
      auto [e, depth] = stack.back();
      stack.pop_back();
      if (depth > kMaxExprDepth)
        diags_.fatal(e->loc(), "expression is too deeply nested (the limit is " + std::to_string(kMaxExprDepth) +
                                   " levels)");
      kids.clear();
      exprChildren(e, kids);
      for (const Expr *k : kids)
        stack.push_back({k, depth + 1});
    }
  }

  void stmt(const Stmt *s) {
    switch (s->kind()) {
    case Node::Kind::ExprStmt: expr(llvm::cast<ExprStmt>(s)->value); break;
    case Node::Kind::Assign:
      for (const Expr *t : llvm::cast<AssignStmt>(s)->targets)
        expr(t);
      expr(llvm::cast<AssignStmt>(s)->value);
      break;
    case Node::Kind::AugAssign:
      expr(llvm::cast<AugAssignStmt>(s)->target);
      expr(llvm::cast<AugAssignStmt>(s)->value);
      break;
    case Node::Kind::AnnAssign: {
      auto *a = llvm::cast<AnnAssignStmt>(s);
      expr(a->target);
      expr(a->annotation);
      expr(a->value);
      break;
    }
    case Node::Kind::Return: expr(llvm::cast<ReturnStmt>(s)->value); break;
    case Node::Kind::If: {
      auto *i = llvm::cast<IfStmt>(s);
      expr(i->cond);
      block(i->body);
      block(i->orelse);
      break;
    }
    case Node::Kind::For: {
      auto *f = llvm::cast<ForStmt>(s);
      expr(f->target);
      expr(f->iter);
      block(f->body);
      block(f->orelse);
      break;
    }
    case Node::Kind::While: {
      auto *w = llvm::cast<WhileStmt>(s);
      expr(w->cond);
      block(w->body);
      block(w->orelse);
      break;
    }
    case Node::Kind::FunctionDef: {
      auto *f = llvm::cast<FunctionDef>(s);
      for (const Expr *d : f->decorators)
        expr(d);
      for (const Param &p : f->params) {
        expr(p.annotation);
        expr(p.defaultValue);
      }
      expr(f->returns);
      block(f->body);
      break;
    }
    case Node::Kind::Try: {
      auto *t = llvm::cast<TryStmt>(s);
      block(t->body);
      for (const ExceptHandler &h : t->handlers) {
        expr(h.type);
        block(h.body);
      }
      block(t->orelse);
      block(t->finalbody);
      break;
    }
    case Node::Kind::Assert:
      expr(llvm::cast<AssertStmt>(s)->test);
      expr(llvm::cast<AssertStmt>(s)->msg);
      break;
    default: break;
    }
  }
};

} // namespace

void checkNesting(const Module &m, DiagnosticEngine &diags) { DepthChecker(diags).block(m.body); }

} // namespace tle::frontend
