// Axis info analysis (contiguity, divisibility, constancy).
#include "tle/Transforms/AxisInfo.h"

#include <algorithm>

namespace tle::transforms {

using ir::OpKind;

namespace {

constexpr int64_t kMaxDiv = int64_t(1) << 30;

int64_t pow2Divisor(int64_t v) {
  if (v == 0)
    return kMaxDiv;
  int64_t d = 1;
  while ((v & 1) == 0 && d < kMaxDiv) {
    v >>= 1;
    d <<= 1;
  }
  return d;
}

int64_t gcd2(int64_t a, int64_t b) { return std::min(a, b); } // powers of two
int64_t mulSat(int64_t a, int64_t b) { return std::min(kMaxDiv, a * b); }

size_t dims(const ir::Type &t) { return t.isScalar() ? 1 : t.rank(); }

} // namespace

AxisInfoAnalysis::AxisInfoAnalysis(const ir::Function &f) {
  for (size_t i = 0; i < f.params.size(); ++i) {
    AxisInfo a = unknown(f.body.args[i]->type);
    a.divisibility[0] = std::max<int64_t>(1, f.params[i].divisibility);
    info_[f.body.args[i].get()] = a;
  }
  visit(f.body);
}

AxisInfo AxisInfoAnalysis::unknown(const ir::Type &t) const {
  size_t n = dims(t);
  return AxisInfo{std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1), std::nullopt};
}

const AxisInfo &AxisInfoAnalysis::get(const ir::Value *v) const {
  auto it = info_.find(v);
  if (it != info_.end())
    return it->second;
  // Conservative default, sized for the value.
  static thread_local AxisInfo tmp;
  tmp = unknown(v->type);
  return tmp;
}

int64_t AxisInfoAnalysis::accessVector(const ir::Value *ptr, const ir::Value *mask) const {
  if (!ptr->type.isTile())
    return 1;
  size_t last = ptr->type.shape.size() - 1;
  int64_t eb = std::max<int64_t>(1, ir::storageBytes(ptr->type.elem.pointee));
  const AxisInfo &pi = get(ptr);
  int64_t vec = std::min<int64_t>({16 / eb, pi.contiguity[last], std::max<int64_t>(1, pi.divisibility[last] / eb)});
  if (mask && mask->type.isTile()) {
    const AxisInfo &mi = get(mask);
    vec = mi.constancy.size() == ptr->type.shape.size() ? std::min(vec, mi.constancy[last]) : 1;
  }
  return std::max<int64_t>(1, vec);
}

void AxisInfoAnalysis::visit(const ir::Block &b) {
  for (auto &op : b.ops)
    visit(*op);
}

void AxisInfoAnalysis::visit(const ir::Op &op) {
  if (op.results.empty() && op.regions.empty())
    return;
  if (op.kind == OpKind::For) {
    // Loop-carried values: start from the initial values' facts and meet them with what the
    // body yields until nothing changes (facts only shrink, so this ends quickly).
    const ir::Block &body = *op.regions[0];
    AxisInfo iv = unknown(body.args[0]->type);
    iv.divisibility[0] = gcd2(get(op.operands[0]).divisibility[0], get(op.operands[2]).divisibility[0]);
    info_[body.args[0].get()] = iv;
    for (size_t i = 1; i < body.args.size(); ++i)
      info_[body.args[i].get()] = get(op.operands[2 + i]);
    const ir::Op *yield = body.terminator();
    for (int round = 0; round < 8; ++round) {
      visit(body);
      bool changed = false;
      for (size_t i = 1; i < body.args.size(); ++i) {
        AxisInfo &a = info_[body.args[i].get()];
        const AxisInfo &y = get(yield->operands[i - 1]);
        for (size_t d = 0; d < a.contiguity.size() && d < y.contiguity.size(); ++d) {
          int64_t c = gcd2(a.contiguity[d], y.contiguity[d]), v = gcd2(a.divisibility[d], y.divisibility[d]),
                  k = gcd2(a.constancy[d], y.constancy[d]);
          changed |= c != a.contiguity[d] || v != a.divisibility[d] || k != a.constancy[d];
          a.contiguity[d] = c;
          a.divisibility[d] = v;
          a.constancy[d] = k;
        }
      }
      if (!changed)
        break;
      if (round == 7)
        for (size_t i = 1; i < body.args.size(); ++i)
          info_[body.args[i].get()] = unknown(body.args[i]->type);
    }
    visit(body);
    for (size_t i = 0; i < op.results.size(); ++i)
      info_[op.result(static_cast<unsigned>(i))] = info_[body.args[i + 1].get()];
    return;
  }
  // Regions whose arguments and results carry no facts: the branches of an `if`, a `while`'s
  // regions, a combine region, and the partitions of a `warp_specialize` (which use the values
  // defined before it directly, so their loads and stores keep those values' facts).
  if (op.kind == OpKind::If || op.kind == OpKind::While || op.kind == OpKind::WarpSpecialize ||
      ((op.kind == OpKind::Reduce || op.kind == OpKind::Scan) && op.reduceKind() == ir::ReduceKind::Combine)) {
    for (auto &reg : op.regions) {
      for (auto &a : reg->args)
        info_[a.get()] = unknown(a->type);
      visit(*reg);
    }
    for (auto &r : op.results)
      info_[r.get()] = unknown(r->type);
    return;
  }
  if (op.results.empty())
    return;
  const ir::Value *res = op.result();
  const ir::Type &t = res->type;
  AxisInfo a = unknown(t);
  size_t n = dims(t);
  auto in = [&](unsigned i) -> const AxisInfo & { return get(op.operands[i]); };
  switch (op.kind) {
  case OpKind::Constant:
    if (ir::isInteger(t.dtype())) {
      a.divisibility[0] = pow2Divisor(op.intValue());
      a.constant = op.intValue();
    }
    break;
  case OpKind::Splat:
    for (size_t d = 0; d < n; ++d) {
      a.constancy[d] = t.shape[d];
      a.divisibility[d] = in(0).divisibility[0];
    }
    a.constant = in(0).constant;
    break;
  case OpKind::Arange:
    a.contiguity[0] = op.arangeEnd() - op.arangeStart();
    a.divisibility[0] = pow2Divisor(op.arangeStart());
    break;
  case OpKind::ExpandDims: {
    const AxisInfo &x = in(0);
    a.constant = x.constant;
    if (op.operands[0]->type.isScalar()) {
      for (size_t d = 0; d < n; ++d)
        a.divisibility[d] = x.divisibility[0];
      break;
    }
    a = x;
    // Along the new axis each run is one element, so its divisibility is what holds for every
    // element of x: only the start of a contiguous run is a multiple of the run's divisibility
    // (rows m = 0..127 of an arange: only row 0 is a multiple of 128).
    int64_t minDiv = kMaxDiv;
    for (size_t d = 0; d < x.divisibility.size(); ++d)
      minDiv = std::min(minDiv, x.contiguity[d] > 1 ? int64_t(1) : x.divisibility[d]);
    a.contiguity.insert(a.contiguity.begin() + op.axis(), 1);
    a.divisibility.insert(a.divisibility.begin() + op.axis(), minDiv);
    a.constancy.insert(a.constancy.begin() + op.axis(), 1);
    break;
  }
  case OpKind::Broadcast: {
    const AxisInfo &x = in(0);
    a.constant = x.constant;
    const auto &src = op.operands[0]->type.shape;
    for (size_t d = 0; d < n; ++d) {
      bool stretched = src[d] == 1 && t.shape[d] != 1;
      a.contiguity[d] = stretched ? 1 : x.contiguity[d];
      a.divisibility[d] = x.divisibility[d];
      a.constancy[d] = stretched ? t.shape[d] : x.constancy[d];
    }
    break;
  }
  case OpKind::ConvertLayout:
    a = in(0);
    break;
  case OpKind::LocalAlloc: // a buffer starts 16-byte aligned (ir::OpKind::LocalAlloc)
    a.divisibility[0] = 16;
    break;
  case OpKind::RemotePtr: // the same offset in another CTA's shared memory, which is aligned alike
    a = in(0);
    a.constant.reset();
    break;
  case OpKind::Add: case OpKind::Sub: case OpKind::AddPtr: {
    if (op.kind != OpKind::AddPtr && !ir::isInteger(t.dtype()))
      break;
    const AxisInfo &x = in(0), &y = in(1);
    int64_t scale = op.kind == OpKind::AddPtr ? ir::storageBytes(t.elem.pointee) : 1;
    for (size_t d = 0; d < n; ++d) {
      int64_t c = std::max(gcd2(x.contiguity[d], y.constancy[d]),
                           op.kind == OpKind::Sub ? 1 : gcd2(x.constancy[d], y.contiguity[d]));
      a.contiguity[d] = c;
      a.divisibility[d] = gcd2(x.divisibility[d], mulSat(y.divisibility[d], scale));
      a.constancy[d] = gcd2(x.constancy[d], y.constancy[d]);
    }
    break;
  }
  case OpKind::Mul: {
    if (!ir::isInteger(t.dtype()))
      break;
    const AxisInfo &x = in(0), &y = in(1);
    // Multiplying by the constant 1 keeps every fact (a stride of 1 from a constexpr).
    if (y.constant == 1 || x.constant == 1) {
      a = y.constant == 1 ? x : y;
      break;
    }
    for (size_t d = 0; d < n; ++d) {
      // An element of a contiguous run other than its first is not a multiple of the run's
      // divisibility, so after multiplication only per-element facts survive.
      int64_t dx = x.contiguity[d] > 1 ? 1 : x.divisibility[d];
      int64_t dy = y.contiguity[d] > 1 ? 1 : y.divisibility[d];
      a.divisibility[d] = mulSat(dx, dy);
      a.constancy[d] = gcd2(x.constancy[d], y.constancy[d]);
    }
    break;
  }
  case OpKind::IRem: {
    // x % n with n constant along a dim: runs of x stay contiguous in aligned pieces no longer
    // than n's divisibility and x's (a piece starting at a multiple of both cannot wrap inside:
    // (1 + arange(0, 8)) % 4 is [1, 2, 3, 0, ...], contiguous only in runs of 1).
    if (!ir::isInteger(t.dtype()))
      break;
    const AxisInfo &x = in(0), &y = in(1);
    for (size_t d = 0; d < n; ++d) {
      if (y.constancy[d] >= x.contiguity[d]) {
        a.contiguity[d] = gcd2(x.contiguity[d], gcd2(x.divisibility[d], y.divisibility[d]));
        a.divisibility[d] = gcd2(x.divisibility[d], y.divisibility[d]);
      }
      a.constancy[d] = gcd2(x.constancy[d], y.constancy[d]);
    }
    break;
  }
  case OpKind::Cmp: case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Select:
  case OpKind::Max: case OpKind::Min: {
    for (size_t d = 0; d < n; ++d) {
      int64_t c = kMaxDiv;
      for (size_t i = 0; i < op.operands.size(); ++i)
        c = gcd2(c, in(i).constancy[d]);
      // `contiguous < constant` (or >=) is constant on aligned blocks of the smaller
      // divisibility: a block [a, a + b) with b | a and b | y lies wholly below y or wholly at
      // or above it. Not so for ==, != (only a == y holds), <= or > (y itself splits its block
      // [y, y + b)): those stay as constant as their operands (Triton's cmpi axis info).
      if (op.kind == OpKind::Cmp && op.operands.size() == 2) {
        const AxisInfo &x = in(0), &y = in(1);
        ir::CmpPred p = op.predicate();
        bool lhsRun = p == ir::CmpPred::Lt || p == ir::CmpPred::Ge; // contiguous x < y, x >= y
        bool rhsRun = p == ir::CmpPred::Gt || p == ir::CmpPred::Le; // x > contiguous y, x <= y
        if (lhsRun && x.contiguity[d] > 1 && y.constancy[d] >= x.contiguity[d])
          c = std::max(c, gcd2(x.contiguity[d], gcd2(x.divisibility[d], y.divisibility[d])));
        if (rhsRun && y.contiguity[d] > 1 && x.constancy[d] >= y.contiguity[d])
          c = std::max(c, gcd2(y.contiguity[d], gcd2(x.divisibility[d], y.divisibility[d])));
      }
      a.constancy[d] = std::max<int64_t>(1, c);
    }
    break;
  }
  case OpKind::Cast:
    if (ir::isInteger(t.dtype()) && ir::isInteger(op.operands[0]->type.dtype()) &&
        ir::bitWidth(t.dtype()) >= ir::bitWidth(op.operands[0]->type.dtype()))
      a = in(0);
    else
      for (size_t d = 0; d < n; ++d)
        a.constancy[d] = in(0).constancy[d];
    break;
  case OpKind::Neg: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Log2:
  case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Abs: case OpKind::Bitcast: case OpKind::FDiv:
  case OpKind::FRem:
    // Constant where every operand is (1 / x is no more constant than x).
    for (size_t d = 0; d < n; ++d) {
      int64_t c = kMaxDiv;
      for (size_t i = 0; i < op.operands.size(); ++i)
        c = d < in(static_cast<unsigned>(i)).constancy.size() ? gcd2(c, in(static_cast<unsigned>(i)).constancy[d]) : 1;
      a.constancy[d] = std::max<int64_t>(1, c);
    }
    break;
  default:
    break;
  }
  info_[res] = a;
}

} // namespace tle::transforms
