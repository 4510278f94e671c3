// Unit tests for the frontend: lexer, parser, AST builder, syntax diagnostics and the AST printer.
#include <catch2/catch.hpp>

#include "tle/AST/AST.h"
#include "tle/Frontend/Parser.h"
#include "tle/Support/Diagnostics.h"

#include <llvm/Support/Casting.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

using namespace tle;
using namespace tle::ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

/// One parse of a source text, keeping everything the AST refers to alive.
struct Parsed {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ASTContext ctx;
  std::ostringstream errors;
  Module mod;
  bool ok = false;
};

std::unique_ptr<Parsed> parse(const std::string &text, const std::string &path = "test.tle") {
  auto p = std::make_unique<Parsed>();
  p->diags.setStream(p->errors);
  uint32_t file = p->sm.addFile(path, text);
  try {
    p->mod = frontend::parseModule(file, p->ctx, p->diags);
    p->ok = true;
  } catch (const CompileAborted &) {
    p->ok = false;
  }
  return p;
}

/// Parses `text`, which must succeed, and returns the module.
const Module &parseOk(std::unique_ptr<Parsed> &holder, const std::string &text) {
  holder = parse(text);
  INFO(holder->errors.str());
  REQUIRE(holder->ok);
  return holder->mod;
}

/// Parses `text`, which must fail, and returns the diagnostic text.
std::string parseError(const std::string &text, const std::string &path = "test.tle") {
  auto p = parse(text, path);
  REQUIRE_FALSE(p->ok);
  REQUIRE(p->diags.numErrors() == 1);
  return p->errors.str();
}

/// The first line of a diagnostic (`file:line:col: error: message`).
std::string firstLine(const std::string &s) { return s.substr(0, s.find('\n')); }

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string tokens(const std::string &text) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::ostringstream err;
  diags.setStream(err);
  uint32_t file = sm.addFile("t.tle", text);
  std::ostringstream os;
  frontend::dumpTokens(file, os, diags);
  return os.str();
}

std::string dump(const Module &m) {
  std::ostringstream os;
  printModule(os, m);
  return os.str();
}

/// The value expression of the only statement of a one-line module `x = <expr>`.
const Expr *valueOf(std::unique_ptr<Parsed> &holder, const std::string &exprText) {
  const Module &m = parseOk(holder, "x = " + exprText + "\n");
  REQUIRE(m.body.size() == 1);
  auto *a = dyn_cast<AssignStmt>(m.body[0]);
  REQUIRE(a);
  return a->value;
}

bool isName(const Expr *e, const std::string &name) {
  auto *n = llvm::dyn_cast_or_null<NameExpr>(e);
  return n && n->name == name;
}

/// `a.b.c` style attribute chains, as text.
std::string dotted(const Expr *e) {
  if (auto *n = dyn_cast<NameExpr>(e))
    return n->name;
  if (auto *a = dyn_cast<AttributeExpr>(e))
    return dotted(a->base) + "." + a->attr;
  return "?";
}

const FunctionDef *findFunction(const Module &m, const std::string &name) {
  for (const Stmt *s : m.body)
    if (auto *f = dyn_cast<FunctionDef>(s))
      if (f->name == name)
        return f;
  return nullptr;
}

void checkLoc(SourceLoc l, uint32_t line, uint32_t col) {
  CHECK(l.line == line);
  CHECK(l.col == col);
}

} // namespace

// -------------------------------------------------------------------------------------------------
// Examples

TEST_CASE("frontend: vector_add example", "[frontend]") {
  std::unique_ptr<Parsed> p;
  const Module &m = parseOk(p, readFile(TLE_SOURCE_DIR "/examples/vector_add.tle"));
  REQUIRE(m.body.size() == 3);

  auto *imp = dyn_cast<ImportStmt>(m.body[1]);
  REQUIRE(imp);
  REQUIRE(imp->names.size() == 1);
  CHECK(imp->names[0].name == "triton.language");
  CHECK(imp->names[0].asname == "tl");

  const FunctionDef *k = findFunction(m, "add_kernel");
  REQUIRE(k);
  checkLoc(k->loc(), 9, 5);
  REQUIRE(k->decorators.size() == 1);
  CHECK(dotted(k->decorators[0]) == "triton.jit");
  REQUIRE(k->params.size() == 5);
  CHECK(k->params[0].name == "x_ptr");
  CHECK(k->params[0].annotation == nullptr);
  CHECK(k->params[4].name == "BLOCK");
  REQUIRE(k->params[4].annotation);
  CHECK(dotted(k->params[4].annotation) == "tl.constexpr");
  CHECK(k->params[4].star == 0);
  CHECK_FALSE(k->params[4].keywordOnly);
  REQUIRE(k->body.size() == 6);

  // pid = tl.program_id(axis=0)
  auto *pid = cast<AssignStmt>(k->body[0]);
  checkLoc(pid->loc(), 10, 5);
  auto *call = cast<CallExpr>(pid->value);
  checkLoc(call->loc(), 10, 11);
  checkLoc(call->callee->loc(), 10, 14); // the attribute name
  CHECK(dotted(call->callee) == "tl.program_id");
  CHECK(call->args.empty());
  REQUIRE(call->keywords.size() == 1);
  CHECK(call->keywords[0].name == "axis");
  CHECK(cast<IntLit>(call->keywords[0].value)->value == 0);

  // offsets = pid * BLOCK + tl.arange(0, BLOCK)
  auto *add = cast<BinaryExpr>(cast<AssignStmt>(k->body[1])->value);
  CHECK(add->op == BinaryOp::Add);
  checkLoc(add->loc(), 11, 27);
  CHECK(cast<BinaryExpr>(add->lhs)->op == BinaryOp::Mul);
  CHECK(cast<CallExpr>(add->rhs)->args.size() == 2);

  // mask = offsets < n_elements
  auto *cmp = cast<CompareExpr>(cast<AssignStmt>(k->body[2])->value);
  REQUIRE(cmp->ops.size() == 1);
  CHECK(cmp->ops[0] == CompareOp::Lt);

  // tl.store(z_ptr + offsets, x + y, mask=mask)
  auto *store = cast<CallExpr>(cast<ExprStmt>(k->body[5])->value);
  CHECK(dotted(store->callee) == "tl.store");
  CHECK(store->args.size() == 2);
  REQUIRE(store->keywords.size() == 1);
  CHECK(store->keywords[0].name == "mask");
  CHECK(isName(store->keywords[0].value, "mask"));
}

TEST_CASE("frontend: softmax example", "[frontend]") {
  std::unique_ptr<Parsed> p;
  const Module &m = parseOk(p, readFile(TLE_SOURCE_DIR "/examples/softmax.tle"));
  const FunctionDef *k = findFunction(m, "softmax_kernel");
  REQUIRE(k);
  REQUIRE(k->params.size() == 7); // the parameter list spans two lines
  CHECK(k->params[6].name == "BLOCK_SIZE");
  checkLoc(k->params[6].loc, 11, 20);

  auto *loop = dyn_cast<ForStmt>(k->body[2]);
  REQUIRE(loop);
  CHECK(isName(loop->target, "row_idx"));
  auto *range = cast<CallExpr>(loop->iter);
  CHECK(isName(range->callee, "range"));
  CHECK(range->args.size() == 3);
  CHECK(loop->orelse.empty());
  REQUIRE(loop->body.size() == 12);

  // row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
  auto *load = cast<CallExpr>(cast<AssignStmt>(loop->body[4])->value);
  REQUIRE(load->keywords.size() == 2);
  CHECK(load->keywords[1].name == "other");
  auto *neg = cast<UnaryExpr>(load->keywords[1].value);
  CHECK(neg->op == UnaryOp::Neg);
  auto *fl = cast<CallExpr>(neg->operand);
  CHECK(isName(fl->callee, "float"));
  CHECK(cast<StringLit>(fl->args[0])->value == "inf");
}

TEST_CASE("frontend: layernorm example", "[frontend]") {
  std::unique_ptr<Parsed> p;
  const Module &m = parseOk(p, readFile(TLE_SOURCE_DIR "/examples/layernorm.tle"));
  const FunctionDef *k = findFunction(m, "layer_norm_fwd");
  REQUIRE(k);
  CHECK(k->params.size() == 10);

  // Y += row * stride
  auto *aug = cast<AugAssignStmt>(k->body[1]);
  CHECK(aug->op == BinaryOp::Add);
  CHECK(isName(aug->target, "Y"));
  checkLoc(aug->loc(), 12, 7); // the operator

  int loops = 0;
  for (const Stmt *s : k->body)
    loops += isa<ForStmt>(s);
  CHECK(loops == 3);

  // a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
  auto *loop = cast<ForStmt>(k->body[4]);
  auto *to = cast<CallExpr>(cast<AssignStmt>(loop->body[1])->value);
  auto *toAttr = cast<AttributeExpr>(to->callee);
  CHECK(toAttr->attr == "to");
  checkLoc(to->loc(), 18, 13); // a call is located at the start of its callee
  auto *load = cast<CallExpr>(toAttr->base);
  CHECK(dotted(load->callee) == "tl.load");
  CHECK(cast<FloatLit>(load->keywords[1].value)->value == 0.0);
  CHECK(isa<CompareExpr>(load->keywords[0].value));
}

// -------------------------------------------------------------------------------------------------
// Expressions

TEST_CASE("frontend: operator precedence", "[frontend]") {
  std::unique_ptr<Parsed> p;
  // a + b * c ** -d  ==  a + (b * (c ** (-d)))
  auto *add = cast<BinaryExpr>(valueOf(p, "a + b * c ** -d"));
  CHECK(add->op == BinaryOp::Add);
  checkLoc(add->loc(), 1, 7);
  CHECK(isName(add->lhs, "a"));
  auto *mul = cast<BinaryExpr>(add->rhs);
  CHECK(mul->op == BinaryOp::Mul);
  auto *pw = cast<BinaryExpr>(mul->rhs);
  CHECK(pw->op == BinaryOp::Pow);
  CHECK(isName(pw->lhs, "c"));
  auto *neg = cast<UnaryExpr>(pw->rhs);
  CHECK(neg->op == UnaryOp::Neg);
  CHECK(isName(neg->operand, "d"));

  // -a ** b == -(a ** b); a ** b ** c == a ** (b ** c)
  auto *u = cast<UnaryExpr>(valueOf(p, "-a ** b"));
  CHECK(cast<BinaryExpr>(u->operand)->op == BinaryOp::Pow);
  auto *rp = cast<BinaryExpr>(valueOf(p, "a ** b ** c"));
  CHECK(isName(rp->lhs, "a"));
  CHECK(isa<BinaryExpr>(rp->rhs));

  // a - b - c == (a - b) - c
  auto *sub = cast<BinaryExpr>(valueOf(p, "a - b - c"));
  CHECK(isName(sub->rhs, "c"));
  CHECK(cast<BinaryExpr>(sub->lhs)->op == BinaryOp::Sub);

  // a | b ^ c & d << e + f
  auto *bor = cast<BinaryExpr>(valueOf(p, "a | b ^ c & d << e + f"));
  CHECK(bor->op == BinaryOp::BitOr);
  auto *bxor = cast<BinaryExpr>(bor->rhs);
  CHECK(bxor->op == BinaryOp::BitXor);
  auto *band = cast<BinaryExpr>(bxor->rhs);
  CHECK(band->op == BinaryOp::BitAnd);
  auto *shl = cast<BinaryExpr>(band->rhs);
  CHECK(shl->op == BinaryOp::Shl);
  CHECK(cast<BinaryExpr>(shl->rhs)->op == BinaryOp::Add);

  // a // b % c @ d / e: all one level, left-associative
  auto *div = cast<BinaryExpr>(valueOf(p, "a // b % c @ d / e"));
  CHECK(div->op == BinaryOp::Div);
  auto *mm = cast<BinaryExpr>(div->lhs);
  CHECK(mm->op == BinaryOp::MatMul);
  CHECK(cast<BinaryExpr>(mm->lhs)->op == BinaryOp::Mod);

  // not a == b  ==  not (a == b); a and b or not c
  auto *nt = cast<UnaryExpr>(valueOf(p, "not a == b"));
  CHECK(nt->op == UnaryOp::Not);
  CHECK(isa<CompareExpr>(nt->operand));
  auto *orr = cast<BoolOpExpr>(valueOf(p, "a and b or not c"));
  CHECK_FALSE(orr->isAnd);
  REQUIRE(orr->values.size() == 2);
  CHECK(cast<BoolOpExpr>(orr->values[0])->isAnd);
  CHECK(isa<UnaryExpr>(orr->values[1]));
  CHECK(cast<BoolOpExpr>(valueOf(p, "a or b or c"))->values.size() == 3);

  // ~x, +x; ternary and lambda bind loosest
  CHECK(cast<UnaryExpr>(valueOf(p, "~x"))->op == UnaryOp::Invert);
  CHECK(cast<UnaryExpr>(valueOf(p, "+x"))->op == UnaryOp::Pos);
  auto *ife = cast<IfExpExpr>(valueOf(p, "a + 1 if c > 0 else b"));
  CHECK(isa<BinaryExpr>(ife->thenExpr));
  CHECK(isa<CompareExpr>(ife->cond));
  CHECK(isName(ife->elseExpr, "b"));
  auto *lam = cast<LambdaExpr>(valueOf(p, "lambda x, y=2, *a, **k: x + y"));
  CHECK(lam->params == std::vector<std::string>{"x", "y", "a", "k"});
  CHECK(isa<BinaryExpr>(lam->body));
}

TEST_CASE("frontend: chained comparisons", "[frontend]") {
  std::unique_ptr<Parsed> p;
  auto *c = cast<CompareExpr>(valueOf(p, "0 <= i < n != m"));
  REQUIRE(c->ops.size() == 3);
  REQUIRE(c->operands.size() == 4);
  CHECK(c->ops[0] == CompareOp::Le);
  CHECK(c->ops[1] == CompareOp::Lt);
  CHECK(c->ops[2] == CompareOp::Ne);
  checkLoc(c->loc(), 1, 7);
  checkLoc(c->opLocs[1], 1, 12);

  auto *in = cast<CompareExpr>(valueOf(p, "a not in b is not c in d is e"));
  REQUIRE(in->ops.size() == 4);
  CHECK(in->ops[0] == CompareOp::NotIn);
  CHECK(in->ops[1] == CompareOp::IsNot);
  CHECK(in->ops[2] == CompareOp::In);
  CHECK(in->ops[3] == CompareOp::Is);
  CHECK(cast<CompareExpr>(valueOf(p, "a > b >= c == d"))->ops[2] == CompareOp::Eq);
}

TEST_CASE("frontend: subscripts and slices", "[frontend]") {
  std::unique_ptr<Parsed> p;
  // x[:, None]
  auto *s = cast<SubscriptExpr>(valueOf(p, "x[:, None]"));
  CHECK(isName(s->base, "x"));
  checkLoc(s->loc(), 1, 6); // the '['
  REQUIRE(s->indices.size() == 2);
  auto *all = cast<SliceExpr>(s->indices[0]);
  CHECK(all->lower == nullptr);
  CHECK(all->upper == nullptr);
  CHECK(all->step == nullptr);
  CHECK(isa<NoneLit>(s->indices[1]));

  auto *t = cast<SubscriptExpr>(valueOf(p, "offs[None, :]"));
  CHECK(isa<NoneLit>(t->indices[0]));
  CHECK(isa<SliceExpr>(t->indices[1]));

  auto *full = cast<SliceExpr>(cast<SubscriptExpr>(valueOf(p, "a[1:n:2]"))->indices[0]);
  CHECK(cast<IntLit>(full->lower)->value == 1);
  CHECK(isName(full->upper, "n"));
  CHECK(cast<IntLit>(full->step)->value == 2);

  auto *step = cast<SliceExpr>(cast<SubscriptExpr>(valueOf(p, "a[::2]"))->indices[0]);
  CHECK(step->lower == nullptr);
  CHECK(step->upper == nullptr);
  CHECK(step->step != nullptr);

  auto *upper = cast<SliceExpr>(cast<SubscriptExpr>(valueOf(p, "a[:k]"))->indices[0]);
  CHECK(upper->lower == nullptr);
  CHECK(isName(upper->upper, "k"));
  auto *lower = cast<SliceExpr>(cast<SubscriptExpr>(valueOf(p, "a[k:]"))->indices[0]);
  CHECK(isName(lower->lower, "k"));
  CHECK(lower->upper == nullptr);

  auto *nested = cast<SubscriptExpr>(valueOf(p, "a[i][j + 1]"));
  CHECK(isa<SubscriptExpr>(nested->base));
  CHECK(isa<BinaryExpr>(nested->indices[0]));
}

TEST_CASE("frontend: calls, attributes and keyword arguments", "[frontend]") {
  std::unique_ptr<Parsed> p;
  auto *c = cast<CallExpr>(valueOf(p, "tl.dot(a, b, acc, *rest, allow_tf32=False, **opts)"));
  checkLoc(c->loc(), 1, 5);
  REQUIRE(c->args.size() == 4);
  CHECK(isa<StarredExpr>(c->args[3]));
  REQUIRE(c->keywords.size() == 2);
  CHECK(c->keywords[0].name == "allow_tf32");
  checkLoc(c->keywords[0].loc, 1, 30);
  CHECK(cast<BoolLit>(c->keywords[0].value)->value == false);
  CHECK(c->keywords[1].name.empty()); // **opts
  CHECK(isName(c->keywords[1].value, "opts"));

  auto *a = cast<AttributeExpr>(valueOf(p, "tle.gpu.smem"));
  CHECK(a->attr == "smem");
  checkLoc(a->loc(), 1, 13);
  CHECK(cast<AttributeExpr>(a->base)->attr == "gpu");

  auto *gen = cast<CallExpr>(valueOf(p, "sum(x for x in y)"));
  auto *genExpr = cast<CompExpr>(gen->args[0]);
  CHECK(genExpr->generator);
  REQUIRE(genExpr->fors.size() == 1);
  CHECK(isName(genExpr->fors[0].target, "x"));
  CHECK(isName(genExpr->fors[0].iter, "y"));
  CHECK(cast<CallExpr>(valueOf(p, "f()"))->args.empty());
  CHECK(cast<CallExpr>(valueOf(p, "f(a,)"))->args.size() == 1);
}

TEST_CASE("frontend: literals", "[frontend]") {
  std::unique_ptr<Parsed> p;
  CHECK(cast<IntLit>(valueOf(p, "1_000_000"))->value == 1000000);
  CHECK(cast<IntLit>(valueOf(p, "0xFF_ff"))->value == 0xffff);
  CHECK(cast<IntLit>(valueOf(p, "0o17"))->value == 15);
  CHECK(cast<IntLit>(valueOf(p, "0b1010"))->value == 10);
  CHECK(cast<IntLit>(valueOf(p, "9223372036854775807"))->value == INT64_MAX);
  CHECK(cast<FloatLit>(valueOf(p, "1."))->value == 1.0);
  CHECK(cast<FloatLit>(valueOf(p, ".5"))->value == 0.5);
  CHECK(cast<FloatLit>(valueOf(p, "1e-3"))->value == 1e-3);
  CHECK(cast<FloatLit>(valueOf(p, "1_0.2_5E+1_0"))->value == 10.25e10);
  CHECK(cast<FloatLit>(valueOf(p, "1e400"))->value == HUGE_VAL);
  CHECK(cast<OtherExpr>(valueOf(p, "2j"))->what == "imaginary literal");
  CHECK(cast<BoolLit>(valueOf(p, "True"))->value);
  CHECK(isa<NoneLit>(valueOf(p, "None")));
  CHECK(cast<OtherExpr>(valueOf(p, "..."))->what == "ellipsis");

  CHECK(cast<StringLit>(valueOf(p, R"('a' "b" '''c''')"))->value == "abc");
  CHECK(cast<StringLit>(valueOf(p, R"("tab\there\n\x41\u00e9\101\\")"))->value == "tab\there\nA\xc3\xa9" "A\\");
  CHECK(cast<StringLit>(valueOf(p, R"(r"\d+\n")"))->value == "\\d+\\n");
  CHECK(cast<StringLit>(valueOf(p, R"(f"{{x}}")"))->value == "{x}");
  auto *fs = cast<FStringExpr>(valueOf(p, R"(f"x={x!r:>10}" f"\t{y + 1=}{{}}")"));
  REQUIRE(fs->parts.size() == 5);
  CHECK(fs->parts[0].literal == "x=");
  CHECK(cast<NameExpr>(fs->parts[1].value)->name == "x");
  CHECK(fs->parts[1].conversion == 'r');
  CHECK(fs->parts[1].spec == ">10");
  CHECK(fs->parts[2].literal == "\t");
  CHECK(isa<BinaryExpr>(fs->parts[3].value));
  CHECK(fs->parts[3].label == "y + 1=");
  CHECK(cast<BinaryExpr>(fs->parts[3].value)->lhs->loc().col == 25); // the field's own column in the source line
  CHECK(fs->parts[4].literal == "{}");
  // Not modelled (a field in a format spec) or a Python SyntaxError: kept, an error where evaluated.
  CHECK(cast<FStringExpr>(valueOf(p, R"(f"{x:>{w}}")"))->error ==
        "f-string: a replacement field inside a format spec is not supported");
  CHECK(cast<FStringExpr>(valueOf(p, R"(f"{x + }")"))->error == "f-string: expected an expression, found '}'");
  CHECK(cast<OtherExpr>(valueOf(p, R"(b"\x00" rb'\d')"))->what == "bytes literal");
  auto *multi = cast<StringLit>(valueOf(p, "\"\"\"line1\nline2\"\"\""));
  CHECK(multi->value == "line1\nline2");
}

TEST_CASE("frontend: displays and unmodelled expressions", "[frontend]") {
  std::unique_ptr<Parsed> p;
  CHECK(cast<TupleExpr>(valueOf(p, "()"))->elts.empty());
  CHECK(cast<TupleExpr>(valueOf(p, "(1,)"))->elts.size() == 1);
  CHECK(isa<IntLit>(valueOf(p, "(1)")));
  auto *tup = cast<TupleExpr>(valueOf(p, "1, 2, *r"));
  CHECK(tup->elts.size() == 3);
  CHECK(isa<StarredExpr>(tup->elts[2]));
  auto *list = cast<ListExpr>(valueOf(p, "[BLOCK_M, BLOCK_N]"));
  CHECK(list->elts.size() == 2);
  checkLoc(list->loc(), 1, 5);
  CHECK(cast<ListExpr>(valueOf(p, "[]"))->elts.empty());

  auto *lc = cast<CompExpr>(valueOf(p, "[i * 2 for i in range(4) if i for j in i if j if i]"));
  CHECK(!lc->generator);
  CHECK(isa<BinaryExpr>(lc->elt));
  REQUIRE(lc->fors.size() == 2);
  CHECK(lc->fors[0].ifs.size() == 1);
  CHECK(lc->fors[1].ifs.size() == 2);
  CHECK(isName(lc->fors[1].iter, "i"));
  CHECK(cast<OtherExpr>(valueOf(p, "{k: v for k, v in d.items()}"))->what == "dict comprehension");
  CHECK(cast<OtherExpr>(valueOf(p, "{x for x in s}"))->what == "set comprehension");
  CHECK(cast<OtherExpr>(valueOf(p, "(x async for x in s)"))->what == "generator expression");
  CHECK(cast<OtherExpr>(valueOf(p, "{'a': 1, **other}"))->what == "dict display with ** unpacking");
  CHECK(cast<DictExpr>(valueOf(p, "{}"))->keys.empty());
  auto *dict = cast<DictExpr>(valueOf(p, "{'a': 1, \"b\": [x, 2]}"));
  REQUIRE(dict->keys.size() == 2);
  CHECK(cast<StringLit>(dict->keys[1])->value == "b");
  CHECK(cast<ListExpr>(dict->values[1])->elts.size() == 2);
  checkLoc(dict->loc(), 1, 5);
  CHECK(cast<OtherExpr>(valueOf(p, "{1, 2, *s}"))->what == "set display");
  auto *named = cast<NamedExpr>(valueOf(p, "(y := f(x))"));
  CHECK(named->name == "y");
  CHECK(isa<CallExpr>(named->value));
  CHECK(cast<OtherExpr>(valueOf(p, "await g()"))->what == "await expression");
}

// -------------------------------------------------------------------------------------------------
// Statements

TEST_CASE("frontend: imports", "[frontend]") {
  std::unique_ptr<Parsed> p;
  const Module &m = parseOk(p, "import a.b as c, d\n"
                               "from a.b import c as d, e\n"
                               "from x import (e, f,)\n"
                               "from .. import y\n"
                               "from ...pkg.mod import z\n"
                               "from . import *\n"
                               "import triton.experimental.tle.language as tle\n");
  REQUIRE(m.body.size() == 7);
  auto *i0 = cast<ImportStmt>(m.body[0]);
  REQUIRE(i0->names.size() == 2);
  CHECK(i0->names[0].name == "a.b");
  CHECK(i0->names[0].asname == "c");
  checkLoc(i0->names[0].loc, 1, 8);
  CHECK(i0->names[1].name == "d");
  CHECK(i0->names[1].asname.empty());

  auto *f1 = cast<ImportFromStmt>(m.body[1]);
  CHECK(f1->module == "a.b");
  CHECK(f1->level == 0);
  REQUIRE(f1->names.size() == 2);
  CHECK(f1->names[0].name == "c");
  CHECK(f1->names[0].asname == "d");
  CHECK(f1->names[1].name == "e");

  auto *f2 = cast<ImportFromStmt>(m.body[2]);
  REQUIRE(f2->names.size() == 2);
  CHECK(f2->names[1].name == "f");

  auto *f3 = cast<ImportFromStmt>(m.body[3]);
  CHECK(f3->module.empty());
  CHECK(f3->level == 2);
  auto *f4 = cast<ImportFromStmt>(m.body[4]);
  CHECK(f4->module == "pkg.mod");
  CHECK(f4->level == 3);
  auto *f5 = cast<ImportFromStmt>(m.body[5]);
  CHECK(f5->level == 1);
  REQUIRE(f5->names.size() == 1);
  CHECK(f5->names[0].name == "*");
  CHECK(cast<ImportStmt>(m.body[6])->names[0].name == "triton.experimental.tle.language");
}

TEST_CASE("frontend: function definitions", "[frontend]") {
  std::unique_ptr<Parsed> p;
  const Module &m = parseOk(p, "@triton.autotune(configs=[triton.Config({'BLOCK': 128}, num_warps=4)], key=['n'])\n"
                               "@triton.jit\n"
                               "def k(a, b: tl.int32, /, c=1, *args, d, e: int = 2, **kw) -> tl.tensor:\n"
                               "    return a, b\n"
                               "def g(*, x): pass\n");
  const FunctionDef *k = findFunction(m, "k");
  REQUIRE(k);
  checkLoc(k->loc(), 3, 5);
  REQUIRE(k->decorators.size() == 2);
  auto *tune = cast<CallExpr>(k->decorators[0]);
  CHECK(dotted(tune->callee) == "triton.autotune");
  REQUIRE(tune->keywords.size() == 2);
  CHECK(tune->keywords[0].name == "configs");
  CHECK(isa<ListExpr>(tune->keywords[0].value));
  CHECK(dotted(k->decorators[1]) == "triton.jit");

  REQUIRE(k->params.size() == 7);
  CHECK(k->params[1].name == "b");
  CHECK(dotted(k->params[1].annotation) == "tl.int32");
  CHECK(cast<IntLit>(k->params[2].defaultValue)->value == 1);
  CHECK(k->params[3].name == "args");
  CHECK(k->params[3].star == 1);
  CHECK_FALSE(k->params[3].keywordOnly);
  CHECK(k->params[4].name == "d");
  CHECK(k->params[4].keywordOnly);
  CHECK(k->params[4].defaultValue == nullptr);
  CHECK(k->params[5].keywordOnly);
  CHECK(isName(k->params[5].annotation, "int"));
  CHECK(k->params[6].name == "kw");
  CHECK(k->params[6].star == 2);
  REQUIRE(k->returns);
  CHECK(dotted(k->returns) == "tl.tensor");
  auto *ret = cast<ReturnStmt>(k->body[0]);
  CHECK(cast<TupleExpr>(ret->value)->elts.size() == 2);

  const FunctionDef *g = findFunction(m, "g");
  REQUIRE(g);
  REQUIRE(g->params.size() == 1);
  CHECK(g->params[0].keywordOnly);
  CHECK(isa<PassStmt>(g->body[0]));
}

TEST_CASE("frontend: control flow", "[frontend]") {
  std::unique_ptr<Parsed> p;
  const Module &m = parseOk(p, "if a:\n"
                               "    x = 1\n"
                               "elif b:\n"
                               "    x = 2\n"
                               "elif c: x = 3; y = 4\n"
                               "else:\n"
                               "    x = 5\n"
                               "while i < n:\n"
                               "    i += 1\n"
                               "    if i == 3:\n"
                               "        continue\n"
                               "    break\n"
                               "else:\n"
                               "    pass\n"
                               "for i, (j, k) in zip(a, b):\n"
                               "    pass\n"
                               "else:\n"
                               "    return\n"
                               "assert n > 0, 'n must be positive'\n"
                               "assert ok\n");
  REQUIRE(m.body.size() == 5);
  auto *i1 = cast<IfStmt>(m.body[0]);
  checkLoc(i1->loc(), 1, 1);
  REQUIRE(i1->orelse.size() == 1);
  auto *i2 = cast<IfStmt>(i1->orelse[0]);
  checkLoc(i2->loc(), 3, 1);
  CHECK(isName(i2->cond, "b"));
  auto *i3 = cast<IfStmt>(i2->orelse[0]);
  CHECK(i3->body.size() == 2);
  REQUIRE(i3->orelse.size() == 1);
  CHECK(isa<AssignStmt>(i3->orelse[0]));

  auto *w = cast<WhileStmt>(m.body[1]);
  REQUIRE(w->body.size() == 3);
  CHECK(isa<AugAssignStmt>(w->body[0]));
  CHECK(isa<ContinueStmt>(cast<IfStmt>(w->body[1])->body[0]));
  CHECK(isa<BreakStmt>(w->body[2]));
  CHECK(isa<PassStmt>(w->orelse[0]));

  auto *f = cast<ForStmt>(m.body[2]);
  auto *target = cast<TupleExpr>(f->target);
  REQUIRE(target->elts.size() == 2);
  CHECK(isa<TupleExpr>(target->elts[1]));
  auto *ret = cast<ReturnStmt>(f->orelse[0]);
  CHECK(ret->value == nullptr);

  auto *as = cast<AssertStmt>(m.body[3]);
  CHECK(isa<CompareExpr>(as->test));
  CHECK(cast<StringLit>(as->msg)->value == "n must be positive");
  CHECK(cast<AssertStmt>(m.body[4])->msg == nullptr);
}

TEST_CASE("frontend: assignments", "[frontend]") {
  std::unique_ptr<Parsed> p;
  const Module &m = parseOk(p, "a = b = 1\n"
                               "a, b = b, a\n"
                               "[x, *ys] = z\n"
                               "n: tl.constexpr = 128\n"
                               "self.x: int\n"
                               "acc[i] //= 2; acc **= 2; v >>= 1; v <<= 1; v @= w; v |= 1; v ^= 1; v &= 1; v %= 3\n"
                               "(a) = 1\n");
  auto *chain = cast<AssignStmt>(m.body[0]);
  REQUIRE(chain->targets.size() == 2);
  CHECK(isName(chain->targets[0], "a"));
  CHECK(isName(chain->targets[1], "b"));
  CHECK(cast<IntLit>(chain->value)->value == 1);

  auto *swap = cast<AssignStmt>(m.body[1]);
  CHECK(cast<TupleExpr>(swap->targets[0])->elts.size() == 2);
  CHECK(cast<TupleExpr>(swap->value)->elts.size() == 2);
  auto *star = cast<ListExpr>(cast<AssignStmt>(m.body[2])->targets[0]);
  CHECK(isa<StarredExpr>(star->elts[1]));

  auto *ann = cast<AnnAssignStmt>(m.body[3]);
  CHECK(isName(ann->target, "n"));
  CHECK(dotted(ann->annotation) == "tl.constexpr");
  CHECK(cast<IntLit>(ann->value)->value == 128);
  auto *ann2 = cast<AnnAssignStmt>(m.body[4]);
  CHECK(isa<AttributeExpr>(ann2->target));
  CHECK(ann2->value == nullptr);

  std::vector<BinaryOp> ops;
  for (size_t i = 5; i < 14; ++i)
    ops.push_back(cast<AugAssignStmt>(m.body[i])->op);
  CHECK(ops == std::vector<BinaryOp>{BinaryOp::FloorDiv, BinaryOp::Pow, BinaryOp::Shr, BinaryOp::Shl, BinaryOp::MatMul,
                                     BinaryOp::BitOr, BinaryOp::BitXor, BinaryOp::BitAnd, BinaryOp::Mod});
  CHECK(isa<SubscriptExpr>(cast<AugAssignStmt>(m.body[5])->target));
  CHECK(isName(cast<AssignStmt>(m.body[14])->targets[0], "a"));
}

TEST_CASE("frontend: a whole Python module", "[frontend]") {
  std::unique_ptr<Parsed> p;
  const char *src = R"PY(#!/usr/bin/env python3
"""Host code around a kernel, as in a Triton .py file."""
from __future__ import annotations
import torch, triton
import triton.language as tl
from typing import Optional


class Runner(object):
    """A class with methods."""
    def __init__(self, n: int = 1024, *, device="cuda"):
        self.n = n

    @property
    def size(self):
        return self.n


@triton.jit
def kernel(X, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N)
    tl.store(X + offs, x * 2, mask=offs < N)


def run(x: torch.Tensor, block=1024) -> Optional[torch.Tensor]:
    global CACHE
    grid = lambda meta: (triton.cdiv(x.numel(), meta['BLOCK']),)
    sizes = [s for s in x.shape if s > 1]
    table = {name: i for i, name in enumerate(sizes)}
    with torch.no_grad(), open("log.txt") as f:
        kernel[grid](x, x.numel(), BLOCK=block)
    try:
        print(f"ran {len(sizes)} dims, {x.dtype!r}")
    except (RuntimeError, ValueError) as e:
        raise RuntimeError("failed") from e
    else:
        pass
    finally:
        del table
    if (n := len(sizes)) > 3:
        return None
    return x


async def main():
    async with lock:
        await run(None)
    async for item in stream():
        yield item


if __name__ == "__main__":
    match sys.argv:
        case [_, "run", *rest] if rest:
            run(torch.zeros(16))
        case _:
            pass
)PY";
  const Module &m = parseOk(p, src);
  std::vector<std::string> kinds;
  for (const Stmt *s : m.body) {
    if (auto *o = dyn_cast<OtherStmt>(s))
      kinds.push_back("other:" + o->what);
    else if (auto *f = dyn_cast<FunctionDef>(s))
      kinds.push_back("def:" + f->name);
    else if (isa<ImportStmt>(s))
      kinds.push_back("import");
    else if (isa<ImportFromStmt>(s))
      kinds.push_back("from");
    else if (isa<IfStmt>(s))
      kinds.push_back("if");
    else if (isa<ExprStmt>(s))
      kinds.push_back("expr");
    else
      kinds.push_back("?");
  }
  CHECK(kinds == std::vector<std::string>{"expr", "from", "import", "import", "from", "other:class definition",
                                          "def:kernel", "def:run", "other:async function definition", "if"});
  auto *doc = cast<StringLit>(cast<ExprStmt>(m.body[0])->value);
  CHECK(doc->value == "Host code around a kernel, as in a Triton .py file.");

  const FunctionDef *run = findFunction(m, "run");
  REQUIRE(run);
  REQUIRE(run->body.size() == 8);
  CHECK(cast<OtherStmt>(run->body[0])->what == "global statement");
  CHECK(isa<LambdaExpr>(cast<AssignStmt>(run->body[1])->value));
  CHECK(isa<CompExpr>(cast<AssignStmt>(run->body[2])->value));
  CHECK(cast<OtherExpr>(cast<AssignStmt>(run->body[3])->value)->what == "dict comprehension");
  CHECK(cast<OtherStmt>(run->body[4])->what == "with statement");
  CHECK(isa<TryStmt>(run->body[5]));
  auto *walrus = cast<IfStmt>(run->body[6]);
  CHECK(isa<NamedExpr>(cast<CompareExpr>(walrus->cond)->operands[0]));
  CHECK(dotted(run->params[0].annotation) == "torch.Tensor");
  CHECK(isa<SubscriptExpr>(run->returns));

  auto *main = cast<IfStmt>(m.body[9]);
  CHECK(cast<OtherStmt>(main->body[0])->what == "match statement");

  // The kernel launch `kernel[grid](...)`: a call whose callee is a subscript.
  const FunctionDef *kernel = findFunction(m, "kernel");
  REQUIRE(kernel);
  CHECK(kernel->body.size() == 4);
}

TEST_CASE("frontend: match and case are soft keywords", "[frontend]") {
  std::unique_ptr<Parsed> p;
  const Module &m = parseOk(p, "match = case = 1\n"
                               "match(x).case[0]: int = 2\n"
                               "match x, y:\n"
                               "    case (1, 2) | [3, *_] if x > y:\n"
                               "        match = 3\n"
                               "    case Point(x=0) as pt: pass\n"
                               "case(match)\n");
  REQUIRE(m.body.size() == 4);
  CHECK(cast<AssignStmt>(m.body[0])->targets.size() == 2);
  CHECK(isa<AnnAssignStmt>(m.body[1]));
  CHECK(cast<OtherStmt>(m.body[2])->what == "match statement");
  CHECK(isa<CallExpr>(cast<ExprStmt>(m.body[3])->value));
  CHECK(tokens("match x:\n case 1: pass\n").substr(0, 31) == "1:1 MATCH 'match'\n1:7 NAME 'x'\n");
  CHECK(tokens("match x:\n case 1: pass\n").find("2:2 CASE 'case'\n") != std::string::npos);
  CHECK(firstLine(parseError("match x:\ncase 1: pass\n")) ==
        "test.tle:2:1: error: expected an indented block after 'match' statement on line 1");
}

TEST_CASE("frontend: layout rules", "[frontend]") {
  std::unique_ptr<Parsed> p;
  // Comments, blank lines, backslash continuation, implicit joining, tabs, CRLF, no final newline.
  const Module &m = parseOk(p, "# leading comment\n"
                               "\n"
                               "x = [1,\n"
                               "     2,   # inside brackets\n"
                               "\n"
                               "     3]\n"
                               "if x:\r\n"
                               "\ty = 1 + \\\n"
                               "  2\r\n"
                               "        # comment at another indentation\n"
                               "\n"
                               "\tz = (y\n"
                               "  )\n"
                               "w = 0");
  REQUIRE(m.body.size() == 3);
  CHECK(cast<ListExpr>(cast<AssignStmt>(m.body[0])->value)->elts.size() == 3);
  auto *i = cast<IfStmt>(m.body[1]);
  REQUIRE(i->body.size() == 2);
  CHECK(isa<BinaryExpr>(cast<AssignStmt>(i->body[0])->value));
  checkLoc(i->body[1]->loc(), 12, 2);
  checkLoc(m.body[2]->loc(), 14, 1);

  // Empty and comment-only files, and a file of blank lines, are empty modules.
  CHECK(parseOk(p, "").body.empty());
  CHECK(parseOk(p, "# just a comment").body.empty());
  CHECK(parseOk(p, "\n\n   \n\t\n# c\n   # d\n").body.empty());
  // A block that closes at end of file, with and without a final newline.
  CHECK(cast<IfStmt>(parseOk(p, "if a:\n  if b:\n    pass").body[0])->body.size() == 1);
  CHECK(parseOk(p, "def f():\n    return 1\n\n\n").body.size() == 1);
}

// -------------------------------------------------------------------------------------------------
// Diagnostics

TEST_CASE("frontend: indentation errors", "[frontend][diagnostics]") {
  CHECK(parseError("def f():\n    if x:\n        a = 1\n      b = 2\n", "k.tle") ==
        "k.tle:4:7: error: unindent does not match any outer indentation level\n"
        "        b = 2\n"
        "        ^\n");
  CHECK(parseError("x = 1\n    y = 2\n", "k.tle") == "k.tle:2:5: error: unexpected indent\n"
                                                       "      y = 2\n"
                                                       "      ^\n");
  CHECK(firstLine(parseError("  x = 1\n")) == "test.tle:1:3: error: unexpected indent");
  CHECK(firstLine(parseError("if x:\npass\n")) ==
        "test.tle:2:1: error: expected an indented block after 'if' statement on line 1");
  CHECK(firstLine(parseError("def f(a,\n      b):\nreturn a\n")) ==
        "test.tle:3:1: error: expected an indented block after function definition on line 1");
  CHECK(firstLine(parseError("for i in r:\n  pass\nelse:\n")) ==
        "test.tle:4:1: error: expected an indented block after 'else' statement on line 3");
  CHECK(firstLine(parseError("if x:\n\tx = 1\n        y = 2\n")) ==
        "test.tle:3:9: error: inconsistent use of tabs and spaces in indentation");
  std::string deep;
  for (int i = 0; i < 101; ++i)
    deep += std::string(i, ' ') + "if x:\n";
  deep += std::string(101, ' ') + "pass\n";
  CHECK(firstLine(parseError(deep)) == "test.tle:102:102: error: too many levels of indentation (the limit is 100)");
}

TEST_CASE("frontend: syntax errors", "[frontend][diagnostics]") {
  CHECK(parseError("if x\n    pass\n", "k.tle") == "k.tle:1:5: error: expected ':' after 'if' condition\n"
                                                     "  if x\n"
                                                     "      ^\n");
  CHECK(firstLine(parseError("while a < b\n  pass\n")) == "test.tle:1:12: error: expected ':' after 'while' condition");
  CHECK(firstLine(parseError("def f(x)\n  pass\n")) == "test.tle:1:9: error: expected ':' after the function signature");
  CHECK(firstLine(parseError("for i in range(3)\n  pass\n")) ==
        "test.tle:1:18: error: expected ':' at the end of the 'for' clause");
  CHECK(firstLine(parseError("x = \n")) == "test.tle:1:5: error: expected an expression, found end of line");
  CHECK(firstLine(parseError("x = 1 +\n")) == "test.tle:1:8: error: expected an expression, found end of line");
  CHECK(firstLine(parseError("x = 1 if c\n")) == "test.tle:1:7: error: expected 'else' after 'if' expression");
  CHECK(firstLine(parseError("f(a b)\n")) == "test.tle:1:5: error: unexpected 'b'; perhaps a ',' is missing before it");
  CHECK(firstLine(parseError("x = [1, 2 3]\n")) ==
        "test.tle:1:11: error: unexpected '3'; perhaps a ',' is missing before it");
  CHECK(firstLine(parseError("x = y z\n")) == "test.tle:1:7: error: unexpected 'z'");
  CHECK(firstLine(parseError("import\n")) == "test.tle:1:7: error: expected a name, found end of line");
  CHECK(firstLine(parseError("return return\n")) == "test.tle:1:8: error: unexpected 'return'");
  CHECK(firstLine(parseError("class A:\n")) ==
        "test.tle:2:1: error: expected an indented block after class definition on line 1");
  // The first error wins, whether it is lexical or syntactic.
  CHECK(firstLine(parseError("x = = 1\ny = 'oops\n")) == "test.tle:1:5: error: expected an expression, found '='");
  CHECK(firstLine(parseError("x = 1\ny = 'oops\nz = = 2\n")) == "test.tle:2:5: error: unterminated string literal");
}

TEST_CASE("frontend: lexical errors", "[frontend][diagnostics]") {
  CHECK(parseError("s = \"abc\n", "k.tle") == "k.tle:1:5: error: unterminated string literal\n"
                                               "  s = \"abc\n"
                                               "      ^\n");
  CHECK(firstLine(parseError("s = '''abc\n\nmore\n")) ==
        "test.tle:1:5: error: unterminated triple-quoted string literal");
  CHECK(firstLine(parseError("x = (1,\n  2\n")) == "test.tle:1:5: error: '(' was never closed");
  CHECK(firstLine(parseError("x = [1, 2)\n")) ==
        "test.tle:1:10: error: closing parenthesis ')' does not match opening parenthesis '['");
  CHECK(firstLine(parseError("x = 1)\n")) == "test.tle:1:6: error: unmatched ')'");
  CHECK(firstLine(parseError("x = a $ b\n")) == "test.tle:1:7: error: invalid character '$'");
  CHECK(firstLine(parseError(std::string("x = 1\0\n", 7))) ==
        "test.tle:1:6: error: source code cannot contain null bytes");
  CHECK(firstLine(parseError("x = 1 \\ 2\n")) ==
        "test.tle:1:7: error: unexpected character after line continuation character");
  CHECK(firstLine(parseError("x = 0777\n")) == "test.tle:1:5: error: leading zeros in decimal integer literals are "
                                               "not permitted; use an 0o prefix for octal integers");
  CHECK(firstLine(parseError("x = 'caf\xc3'\n")) == "test.tle:1:9: error: invalid UTF-8 byte 0xC3 in source file");
  std::string deep = "x = " + std::string(201, '(') + "1" + std::string(201, ')') + "\n";
  CHECK(firstLine(parseError(deep)) == "test.tle:1:205: error: too many nested parentheses (the limit is 200)");
}

TEST_CASE("frontend: AST construction errors", "[frontend][diagnostics]") {
  CHECK(parseError("x = 18446744073709551616\n", "k.tle") ==
        "k.tle:1:5: error: integer literal '18446744073709551616' is too large (the limit is 2**64 - 1)\n"
        "  x = 18446744073709551616\n"
        "      ^\n");
  CHECK(firstLine(parseError("f(x) = 1\n")) == "test.tle:1:1: error: cannot assign to function call");
  CHECK(firstLine(parseError("a + b = 1\n")) == "test.tle:1:3: error: cannot assign to expression");
  CHECK(firstLine(parseError("for 1 in x: pass\n")) == "test.tle:1:5: error: cannot assign to literal");
  CHECK(firstLine(parseError("a, b += 1\n")) == "test.tle:1:1: error: 'tuple' is an illegal expression for augmented "
                                                "assignment");
  CHECK(firstLine(parseError("*a, *b = c\n")) == "test.tle:1:5: error: multiple starred expressions in assignment");
  CHECK(firstLine(parseError("def f(a=1, b): pass\n")) ==
        "test.tle:1:12: error: parameter without a default follows parameter with a default");
  CHECK(firstLine(parseError("def f(a, a): pass\n")) ==
        "test.tle:1:10: error: duplicate argument 'a' in function definition");
  CHECK(firstLine(parseError("def f(a, *): pass\n")) == "test.tle:1:10: error: named parameters must follow bare '*'");
  CHECK(firstLine(parseError("def f(**k, a): pass\n")) ==
        "test.tle:1:12: error: parameters cannot follow the '**' parameter");
  CHECK(firstLine(parseError("f(a=1, b)\n")) == "test.tle:1:8: error: positional argument follows keyword argument");
  CHECK(firstLine(parseError("f(a=1, a=2)\n")) == "test.tle:1:8: error: keyword argument repeated: a");
  CHECK(firstLine(parseError("s = '\\x4'\n")) ==
        "test.tle:1:6: error: invalid \\x escape: expected two hexadecimal digits");
  CHECK(firstLine(parseError("s = 'a' b'b'\n")) == "test.tle:1:5: error: cannot mix bytes and nonbytes literals");
}

TEST_CASE("frontend: nesting limits", "[frontend][diagnostics]") {
  std::unique_ptr<Parsed> p;
  // Deep but reasonable nesting parses.
  parseOk(p, "x = " + std::string(150, '(') + "1" + std::string(150, ')') + "\n");
  parseOk(p, "x = " + std::string(500, '-') + "1\n");
  // Pathological nesting is a located error, not a stack overflow.
  CHECK(parseError("x = " + std::string(100000, '-') + "1\n").find("error: expression or statement is too deeply "
                                                                   "nested") != std::string::npos);
  std::string chain = "x = a";
  for (int i = 0; i < 3000; ++i)
    chain += " + a";
  CHECK(parseError(chain + "\n").find("error: expression is too deeply nested (the limit is 1000 levels)") !=
        std::string::npos);
}

TEST_CASE("frontend: never crashes on garbage", "[frontend][diagnostics]") {
  // Deterministic random inputs built from Python-ish fragments: each must parse or fail with
  // exactly one diagnostic, never throw anything else.
  const std::vector<std::string> pieces = {
      "def ", "f", "(", ")", ":", "\n", "    ", "\t", "x", " = ", "1", "+", "*", "**", "[", "]", "{", "}", ",",
      "if ", "else", "elif ", "for ", " in ", "while ", "return ", "'", "\"", "\"\"\"", "#", "\\", "\\\n", "@",
      "lambda ", "not ", "is ", ".", "...", "None", "0x", "1e", "_", "->", ":=", "\0", "\xff", "é", "import ",
      "from ", "class ", "try", "except", "with ", "as ", "yield", "await ", "async ", "pass", "(", ")", ";",
      "match ", "case ", "\n  "};
  std::mt19937 rng(1234);
  int parsed = 0, failed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text;
    size_t n = rng() % 40;
    for (size_t i = 0; i < n; ++i)
      text += pieces[rng() % pieces.size()];
    SourceManager sm;
    DiagnosticEngine diags(sm);
    std::ostringstream err;
    diags.setStream(err);
    uint32_t file = sm.addFile("fuzz.tle", text);
    ASTContext ctx;
    try {
      frontend::parseModule(file, ctx, diags);
      ++parsed;
      CHECK(diags.numErrors() == 0);
    } catch (const CompileAborted &) {
      ++failed;
      INFO(text);
      CHECK(diags.numErrors() == 1);
      CHECK(err.str().find("internal") == std::string::npos);
    }
    std::ostringstream toks;
    try {
      frontend::dumpTokens(file, toks, diags);
    } catch (const CompileAborted &) {
    }
  }
  CHECK(parsed > 0);
  CHECK(failed > 0);
}

// -------------------------------------------------------------------------------------------------
// Dumps

TEST_CASE("frontend: token dump", "[frontend]") {
  std::string t = tokens("def f(a) -> int:\n"
                         "    if (b := a) >= 1: a **= 2; a //= 3; a >>= 1\n"
                         "    return a @ x[...]\n");
  CHECK(t == "1:1 DEF 'def'\n"
             "1:5 NAME 'f'\n"
             "1:6 OPEN_PAREN '('\n"
             "1:7 NAME 'a'\n"
             "1:8 CLOSE_PAREN ')'\n"
             "1:10 ARROW '->'\n"
             "1:13 NAME 'int'\n"
             "1:16 COLON ':'\n"
             "1:17 NEWLINE '\\n'\n"
             "2:5 INDENT ''\n"
             "2:5 IF 'if'\n"
             "2:8 OPEN_PAREN '('\n"
             "2:9 NAME 'b'\n"
             "2:11 WALRUS ':='\n"
             "2:14 NAME 'a'\n"
             "2:15 CLOSE_PAREN ')'\n"
             "2:17 GT_EQ '>='\n"
             "2:20 DECIMAL_INTEGER '1'\n"
             "2:21 COLON ':'\n"
             "2:23 NAME 'a'\n"
             "2:25 POWER_ASSIGN '**='\n"
             "2:29 DECIMAL_INTEGER '2'\n"
             "2:30 SEMI_COLON ';'\n"
             "2:32 NAME 'a'\n"
             "2:34 IDIV_ASSIGN '//='\n"
             "2:38 DECIMAL_INTEGER '3'\n"
             "2:39 SEMI_COLON ';'\n"
             "2:41 NAME 'a'\n"
             "2:43 RIGHT_SHIFT_ASSIGN '>>='\n"
             "2:47 DECIMAL_INTEGER '1'\n"
             "2:48 NEWLINE '\\n'\n"
             "3:5 RETURN 'return'\n"
             "3:12 NAME 'a'\n"
             "3:14 AT '@'\n"
             "3:16 NAME 'x'\n"
             "3:17 OPEN_BRACK '['\n"
             "3:18 ELLIPSIS '...'\n"
             "3:21 CLOSE_BRACK ']'\n"
             "3:22 NEWLINE '\\n'\n"
             "4:1 DEDENT ''\n"
             "4:1 EOF ''\n");
  // Strings keep their prefix and quotes; numbers keep their spelling.
  CHECK(tokens("rb'\\d' 0b1_0 1.e5 .5j\n") == "1:1 STRING 'rb\\'\\\\d\\''\n"
                                              "1:8 BIN_INTEGER '0b1_0'\n"
                                              "1:14 FLOAT_NUMBER '1.e5'\n"
                                              "1:19 IMAG_NUMBER '.5j'\n"
                                              "1:22 NEWLINE '\\n'\n"
                                              "2:1 EOF ''\n");
}

TEST_CASE("frontend: AST dump", "[frontend]") {
  std::unique_ptr<Parsed> p;
  const Module &m = parseOk(p, "@jit\n"
                               "def k(X, BLOCK: tl.constexpr = 4):\n"
                               "    x = tl.load(X + offs[:, None], other=-1.5)\n"
                               "    if not x: return 'a\\n'\n");
  CHECK(dump(m) == "Module\n"
                   "  FunctionDef 2:5 name=k\n"
                   "    decorator: Name 1:2 name=jit\n"
                   "    Param 2:7 name=X\n"
                   "    Param 2:10 name=BLOCK\n"
                   "      annotation: Attribute 2:20 attr=constexpr\n"
                   "        Name 2:17 name=tl\n"
                   "      default: IntLit 2:32 value=4\n"
                   "    body:\n"
                   "      Assign 3:5\n"
                   "        target: Name 3:5 name=x\n"
                   "        value: Call 3:9\n"
                   "          callee: Attribute 3:12 attr=load\n"
                   "            Name 3:9 name=tl\n"
                   "          arg: Binary 3:19 op=+\n"
                   "            Name 3:17 name=X\n"
                   "            Subscript 3:25\n"
                   "              base: Name 3:21 name=offs\n"
                   "              index: Slice 3:26\n"
                   "              index: NoneLit 3:29\n"
                   "          Keyword 3:36 name=other\n"
                   "            Unary 3:42 op=-\n"
                   "              FloatLit 3:43 value=1.5\n"
                   "      If 4:5\n"
                   "        cond: Unary 4:8 op=not\n"
                   "          Name 4:12 name=x\n"
                   "        body:\n"
                   "          Return 4:15\n"
                   "            StringLit 4:22 value=\"a\\n\"\n");
  // Deterministic: the same input gives the same dump.
  std::unique_ptr<Parsed> q;
  CHECK(dump(parseOk(q, "x = [1, 2.0, 'a', None, True, f(*a, **k), y[0:1:2], lambda: 0]\n")) ==
        dump(parseOk(p, "x = [1, 2.0, 'a', None, True, f(*a, **k), y[0:1:2], lambda: 0]\n")));
}
