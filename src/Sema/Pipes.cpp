// tle.pipe: FlagTree TLE-Lite's typed producer/consumer ring buffer (../shared/reference/tle.md
// §2.4), lowered here to the tile IR's mbarrier ops: in one kernel body (its threads write and
// read the slots) or across tle.gpu.warp_specialize partitions (the writer in one, readers in
// others).
//
// A pipe of capacity C over fields (tle.gpu.alloc buffers of leading dim C) gets, at the
// kernel's start, two rings of C mbarriers: "full" (count 1: the writer commits once) and
// "empty" (count: the readers, each of which releases once), and unless one_shot a ring of C i32
// close tags, zeroed; a `barrier` makes them visible. Each arrival is thread 0's of the
// partition that makes it (the whole CTA's without warp_specialize), after a barrier of that
// partition when it has shared-memory accesses to release (insert-barriers), so the writer and
// the readers may be different warp partitions of any size. Iteration `it` uses stage it % C at
// phase (it / C) % 2:
//
//   writer.acquire(it)  mbarrier_wait empty[stage], phase + 1   (a fresh mbarrier's parity 1
//                       passes: the first round waits for nothing); the fields' slot(stage)
//   writer.commit(it)   mbarrier_arrive full[stage]  (releases the partition's writes)
//                       A tle.gpu.copy of a tensor descriptor into an acquired slot's field is a
//                       TMA copy on full[stage]: its bytes raise the phase's expected
//                       transactions (mbarrier_expect_tx), so the phase completes when they
//                       have landed and the commit has arrived.
//   writer.close(it)    acquire, close tag[stage] = 1, commit
//   reader.wait(it)     mbarrier_wait full[stage], phase; the slot, and is_closed = tag != 0
//   reader.release(it)  mbarrier_arrive empty[stage]
//
// A one_shot pipe has one full mbarrier and no tags: commit arrives, wait waits for phase 0,
// acquire and release do nothing, close is an error.
#include "Binder.h"
#include "Registry.h"
#include "Sema.h"

#include <algorithm>
#include <climits>
#include <set>

namespace tle::sema {

using ir::AddrSpace;
using ir::DType;
using ir::OpKind;

namespace {

/// A ring of `n` elements of `t` in shared memory, allocated where `B` inserts (the kernel's start).
ir::Value *ring(DType t, int64_t n, SourceLoc loc, ir::Builder &B) {
  ir::Op *a = B.create(OpKind::LocalAlloc, loc, {}, {ir::Type(ir::ScalarType::ptrTo(t, AddrSpace::Shared))});
  a->setAllocShape({n});
  return a->result();
}

/// Element `i` (an i32 scalar) of the ring at `base`.
ir::Value *at(Specializer &S, ir::Value *base, ir::Value *i, SourceLoc loc) {
  return S.b->create(OpKind::AddPtr, loc, {base, i}, {base->type})->result();
}

/// The stage and phase of iteration `it` (a compile-time or run-time integer scalar) in a pipe of
/// `capacity` stages: i32 scalars it % capacity and it / capacity (the wait's parity is its low bit).
std::pair<ir::Value *, ir::Value *> stageAndPhase(Specializer &S, const Arg &it, int64_t capacity, SourceLoc loc) {
  const SVal &v = it.val;
  bool ok = (v.isNumber() && v.kind != SVal::Kind::Float) ||
            (v.isTensor() && v.v->type.isScalar() && ir::isInteger(v.v->type.dtype()));
  if (!ok)
    S.fail(it.loc, "a pipe's iteration must be an integer scalar (the stage is it % capacity), got " + v.describe());
  if (v.isNumber()) {
    if (v.i < 0 || v.i > INT32_MAX)
      S.fail(it.loc, "a pipe's iteration must be from 0 to 2^31 - 1 (an i32), got " + std::to_string(v.i));
    return {S.b->constInt(loc, DType::I32, v.i % capacity), S.b->constInt(loc, DType::I32, v.i / capacity)};
  }
  ir::Value *i = S.castTo(v.v, ir::ScalarType{DType::I32}, it.loc);
  ir::Value *c = S.b->constInt(loc, DType::I32, capacity);
  return {S.b->binary(OpKind::IRem, loc, i, c), S.b->binary(OpKind::IDiv, loc, i, c)};
}

/// The slot record of `fields` (a Namespace of buffers) at `stage`: each field's slot(stage).
SVal slotOf(Specializer &S, const SVal &fields, ir::Value *stage, SourceLoc loc) {
  std::vector<std::pair<std::string, SVal>> out;
  for (size_t i = 0; i + 1 < fields.elts.size(); i += 2) {
    CallArgs ca{loc, {Arg{loc, SVal::tensor(stage)}}, {}};
    out.push_back({fields.elts[i].s, S.callMethod(SVal::method(fields.elts[i + 1], "slot"), ca)});
  }
  return SVal::record("pipe_slot", std::move(out));
}

void arrive(Specializer &S, ir::Value *bar, SourceLoc loc) {
  S.b->create(OpKind::MbarrierArrive, loc, {bar}, {})->sync.per = ir::Arrivers::Cta;
}

void wait(Specializer &S, ir::Value *bar, ir::Value *phase, SourceLoc loc) {
  S.b->create(OpKind::MbarrierWait, loc, {bar, phase}, {});
}

/// Checks `v` as a reader name of the pipe's declared `readers`.
bool validReaderName(const std::string &n) { return !n.empty() && n[0] != '_' && n != "fields" && n != "readers"; }

SVal pipe(Specializer &S, const BuiltinCall &c) {
  const CallArgs &a = c.args;
  SourceLoc loc = c.loc;
  if (!a.pos.empty())
    S.fail(a.pos[0].loc, "pipe() takes keyword arguments only (capacity=, scope=, name=, readers=, one_shot=, "
                         "check_protocol= and the fields as NAME=buffer)");
  const Arg *capacity = nullptr, *scope = nullptr, *name = nullptr, *readers = nullptr, *oneShot = nullptr,
            *checked = nullptr;
  std::vector<std::pair<std::string, const Arg *>> fields;
  for (const auto &[k, v] : a.kw) {
    const Arg **slot = k == "capacity" ? &capacity : k == "scope" ? &scope : k == "name" ? &name
                     : k == "readers"  ? &readers : k == "one_shot" ? &oneShot
                     : k == "check_protocol" ? &checked : nullptr;
    if (slot)
      *slot = &v;
    else
      fields.push_back({k, &v});
  }
  if (!capacity)
    S.fail(loc, "pipe() needs capacity= (its number of stages, a compile-time integer)");
  if (capacity->val.kind != SVal::Kind::Int || capacity->val.i < 1 || capacity->val.i > 1024)
    S.fail(capacity->loc, "pipe() capacity must be a compile-time integer from 1 to 1024, got " + capacity->val.describe());
  const int64_t C = capacity->val.i;
  if (scope && !(scope->val.kind == SVal::Kind::Str && scope->val.s == "cta"))
    S.fail(scope->loc, "pipe() scope must be \"cta\" (the only scope FlagTree's pipes have), got " + scope->val.describe());
  if (name && name->val.kind != SVal::Kind::Str && name->val.kind != SVal::Kind::None)
    S.fail(name->loc, "pipe() name must be a string, got " + name->val.describe());
  if (oneShot && oneShot->val.kind != SVal::Kind::Bool && oneShot->val.kind != SVal::Kind::None)
    S.fail(oneShot->loc, "pipe() one_shot must be a compile-time bool (True or False), got " + oneShot->val.describe());
  bool once = oneShot && oneShot->val.kind == SVal::Kind::Bool && oneShot->val.i;
  if (checked && checked->val.kind != SVal::Kind::Bool)
    S.fail(checked->loc, "pipe() check_protocol must be a compile-time bool (True or False), got " + checked->val.describe());
  const bool unchecked = checked && !checked->val.i;
  std::vector<SVal> readerNames;
  if (readers && readers->val.kind != SVal::Kind::None) {
    const SVal &r = readers->val;
    std::vector<SVal> names = r.kind == SVal::Kind::Tuple ? r.elts : std::vector<SVal>{r};
    std::set<std::string> seen;
    for (const SVal &n : names) {
      if (n.kind != SVal::Kind::Str || !validReaderName(n.s))
        S.fail(readers->loc, "pipe() readers must be identifiers (not starting with '_', not 'fields' or 'readers'), got " +
                                 n.describe());
      if (!seen.insert(n.s).second)
        S.fail(readers->loc, "pipe() reader '" + n.s + "' is declared twice");
      readerNames.push_back(n);
    }
    if (readerNames.empty())
      S.fail(readers->loc, "pipe() readers must name at least one reader");
  }
  if (fields.empty())
    S.fail(loc, "pipe() needs at least one field: NAME=buffer, a tle.gpu.alloc buffer whose leading dim is the capacity");
  std::vector<std::pair<std::string, SVal>> fieldVals;
  for (const auto &[k, v] : fields) {
    if (v->val.kind != SVal::Kind::Buffer)
      S.fail(v->loc, "pipe() field '" + k + "' must be a shared buffer (tle.gpu.alloc), got " + v->val.describe());
    if (v->val.ints.size() < 2)
      S.fail(v->loc, "pipe() field '" + k + "' must have rank 2 or more (its leading dim is the stage), got " +
                         v->val.describe());
    if (v->val.elts[0].v->type.elem.space != AddrSpace::Shared)
      S.fail(v->loc, "pipe() field '" + k + "' must be this CTA's buffer (its mbarriers are this CTA's), got " +
                         v->val.describe());
    if (v->val.ints[0] != C)
      S.fail(v->loc, "pipe() field '" + k + "' has leading dim " + std::to_string(v->val.ints[0]) +
                         ", which must equal the capacity " + std::to_string(C));
    fieldVals.push_back({k, v->val});
  }
  if (S.loopDepth > 0 || S.b->block() != &S.fn->body)
    S.fail(loc, "pipe() must be created at the kernel's top level, outside loops and branches (its mbarriers are "
                "initialised once)");
  // The rings and their initialisation at the kernel's start, before the one barrier that makes
  // every pipe's initialisation visible (placed with the first pipe).
  ir::Builder B = S.mbarrierInits(loc);
  const int64_t nReaders = readerNames.empty() ? 1 : int64_t(readerNames.size());
  ir::Value *full = ring(DType::I64, once ? 1 : C, loc, B);
  ir::Value *empty = once ? nullptr : ring(DType::I64, C, loc, B);
  // The mbarriers are named after the pipe (messages of the barrier-protocol check name them).
  std::string pipeName = name && name->val.kind == SVal::Kind::Str ? name->val.s : "pipe";
  full->nameHint = pipeName + "_full";
  if (empty)
    empty->nameHint = pipeName + "_empty";
  ir::Value *tag = once ? nullptr : ring(DType::I32, C, loc, B);
  for (int64_t s = 0; s < (once ? 1 : C); ++s) {
    auto stage = [&](ir::Value *base) {
      return B.create(OpKind::AddPtr, loc, {base, B.constInt(loc, DType::I32, s)}, {base->type})->result();
    };
    auto init = [&](ir::Value *bar, int64_t count) {
      ir::Op *op = B.create(OpKind::MbarrierInit, loc, {bar}, {});
      op->sync.count = count;
      op->sync.unchecked = unchecked;
    };
    init(stage(full), 1);
    if (empty)
      init(stage(empty), nReaders);
    if (tag)
      B.create(OpKind::Store, loc, {stage(tag), B.constInt(loc, DType::I32, 0)}, {});
  }
  Specializer::PipeState &st = S.pipes[full];
  st.name = name && name->val.kind == SVal::Kind::Str ? "pipe '" + name->val.s + "'" : "the pipe";
  for (const auto &[k, v] : fieldVals)
    st.fields[v.elts[0].v] = k;
  return SVal::record("pipe", {{"capacity", SVal::integer(C)},
                         {"name", name ? name->val : SVal::none()},
                         {"readers", SVal::tuple(readerNames)},
                         {"one_shot", SVal::boolean(once)},
                         {"fields", SVal::record("pipe_fields", fieldVals)},
                         {"_full", SVal::tensor(full)},
                         {"_empty", empty ? SVal::tensor(empty) : SVal::none()},
                         {"_tag", tag ? SVal::tensor(tag) : SVal::none()}});
}

Specializer::PipeState &stateOf(Specializer &S, const SVal &pipe) { return S.pipes[pipe.attr("_full").v]; }

/// The pipe's name for messages ("pipe 'kv'", or "the pipe").
const std::string &pipeName(Specializer &S, const SVal &pipe) { return stateOf(S, pipe).name; }

/// The slot record of the writer's pipe `p` at `stage`, whose fields may be written until commit().
SVal openSlot(Specializer &S, const SVal &p, ir::Value *stage, SourceLoc loc) {
  SVal slot = slotOf(S, p.attr("fields"), stage, loc);
  Specializer::PipeState &st = stateOf(S, p);
  ir::Value *full = at(S, p.attr("_full").v, stage, loc); // a TMA copy into the slot completes on it
  for (size_t i = 1; i < slot.elts.size(); i += 2) {
    st.slots.insert(slot.elts[i].elts[0].v);
    st.slotFull[slot.elts[i].elts[0].v] = full;
  }
  st.open = loc;
  return slot;
}

/// The stage of iteration `iter` of pipe `p` (0 in a one_shot pipe, which has one).
ir::Value *stageOf(Specializer &S, const SVal &p, const Arg &iter, SourceLoc loc) {
  ir::Value *stage = stageAndPhase(S, iter, p.attr("capacity").i, loc).first;
  return p.attr("one_shot").i ? S.b->constInt(loc, DType::I32, 0) : stage;
}

SVal writer(Specializer &S, const BuiltinCall &c) {
  const SVal &p = *c.self;
  Specializer::PipeState &st = stateOf(S, p);
  if (st.writer.valid())
    S.fail(c.loc, pipeName(S, p) + " already has a writer (a pipe has one)", {{st.writer, "the writer is made here"}});
  st.writer = c.loc;
  return SVal::record("pipe_writer", {{"pipe", p}});
}

SVal reader(Specializer &S, const BuiltinCall &c) {
  const SVal &p = *c.self;
  const Binder &b = c.p;
  const SVal &declared = p.attr("readers");
  std::string name;
  if (b.has("name")) {
    const Arg &n = b.get("name");
    if (n.val.kind != SVal::Kind::Str)
      S.fail(n.loc, "reader() name must be a string, got " + n.val.describe());
    name = n.val.s;
    if (declared.elts.empty())
      S.fail(n.loc, pipeName(S, p) + " declares no readers= names; its one reader takes no name");
    bool known = false;
    std::string list;
    for (const SVal &d : declared.elts) {
      known |= d.s == name;
      list += (list.empty() ? "" : ", ") + d.s;
    }
    if (!known)
      S.fail(n.loc, pipeName(S, p) + " has no reader '" + name + "' (its readers: " + list + ")");
  } else if (!declared.elts.empty()) {
    S.fail(c.loc, pipeName(S, p) + " declares named readers: reader() needs name= (one of them)");
  }
  Specializer::PipeState &st = stateOf(S, p);
  auto [made, fresh] = st.readersMade.insert({name, c.loc});
  if (!fresh)
    S.fail(c.loc, pipeName(S, p) + " already has " + (name.empty() ? "its reader" : "reader '" + name + "'") +
                      ": each reader releases once per round, so it is made once (pass that endpoint)",
           {{made->second, "made here"}});
  SVal fields = p.attr("fields");
  if (b.has("fields")) {
    const Arg &f = b.get("fields");
    std::vector<SVal> wanted = f.val.kind == SVal::Kind::Tuple ? f.val.elts : std::vector<SVal>{f.val};
    std::vector<std::pair<std::string, SVal>> sub;
    for (const SVal &w : wanted) {
      const SVal &buf = w.kind == SVal::Kind::Str ? fields.attr(w.s) : SVal::none();
      if (buf.kind == SVal::Kind::None)
        S.fail(f.loc, "reader() fields must name fields of " + pipeName(S, p) + ", got " + w.describe());
      sub.push_back({w.s, buf});
    }
    fields = SVal::record("pipe_fields", sub);
  }
  return SVal::record("pipe_reader", {{"pipe", p}, {"name", name.empty() ? SVal::none() : SVal::str(name)}, {"fields", fields}});
}

/// The warp partition (a region of the kernel's warp_specialize) the builder is in, or null.
const ir::Block *partitionOf(Specializer &S) {
  for (const ir::Block *b = S.b->block(); b && b->parent; b = b->parent->parent)
    if (b->parent->kind == OpKind::WarpSpecialize)
      return b;
  return nullptr;
}

/// Records that endpoint `who` ("" the writer, else a reader's name, "?" the unnamed reader) of
/// pipe `p` is used here; a located error when it was used in another warp partition (a pipe has
/// one writer, and each reader is one partition's: its mbarriers count one arrival for each).
void useEndpoint(Specializer &S, const SVal &p, const std::string &who, SourceLoc loc) {
  Specializer::PipeState &st = stateOf(S, p);
  auto [it, fresh] = st.endpointUse.insert({who, {partitionOf(S), loc}});
  if (fresh || it->second.first == partitionOf(S))
    return;
  std::string what = who.empty() ? "writer" : who == "?" ? "reader" : "reader '" + who + "'";
  S.fail(loc, "the " + what + " of " + st.name + " is used in two warp partitions; its mbarriers count one " +
                  (who.empty() ? "commit per round (a pipe has one writer)"
                               : "release per round from it (declare readers=(...) for several readers)"),
         {{it->second.second, "used in another partition here"}});
}

SVal acquire(Specializer &S, const BuiltinCall &c) {
  const SVal &p = c.self->attr("pipe");
  useEndpoint(S, p, "", c.loc);
  auto [stage, phase] = stageAndPhase(S, c.p.get("iter"), p.attr("capacity").i, c.loc);
  if (p.attr("one_shot").i)
    return openSlot(S, p, S.b->constInt(c.loc, DType::I32, 0), c.loc);
  ir::Value *next = S.b->binary(OpKind::Add, c.loc, phase, S.b->constInt(c.loc, DType::I32, 1));
  wait(S, at(S, p.attr("_empty").v, stage, c.loc), next, c.loc);
  return openSlot(S, p, stage, c.loc);
}

SVal commit(Specializer &S, const BuiltinCall &c) {
  const SVal &p = c.self->attr("pipe");
  useEndpoint(S, p, "", c.loc);
  arrive(S, at(S, p.attr("_full").v, stageOf(S, p, c.p.get("iter"), c.loc), c.loc), c.loc);
  Specializer::PipeState &st = stateOf(S, p);
  st.committed = true;
  st.open = SourceLoc();
  return SVal::none();
}

SVal closePipe(Specializer &S, const BuiltinCall &c) {
  const SVal &p = c.self->attr("pipe");
  if (p.attr("one_shot").i)
    S.fail(c.loc, pipeName(S, p) + " is one_shot: it has no close (its writer commits once)");
  acquire(S, c);
  ir::Value *stage = stageOf(S, p, c.p.get("iter"), c.loc);
  S.b->create(OpKind::Store, c.loc, {at(S, p.attr("_tag").v, stage, c.loc), S.b->constInt(c.loc, DType::I32, 1)}, {});
  return commit(S, c);
}

/// The endpoint key of reader `r` (useEndpoint).
std::string readerKey(const SVal &r) { return r.attr("name").kind == SVal::Kind::Str ? r.attr("name").s : "?"; }

SVal waitPipe(Specializer &S, const BuiltinCall &c) {
  const SVal &p = c.self->attr("pipe");
  useEndpoint(S, p, readerKey(*c.self), c.loc);
  if (!stateOf(S, p).committed && !partitionOf(S)) // across partitions another one commits
    S.fail(c.loc, "no commit of " + pipeName(S, p) + " comes before this wait: in one kernel body its threads would "
                  "wait for a slot they have not committed yet");
  auto [stage, phase] = stageAndPhase(S, c.p.get("iter"), p.attr("capacity").i, c.loc);
  bool once = p.attr("one_shot").i;
  ir::Value *slot = once ? S.b->constInt(c.loc, DType::I32, 0) : stage;
  wait(S, at(S, p.attr("_full").v, slot, c.loc), once ? S.b->constInt(c.loc, DType::I32, 0) : phase, c.loc);
  SVal closed = SVal::boolean(false);
  if (!once) {
    ir::Value *tag = S.b->create(OpKind::Load, c.loc, {at(S, p.attr("_tag").v, stage, c.loc)},
                                 {ir::Type::scalar(DType::I32)})->result();
    closed = SVal::tensor(S.b->cmp(c.loc, ir::CmpPred::Ne, tag, S.b->constInt(c.loc, DType::I32, 0)));
  }
  SVal held = slotOf(S, c.self->attr("fields"), slot, c.loc);
  Specializer::PipeState &st = stateOf(S, p);
  for (size_t i = 1; i < held.elts.size(); i += 2)
    st.readSlots.insert(held.elts[i].elts[0].v);
  ++st.readersHolding;
  return SVal::record("pipe_wait_result", {{"slot", held}, {"is_closed", closed}});
}

SVal release(Specializer &S, const BuiltinCall &c) {
  const SVal &p = c.self->attr("pipe");
  useEndpoint(S, p, readerKey(*c.self), c.loc);
  ir::Value *stage = stageOf(S, p, c.p.get("iter"), c.loc); // checks the iteration in a one_shot pipe too
  if (!p.attr("one_shot").i)
    arrive(S, at(S, p.attr("_empty").v, stage, c.loc), c.loc);
  Specializer::PipeState &st = stateOf(S, p);
  st.readersHolding = std::max(0, st.readersHolding - 1);
  return SVal::none();
}

} // namespace

ir::Value *Specializer::openPipeSlotBarrier(const ir::Value *slot) {
  for (auto &entry : pipes) {
    PipeState &st = entry.second;
    auto it = st.slotFull.find(slot);
    if (it != st.slotFull.end() && st.open.valid())
      return it->second;
  }
  return nullptr;
}

void Specializer::checkPipeFieldWrite(const ir::Value *ptr, SourceLoc loc) {
  // Up the pointer's definitions (the offsets added, splats and broadcasts of local_ptr) to a
  // buffer's base, keeping the values on the way (an acquired slot view may be one of them).
  std::vector<const ir::Value *> chain;
  for (const ir::Value *v = ptr; v;) {
    chain.push_back(v);
    if (!v->def || v->def->operands.empty() ||
        (v->def->kind != OpKind::AddPtr && v->def->kind != OpKind::Splat && v->def->kind != OpKind::Broadcast &&
         v->def->kind != OpKind::ExpandDims))
      break;
    v = v->def->operands[0];
  }
  // One buffer may be a field of several pipes: the write is right when one of them has the
  // slot view on the way and holds it between acquire() and commit().
  const PipeState *field = nullptr, *committed = nullptr, *released = nullptr;
  std::string name;
  for (const auto &entry : pipes) {
    const PipeState &st = entry.second;
    auto f = st.fields.find(chain.back());
    if (f == st.fields.end())
      continue;
    field = &st;
    name = f->second;
    bool viaSlot = std::any_of(chain.begin(), chain.end(), [&](const ir::Value *v) { return st.slots.count(v) > 0; });
    bool viaHeld = std::any_of(chain.begin(), chain.end(), [&](const ir::Value *v) { return st.readSlots.count(v) > 0; });
    if ((viaSlot && st.open.valid()) || (viaHeld && st.readersHolding > 0))
      return;
    if (viaSlot)
      committed = &st;
    if (viaHeld)
      released = &st;
  }
  if (committed)
    fail(loc, "this store writes field '" + name + "' of " + committed->name +
                  " after its slot was committed; write it between acquire() and commit()");
  if (released)
    fail(loc, "this store writes field '" + name + "' of " + released->name +
                  " through a reader's slot after release(); a reader writes the slot it holds between wait() and "
                  "release()");
  if (field)
    fail(loc, "this store writes field '" + name + "' of " + field->name +
                  " directly; a pipe's fields are written through the slot its writer's acquire() returns, between "
                  "acquire() and commit()");
}

std::vector<BuiltinSpec> pipeBuiltins() {
  return {
      {"tle.pipe", "*args", pipe},
      {"pipe.writer", "", writer},
      {"pipe.reader", "name=None, fields=None", reader},
      {"pipe_writer.acquire", "iter", acquire},
      {"pipe_writer.commit", "iter", commit},
      {"pipe_writer.close", "iter", closePipe},
      {"pipe_reader.wait", "iter", waitPipe},
      {"pipe_reader.release", "iter", release},
  };
}

} // namespace tle::sema
