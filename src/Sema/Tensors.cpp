// Tensor helpers of specialisation: literal dtypes, constants as tiles, casts, expand_dims,
// broadcasting and reductions.
#include "Sema.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tle::sema {

using ir::DType;

// ---------------------------------------------------------------------------------------------
// Tensors

ir::DType Specializer::literalType(const SVal &v, SourceLoc loc) {
  switch (v.kind) {
  case SVal::Kind::Bool:
    return DType::I1;
  case SVal::Kind::Int:
    if (v.i >= std::numeric_limits<int32_t>::min() && v.i <= std::numeric_limits<int32_t>::max())
      return DType::I32;
    if (v.i >= 0 && v.i <= int64_t(std::numeric_limits<uint32_t>::max()))
      return DType::U32;
    return DType::I64;
  case SVal::Kind::Float: {
    double a = std::fabs(v.f);
    if (a == 0 || std::isinf(a) || std::isnan(a) ||
        (a >= double(std::numeric_limits<float>::min()) && a <= double(std::numeric_limits<float>::max())))
      return DType::F32;
    return DType::F64;
  }
  default:
    fail(loc, "expected a number or a tensor, got " + v.describe());
  }
}

/// A float constant as an integer of dtype `t` exactly as the runtime cast converts it (float to
/// int casts saturate: toward zero, clamped to t's range, NaN -> 0; to i1: x != 0, NaN -> 1),
/// returned as the bit pattern constInt takes (u64 above 2^63 wraps to negative int64).
static int64_t floatToIntLikeCast(double f, DType t) {
  if (t == DType::I1)
    return !(f == 0);
  if (std::isnan(f))
    return 0;
  double x = std::trunc(f);
  unsigned bits = ir::bitWidth(t);
  if (ir::isSigned(t)) {
    double lim = std::ldexp(1.0, int(bits) - 1);
    if (x <= -lim)
      return bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1));
    if (x >= lim)
      return bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1;
    return static_cast<int64_t>(x);
  }
  if (x <= 0)
    return 0;
  if (x >= std::ldexp(1.0, int(bits)))
    return static_cast<int64_t>(bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1);
  return static_cast<int64_t>(static_cast<uint64_t>(x));
}

ir::Value *Specializer::toTensorOfType(const SVal &v, DType t, SourceLoc loc) {
  if (v.isTensor())
    return castTo(v.v, ir::ScalarType{t}, loc);
  if (!b)
    fail(loc, "not a compile-time value");
  if (!v.isNumber())
    fail(loc, "expected a number or a tensor, got " + v.describe());
  if (ir::isFloat(t))
    return b->constFloat(loc, t, v.kind == SVal::Kind::Float ? v.f : double(v.i));
  if (v.kind == SVal::Kind::Float)
    return b->constInt(loc, t, floatToIntLikeCast(v.f, t));
  return b->constInt(loc, t, t == DType::I1 ? (v.i != 0) : v.i);
}

ir::Value *Specializer::toTensor(const SVal &v, SourceLoc loc) {
  if (v.isTensor())
    return v.v;
  return toTensorOfType(v, literalType(v, loc), loc);
}

/// Triton's conversions between pointers and integers (semantic.cast): a global pointer to a
/// 64-bit integer is its address (ptr_to_int), to int1 whether it is not null; an integer to a
/// global pointer is the address it holds (int_to_ptr; narrower integers are first extended by
/// their signedness). Shared-memory pointers have no such conversion here.
ir::Value *Specializer::addressCast(ir::Value *v, ir::ScalarType t, SourceLoc loc) {
  bool fromPtr = v->type.elem.isPointer();
  const ir::ScalarType &p = fromPtr ? v->type.elem : t;
  if (p.space != ir::AddrSpace::Global)
    fail(loc, "cannot convert " + v->type.str() + " to " + t.str() + ": only global-memory pointers convert to and "
              "from integers");
  if (fromPtr && t.dtype == ir::DType::I1) {
    ir::Value *addr = b->create(ir::OpKind::Bitcast, loc, {v}, {v->type.withElem(ir::ScalarType{ir::DType::I64})})
                          ->result();
    return b->cmp(loc, ir::CmpPred::Ne, addr, broadcastTo(b->constInt(loc, ir::DType::I64, 0), v->type.shape, loc));
  }
  if (fromPtr && (!ir::isInteger(t.dtype) || ir::bitWidth(t.dtype) != 64))
    fail(loc, "cannot convert " + v->type.str() + " to " + t.str() + ": a pointer converts to a 64-bit integer "
              "(its address) or to int1");
  if (!fromPtr && !ir::isInteger(v->type.dtype()))
    fail(loc, "cannot convert " + v->type.str() + " to " + t.str() + ": only integers convert to pointers");
  if (!fromPtr && ir::bitWidth(v->type.dtype()) != 64)
    v = b->cast(loc, v, ir::ScalarType{ir::isSigned(v->type.dtype()) ? ir::DType::I64 : ir::DType::U64});
  return b->create(ir::OpKind::Bitcast, loc, {v}, {v->type.withElem(t)})->result();
}

ir::Value *Specializer::castTo(ir::Value *v, ir::ScalarType t, SourceLoc loc) {
  if (v->type.elem == t)
    return v;
  if (v->type.elem.isPointer() || t.isPointer()) {
    if (v->type.elem.isPointer() && t.isPointer()) { // the pointee changes; the memory it points into does not
      t.space = v->type.elem.space;
      if (t == v->type.elem)
        return v;
      return b->create(ir::OpKind::Bitcast, loc, {v}, {v->type.withElem(t)})->result();
    }
    return addressCast(v, t, loc);
  }
  return b->cast(loc, v, t);
}

ir::Value *Specializer::expandDims(ir::Value *v, int axis, SourceLoc loc) {
  int rank = static_cast<int>(v->type.rank());
  if (axis < 0)
    axis += rank + 1;
  if (axis < 0 || axis > rank)
    fail(loc, "expand_dims axis out of range for " + v->type.str());
  auto shape = v->type.shape;
  shape.insert(shape.begin() + axis, 1);
  ir::Op *op = b->create(ir::OpKind::ExpandDims, loc, {v}, {ir::Type(v->type.elem, shape)});
  op->setAxis(axis);
  return op->result();
}

ir::Value *Specializer::broadcastTo(ir::Value *v, const std::vector<int64_t> &shape, SourceLoc loc) {
  if (v->type.shape == shape)
    return v;
  if (v->type.isScalar())
    return b->splat(loc, v, shape);
  if (v->type.rank() > shape.size())
    fail(loc, "cannot broadcast " + v->type.str() + " to a lower-rank shape");
  while (v->type.rank() < shape.size())
    v = expandDims(v, 0, loc);
  for (size_t d = 0; d < shape.size(); ++d)
    if (v->type.shape[d] != shape[d] && v->type.shape[d] != 1)
      fail(loc, "cannot broadcast " + v->type.str() + " to shape " + ir::Type(v->type.elem, shape).str());
  if (std::string why = ir::tileLimitError(shape); !why.empty())
    fail(loc, "broadcasting " + v->type.str() + " to " + ir::Type(v->type.elem, shape).str() + " gives " + why);
  return b->create(ir::OpKind::Broadcast, loc, {v}, {ir::Type(v->type.elem, shape)})->result();
}

void Specializer::broadcastPair(ir::Value *&x, ir::Value *&y, SourceLoc loc) {
  if (x->type.shape == y->type.shape)
    return;
  if (x->type.isScalar()) {
    x = b->splat(loc, x, y->type.shape);
    return;
  }
  if (y->type.isScalar()) {
    y = b->splat(loc, y, x->type.shape);
    return;
  }
  auto sx = x->type.shape, sy = y->type.shape;
  size_t rank = std::max(sx.size(), sy.size());
  sx.insert(sx.begin(), rank - sx.size(), 1);
  sy.insert(sy.begin(), rank - sy.size(), 1);
  std::vector<int64_t> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (sx[d] != sy[d] && sx[d] != 1 && sy[d] != 1) {
      std::vector<Note> notes;
      noteDefinition(notes, x, "the " + x->type.str() + " operand", loc);
      noteDefinition(notes, y, "the " + y->type.str() + " operand", loc);
      fail(loc, "incompatible shapes for broadcasting: " + x->type.str() + " and " + y->type.str() + " (dim " +
                    std::to_string(d) + ": " + std::to_string(sx[d]) + " vs " + std::to_string(sy[d]) + ")", notes);
    }
    out[d] = std::max(sx[d], sy[d]);
  }
  if (std::string why = ir::tileLimitError(out); !why.empty())
    fail(loc, "broadcasting " + x->type.str() + " and " + y->type.str() + " gives " +
                  ir::Type(x->type.elem, out).str() + " of " + why);
  x = broadcastTo(x, out, loc);
  y = broadcastTo(y, out, loc);
}

ir::Value *Specializer::reduce(ir::Value *v, int axis, ir::ReduceKind k, SourceLoc loc) {
  if (ir::isFP8(v->type.dtype())) // accumulated in fp32, the result rounded once to fp8
    return castTo(reduce(castTo(v, ir::ScalarType{DType::F32}, loc), axis, k, loc), v->type.elem, loc);
  auto shape = v->type.shape;
  shape.erase(shape.begin() + axis);
  ir::Op *op = b->create(ir::OpKind::Reduce, loc, {v}, {ir::Type(v->type.elem, shape)});
  op->setAxis(axis);
  op->setReduceKind(k);
  return op->result();
}

} // namespace tle::sema
