// Deterministic indented AST dump (`tlec --emit=ast`), one node per line, for golden tests.
//
// Format: each node is `Kind line:col field=value ...`; its children follow, indented by two
// spaces. A child that fills a named slot is prefixed with the slot (`callee: `, `value: `,
// `cond: `); positional children (binary operands, tuple elements, compare operands) are not.
// Statement lists appear under `body:` / `orelse:` header lines. Strings are printed in double
// quotes with C-style escapes; floats in their shortest round-trip form.
#include "tle/AST/AST.h"

#include <llvm/Support/Casting.h>

#include <charconv>
#include <ostream>

namespace tle::ast {

namespace {

std::string quoted(const std::string &s) {
  static const char *hex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (c < 0x20 || c == 0x7f) {
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  return out + "\"";
}

std::string floatText(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

class Printer {
public:
  explicit Printer(std::ostream &os) : os_(os) {}

  void block(const char *label, const Block &b, int indent) {
    if (b.empty())
      return;
    line(indent) << label << ":\n";
    for (const Stmt *s : b)
      stmt(s, indent + 1);
  }

  void stmt(const Stmt *s, int indent) {
    using K = Node::Kind;
    switch (s->kind()) {
    case K::ExprStmt:
      head(indent, "", "ExprStmt", s) << '\n';
      expr(llvm::cast<ExprStmt>(s)->value, indent + 1);
      return;
    case K::Assign: {
      auto *a = llvm::cast<AssignStmt>(s);
      head(indent, "", "Assign", s) << '\n';
      for (const Expr *t : a->targets)
        expr(t, indent + 1, "target");
      expr(a->value, indent + 1, "value");
      return;
    }
    case K::AugAssign: {
      auto *a = llvm::cast<AugAssignStmt>(s);
      head(indent, "", "AugAssign", s) << " op=" << spelling(a->op) << "=\n";
      expr(a->target, indent + 1, "target");
      expr(a->value, indent + 1, "value");
      return;
    }
    case K::AnnAssign: {
      auto *a = llvm::cast<AnnAssignStmt>(s);
      head(indent, "", "AnnAssign", s) << '\n';
      expr(a->target, indent + 1, "target");
      expr(a->annotation, indent + 1, "annotation");
      expr(a->value, indent + 1, "value");
      return;
    }
    case K::Return:
      head(indent, "", "Return", s) << '\n';
      expr(llvm::cast<ReturnStmt>(s)->value, indent + 1);
      return;
    case K::If: {
      auto *i = llvm::cast<IfStmt>(s);
      head(indent, "", "If", s) << '\n';
      expr(i->cond, indent + 1, "cond");
      block("body", i->body, indent + 1);
      block("orelse", i->orelse, indent + 1);
      return;
    }
    case K::For: {
      auto *f = llvm::cast<ForStmt>(s);
      head(indent, "", "For", s) << '\n';
      expr(f->target, indent + 1, "target");
      expr(f->iter, indent + 1, "iter");
      block("body", f->body, indent + 1);
      block("orelse", f->orelse, indent + 1);
      return;
    }
    case K::While: {
      auto *w = llvm::cast<WhileStmt>(s);
      head(indent, "", "While", s) << '\n';
      expr(w->cond, indent + 1, "cond");
      block("body", w->body, indent + 1);
      block("orelse", w->orelse, indent + 1);
      return;
    }
    case K::Pass: head(indent, "", "Pass", s) << '\n'; return;
    case K::Break: head(indent, "", "Break", s) << '\n'; return;
    case K::Continue: head(indent, "", "Continue", s) << '\n'; return;
    case K::FunctionDef: functionDef(llvm::cast<FunctionDef>(s), indent); return;
    case K::Import: {
      head(indent, "", "Import", s) << '\n';
      for (const ImportAlias &a : llvm::cast<ImportStmt>(s)->names)
        alias(a, indent + 1);
      return;
    }
    case K::ImportFrom: {
      auto *i = llvm::cast<ImportFromStmt>(s);
      head(indent, "", "ImportFrom", s) << " module=" << (i->module.empty() ? "\"\"" : i->module)
                                        << " level=" << i->level << '\n';
      for (const ImportAlias &a : i->names)
        alias(a, indent + 1);
      return;
    }
    case K::Assert: {
      auto *a = llvm::cast<AssertStmt>(s);
      head(indent, "", "Assert", s) << '\n';
      expr(a->test, indent + 1, "test");
      expr(a->msg, indent + 1, "msg");
      return;
    }
    case K::Try: {
      auto *t = llvm::cast<TryStmt>(s);
      head(indent, "", "Try", s) << '\n';
      block("body", t->body, indent + 1);
      for (const ExceptHandler &h : t->handlers) {
        line(indent + 1) << "handler ";
        at(h.loc) << (h.name.empty() ? "" : " name=" + h.name) << '\n';
        expr(h.type, indent + 2, "type");
        block("body", h.body, indent + 2);
      }
      block("orelse", t->orelse, indent + 1);
      block("finalbody", t->finalbody, indent + 1);
      return;
    }
    case K::OtherStmt:
      head(indent, "", "OtherStmt", s) << " what=" << quoted(llvm::cast<OtherStmt>(s)->what) << '\n';
      return;
    default:
      line(indent) << "<unknown statement>\n";
      return;
    }
  }

private:
  std::ostream &os_;

  std::ostream &line(int indent) {
    for (int i = 0; i < indent; ++i)
      os_ << "  ";
    return os_;
  }

  std::ostream &at(SourceLoc l) { return os_ << l.line << ':' << l.col; }

  std::ostream &head(int indent, const char *label, const char *kind, const Node *n) {
    line(indent);
    if (*label)
      os_ << label << ": ";
    os_ << kind << ' ';
    return at(n->loc());
  }

  void alias(const ImportAlias &a, int indent) {
    line(indent) << "Alias ";
    at(a.loc) << " name=" << a.name;
    if (!a.asname.empty())
      os_ << " asname=" << a.asname;
    os_ << '\n';
  }

  void functionDef(const FunctionDef *f, int indent) {
    head(indent, "", "FunctionDef", f) << " name=" << f->name << '\n';
    for (const Expr *d : f->decorators)
      expr(d, indent + 1, "decorator");
    for (const Param &p : f->params) {
      line(indent + 1) << "Param ";
      at(p.loc) << " name=" << p.name;
      if (p.star)
        os_ << " star=" << p.star;
      if (p.keywordOnly)
        os_ << " kwonly";
      os_ << '\n';
      expr(p.annotation, indent + 2, "annotation");
      expr(p.defaultValue, indent + 2, "default");
    }
    expr(f->returns, indent + 1, "returns");
    block("body", f->body, indent + 1);
  }

  template <typename Range> void list(const Range &r, int indent, const char *label = "") {
    for (const Expr *e : r)
      expr(e, indent, label);
  }

  void expr(const Expr *e, int indent, const char *label = "") {
    using K = Node::Kind;
    if (!e)
      return;
    switch (e->kind()) {
    case K::Name:
      head(indent, label, "Name", e) << " name=" << llvm::cast<NameExpr>(e)->name << '\n';
      return;
    case K::IntLit:
      head(indent, label, "IntLit", e) << " value=" << llvm::cast<IntLit>(e)->value << '\n';
      return;
    case K::FloatLit:
      head(indent, label, "FloatLit", e) << " value=" << floatText(llvm::cast<FloatLit>(e)->value) << '\n';
      return;
    case K::BoolLit:
      head(indent, label, "BoolLit", e) << " value=" << (llvm::cast<BoolLit>(e)->value ? "True" : "False") << '\n';
      return;
    case K::NoneLit: head(indent, label, "NoneLit", e) << '\n'; return;
    case K::StringLit:
      head(indent, label, "StringLit", e) << " value=" << quoted(llvm::cast<StringLit>(e)->value) << '\n';
      return;
    case K::Attribute: {
      auto *a = llvm::cast<AttributeExpr>(e);
      head(indent, label, "Attribute", e) << " attr=" << a->attr << '\n';
      expr(a->base, indent + 1);
      return;
    }
    case K::Call: {
      auto *c = llvm::cast<CallExpr>(e);
      head(indent, label, "Call", e) << '\n';
      expr(c->callee, indent + 1, "callee");
      list(c->args, indent + 1, "arg");
      for (const Keyword &k : c->keywords) {
        line(indent + 1) << "Keyword ";
        at(k.loc);
        if (k.name.empty())
          os_ << " **\n";
        else
          os_ << " name=" << k.name << '\n';
        expr(k.value, indent + 2);
      }
      return;
    }
    case K::Subscript: {
      auto *s = llvm::cast<SubscriptExpr>(e);
      head(indent, label, "Subscript", e) << '\n';
      expr(s->base, indent + 1, "base");
      list(s->indices, indent + 1, "index");
      return;
    }
    case K::Slice: {
      auto *s = llvm::cast<SliceExpr>(e);
      head(indent, label, "Slice", e) << '\n';
      expr(s->lower, indent + 1, "lower");
      expr(s->upper, indent + 1, "upper");
      expr(s->step, indent + 1, "step");
      return;
    }
    case K::Binary: {
      auto *b = llvm::cast<BinaryExpr>(e);
      head(indent, label, "Binary", e) << " op=" << spelling(b->op) << '\n';
      expr(b->lhs, indent + 1);
      expr(b->rhs, indent + 1);
      return;
    }
    case K::Unary: {
      auto *u = llvm::cast<UnaryExpr>(e);
      head(indent, label, "Unary", e) << " op=" << spelling(u->op) << '\n';
      expr(u->operand, indent + 1);
      return;
    }
    case K::Compare: {
      auto *c = llvm::cast<CompareExpr>(e);
      head(indent, label, "Compare", e) << " ops=[";
      for (size_t i = 0; i < c->ops.size(); ++i)
        os_ << (i ? ", " : "") << spelling(c->ops[i]);
      os_ << "]\n";
      list(c->operands, indent + 1);
      return;
    }
    case K::BoolOp: {
      auto *b = llvm::cast<BoolOpExpr>(e);
      head(indent, label, "BoolOp", e) << " op=" << (b->isAnd ? "and" : "or") << '\n';
      list(b->values, indent + 1);
      return;
    }
    case K::IfExp: {
      auto *i = llvm::cast<IfExpExpr>(e);
      head(indent, label, "IfExp", e) << '\n';
      expr(i->cond, indent + 1, "cond");
      expr(i->thenExpr, indent + 1, "then");
      expr(i->elseExpr, indent + 1, "else");
      return;
    }
    case K::Tuple:
      head(indent, label, "Tuple", e) << '\n';
      list(llvm::cast<TupleExpr>(e)->elts, indent + 1);
      return;
    case K::List:
      head(indent, label, "List", e) << '\n';
      list(llvm::cast<ListExpr>(e)->elts, indent + 1);
      return;
    case K::Dict: {
      auto *d = llvm::cast<DictExpr>(e);
      head(indent, label, "Dict", e) << '\n';
      for (size_t i = 0; i < d->keys.size(); ++i) {
        expr(d->keys[i], indent + 1, "key");
        expr(d->values[i], indent + 1, "value");
      }
      return;
    }
    case K::Lambda: {
      auto *l = llvm::cast<LambdaExpr>(e);
      head(indent, label, "Lambda", e) << " params=[";
      for (size_t i = 0; i < l->params.size(); ++i)
        os_ << (i ? ", " : "") << l->params[i];
      os_ << "]\n";
      expr(l->body, indent + 1);
      return;
    }
    case K::Named: {
      auto *n = llvm::cast<NamedExpr>(e);
      head(indent, label, "NamedExpr", e) << " name=" << n->name << '\n';
      expr(n->value, indent + 1);
      return;
    }
    case K::Comp: {
      auto *c = llvm::cast<CompExpr>(e);
      head(indent, label, c->generator ? "GeneratorExp" : "ListComp", e) << '\n';
      expr(c->elt, indent + 1, "elt");
      for (const CompExpr::For &f : c->fors) {
        expr(f.target, indent + 1, "for");
        expr(f.iter, indent + 1, "in");
        for (const Expr *x : f.ifs)
          expr(x, indent + 1, "if");
      }
      return;
    }
    case K::Starred:
      head(indent, label, "Starred", e) << '\n';
      expr(llvm::cast<StarredExpr>(e)->value, indent + 1);
      return;
    case K::FString: {
      auto *f = llvm::cast<FStringExpr>(e);
      head(indent, label, "FString", e);
      if (!f->error.empty())
        os_ << " error=" << quoted(f->error);
      os_ << '\n';
      for (const FStringPart &p : f->parts) {
        if (!p.value) {
          line(indent + 1) << "Text value=" << quoted(p.literal) << '\n';
          continue;
        }
        line(indent + 1) << "Field";
        if (p.conversion)
          os_ << " conversion=" << p.conversion;
        if (!p.spec.empty())
          os_ << " spec=" << quoted(p.spec);
        if (!p.label.empty())
          os_ << " label=" << quoted(p.label);
        os_ << '\n';
        expr(p.value, indent + 2);
      }
      return;
    }
    case K::OtherExpr:
      head(indent, label, "OtherExpr", e) << " what=" << quoted(llvm::cast<OtherExpr>(e)->what) << '\n';
      return;
    default:
      line(indent) << "<unknown expression>\n";
      return;
    }
  }
};

} // namespace

void printModule(std::ostream &os, const Module &m) {
  os << "Module\n";
  Printer p(os);
  for (const Stmt *s : m.body)
    p.stmt(s, 1);
}

} // namespace tle::ast
