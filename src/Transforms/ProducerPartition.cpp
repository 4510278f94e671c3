// pipeline-fills' producer/consumer split as a warp_specialize op (see ProducerPartition.h).
#include "ProducerPartition.h"

#include <iterator>
#include <map>
#include <set>
#include <stdexcept>

namespace tle::transforms {

using ir::OpKind;

namespace {

using OpIt = std::list<std::unique_ptr<ir::Op>>::iterator;

[[noreturn]] void internal(const std::string &why) {
  throw std::logic_error("pipeline-fills: the producer of a warp-specialised kernel " + why);
}

/// The pipeline protocol's setup, which the whole CTA runs before the partitions split.
bool isSetup(const ir::Op &op) {
  OpKind k = op.kind;
  return (k == OpKind::PipelineMbarrier && op.operands.empty()) || k == OpKind::MbarrierInit ||
         k == OpKind::TensormapPrefetch || k == OpKind::FenceMbarrierInit || k == OpKind::FenceProxyAsync ||
         (k == OpKind::Barrier && op.sync.barrierId < 0);
}

/// Computations without effects: what eraseUnreadComputations may erase.
bool pure(const ir::Op &op) {
  OpKind k = op.kind;
  return op.regions.empty() && !op.results.empty() &&
         ((ir::isElementwise(k) && k != OpKind::InlineAsm) || k == OpKind::Constant || k == OpKind::Splat ||
          k == OpKind::Arange || k == OpKind::Broadcast || k == OpKind::ExpandDims || k == OpKind::AddPtr ||
          k == OpKind::ProgramId || k == OpKind::NumPrograms || k == OpKind::PipelineMbarrier ||
          k == OpKind::PipelineSlot || k == OpKind::PipelineValue);
}

/// Scalar computations the producer may repeat: pure ones and scalar loads (nothing before the
/// copies writes global memory, the TMA rule, so the producer reads what the consumers do).
bool repeatable(const ir::Op &op) {
  for (const auto &r : op.results)
    if (!r->type.isScalar())
      return false;
  return pure(op) || (op.kind == OpKind::Load && !op.results.empty());
}

/// The ops the producer runs: the producer ops, what they read, the loops around them and the
/// iteration values those carry for them.
class Slice {
public:
  Slice(const std::set<const ir::Op *> &inside) : inside_(inside) {}

  void root(const ir::Op &op) {
    roots_.insert(&op);
    needOp(op);
    for (const auto &r : op.regions)
      ir::walk(*r, [&](ir::Op &o) {
        for (const ir::Value *v : o.operands)
          if (!v->def || !within(*v->def, op))
            need(v);
      });
  }

  std::set<const ir::Op *> ops;
  std::map<const ir::Op *, std::set<unsigned>> iterValues; ///< per loop: the carried values kept

private:
  const std::set<const ir::Op *> &inside_;
  std::set<const ir::Op *> roots_;

  static bool within(const ir::Op &o, const ir::Op &root) {
    for (const ir::Block *b = o.parent; b && b->parent; b = b->parent->parent)
      if (b->parent == &root)
        return true;
    return false;
  }

  void needOp(const ir::Op &op) {
    if (!ops.insert(&op).second)
      return;
    if (const ir::Op *outer = op.parent ? op.parent->parent : nullptr) {
      if (outer->kind != OpKind::For)
        internal("would run an op under an '" + std::string(ir::name(outer->kind)) + "'");
      needOp(*outer);
    }
    if (op.kind == OpKind::For) {
      for (size_t i = 0; i < 3; ++i)
        need(op.operands[i]);
      return;
    }
    if (roots_.count(&op)) {
      for (const ir::Value *v : op.operands)
        need(v);
      return; // root() needs what its regions read
    }
    if (!repeatable(op))
      internal("would run '" + std::string(ir::name(op.kind)) + "', not a scalar computation");
    for (const ir::Value *v : op.operands)
      need(v);
  }

  void need(const ir::Value *v) {
    if (v->def) {
      if (!inside_.count(v->def))
        return; // defined before the partitions
      needOp(*v->def);
      if (v->def->kind == OpKind::For)
        needIter(*v->def, v->index);
      return;
    }
    const ir::Op *loop = v->owner ? v->owner->parent : nullptr;
    if (!loop)
      return; // a kernel parameter
    if (loop->kind != OpKind::For)
      internal("would read a value carried by a '" + std::string(ir::name(loop->kind)) + "'");
    needOp(*loop);
    if (v->index > 0)
      needIter(*loop, v->index - 1);
  }

  void needIter(const ir::Op &loop, unsigned k) {
    if (!iterValues[&loop].insert(k).second)
      return;
    need(loop.operands[3 + k]);
    need(loop.regions[0]->terminator()->operands[k]);
  }
};

/// Copies the slice's ops of `from` into `to`, mapping values through `map`.
class Cloner {
public:
  Cloner(const Slice &s) : s_(s) {}

  void block(const ir::Block &from, ir::Block &to) {
    ir::Builder B(&to);
    for (const auto &o : from.ops) {
      if (!s_.ops.count(o.get()))
        continue;
      if (o->kind == OpKind::For)
        loop(B, *o);
      else if (!o->regions.empty())
        whole(B, *o);
      else
        plain(B, *o);
    }
  }

private:
  const Slice &s_;
  std::map<const ir::Value *, ir::Value *> map_;

  ir::Value *mapped(const ir::Value *v) {
    auto it = map_.find(v);
    return it != map_.end() ? it->second : const_cast<ir::Value *>(v);
  }
  std::vector<ir::Value *> operands(const ir::Op &o) {
    std::vector<ir::Value *> out;
    for (const ir::Value *v : o.operands)
      out.push_back(mapped(v));
    return out;
  }
  ir::Op *plain(ir::Builder &B, const ir::Op &o) {
    ir::Op *c = B.clone(o, operands(o));
    for (size_t i = 0; i < o.results.size(); ++i)
      map_[o.results[i].get()] = c->results[i].get();
    return c;
  }
  static ir::Block *addRegion(ir::Op &op) {
    op.regions.push_back(std::make_unique<ir::Block>());
    op.regions.back()->parent = &op;
    return op.regions.back().get();
  }
  /// An op with regions (a producer op's `if`), all of it.
  void whole(ir::Builder &B, const ir::Op &o) {
    ir::Op *c = plain(B, o);
    for (const auto &r : o.regions) {
      ir::Block *to = addRegion(*c);
      for (const auto &a : r->args)
        map_[a.get()] = to->addArg(a->type, a->nameHint);
      ir::Builder RB(to);
      for (const auto &inner : r->ops)
        inner->regions.empty() ? (void)plain(RB, *inner) : whole(RB, *inner);
    }
  }
  /// A `for` with the iteration values the slice keeps.
  void loop(ir::Builder &B, const ir::Op &o) {
    static const std::set<unsigned> none;
    auto kept = s_.iterValues.find(&o);
    const std::set<unsigned> &ks = kept == s_.iterValues.end() ? none : kept->second;
    std::vector<ir::Value *> ops{mapped(o.operands[0]), mapped(o.operands[1]), mapped(o.operands[2])};
    std::vector<ir::Type> types;
    for (unsigned k : ks) {
      ops.push_back(mapped(o.operands[3 + k]));
      types.push_back(o.results[k]->type);
    }
    ir::Op *c = B.create(OpKind::For, o.loc, ops, types);
    c->setAttributes(o.attributes());
    c->setWgmmaDrain(false); // the producer issues no wgmma
    c->setWarpSpecialize(false);
    const ir::Block &body = *o.regions[0];
    ir::Block *to = addRegion(*c);
    map_[body.args[0].get()] = to->addArg(body.args[0]->type, body.args[0]->nameHint);
    unsigned j = 0;
    for (unsigned k : ks) {
      map_[body.args[k + 1].get()] = to->addArg(body.args[k + 1]->type, body.args[k + 1]->nameHint);
      c->results[j]->nameHint = o.results[k]->nameHint;
      map_[o.results[k].get()] = c->results[j++].get();
    }
    block(body, *to);
    std::vector<ir::Value *> yields;
    for (unsigned k : ks)
      yields.push_back(mapped(body.terminator()->operands[k]));
    ir::Builder(to).create(OpKind::Yield, body.terminator()->loc, yields, {});
  }
};

} // namespace

void eraseUnreadComputations(ir::Block &b) {
  for (bool changed = true; changed;) {
    std::set<const ir::Value *> used;
    ir::walk(b, [&](ir::Op &o) { used.insert(o.operands.begin(), o.operands.end()); });
    std::vector<ir::Op *> dead;
    ir::walk(b, [&](ir::Op &o) {
      bool unread = true;
      for (const auto &r : o.results)
        unread &= !used.count(r.get());
      if (unread && pure(o))
        dead.push_back(&o);
    });
    for (ir::Op *o : dead)
      o->parent->ops.erase(o->parent->find(o));
    changed = !dead.empty();
  }
}

void partitionProducer(ir::Function &f, const std::vector<ir::Op *> &producerOps) {
  ir::Block &body = f.body;
  auto begin = body.ops.begin();
  while (begin != body.ops.end() && isSetup(**begin))
    ++begin;
  auto end = body.ops.end();
  if (end != begin && std::prev(end)->get()->kind == OpKind::Return)
    --end;
  std::set<const ir::Op *> inside;
  for (auto it = begin; it != end; ++it) {
    inside.insert(it->get());
    for (auto &r : (*it)->regions)
      ir::walk(*r, [&](ir::Op &o) { inside.insert(&o); });
  }
  Slice slice(inside);
  for (const ir::Op *op : producerOps)
    slice.root(*op);

  // The producer: the slice, copied before the consumers lose the producer ops (the setup ops
  // before `begin` are in no slice).
  auto producer = std::make_unique<ir::Block>();
  Cloner(slice).block(body, *producer);
  ir::Builder(producer.get()).create(OpKind::Yield, f.loc, {}, {});

  for (ir::Op *op : producerOps)
    op->parent->ops.erase(op->parent->find(op));

  // The partitions' op: the consumers' ops move into its region 0.
  ir::Builder B(&body);
  B.setInsertionPoint(&body, begin);
  ir::Op *ws = B.create(OpKind::WarpSpecialize, f.loc, {}, {});
  auto consumer = std::make_unique<ir::Block>();
  consumer->ops.splice(consumer->ops.end(), body.ops, begin, end);
  for (auto &o : consumer->ops)
    o->parent = consumer.get();
  ir::Builder(consumer.get()).create(OpKind::Yield, f.loc, {}, {});
  consumer->parent = producer->parent = ws;
  ws->regions.push_back(std::move(consumer));
  ws->regions.push_back(std::move(producer));
  ws->setPartitionWarps({f.producerWarps});
  if (f.producerRegisters > 0 && f.maxRegisters > 0) // the warp-specialize pass's budgets
    ws->setPartitionRegisters({f.consumerRegisters > 0 ? f.consumerRegisters : f.maxRegisters, f.producerRegisters});
}

} // namespace tle::transforms
