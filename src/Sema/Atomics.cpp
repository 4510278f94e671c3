// Atomic builtins: tl.atomic_add, atomic_max, atomic_min, atomic_and, atomic_or, atomic_xor,
// atomic_xchg and atomic_cas, with Triton 3.6's dtype, sem and scope rules.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <map>

namespace tle::sema {

using ir::DType;

namespace {

/// The read-modify-write of tl.atomic_NAME (not atomic_cas).
ir::AtomicKind rmwKind(const std::string &name) {
  static const std::map<std::string, ir::AtomicKind> atomics = {
      {"tl.atomic_add", ir::AtomicKind::Add}, {"tl.atomic_max", ir::AtomicKind::Max},
      {"tl.atomic_min", ir::AtomicKind::Min}, {"tl.atomic_and", ir::AtomicKind::And},
      {"tl.atomic_or", ir::AtomicKind::Or},   {"tl.atomic_xor", ir::AtomicKind::Xor},
      {"tl.atomic_xchg", ir::AtomicKind::Xchg}};
  return atomics.at(name);
}

/// tl.atomic_add ... tl.atomic_xchg and tl.atomic_cas.
SVal atomic(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  const std::string &name = c.name;
  SourceLoc loc = c.loc;
  bool cas = name == "tl.atomic_cas";
  const std::string &fname = c.fname;
  const Arg &pa = p.get("pointer");
  if (!pa.val.isTensor() || !pa.val.v->type.elem.isPointer())
    S.fail(pa.loc, fname + "() pointer must be a pointer or a tile of pointers, got " + pa.val.describe());
  ir::Value *ptr = pa.val.v;
  DType et = ptr->type.elem.pointee;
  ir::AtomicKind kind = cas ? ir::AtomicKind::Xchg : rmwKind(name);
  if (ir::isFP8(et))
    S.fail(pa.loc, fname + "() on " + ir::name(et) + " is not supported (no fp8 atomics; use fp16, bf16 or fp32)");
  bool half = et == DType::F16 || et == DType::BF16;
  if (half && (cas || kind != ir::AtomicKind::Add))
    S.fail(pa.loc, fname + "() on " + ir::name(et) + " is not supported (fp16/bf16 atomics: add only)");
  if (ir::bitWidth(et) < 16 || (!cas && ir::bitWidth(et) == 16 && !half))
    S.fail(pa.loc, fname + "() on " + ir::name(et) + " is not supported (8- and 16-bit integer atomics)");
  if (ir::isFloat(et) && !cas && kind != ir::AtomicKind::Add && kind != ir::AtomicKind::Max &&
      kind != ir::AtomicKind::Min && kind != ir::AtomicKind::Xchg)
    S.fail(pa.loc, fname + "() needs an integer pointee, got " + ir::name(et));
  auto sem = ir::MemSem::AcqRel;
  if (p.has("sem")) {
    const Arg &a = p.get("sem");
    static const std::map<std::string, ir::MemSem> sems = {{"relaxed", ir::MemSem::Relaxed},
                                                           {"acquire", ir::MemSem::Acquire},
                                                           {"release", ir::MemSem::Release},
                                                           {"acq_rel", ir::MemSem::AcqRel}};
    if (a.val.kind != SVal::Kind::Str || !sems.count(a.val.s))
      S.fail(a.loc, fname + "() sem must be \"relaxed\", \"acquire\", \"release\" or \"acq_rel\"");
    sem = sems.at(a.val.s);
  }
  auto scope = ir::MemScope::Gpu;
  if (p.has("scope")) {
    const Arg &a = p.get("scope");
    static const std::map<std::string, ir::MemScope> scopes = {
        {"gpu", ir::MemScope::Gpu}, {"cta", ir::MemScope::Cta}, {"sys", ir::MemScope::Sys}};
    if (a.val.kind != SVal::Kind::Str || !scopes.count(a.val.s))
      S.fail(a.loc, fname + "() scope must be \"gpu\", \"cta\" or \"sys\"");
    scope = scopes.at(a.val.s);
  }
  auto operand = [&](const char *k) {
    const Arg &a = p.get(k);
    if (!a.val.isTensor() && !a.val.isNumber())
      S.fail(a.loc, fname + "() " + k + " must be a tensor or a number, got " + a.val.describe());
    ir::Value *v = S.toTensorOfType(a.val, et, a.loc);
    if (v->type.isTile() && ptr->type.isScalar())
      S.fail(a.loc, fname + "() " + k + " is a tile but the pointer is a scalar");
    return S.broadcastTo(v, ptr->type.shape, a.loc);
  };
  std::vector<ir::Value *> ops = {ptr};
  if (cas) {
    ops.push_back(operand("cmp"));
    ops.push_back(operand("val"));
  } else {
    ops.push_back(operand("val"));
    if (p.has("mask")) {
      ir::Value *mask = p.tensor("mask");
      if (mask->type.dtype() != DType::I1)
        S.fail(p.loc("mask"), fname + "() mask must be a boolean (i1) tensor, got " + mask->type.str());
      ops.push_back(S.broadcastTo(mask, ptr->type.shape, p.loc("mask")));
    }
  }
  ir::Op *op = S.b->create(cas ? ir::OpKind::AtomicCAS : ir::OpKind::AtomicRMW, loc, ops,
                         {ptr->type.withElem(ir::ScalarType{et})});
  if (!cas)
    op->setAtomicKind(kind);
  op->setMemSem(sem);
  op->setMemScope(scope);
  return SVal::tensor(op->result());
}

} // namespace

std::vector<BuiltinSpec> atomicBuiltins() {
  const char *rmw = "pointer, val, mask=None, sem='acq_rel', scope='gpu'";
  return {
      {"tl.atomic_add", rmw, atomic},
      {"tl.atomic_max", rmw, atomic},
      {"tl.atomic_min", rmw, atomic},
      {"tl.atomic_and", rmw, atomic},
      {"tl.atomic_or", rmw, atomic},
      {"tl.atomic_xor", rmw, atomic},
      {"tl.atomic_xchg", rmw, atomic},
      {"tl.atomic_cas", "pointer, cmp, val, sem='acq_rel', scope='gpu'", atomic},
  };
}

} // namespace tle::sema
