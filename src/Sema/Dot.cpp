// tl.dot: 2-D products with Triton 3.6's dtype, accumulator and precision rules, fp32 3xTF32,
// and batched (3-D) products as one 2-D dot per batch.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

namespace tle::sema {

using ir::DType;

namespace {

/// `x` reshaped to `shape` (same number of elements).
ir::Value *reshapeTo(ir::Builder &b, ir::Value *x, std::vector<int64_t> shape, SourceLoc loc) {
  return b.create(ir::OpKind::Reshape, loc, {x}, {ir::Type(x->type.elem, std::move(shape))})->result();
}

/// `x[..., 0]`, ..., `x[..., n - 1]` of a tile whose last dim n is a power of two >= 2: split
/// (n == 2), or reshaped to [..., n / 2, 2] and split into the even and the odd indices, each
/// sliced again and the two lists interleaved.
std::vector<ir::Value *> lastDimSlices(ir::Builder &b, ir::Value *x, SourceLoc loc) {
  std::vector<int64_t> shape = x->type.shape;
  int64_t n = shape.back();
  if (n > 2) {
    shape.back() = n / 2;
    shape.push_back(2);
    x = reshapeTo(b, x, shape, loc);
  }
  shape.pop_back();
  ir::Type half(x->type.elem, shape);
  ir::Op *split = b.create(ir::OpKind::Split, loc, {x}, {half, half});
  if (n == 2)
    return {split->result(0), split->result(1)};
  std::vector<ir::Value *> even = lastDimSlices(b, split->result(0), loc);
  std::vector<ir::Value *> odd = lastDimSlices(b, split->result(1), loc);
  std::vector<ir::Value *> all;
  for (size_t i = 0; i < even.size(); ++i) {
    all.push_back(even[i]);
    all.push_back(odd[i]);
  }
  return all;
}

/// The inverse of lastDimSlices: tiles `r` of one shape S (a power-of-two count >= 2) stacked
/// along a new last dim, S + [r.size()], by joins of the even and the odd halves.
ir::Value *stackLastDim(ir::Builder &b, const std::vector<ir::Value *> &r, SourceLoc loc) {
  auto join = [&](ir::Value *x, ir::Value *y) {
    std::vector<int64_t> shape = x->type.shape;
    shape.push_back(2);
    return b.create(ir::OpKind::Join, loc, {x, y}, {ir::Type(x->type.elem, shape)})->result();
  };
  if (r.size() == 2)
    return join(r[0], r[1]);
  std::vector<ir::Value *> even, odd;
  for (size_t i = 0; i < r.size(); ++i)
    (i % 2 ? odd : even).push_back(r[i]);
  ir::Value *evens = stackLastDim(b, even, loc);
  ir::Value *odds = stackLastDim(b, odd, loc);
  ir::Value *j = join(evens, odds); // S + [n / 2, 2]
  std::vector<int64_t> shape = r[0]->type.shape;
  shape.push_back(int64_t(r.size()));
  return reshapeTo(b, j, shape, loc);
}

/// The 2-D tiles x[0], ..., x[B - 1] of a 3-D tile x of shape [B, R, C]: a reshape when B is 1,
/// else x permuted to [R, C, B] and sliced along its last dim.
std::vector<ir::Value *> batchSlices(ir::Builder &b, ir::Value *x, SourceLoc loc) {
  const std::vector<int64_t> &s = x->type.shape;
  if (s[0] == 1)
    return {reshapeTo(b, x, {s[1], s[2]}, loc)};
  ir::Op *perm = b.create(ir::OpKind::Permute, loc, {x}, {ir::Type(x->type.elem, {s[1], s[2], s[0]})});
  perm->setPermutation({1, 2, 0});
  return lastDimSlices(b, perm->result(), loc);
}

/// The inverse of batchSlices: B 2-D tiles of shape [R, C] as one [B, R, C] tile.
ir::Value *stackBatches(ir::Builder &b, const std::vector<ir::Value *> &r, SourceLoc loc) {
  const std::vector<int64_t> &s = r[0]->type.shape;
  std::vector<int64_t> shape = {int64_t(r.size()), s[0], s[1]};
  if (r.size() == 1)
    return reshapeTo(b, r[0], shape, loc);
  ir::Op *perm = b.create(ir::OpKind::Permute, loc, {stackLastDim(b, r, loc)}, {ir::Type(r[0]->type.elem, shape)});
  perm->setPermutation({2, 0, 1});
  return perm->result();
}

/// dot()'s input_precision (or allow_tf32=False) as a DotPrecision value for fp32 inputs.
int64_t inputPrecision(Specializer &S, const Binder &p) {
  int64_t precision = 0;
  std::string prec = "tf32";
  if (p.has("input_precision")) {
    const Arg &ip = p.get("input_precision");
    if (ip.val.kind != SVal::Kind::Str)
      S.fail(ip.loc, "dot() input_precision must be a string: \"tf32\", \"tf32x3\" or \"ieee\"");
    prec = ip.val.s;
  } else if (p.has("allow_tf32") && p.get("allow_tf32").val.isTensor()) {
    // Triton tests the argument's Python truthiness: a runtime value is a tensor object, true.
    S.diags.warning(p.loc("allow_tf32"), "dot() allow_tf32 is a runtime value: Triton takes any tensor as true, "
                                         "so tf32 is used whatever its value (give a constexpr)");
  } else if (p.has("allow_tf32") && !S.truthy(p.get("allow_tf32").val, p.loc("allow_tf32"))) {
    prec = "ieee";
  }
  if (prec == "tf32")
    precision = 0;
  else if (prec == "tf32x3")
    precision = static_cast<int64_t>(ir::DotPrecision::TF32x3);
  else if (prec == "ieee")
    precision = 2;
  else
    S.fail(p.loc("input_precision"), "dot() input_precision must be \"tf32\", \"tf32x3\" or \"ieee\", got \"" + prec + "\"");
  return precision;
}

/// max_num_imprecise_acc (fp8 only, Triton's knob): how many elements of K Hopper's fp8 tensor
/// cores may add at their reduced precision before an fp32 addition; None (Triton's default on
/// sm_90) never promotes.
int64_t maxImpreciseAcc(Specializer &S, const Binder &p) {
  int64_t maxImprecise = 0;
  if (p.has("max_num_imprecise_acc") && p.get("max_num_imprecise_acc").val.kind != SVal::Kind::None) {
    maxImprecise = p.constInt("max_num_imprecise_acc", 0);
    if (maxImprecise < 0)
      S.fail(p.loc("max_num_imprecise_acc"), "dot() max_num_imprecise_acc must be non-negative, got " +
                                               std::to_string(maxImprecise));
  }
  return maxImprecise;
}

/// The argument of `c` at position `pos`, or given as keyword `kw` (the call's arguments are
/// already bound, so each is given once at most); null when absent.
Arg *argSlot(CallArgs &c, size_t pos, const char *kw) {
  if (c.pos.size() > pos)
    return &c.pos[pos];
  for (auto &[k, v] : c.kw)
    if (k == kw)
      return &v;
  return nullptr;
}

SVal dot(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  CallArgs &args = c.args;
  SourceLoc loc = c.loc;
  ir::Value *a = p.tensor("input"), *bm = p.tensor("other");
  if (a->type.rank() != 2 || bm->type.rank() != 2)
    return S.batchedDot(a, bm, args);
  int64_t M = a->type.shape[0], K = a->type.shape[1], K2 = bm->type.shape[0], N = bm->type.shape[1];
  if (K != K2)
    S.fail(loc, "dot() inner dimensions differ: " + a->type.str() + " @ " + bm->type.str());
  if (K < 16)
    S.fail(loc, "dot() needs K of at least 16, got M=" + std::to_string(M) + ", N=" + std::to_string(N) +
                  ", K=" + std::to_string(K));
  if (M < 16 || N < 16)
    return S.paddedDot(a, bm, args);
  if (std::string why = ir::tileLimitError({M, N}); !why.empty())
    S.fail(loc, "dot() result of shape [" + std::to_string(M) + ", " + std::to_string(N) + "] has " + why);
  DType ta = a->type.dtype(), tb = bm->type.dtype();
  // Triton 3.6 requires equal operand dtypes ("Both operands must be same dtype").
  // Any two fp8 types may be multiplied (Triton 3.6).
  if (ta != tb && !(ir::isFP8(ta) && ir::isFP8(tb)))
    S.fail(loc, std::string("dot() operands must have the same dtype, got ") + ir::name(ta) + " and " + ir::name(tb) +
                  " (cast one with .to())");
  DType in = a->type.dtype();
  DType out = ir::isInteger(in) ? DType::I32 : in == DType::F64 ? DType::F64 : DType::F32;
  if (p.has("out_dtype")) {
    DType req = p.dtype("out_dtype").dtype;
    if (!(req == out || (req == DType::F16 && (in == DType::F16 || ir::isFP8(in)))))
      S.fail(p.loc("out_dtype"), std::string("dot() out_dtype ") + ir::name(req) + " is not supported for " + ir::name(in) +
                                   " inputs (use " + ir::name(out) + ")");
  }
  int64_t precision = inputPrecision(S, p);
  int64_t maxImprecise = maxImpreciseAcc(S, p);
  ir::Value *acc;
  DType accOut = DType::Invalid; // fp16 when the fp16 accumulator was widened
  if (p.has("acc")) {
    acc = p.tensor("acc");
    if (acc->type.shape != std::vector<int64_t>{M, N})
      S.fail(p.loc("acc"), "dot() acc must be a [" + std::to_string(M) + ", " + std::to_string(N) + "] tile, got " +
                             acc->type.str());
    // Triton also takes an fp16 accumulator for fp16 and fp8 inputs (out_dtype fp16): TLE adds
    // the product to it in fp32 and rounds the sum to fp16 once.
    bool f16Acc = acc->type.dtype() == DType::F16 && (in == DType::F16 || ir::isFP8(in)) &&
                  (!p.has("out_dtype") || p.dtype("out_dtype").dtype == DType::F16);
    if (acc->type.dtype() != out && !f16Acc)
      S.fail(p.loc("acc"), std::string("dot() acc must be ") + ir::name(out) + " for " + ir::name(in) + " inputs, got " +
                             acc->type.str());
    if (f16Acc) {
      acc = S.castTo(acc, ir::ScalarType{out}, p.loc("acc"));
      accOut = DType::F16;
    }
  } else {
    acc = S.b->splat(loc, S.toTensorOfType(SVal::integer(0), out, loc), {M, N});
  }
  ir::Value *r;
  if (precision == static_cast<int64_t>(ir::DotPrecision::TF32x3) && in == DType::F32) {
    r = S.dotTF32x3(a, bm, acc, loc);
  } else {
    ir::Op *op = S.b->create(ir::OpKind::Dot, loc, {a, bm, acc}, {acc->type});
    op->setDotPrecision(in == DType::F32 ? static_cast<ir::DotPrecision>(precision) : ir::DotPrecision::TF32);
    op->setMaxNumImpreciseAcc(ir::isFP8(in) ? maxImprecise : 0);
    r = op->result();
  }
  if (p.has("out_dtype") && p.dtype("out_dtype").dtype != out)
    r = S.castTo(r, p.dtype("out_dtype"), loc);
  else if (accOut == DType::F16)
    r = S.castTo(r, ir::ScalarType{DType::F16}, loc);
  return SVal::tensor(r);
}

} // namespace

std::vector<BuiltinSpec> dotBuiltins() {
  return {
      {"tl.dot", "input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None, "
                 "out_dtype=tl.float32",
       dot},
  };
}

SVal Specializer::batchedDot(ir::Value *a, ir::Value *bm, CallArgs &args) {
  SourceLoc loc = args.loc;
  const std::string shapes = a->type.str() + " and " + bm->type.str();
  auto operandNotes = [&] { // where each operand comes from
    std::vector<Note> notes;
    noteDefinition(notes, a, "the " + a->type.str() + " operand", loc);
    noteDefinition(notes, bm, "the " + bm->type.str() + " operand", loc);
    return notes;
  };
  if ((a->type.rank() == 3 && bm->type.rank() == 2) || (a->type.rank() == 2 && bm->type.rank() == 3))
    fail(loc, "dot() operands must both be 2-D or both be 3-D (batched), got " + shapes, operandNotes());
  if (a->type.rank() != 3 || bm->type.rank() != 3)
    fail(loc, "dot() expects two 2-D tiles or two 3-D (batched) tiles, got " + shapes, operandNotes());
  int64_t B = a->type.shape[0], M = a->type.shape[1], K = a->type.shape[2];
  int64_t B2 = bm->type.shape[0], K2 = bm->type.shape[1], N = bm->type.shape[2];
  if (B != B2)
    fail(loc, "dot() batch sizes differ: " + a->type.str() + " @ " + bm->type.str() + " (dim 0 of both operands "
              "is the batch)", operandNotes());
  if (K != K2)
    fail(loc, "dot() inner dimensions differ: " + a->type.str() + " @ " + bm->type.str(), operandNotes());
  const std::vector<int64_t> outShape = {B, M, N};
  if (std::string why = ir::tileLimitError(outShape); !why.empty())
    fail(loc, "dot() result of shape [" + std::to_string(B) + ", " + std::to_string(M) + ", " + std::to_string(N) +
                  "] has " + why);
  // The argument slots of input, other and acc: positions 0-2 of dot(input, other, acc, ...) or
  // the keywords (the call's arguments are already bound, so each is given once at most).
  Arg *accArg = argSlot(args, 2, "acc");
  std::vector<ir::Value *> accs;
  if (accArg && accArg->val.kind != SVal::Kind::None) {
    ir::Value *acc = toTensor(accArg->val, accArg->loc);
    if (acc->type.shape != outShape)
      fail(accArg->loc, "dot() acc must be a [" + std::to_string(B) + ", " + std::to_string(M) + ", " +
                            std::to_string(N) + "] tile for " + a->type.str() + " @ " + bm->type.str() + ", got " +
                            acc->type.str());
    accs = batchSlices(*b, acc, loc);
  }
  // One 2-D tl.dot per batch, with the call's other arguments (and their locations) unchanged.
  std::vector<ir::Value *> as = batchSlices(*b, a, loc), bs = batchSlices(*b, bm, loc), rs;
  for (size_t i = 0; i < as.size(); ++i) {
    CallArgs one = args;
    argSlot(one, 0, "input")->val = SVal::tensor(as[i]);
    argSlot(one, 1, "other")->val = SVal::tensor(bs[i]);
    if (!accs.empty())
      argSlot(one, 2, "acc")->val = SVal::tensor(accs[i]);
    rs.push_back(callBuiltin("tl.dot", one).v);
  }
  return SVal::tensor(stackBatches(*b, rs, loc));
}

SVal Specializer::paddedDot(ir::Value *a, ir::Value *bm, CallArgs &args) {
  // Triton lets M and N be smaller than a tensor-core tile (its min_dot_size on NVIDIA: M, N >= 1),
  // padding the operands: A [M, K] and B [K, N] go into zero tiles of at least 16 rows and
  // columns (tle.insert_tile at [0, 0]), so does acc, and the [M, N] corner of the padded dot is
  // the result (tle.extract_tile). The zeros add nothing to the sums it keeps.
  SourceLoc loc = args.loc;
  auto index0 = SVal::tuple({SVal::integer(0), SVal::integer(0)});
  auto pad = [&](ir::Value *x, int64_t rows, int64_t cols) {
    if (x->type.shape == std::vector<int64_t>{rows, cols})
      return x;
    ir::Value *zero = b->splat(loc, toTensorOfType(SVal::integer(0), x->type.dtype(), loc), {rows, cols});
    CallArgs ins{loc, {Arg{loc, SVal::tensor(zero)}, Arg{loc, SVal::tensor(x)}, Arg{loc, index0}}, {}};
    return callBuiltin("tle.insert_tile", ins).v;
  };
  int64_t M = a->type.shape[0], K = a->type.shape[1], N = bm->type.shape[1];
  int64_t Mp = std::max<int64_t>(M, 16), Np = std::max<int64_t>(N, 16);
  CallArgs padded = args;
  argSlot(padded, 0, "input")->val = SVal::tensor(pad(a, Mp, K));
  argSlot(padded, 1, "other")->val = SVal::tensor(pad(bm, K, Np));
  if (Arg *acc = argSlot(padded, 2, "acc"); acc && acc->val.kind != SVal::Kind::None) {
    ir::Value *c = toTensor(acc->val, acc->loc);
    if (c->type.shape != std::vector<int64_t>{M, N})
      fail(acc->loc, "dot() acc must be a [" + std::to_string(M) + ", " + std::to_string(N) + "] tile, got " +
                         c->type.str());
    acc->val = SVal::tensor(pad(c, Mp, Np));
  }
  SVal r = callBuiltin("tl.dot", padded);
  CallArgs ext{loc, {Arg{loc, r}, Arg{loc, index0}, Arg{loc, SVal::tuple({SVal::integer(M), SVal::integer(N)})}}, {}};
  return callBuiltin("tle.extract_tile", ext);
}

ir::Value *Specializer::dotTF32x3(ir::Value *a, ir::Value *bm, ir::Value *acc, SourceLoc loc) {
  // Triton's 3xTF32 (its F32DotTC rewrite, after CUTLASS): x = big + small with big = x rounded
  // to TF32 (cvt.rna.tf32.f32: to nearest, ties away; inf and NaN unchanged) and small = x - big
  // (exact in fp32); a @ b ~ small_a @ big_b + big_a @ small_b + big_a @ big_b, each a TF32 dot.
  // Where a big part is inf or NaN the small terms are NaN: they are dropped (the big product
  // carries the inf or NaN).
  auto tf32 = [&](ir::Value *x) {
    const auto &shape = x->type.shape;
    auto i32 = [&](int64_t v) { return b->splat(loc, b->constInt(loc, DType::I32, v), shape); };
    ir::Value *bits = b->create(ir::OpKind::Bitcast, loc, {x}, {ir::Type(ir::ScalarType{DType::I32}, shape)})->result();
    ir::Value *special = b->cmp(loc, ir::CmpPred::Eq, b->binary(ir::OpKind::And, loc, bits, i32(0x7F800000)), i32(0x7F800000));
    ir::Value *rounded = b->binary(ir::OpKind::And, loc, b->binary(ir::OpKind::Add, loc, bits, i32(0x1000)), i32(int32_t(0xFFFFE000)));
    ir::Value *r = b->select(loc, special, bits, rounded);
    return b->create(ir::OpKind::Bitcast, loc, {r}, {x->type})->result();
  };
  auto dot = [&](ir::Value *x, ir::Value *y, ir::Value *c) {
    ir::Op *op = b->create(ir::OpKind::Dot, loc, {x, y, c}, {c->type});
    op->setDotPrecision(ir::DotPrecision::TF32);
    return op->result();
  };
  ir::Value *aBig = tf32(a), *bBig = tf32(bm);
  ir::Value *aSmall = b->binary(ir::OpKind::Sub, loc, a, aBig), *bSmall = b->binary(ir::OpKind::Sub, loc, bm, bBig);
  ir::Value *zero = b->splat(loc, b->constFloat(loc, DType::F32, 0.0), acc->type.shape);
  ir::Value *small = dot(aBig, bSmall, dot(aSmall, bBig, zero));
  small = b->select(loc, isNan(small, loc), zero, small);
  return dot(aBig, bBig, b->binary(ir::OpKind::Add, loc, acc, small));
}

} // namespace tle::sema
