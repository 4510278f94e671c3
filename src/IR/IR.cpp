// Tile IR construction helpers and the verifier.
#include "tle/IR/IR.h"
#include "tle/IR/Layout.h"

#include <cassert>
#include <set>
#include <sstream>

namespace tle::ir {

const char *name(OpKind k) {
  switch (k) {
  case OpKind::Constant: return "constant";
  case OpKind::Splat: return "splat";
  case OpKind::ProgramId: return "program_id";
  case OpKind::NumPrograms: return "num_programs";
  case OpKind::Arange: return "arange";
  case OpKind::Add: return "add";
  case OpKind::Sub: return "sub";
  case OpKind::Mul: return "mul";
  case OpKind::FDiv: return "fdiv";
  case OpKind::IDiv: return "idiv";
  case OpKind::IRem: return "irem";
  case OpKind::FRem: return "frem";
  case OpKind::And: return "and";
  case OpKind::Or: return "or";
  case OpKind::Xor: return "xor";
  case OpKind::Shl: return "shl";
  case OpKind::Shr: return "shr";
  case OpKind::Max: return "max";
  case OpKind::Min: return "min";
  case OpKind::Cmp: return "cmp";
  case OpKind::Select: return "select";
  case OpKind::Neg: return "neg";
  case OpKind::Not: return "not";
  case OpKind::Exp: return "exp";
  case OpKind::Exp2: return "exp2";
  case OpKind::Log: return "log";
  case OpKind::Log2: return "log2";
  case OpKind::Sqrt: return "sqrt";
  case OpKind::Rsqrt: return "rsqrt";
  case OpKind::Abs: return "abs";
  case OpKind::ExternCall: return "extern_call";
  case OpKind::Fma: return "fma";
  case OpKind::Cast: return "cast";
  case OpKind::Bitcast: return "bitcast";
  case OpKind::AddPtr: return "addptr";
  case OpKind::Load: return "load";
  case OpKind::Store: return "store";
  case OpKind::AtomicRMW: return "atomic_rmw";
  case OpKind::AtomicCAS: return "atomic_cas";
  case OpKind::ExpandDims: return "expand_dims";
  case OpKind::Broadcast: return "broadcast";
  case OpKind::Reduce: return "reduce";
  case OpKind::ConvertLayout: return "convert_layout";
  case OpKind::Dot: return "dot";
  case OpKind::Permute: return "permute";
  case OpKind::Reshape: return "reshape";
  case OpKind::Cat: return "cat";
  case OpKind::Join: return "join";
  case OpKind::Split: return "split";
  case OpKind::Scan: return "scan";
  case OpKind::Print: return "print";
  case OpKind::Assert: return "assert";
  case OpKind::For: return "for";
  case OpKind::If: return "if";
  case OpKind::While: return "while";
  case OpKind::Condition: return "condition";
  case OpKind::Yield: return "yield";
  case OpKind::Return: return "return";
  }
  return "?";
}

const char *name(AtomicKind k) {
  static const char *n[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
  return n[static_cast<int>(k)];
}
const char *name(MemSem s) {
  static const char *n[] = {"relaxed", "acquire", "release", "acq_rel"};
  return n[static_cast<int>(s)];
}
const char *name(MemScope s) {
  static const char *n[] = {"gpu", "cta", "sys"};
  return n[static_cast<int>(s)];
}

bool isElementwise(OpKind k) {
  switch (k) {
  case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::FDiv: case OpKind::IDiv:
  case OpKind::IRem: case OpKind::FRem: case OpKind::And: case OpKind::Or: case OpKind::Xor:
  case OpKind::Shl: case OpKind::Shr: case OpKind::Max: case OpKind::Min: case OpKind::Cmp:
  case OpKind::Select: case OpKind::Neg: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2:
  case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Abs:
  case OpKind::Cast: case OpKind::Bitcast: case OpKind::AddPtr: case OpKind::ExternCall: case OpKind::Fma:
    return true;
  default:
    return false;
  }
}

const char *name(CmpPred p) {
  switch (p) {
  case CmpPred::Eq: return "eq";
  case CmpPred::Ne: return "ne";
  case CmpPred::Lt: return "lt";
  case CmpPred::Le: return "le";
  case CmpPred::Gt: return "gt";
  case CmpPred::Ge: return "ge";
  }
  return "?";
}

const char *name(ReduceKind k) {
  switch (k) {
  case ReduceKind::Sum: return "sum";
  case ReduceKind::Max: return "max";
  case ReduceKind::Min: return "min";
  case ReduceKind::Prod: return "prod";
  }
  return "?";
}

Value *Block::addArg(Type t, std::string hint) {
  args.push_back(std::make_unique<Value>(std::move(t)));
  Value *v = args.back().get();
  v->owner = this;
  v->index = static_cast<unsigned>(args.size() - 1);
  v->nameHint = std::move(hint);
  return v;
}

Value *Op::addResult(Type t) {
  results.push_back(std::make_unique<Value>(std::move(t)));
  Value *v = results.back().get();
  v->def = this;
  v->index = static_cast<unsigned>(results.size() - 1);
  return v;
}

Op *Builder::create(OpKind k, SourceLoc loc, std::vector<Value *> operands, std::vector<Type> resultTypes) {
  auto op = std::make_unique<Op>(k, loc);
  op->operands = std::move(operands);
  for (auto &t : resultTypes)
    op->addResult(t);
  op->parent = block_;
  Op *raw = op.get();
  block_->ops.insert(before_, std::move(op));
  return raw;
}

Op *Builder::clone(const Op &op, std::vector<Value *> operands) {
  std::vector<Type> types;
  for (auto &r : op.results)
    types.push_back(r->type);
  Op *c = create(op.kind, op.loc, std::move(operands), types);
  c->ival = op.ival;
  c->ival2 = op.ival2;
  c->fval = op.fval;
  c->axis = op.axis;
  c->pred = op.pred;
  c->reduceKind = op.reduceKind;
  c->ints = op.ints;
  c->sym = op.sym;
  for (size_t i = 0; i < op.results.size(); ++i)
    c->results[i]->nameHint = op.results[i]->nameHint;
  return c;
}

Value *Builder::constInt(SourceLoc loc, DType t, int64_t v) {
  Op *op = create(OpKind::Constant, loc, {}, {Type::scalar(t)});
  op->ival = v;
  op->fval = static_cast<double>(v);
  return op->result();
}

Value *Builder::constFloat(SourceLoc loc, DType t, double v) {
  Op *op = create(OpKind::Constant, loc, {}, {Type::scalar(t)});
  op->fval = v;
  return op->result();
}

Value *Builder::splat(SourceLoc loc, Value *s, const std::vector<int64_t> &shape) {
  assert(s->type.isScalar());
  return create(OpKind::Splat, loc, {s}, {Type(s->type.elem, shape)})->result();
}

Value *Builder::binary(OpKind k, SourceLoc loc, Value *a, Value *b) {
  assert(a->type == b->type || k == OpKind::AddPtr);
  return create(k, loc, {a, b}, {a->type})->result();
}

Value *Builder::unary(OpKind k, SourceLoc loc, Value *a) { return create(k, loc, {a}, {a->type})->result(); }

Value *Builder::cmp(SourceLoc loc, CmpPred p, Value *a, Value *b) {
  assert(a->type == b->type);
  Op *op = create(OpKind::Cmp, loc, {a, b}, {a->type.withElem(ScalarType{DType::I1})});
  op->pred = p;
  return op->result();
}

Value *Builder::select(SourceLoc loc, Value *c, Value *a, Value *b) {
  assert(a->type == b->type && c->type.shape == a->type.shape);
  return create(OpKind::Select, loc, {c, a, b}, {a->type})->result();
}

Value *Builder::cast(SourceLoc loc, Value *v, ScalarType to) {
  if (v->type.elem == to)
    return v;
  return create(OpKind::Cast, loc, {v}, {v->type.withElem(to)})->result();
}

// ---------------------------------------------------------------------------------------------
// Verifier

namespace {

struct Verifier {
  std::ostringstream err;
  std::set<const Value *> defined;

  bool fail(const Op &op, const std::string &msg) {
    err << "'" << name(op.kind) << "' at line " << op.loc.line << ": " << msg;
    return false;
  }

  bool block(const Block &b) {
    for (auto &a : b.args)
      defined.insert(a.get());
    for (auto &op : b.ops) {
      for (Value *v : op->operands)
        if (!defined.count(v))
          return fail(*op, "operand used before its definition or outside its region");
      if (!check(*op))
        return false;
      for (auto &r : op->regions)
        if (!block(*r))
          return false;
      for (auto &res : op->results)
        defined.insert(res.get());
    }
    return true;
  }

  bool sameOperandTypes(const Op &op) {
    for (Value *v : op.operands)
      if (v->type != op.operands[0]->type)
        return fail(op, "operand types differ: " + op.operands[0]->type.str() + " vs " + v->type.str());
    return true;
  }

  bool check(const Op &op) {
    auto nres = op.results.size();
    switch (op.kind) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::FDiv: case OpKind::IDiv:
    case OpKind::IRem: case OpKind::FRem: case OpKind::And: case OpKind::Or: case OpKind::Xor:
    case OpKind::Shl: case OpKind::Shr: case OpKind::Max: case OpKind::Min:
      if (op.operands.size() != 2 || nres != 1)
        return fail(op, "expects 2 operands and 1 result");
      if (!sameOperandTypes(op))
        return false;
      if (op.result()->type != op.operands[0]->type)
        return fail(op, "result type differs from operand type");
      if (op.result()->type.elem.isPointer())
        return fail(op, "arithmetic on pointers must use addptr");
      return true;
    case OpKind::Cmp:
      if (op.operands.size() != 2 || !sameOperandTypes(op))
        return fail(op, "expects 2 operands of one type");
      if (op.result()->type.dtype() != DType::I1)
        return fail(op, "result must be i1");
      return true;
    case OpKind::Select:
      if (op.operands.size() != 3 || op.operands[0]->type.dtype() != DType::I1 ||
          op.operands[1]->type != op.operands[2]->type ||
          op.operands[0]->type.shape != op.operands[1]->type.shape)
        return fail(op, "expects (i1 cond, a, b) of one shape");
      return true;
    case OpKind::AddPtr:
      if (!op.operands[0]->type.elem.isPointer() || !isInteger(op.operands[1]->type.dtype()) ||
          op.operands[0]->type.shape != op.operands[1]->type.shape)
        return fail(op, "expects (ptr, integer offset) of one shape");
      return true;
    case OpKind::Load:
      if (op.operands.empty() || !op.operands[0]->type.elem.isPointer())
        return fail(op, "expects a pointer operand");
      if (op.result()->type.dtype() != op.operands[0]->type.elem.pointee ||
          op.result()->type.shape != op.operands[0]->type.shape)
        return fail(op, "result must be the pointee type of the pointer's shape");
      return true;
    case OpKind::Store:
      if (op.operands.size() < 2 || !op.operands[0]->type.elem.isPointer() ||
          op.operands[1]->type.dtype() != op.operands[0]->type.elem.pointee ||
          op.operands[1]->type.shape != op.operands[0]->type.shape)
        return fail(op, "expects (ptr, value of the pointee type) of one shape");
      return true;
    case OpKind::Reduce: {
      auto &in = op.operands[0]->type;
      if (!in.isTile() || op.axis < 0 || unsigned(op.axis) >= in.rank())
        return fail(op, "axis out of range");
      auto shape = in.shape;
      shape.erase(shape.begin() + op.axis);
      if (op.result()->type.shape != shape || op.result()->type.elem != in.elem)
        return fail(op, "result type mismatch");
      return true;
    }
    case OpKind::For: {
      if (op.operands.size() < 3 || op.regions.size() != 1)
        return fail(op, "expects lb, ub, step and a body");
      const Block &body = *op.regions[0];
      size_t niter = op.operands.size() - 3;
      if (body.args.size() != niter + 1 || op.results.size() != niter)
        return fail(op, "body arguments / results do not match iter values");
      Op *term = body.terminator();
      if (!term || term->kind != OpKind::Yield || term->operands.size() != niter)
        return fail(op, "body must end with a yield of every iter value");
      for (size_t i = 0; i < niter; ++i)
        if (term->operands[i]->type != op.operands[3 + i]->type || op.result(i)->type != op.operands[3 + i]->type)
          return fail(op, "iter value " + std::to_string(i) + " changes type");
      return true;
    }
    case OpKind::Permute: {
      const Type &in = op.operands[0]->type;
      if (op.ints.size() != in.rank())
        return fail(op, "order must name every dim");
      std::vector<bool> seen(in.rank(), false);
      for (size_t i = 0; i < op.ints.size(); ++i) {
        if (op.ints[i] < 0 || op.ints[i] >= int64_t(in.rank()) || seen[op.ints[i]])
          return fail(op, "order is not a permutation");
        seen[op.ints[i]] = true;
        if (op.result()->type.shape[i] != in.shape[op.ints[i]])
          return fail(op, "result shape does not match the order");
      }
      return true;
    }
    case OpKind::Reshape:
      if (op.result()->type.numElements() != op.operands[0]->type.numElements() ||
          op.result()->type.elem != op.operands[0]->type.elem)
        return fail(op, "reshape must keep the element count and type");
      return true;
    case OpKind::Assert:
      if (op.operands.size() != 1 || op.operands[0]->type.dtype() != DType::I1 || !op.results.empty())
        return fail(op, "expects one i1 condition and no results");
      return true;
    case OpKind::Print:
      if (!op.results.empty())
        return fail(op, "has no results");
      return true;
    case OpKind::Dot: {
      if (op.operands.size() != 3)
        return fail(op, "expects a, b and acc");
      const Type &a = op.operands[0]->type, &b = op.operands[1]->type, &c = op.operands[2]->type;
      if (a.rank() != 2 || b.rank() != 2 || c.rank() != 2 || a.shape[1] != b.shape[0] || c.shape[0] != a.shape[0] ||
          c.shape[1] != b.shape[1] || a.elem != b.elem || op.result()->type != c)
        return fail(op, "shapes or types do not form acc[M,N] + a[M,K] @ b[K,N]");
      return true;
    }
    case OpKind::If: {
      if (op.operands.size() != 1 || op.operands[0]->type != Type::scalar(DType::I1) || op.regions.size() != 2)
        return fail(op, "expects an i1 scalar condition and two regions");
      for (auto &r : op.regions) {
        Op *term = r->terminator();
        if (!term || term->kind != OpKind::Yield || term->operands.size() != op.results.size())
          return fail(op, "each region must end with a yield of every result");
        for (size_t i = 0; i < op.results.size(); ++i)
          if (term->operands[i]->type != op.result(static_cast<unsigned>(i))->type)
            return fail(op, "yielded value " + std::to_string(i) + " has the wrong type");
      }
      return true;
    }
    case OpKind::While: {
      if (op.regions.size() != 2)
        return fail(op, "expects before and after regions");
      const Block &before = *op.regions[0], &after = *op.regions[1];
      Op *cond = before.terminator();
      Op *yield = after.terminator();
      if (!cond || cond->kind != OpKind::Condition || !yield || yield->kind != OpKind::Yield)
        return fail(op, "before must end with condition, after with yield");
      if (before.args.size() != op.operands.size() || yield->operands.size() != op.operands.size())
        return fail(op, "carried values do not match");
      if (cond->operands.size() != op.results.size() + 1 || after.args.size() != op.results.size())
        return fail(op, "forwarded values do not match");
      for (size_t i = 0; i < op.operands.size(); ++i)
        if (yield->operands[i]->type != op.operands[i]->type || before.args[i]->type != op.operands[i]->type)
          return fail(op, "carried value " + std::to_string(i) + " changes type");
      return true;
    }
    default:
      return true;
    }
  }
};

} // namespace

std::string verify(const Function &f) {
  Verifier v;
  if (f.body.args.size() != f.params.size())
    return "function arguments do not match parameters";
  Op *term = f.body.terminator();
  if (!term || term->kind != OpKind::Return)
    return "function body must end with return";
  if (!v.block(f.body))
    return v.err.str();
  return "";
}

} // namespace tle::ir
