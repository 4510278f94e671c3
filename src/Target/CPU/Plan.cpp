// Buffer planning for the CPU target: which tile values get a buffer and which are recomputed
// per element by their consumers, and how loop-carried tiles are written back.
#include "Lowering.h"

#include <algorithm>

namespace tle::cpu::detail {

namespace {

using ir::OpKind;

/// Ops whose result element at an index can be computed from their operands' elements.
bool lazyCapable(OpKind k) {
  switch (k) {
  case OpKind::Splat: case OpKind::Arange: case OpKind::ExpandDims: case OpKind::Broadcast:
  case OpKind::ConvertLayout: case OpKind::Permute: case OpKind::Reshape: case OpKind::Cat: case OpKind::Join:
  case OpKind::Split: case OpKind::Flip: case OpKind::ExtractTile: case OpKind::InsertTile: case OpKind::Gather:
    return true;
  default:
    return ir::isElementwise(k);
  }
}

/// Shape ops whose result element i reads operand element i (the same row-major position).
bool keepsLinearIndex(OpKind k) {
  return k == OpKind::ExpandDims || k == OpKind::ConvertLayout || k == OpKind::Reshape || ir::isElementwise(k) ||
         k == OpKind::Splat || k == OpKind::Arange;
}

/// Ops too costly to recompute for every consumer (divisions and library calls).
bool expensive(OpKind k) {
  switch (k) {
  case OpKind::FDiv: case OpKind::IDiv: case OpKind::IRem: case OpKind::FRem: case OpKind::Exp:
  case OpKind::Exp2: case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt:
    return true;
  default:
    return false;
  }
}

bool isLoop(OpKind k) { return k == OpKind::For || k == OpKind::While; }

/// Largest expression (in ops) a lazy value may stand for; beyond it the value is materialised.
constexpr unsigned kMaxLazyCost = 32;
/// Largest expression recomputed by several consumers (or in every iteration of a loop).
constexpr unsigned kMaxSharedCost = 4;

class Planner {
public:
  BufferPlan plan;

  void run(const ir::Function &f) {
    countUses(f.body, 0);
    block(f.body, 0);
  }

private:
  struct Uses {
    unsigned count = 0;
    int maxDepth = -1;
  };
  struct Cost {
    unsigned ops = 0;
    bool expensive = false;
  };
  std::unordered_map<const ir::Value *, Uses> uses_;
  std::unordered_map<const ir::Value *, Cost> cost_; ///< lazy values only

  void countUses(const ir::Block &b, int depth) {
    for (auto &op : b.ops) {
      for (const ir::Value *v : op->operands) {
        Uses &u = uses_[v];
        // tl.dot reads every operand element several times: count it as a shared use.
        u.count += op->kind == OpKind::Dot ? 2 : 1;
        u.maxDepth = std::max(u.maxDepth, depth);
      }
      for (auto &r : op->regions)
        countUses(*r, depth + (isLoop(op->kind) ? 1 : 0));
    }
  }

  int newBuffer(const ir::Type &t) {
    plan.bufferBytes.push_back(static_cast<uint64_t>(t.numElements()) * ir::storageBytes(t.elem.dtype));
    return static_cast<int>(plan.bufferBytes.size() - 1);
  }

  void block(const ir::Block &b, int depth) {
    for (auto &op : b.ops)
      planOp(*op, depth);
  }

  /// New buffers for the tile values among `vals` (-1 for scalars), shared with `alias`.
  std::vector<int> carriedBuffers(const std::vector<const ir::Value *> &vals,
                                  std::initializer_list<const std::vector<const ir::Value *> *> aliases) {
    std::vector<int> bufs(vals.size(), -1);
    for (size_t i = 0; i < vals.size(); ++i) {
      if (!vals[i]->type.isTile())
        continue;
      bufs[i] = newBuffer(vals[i]->type);
      plan.bufferOf[vals[i]] = bufs[i];
      for (auto *a : aliases)
        plan.bufferOf[(*a)[i]] = bufs[i];
    }
    return bufs;
  }

  static std::vector<const ir::Value *> values(const std::vector<std::unique_ptr<ir::Value>> &v, size_t from = 0) {
    std::vector<const ir::Value *> out;
    for (size_t i = from; i < v.size(); ++i)
      out.push_back(v[i].get());
    return out;
  }
  static std::vector<const ir::Value *> operands(const ir::Op &op, size_t from = 0) {
    return std::vector<const ir::Value *>(op.operands.begin() + static_cast<long>(from), op.operands.end());
  }

  void planOp(const ir::Op &op, int depth) {
    switch (op.kind) {
    case OpKind::For: {
      // Tile iter values: one buffer, shared by the body argument and the result.
      const ir::Block &body = *op.regions[0];
      auto results = values(op.results), args = values(body.args, 1);
      std::vector<int> carried = carriedBuffers(results, {&args});
      block(body, depth + 1);
      planYield(*body.terminator(), operands(*body.terminator()), carried);
      return;
    }
    case OpKind::If: {
      // Each region's yield writes the result buffers.
      auto results = values(op.results);
      std::vector<int> res = carriedBuffers(results, {});
      for (auto &r : op.regions) {
        block(*r, depth);
        planYield(*r->terminator(), operands(*r->terminator()), res);
      }
      return;
    }
    case OpKind::While: {
      // Carried tiles: "before" argument buffers, written by the "after" yield. Forwarded
      // tiles: "after" argument buffers, shared with the results, written by the condition.
      const ir::Block &before = *op.regions[0], &after = *op.regions[1];
      auto bargs = values(before.args), aargs = values(after.args), results = values(op.results);
      std::vector<int> carried = carriedBuffers(bargs, {});
      std::vector<int> forwarded = carriedBuffers(results, {&aargs});
      block(before, depth + 1);
      planYield(*before.terminator(), operands(*before.terminator(), 1), forwarded);
      block(after, depth + 1);
      planYield(*after.terminator(), operands(*after.terminator()), carried);
      return;
    }
    default:
      break;
    }
    for (auto &r : op.regions)
      block(*r, depth);
    for (auto &res : op.results) {
      const ir::Value *v = res.get();
      if (!v->type.isTile())
        continue;
      if (!lazyCapable(op.kind) || !stayLazy(op, v, depth))
        plan.bufferOf[v] = newBuffer(v->type);
    }
  }

  /// Decides whether a lazy-capable op's result stays lazy (recording its cost) or gets a buffer.
  bool stayLazy(const ir::Op &op, const ir::Value *v, int depth) {
    Cost c;
    bool isCast16 = op.kind == OpKind::Cast &&
                    (ir::bitWidth(v->type.dtype()) == 16 || ir::bitWidth(op.operands[0]->type.dtype()) == 16);
    if (op.kind == OpKind::Arange || op.kind == OpKind::Reshape || op.kind == OpKind::Cat || op.kind == OpKind::Join ||
        op.kind == OpKind::Flip || op.kind == OpKind::ExtractTile || op.kind == OpKind::InsertTile)
      c.ops = 1;
    else if (op.kind == OpKind::Gather) // the bounds check and its selects
      c.ops = 3;
    else if (ir::isElementwise(op.kind))
      c.ops = isCast16 ? 3 : 1;
    c.expensive = expensive(op.kind);
    for (const ir::Value *o : op.operands) {
      if (!o->type.isTile())
        continue;
      auto it = cost_.find(o);
      if (it == cost_.end()) {
        c.ops += 1; // a buffer read
        continue;
      }
      c.ops += it->second.ops;
      c.expensive = c.expensive || it->second.expensive;
    }
    if (op.kind != OpKind::Splat && op.kind != OpKind::Arange) {
      const Uses &u = uses_[v];
      bool shared = u.count > 1 || u.maxDepth > depth;
      if (c.ops > kMaxLazyCost || (shared && (c.ops > kMaxSharedCost || c.expensive)))
        return false;
    }
    cost_[v] = c;
    return true;
  }

  /// The buffers `v`'s elements are read from, and whether each is read at the element's own
  /// linear index (true unless a broadcast lies on the way).
  void reads(const ir::Value *v, bool identity, std::vector<std::pair<int, bool>> &out) {
    if (!v->type.isTile())
      return;
    auto it = plan.bufferOf.find(v);
    if (it != plan.bufferOf.end()) {
      out.push_back({it->second, identity});
      return;
    }
    const ir::Op &op = *v->def;
    bool id = identity && keepsLinearIndex(op.kind);
    for (const ir::Value *o : op.operands)
      reads(o, id, out);
  }

  /// How terminator `term` writes each of `yielded` into the `carried` buffers (see
  /// BufferPlan::yieldTemps).
  void planYield(const ir::Op &term, const std::vector<const ir::Value *> &yielded, const std::vector<int> &carried) {
    size_t n = carried.size();
    std::vector<std::vector<std::pair<int, bool>>> r(n);
    for (size_t i = 0; i < n; ++i)
      if (carried[i] >= 0)
        reads(yielded[i], true, r[i]);
    auto carriedIndex = [&](int buf) {
      auto it = std::find(carried.begin(), carried.end(), buf);
      return it == carried.end() ? -1 : static_cast<int>(it - carried.begin());
    };
    std::vector<int> how(n, -1);
    for (size_t i = 0; i < n; ++i) {
      if (carried[i] < 0)
        continue;
      const ir::Value *y = yielded[i];
      auto own = plan.bufferOf.find(y);
      if (own != plan.bufferOf.end() && own->second == carried[i]) {
        how[i] = -2;
        continue;
      }
      bool direct = true;
      for (auto [buf, identity] : r[i]) {
        int j = carriedIndex(buf);
        if (j >= 0 && (j != static_cast<int>(i) || !identity))
          direct = false;
      }
      for (size_t k = 0; k < n && direct; ++k)
        if (k != i)
          for (auto [buf, identity] : r[k])
            if (buf == carried[i])
              direct = false;
      how[i] = direct ? -1 : newBuffer(y->type);
    }
    plan.yieldTemps[&term] = how;
  }
};

} // namespace

BufferPlan planBuffers(const ir::Function &f) {
  Planner p;
  p.run(f);
  return std::move(p.plan);
}

} // namespace tle::cpu::detail
