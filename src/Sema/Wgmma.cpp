// tle.gpu.wgmma and tle.gpu.wgmma_wait (FlagTree TLE-Struct's explicit Hopper MMA,
// ../shared/reference/tle.md §3.4), lowered to the tile IR's wgmma and wgmma_wait ops.
//
//   acc = tle.gpu.wgmma(a, b, acc=None, input_precision=None, max_num_imprecise_acc=None,
//                       out_dtype=tl.float32, trans_a=False, trans_b=False)
//   acc = tle.gpu.wgmma_wait(pendings, acc)
//
// `a` is a buffer in the NVMMA layout ([M, K]; [K, M] with trans_a) or a 16-bit register tile
// [M, K]; `b` a buffer in the NVMMA layout ([K, N]; [N, K] with trans_b). The wgmma starts one
// asynchronous group (PTX ISA §9.7.15) computing acc + a @ b (acc None: zeros); its result may
// only be chained into another wgmma, carried by a loop, or waited for: wgmma_wait(n, acc) waits
// until at most n groups are in flight and returns acc, readable when its group is retired. The
// verifier checks the rest (dtypes, M per warpgroup, N and K steps, K-major fp32/fp8/int8).
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

namespace tle::sema {

using ir::DType;
using ir::OpKind;

namespace {

/// The matrix shape [rows, cols] of `x` (a buffer in the NVMMA layout of rank 2), or a located
/// error naming `what`.
std::vector<int64_t> matrixOf(Specializer &S, const Arg &x, const char *what) {
  if (x.val.kind != SVal::Kind::Buffer)
    S.fail(x.loc, std::string("wgmma() ") + what + " must be a shared buffer (tle.gpu.alloc), got " + x.val.describe());
  if (x.val.ints.size() != 2)
    S.fail(x.loc, std::string("wgmma() ") + what + " must be a rank-2 buffer (a slot of a ring: buf.slot(i)), got " +
                      x.val.describe());
  if (!x.val.i)
    S.fail(x.loc, std::string("wgmma() ") + what + ", " + x.val.describe() +
                      ", must be in the NVMMA layout (tle.gpu.alloc's default for 8- and 16-bit matrices, "
                      "nv_mma_shared_layout=True for others), which wgmma reads");
  if (x.val.elts[0].v->type.elem.space != ir::AddrSpace::Shared)
    S.fail(x.loc, std::string("wgmma() ") + what + " must be this CTA's buffer, got " + x.val.describe());
  return x.val.ints;
}

SVal wgmma(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  bool ta = strictBool(S, p, "wgmma", "trans_a"), tb = strictBool(S, p, "wgmma", "trans_b");
  const Arg &a = p.get("a"), &b = p.get("b");
  std::vector<int64_t> bm = matrixOf(S, b, "b");
  int64_t K = tb ? bm[1] : bm[0], N = tb ? bm[0] : bm[1], M, Ka;
  DType in = b.val.elts[0].v->type.elem.pointee;
  if (a.val.isTensor() && a.val.v->type.isTile()) {
    if (ta)
      S.fail(p.loc("trans_a"), "wgmma() trans_a applies to a buffer operand a; transpose a register tile with tl.trans");
    if (a.val.v->type.rank() != 2)
      S.fail(a.loc, "wgmma() a must be a rank-2 tile, got " + a.val.describe());
    M = a.val.v->type.shape[0];
    Ka = a.val.v->type.shape[1];
  } else {
    std::vector<int64_t> am = matrixOf(S, a, "a");
    M = ta ? am[1] : am[0];
    Ka = ta ? am[0] : am[1];
  }
  DType ain = a.val.kind == SVal::Kind::Buffer ? a.val.elts[0].v->type.elem.pointee : a.val.v->type.dtype();
  if (Ka != K)
    S.fail(c.loc, "wgmma() shapes do not chain: a is " + std::to_string(M) + " x " + std::to_string(Ka) + ", b is " +
                      std::to_string(K) + " x " + std::to_string(N) + " (after trans_a / trans_b)");
  if (ain != in && !(ir::isFP8(ain) && ir::isFP8(in)))
    S.fail(c.loc, std::string("wgmma() operands must have one dtype, got ") + ir::name(ain) + " and " + ir::name(in));
  DType out = ir::isInteger(in) ? DType::I32 : DType::F32;
  if (p.has("out_dtype")) {
    ir::ScalarType od = p.dtype("out_dtype");
    if (od.dtype != out)
      S.fail(p.loc("out_dtype"), std::string("wgmma() accumulates in ") + ir::name(out) + " for " + ir::name(in) +
                                     " operands; out_dtype " + od.str() + " is not supported (cast the result)");
  }
  if (p.has("input_precision")) {
    const SVal &ip = p.get("input_precision").val;
    if (ip.kind != SVal::Kind::Str || (ip.s != "tf32" && ip.s != "ieee" && ip.s != "tf32x3"))
      S.fail(p.loc("input_precision"), "wgmma() input_precision must be \"tf32\", got " + ip.describe());
    if (in == DType::F32 && ip.s != "tf32")
      S.fail(p.loc("input_precision"), "wgmma() multiplies fp32 operands as tf32 only, got \"" + ip.s + "\"");
  }
  if (p.has("max_num_imprecise_acc")) // the hardware's accumulation is kept full precision
    p.constInt("max_num_imprecise_acc", 0);
  ir::Type accTy(ir::ScalarType{out}, {M, N});
  ir::Value *acc;
  if (p.has("acc")) {
    const Arg &x = p.get("acc");
    if (!x.val.isTensor() || x.val.v->type != accTy)
      S.fail(x.loc, "wgmma() acc must be a " + accTy.str() + " tile, got " + x.val.describe());
    acc = x.val.v;
  } else {
    ir::Value *zero = out == DType::I32 ? S.b->constInt(c.loc, DType::I32, 0) : S.b->constFloat(c.loc, DType::F32, 0.0);
    acc = S.b->splat(c.loc, zero, {M, N});
  }
  ir::Value *av = a.val.kind == SVal::Kind::Buffer ? a.val.elts[0].v : a.val.v;
  ir::Op *op = S.b->create(OpKind::Wgmma, c.loc, {av, b.val.elts[0].v, acc}, {accTy});
  op->setWgmmaTrans(ta, tb);
  return SVal::tensor(op->result());
}

SVal wgmmaWait(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const Arg &pa = p.get("pendings");
  SVal acc = p.has("acc") ? p.get("acc").val : SVal::none();
  int64_t pendings = 0;
  if (acc.kind == SVal::Kind::None && pa.val.isTensor()) // wgmma_wait(acc): wait for every group
    acc = pa.val;
  else if (pa.val.kind != SVal::Kind::Int || pa.val.i < 0 || pa.val.i > 7)
    S.fail(pa.loc, "wgmma_wait() pendings must be a compile-time integer from 0 to 7 (wgmma.wait_group), got " +
                       pa.val.describe());
  else
    pendings = pa.val.i;
  if (!acc.isTensor() || !acc.v->type.isTile())
    S.fail(p.loc("acc"), "wgmma_wait() acc must be a wgmma's result tile, got " + acc.describe());
  ir::Op *op = S.b->create(OpKind::WgmmaWait, c.loc, {acc.v}, {acc.v->type});
  op->sync.pending = static_cast<int>(pendings);
  return SVal::tensor(op->result());
}

} // namespace

std::vector<BuiltinSpec> wgmmaBuiltins() {
  return {
      {"tle.gpu.wgmma", "a, b, acc=None, input_precision=None, max_num_imprecise_acc=None, out_dtype=tl.float32, "
                        "trans_a=False, trans_b=False",
       wgmma},
      {"tle.gpu.wgmma_wait", "pendings, acc=None", wgmmaWait},
  };
}

} // namespace tle::sema
