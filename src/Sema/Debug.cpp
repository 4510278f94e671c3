// Debugging builtins: tl.device_print / print, tl.device_assert (and a runtime `assert`),
// tl.static_print, tl.static_assert, tl.debug_barrier and tl.assume.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <cstdio>
#include <cstdlib>
#include <functional>

namespace tle::sema {

using ir::DType;

namespace {

SVal print(Specializer &S, const BuiltinCall &c) {
  S.devicePrint(c.fname, c.args);
  return SVal::none();
}

SVal deviceAssert(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  std::string msg;
  if (p.has("msg")) {
    if (p.get("msg").val.kind != SVal::Kind::Str)
      S.fail(p.loc("msg"), "device_assert() msg must be a string, got " + p.get("msg").val.describe());
    msg = p.get("msg").val.s;
  }
  S.deviceAssert(p.get("cond"), msg, p.has("mask") ? &p.get("mask") : nullptr, loc);
  return SVal::none();
}

SVal staticPrint(Specializer &S, const BuiltinCall &c) {
  CallArgs &args = c.args;
  // Compile-time print (Triton prints while compiling): the constexpr values, on stderr.
  std::function<std::string(const SVal &)> text = [&](const SVal &v) -> std::string {
    switch (v.kind) {
    case SVal::Kind::Str: return v.s;
    case SVal::Kind::Int: return std::to_string(v.i);
    case SVal::Kind::Bool: return v.i ? "True" : "False";
    case SVal::Kind::None: return "None";
    case SVal::Kind::DType: return v.dtype.str();
    case SVal::Kind::Float: {
      char buf[64];
      for (int prec = 1; prec <= 17; ++prec) { // the shortest text that reads back exactly (Python's repr)
        std::snprintf(buf, sizeof buf, "%.*g", prec, v.f);
        if (std::strtod(buf, nullptr) == v.f)
          break;
      }
      std::string r = buf;
      if (r.find_first_of(".eni") == std::string::npos)
        r += ".0";
      return r;
    }
    case SVal::Kind::Tuple: {
      std::string r = "(";
      for (size_t i = 0; i < v.elts.size(); ++i)
        r += (i ? ", " : "") + text(v.elts[i]);
      return r + (v.elts.size() == 1 ? ",)" : ")");
    }
    default: return v.describe();
    }
  };
  std::string line;
  for (auto &a : args.pos)
    line += (line.empty() ? "" : " ") + text(a.val);
  std::fprintf(stderr, "%s\n", line.c_str());
  return SVal::none();
}

SVal staticAssert(Specializer &S, const BuiltinCall &c) {
  const Binder &p = c.p;
  SourceLoc loc = c.loc;
  if (!S.truthy(p.get("cond").val, p.loc("cond")))
    S.fail(loc, "static assertion failed" + (p.has("msg") ? ": " + p.get("msg").val.s : std::string()));
  return SVal::none();
}

SVal debugBarrier(Specializer &S, const BuiltinCall &c) {
  SourceLoc loc = c.loc;
  S.b->create(ir::OpKind::Barrier, loc, {}, {});
  return SVal::none();
}

SVal assume(Specializer &S, const BuiltinCall &c) {
  const Arg &cond = c.p.get("cond");
  if (cond.val.kind == SVal::Kind::Bool) {
    if (!cond.val.i)
      S.fail(cond.loc, "assume() condition is False at compile time");
    return SVal::none();
  }
  if (!cond.val.isTensor() || cond.val.v->type.dtype() != DType::I1)
    S.fail(cond.loc, "assume() condition must be a boolean, got " +
                         (cond.val.isTensor() ? cond.val.v->type.str() : cond.val.describe()));
  return SVal::none(); // a hint only: nothing is emitted
}

} // namespace

std::vector<BuiltinSpec> debugBuiltins() {
  return {
      {"print", "*args, hex=False", print},
      {"tl.device_print", "prefix, *args, hex=False", print},
      {"tl.device_assert", "cond, msg='', mask=None", deviceAssert},
      {"tl.static_print", "*values", staticPrint},
      {"tl.static_assert", "cond, msg=''", staticAssert},
      {"tl.debug_barrier", "", debugBarrier},
      {"tl.assume", "cond", assume},
  };
}

// ---------------------------------------------------------------------------------------------
// Debugging: tl.device_print / print, tl.device_assert / assert

void Specializer::devicePrint(const std::string &fname, CallArgs &args) {
  SourceLoc loc = args.loc;
  if (args.pos.empty() || args.pos[0].val.kind != SVal::Kind::Str)
    fail(args.pos.empty() ? loc : args.pos[0].loc,
         fname + "() takes a prefix string first, then the values to print (e.g. " + fname + "(\"x\", x))" +
             (args.pos.empty() ? std::string() : "; got " + args.pos[0].val.describe()));
  std::string prefix = args.pos[0].val.s;
  for (unsigned char c : prefix)
    if (!((c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'))
      fail(args.pos[0].loc, fname + "() prefix must be printable ASCII");
  bool hex = false;
  for (auto &[k, a] : args.kw) {
    if (k != "hex")
      fail(a.loc, fname + "() got an unexpected keyword argument '" + k + "' (only 'hex')");
    if (!a.val.isConstexpr())
      fail(a.loc, fname + "() hex must be a compile-time bool, got " + a.val.describe());
    hex = truthy(a.val, a.loc);
  }
  std::vector<ir::Value *> operands;
  for (size_t i = 1; i < args.pos.size(); ++i) {
    const Arg &a = args.pos[i];
    if (a.val.isTensor()) // fp8 prints its value (or, with hex, its bits) through fp32 / u8
      operands.push_back(!ir::isFP8(a.val.v->type.dtype()) ? a.val.v
                         : hex ? b->create(ir::OpKind::Bitcast, a.loc, {a.val.v}, {a.val.v->type.withElem(ir::ScalarType{DType::U8})})->result()
                               : castTo(a.val.v, ir::ScalarType{DType::F32}, a.loc));
    else if (a.val.isNumber())
      operands.push_back(toTensor(a.val, a.loc));
    else
      fail(a.loc, fname + "() can print tensors and numbers, not " + a.val.describe());
  }
  // Triton's semantic.device_print: a non-empty prefix starts with " " and ends with ": ".
  if (!operands.empty()) {
    if (prefix.empty() || prefix.back() != ' ')
      prefix += " ";
    if (prefix.size() < 2 || prefix.compare(prefix.size() - 2, 2, ": ") != 0)
      prefix = prefix.substr(0, prefix.size() - 1) + ": ";
  }
  if (prefix.size() > 2 && prefix[0] != ' ')
    prefix = " " + prefix;
  ir::Op *op = b->create(ir::OpKind::Print, loc, operands, {});
  op->setPrintPrefix(prefix);
  op->setPrintHex(hex);
}

void Specializer::deviceAssert(const Arg &cond, const std::string &msg, const Arg *mask, SourceLoc loc) {
  auto asCondition = [&](const Arg &a, const char *what) -> ir::Value * {
    ir::Value *v = a.val.isTensor() ? a.val.v : a.val.isNumber() ? toTensor(a.val, a.loc) : nullptr;
    if (!v || v->type.elem.isPointer() || ir::isFloat(v->type.dtype()))
      fail(a.loc, std::string("device_assert ") + what + " must be a boolean or integer tensor, got " +
                      (v ? v->type.str() : a.val.describe()));
    if (v->type.dtype() != DType::I1)
      v = b->cmp(a.loc, ir::CmpPred::Ne, v, broadcastTo(toTensorOfType(SVal::integer(0), v->type.dtype(), a.loc),
                                                         v->type.shape, a.loc));
    return v;
  };
  ir::Value *c = asCondition(cond, "condition");
  ir::Value *m = mask ? asCondition(*mask, "mask") : nullptr;
  if (!debug)
    return; // compiled out, as Triton does without debug=True
  if (m) {
    // Masked-off elements pass: cond | ~mask.
    broadcastPair(c, m, loc);
    c = b->binary(ir::OpKind::Or, loc, c, b->unary(ir::OpKind::Not, loc, m));
  }
  ir::Op *op = b->create(ir::OpKind::Assert, loc, {c}, {});
  op->setAssertMessage(msg);
}

} // namespace tle::sema
