// Common-subexpression and dead-code elimination on the tile IR.
#include "tle/Transforms/Canonicalize.h"

#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace tle::transforms {

using ir::OpKind;

namespace {

bool isPure(const ir::Op &op) {
  if (ir::isGpuSyncOp(op.kind)) // mbarriers, fences, async copies
    return false;
  switch (op.kind) {
  case OpKind::Load: case OpKind::Store: case OpKind::For: case OpKind::Yield: case OpKind::Return:
  case OpKind::AtomicRMW: case OpKind::AtomicCAS: case OpKind::LocalAlloc: // each alloc is a buffer of its own
    return false;
  case OpKind::InlineAsm: // inline assembly without is_pure may have side effects
    return op.asmPure();
  case OpKind::RawCall: // native code: every call happens, once, where it is written
    return false;
  case OpKind::ExtractTile: case OpKind::InsertTile: // the shared-memory and window forms read or write a buffer
    return ir::tileOpInRegisters(op) && !op.results.empty();
  default:
    return op.regions.empty() && !op.results.empty();
  }
}

using Key = std::tuple<int, std::vector<const ir::Value *>, ir::Op::Attributes, std::string>;

Key keyOf(const ir::Op &op) {
  std::string types;
  for (auto &r : op.results)
    types += r->type.str() + (r->layout ? r->layout->str() : std::string()) + ";";
  std::vector<const ir::Value *> operands(op.operands.begin(), op.operands.end());
  return Key(static_cast<int>(op.kind), operands, op.attributes(), types); // floats by their bits (NaN too)
}

class Canonicalizer {
public:
  CanonicalizeStats stats;

  void cse(ir::Block &b, std::vector<std::map<Key, ir::Op *>> &scopes) {
    scopes.emplace_back();
    for (auto &opPtr : b.ops) {
      ir::Op &op = *opPtr;
      for (auto &v : op.operands) {
        auto it = replaced_.find(v);
        if (it != replaced_.end())
          v = it->second;
      }
      for (auto &r : op.regions)
        cse(*r, scopes);
      if (!isPure(op))
        continue;
      Key k = keyOf(op);
      ir::Op *prior = nullptr;
      for (auto s = scopes.rbegin(); s != scopes.rend() && !prior; ++s) {
        auto it = s->find(k);
        if (it != s->end())
          prior = it->second;
      }
      if (!prior) {
        scopes.back()[k] = &op;
        continue;
      }
      for (size_t i = 0; i < op.results.size(); ++i)
        replaced_[op.result(static_cast<unsigned>(i))] = prior->result(static_cast<unsigned>(i));
      ++stats.cseRemoved;
    }
    scopes.pop_back();
  }

  void countUses(const ir::Block &b, std::map<const ir::Value *, unsigned> &uses) {
    for (auto &op : b.ops) {
      for (auto *v : op->operands)
        ++uses[v];
      for (auto &r : op->regions)
        countUses(*r, uses);
    }
  }

  /// Drops the results of an `if` that nothing reads, with their yielded values; returns
  /// whether any was dropped.
  bool pruneIfResults(ir::Op &op, std::map<const ir::Value *, unsigned> &uses) {
    bool changed = false;
    for (size_t i = op.results.size(); i-- > 0;) {
      if (uses[op.result(static_cast<unsigned>(i))] != 0)
        continue;
      for (auto &r : op.regions) {
        ir::Op *y = r->terminator();
        --uses[y->operands[i]];
        y->operands.erase(y->operands.begin() + static_cast<long>(i));
      }
      op.results.erase(op.results.begin() + static_cast<long>(i));
      changed = true;
    }
    for (size_t i = 0; i < op.results.size(); ++i)
      op.results[i]->index = static_cast<unsigned>(i);
    return changed;
  }

  /// Removes dead ops bottom-up; returns whether anything was removed.
  bool dce(ir::Block &b, std::map<const ir::Value *, unsigned> &uses) {
    bool changed = false;
    for (auto it = b.ops.end(); it != b.ops.begin();) {
      --it;
      ir::Op &op = **it;
      if (op.kind == OpKind::If)
        changed |= pruneIfResults(op, uses);
      for (auto &r : op.regions)
        changed |= dce(*r, uses);
      // An `if` left with no results and nothing but its yields does nothing.
      bool emptyIf = op.kind == OpKind::If && op.results.empty();
      for (auto &r : op.regions)
        emptyIf = emptyIf && r->ops.size() == 1;
      if (emptyIf) {
        --uses[op.operands[0]];
        it = b.ops.erase(it);
        ++stats.dceRemoved;
        changed = true;
        continue;
      }
      // A tl.reduce / tl.associative_scan with a combine region computes only on its operands.
      bool combine = (op.kind == OpKind::Reduce || op.kind == OpKind::Scan) && op.reduceKind() == ir::ReduceKind::Combine;
      // A load, or extract_tile's shared-memory read, is removable when unused (but not merged).
      bool removable =
          (isPure(op) || op.kind == OpKind::Load || op.kind == OpKind::ExtractTile || combine) && !op.results.empty();
      for (auto &r : op.results)
        removable = removable && uses[r.get()] == 0;
      if (!removable)
        continue;
      for (auto *v : op.operands)
        --uses[v];
      it = b.ops.erase(it);
      ++stats.dceRemoved;
      changed = true;
    }
    return changed;
  }

  void run(ir::Function &f) {
    std::vector<std::map<Key, ir::Op *>> scopes;
    cse(f.body, scopes);
    std::map<const ir::Value *, unsigned> uses;
    countUses(f.body, uses);
    while (dce(f.body, uses)) {
    }
  }

private:
  std::map<const ir::Value *, ir::Value *> replaced_;
};

} // namespace

CanonicalizeStats canonicalize(ir::Function &f) {
  Canonicalizer c;
  c.run(f);
  return c.stats;
}

} // namespace tle::transforms
