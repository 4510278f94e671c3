// Parsing of tile IR ops: each kind's attributes and operands, and the regions of for,
// warp_specialize, if and while (the Parser class is in ParserImpl.h).
#include "ParserImpl.h"
#include "tle/IR/RawCode.h"

#include <algorithm>
#include <iterator>

namespace tle::ir::detail {

void Parser::op(Block &b) {
  std::vector<Tok> results;
  while (tok_.kind == Tok::Value) {
    results.push_back(tok_);
    bump();
    if (!accept(","))
      break;
  }
  if (!results.empty())
    expect("=");
  SourceLoc loc = tok_.loc;
  std::string name = expectIdentAny();
  static const std::map<std::string, OpKind> kinds = [] {
    std::map<std::string, OpKind> m;
    for (int k = 0; k <= static_cast<int>(OpKind::Return); ++k)
      m[ir::name(static_cast<OpKind>(k))] = static_cast<OpKind>(k);
    return m;
  }();
  auto kit = kinds.find(name);
  if (kit == kinds.end())
    diags_.fatal(loc, "unknown op '" + name + "'");
  auto o = std::make_unique<Op>(kit->second, loc);
  o->parent = &b;
  Op *op = o.get();
  b.ops.push_back(std::move(o));
  switch (op->kind) {
  case OpKind::For: return forOp(*op, results);
  case OpKind::If: return ifOp(*op, results);
  case OpKind::While: return whileOp(*op, results);
  case OpKind::Constant: {
    std::string v = tok_.text;
    SourceLoc at = tok_.loc;
    bump();
    expect(":");
    Type t = type();
    const Layout *layout = typeLayout_;
    if (isFloat(t.dtype()))
      op->setFloatValue(real(v, at));
    else
      op->setIntValue(integer(v, at));
    finish(*op, results, {t}, {layout});
    return;
  }
  case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::ExpandDims: case OpKind::Flip:
  case OpKind::Gather:
    expectIdent("axis");
    expect("=");
    op->setAxis(axisNumber());
    break;
  case OpKind::Arange: {
    int64_t start = number();
    expect(",");
    op->setArangeBounds(start, number());
    break;
  }
  case OpKind::Cmp: {
    std::string p = expectIdentAny();
    static const std::map<std::string, CmpPred> preds = {{"eq", CmpPred::Eq}, {"ne", CmpPred::Ne}, {"lt", CmpPred::Lt},
                                                        {"le", CmpPred::Le}, {"gt", CmpPred::Gt}, {"ge", CmpPred::Ge}};
    if (!preds.count(p))
      fail("unknown comparison '" + p + "'");
    op->setPredicate(preds.at(p));
    break;
  }
  case OpKind::ExtractTile: case OpKind::InsertTile:
    if (op->kind == OpKind::InsertTile && tok_.kind == Tok::Ident && tok_.text == "window") {
      bump();
      op->setWindowBuffer(true);
    }
    if (tok_.kind == Tok::Ident && tok_.text == "strides") {
      bump();
      expect("=");
      op->setTileStrides(intList());
    }
    break;
  case OpKind::Permute: {
    expectIdent("order");
    expect("=");
    op->setPermutation(intList());
    if (tok_.kind == Tok::Ident && tok_.text == "pipeline") { // a view of pipeline slots
      bump();
      expect("=");
      int64_t v = number();
      if (v < 0 || v > std::numeric_limits<int>::max())
        fail("'pipeline' must be a non-negative int, got " + std::to_string(v));
      op->setPipeline(static_cast<int>(v));
    }
    break;
  }
  case OpKind::FDiv: case OpKind::Cast:
    if (tok_.kind == Tok::Ident && (tok_.text == "rn" || tok_.text == "rtz")) {
      if (op->kind == OpKind::FDiv)
        op->setDivRn(true);
      else
        op->setRoundTowardZero(true);
      bump();
    }
    break;
  case OpKind::ExternCall:
    op->setCallee(expectString());
    break;
  case OpKind::InlineAsm:
    op->setAsmText(expectString());
    op->setAsmConstraints(expectString());
    expectIdent("pack");
    expect("=");
    op->setAsmPack(number());
    if (tok_.kind == Tok::Ident && tok_.text == "pure") {
      bump();
      op->setAsmPure(true);
    }
    break;
  case OpKind::RawCall: {
    op->setRawSymbol(expectString());
    std::vector<std::vector<int64_t>> shapes;
    expect("[");
    while (!is("]")) {
      if (tok_.kind == Tok::Ident && tok_.text == "_") {
        bump();
        shapes.emplace_back();
      } else {
        shapes.push_back(intList());
      }
      if (!accept(","))
        break;
    }
    expect("]");
    op->setRawMemrefs(shapes);
    if (tok_.kind == Tok::Ident && tok_.text == "contiguous") {
      bump();
      op->setRawContiguous(true);
    }
    if (tok_.kind == Tok::Ident && tok_.text == "shared") {
      bump();
      expect("=");
      int e = kRawSharedKnown;
      do {
        std::string name = expectIdentAny();
        auto it = std::find_if(std::begin(kRawSharedEffectNames), std::end(kRawSharedEffectNames),
                               [&](const auto &n) { return name == n.name; });
        if (it != std::end(kRawSharedEffectNames))
          e |= it->bit;
        else if (name != "none")
          fail("raw_call shared= takes none, access, async_copy and async_wait joined by '+', got '" + name + "'");
      } while (accept("+"));
      op->setRawSharedEffects(e);
    }
    if (tok_.kind == Tok::Ident && tok_.text == "outs") {
      bump();
      op->setRawResultOperands(intList());
    }
    op->setRawModule(expectString());
    if (tok_.loc.line != loc.line) { // no operands: the next line is the next op
      finish(*op, results, {});
      return;
    }
    break;
  }
  case OpKind::Print:
    if (tok_.kind == Tok::Ident && tok_.text == "hex") {
      bump();
      op->setPrintHex(true);
    }
    op->setPrintPrefix(expectString());
    if (tok_.loc.line != loc.line) { // no operands: the next line is the next op
      finish(*op, results, {});
      return;
    }
    break;
  case OpKind::Assert:
    op->setAssertMessage(expectString());
    break;
  case OpKind::Load: case OpKind::Store:
    // Optional hints, before the operands: cache=cg eviction=evict_last, volatile async (loads),
    // tma bounds (stores).
    while (tok_.kind == Tok::Ident &&
           (tok_.text == "cache" || tok_.text == "eviction" || tok_.text == "volatile" || tok_.text == "async" ||
            tok_.text == "desc" || tok_.text == "tma" || tok_.text == "bounds" || tok_.text == "pipeline" ||
            tok_.text == "map" || tok_.text == "staging")) {
      std::string k = expectIdentAny();
      if (k == "pipeline" || k == "map" || k == "staging") { // the pipeline pass's marks
        if ((k == "pipeline") != (op->kind == OpKind::Load))
          fail("'" + k + "' marks " + (k == "pipeline" ? "loads" : "stores") + " only");
        expect("=");
        int64_t v = number();
        if (v < 0 || v > std::numeric_limits<int>::max())
          fail("'" + k + "' must be a non-negative int, got " + std::to_string(v));
        if (k == "pipeline")
          op->setPipeline(static_cast<int>(v));
        else if (k == "map")
          op->setStoreTensorMap(static_cast<int>(v));
        else
          op->setTmaStaging(v);
        continue;
      }
      if ((k == "tma" || k == "bounds") && op->kind != OpKind::Store)
        fail("'" + k + "' marks stores only");
      if ((k == "volatile" || k == "async") && op->kind != OpKind::Load)
        fail("'" + k + "' marks loads only");
      if (k == "volatile" || k == "async" || k == "tma" || k == "bounds") {
        if (k == "volatile")
          op->setVolatile(true);
        else if (k == "async")
          op->setAsyncHint(true);
        else if (k == "tma")
          op->setTmaStore(true);
        else
          op->setBoundsMask(true);
        continue;
      }
      if (k == "desc") { // desc=[block shape]: a tensor-descriptor load or store
        expect("=");
        op->setBlockShape(intList());
        continue;
      }
      expect("=");
      std::string v = expectIdentAny();
      if (k == "cache") {
        int64_t c = 0;
        for (int64_t i = 1; i <= static_cast<int64_t>(CacheHint::WT); ++i)
          if (v == cacheHintName(static_cast<CacheHint>(i)) + 1)
            c = i;
        op->setCacheHint(c ? static_cast<CacheHint>(c) : (fail("unknown cache hint '" + v + "'"), CacheHint::None));
      } else {
        op->setEvictionHint(v == "evict_first"  ? EvictionHint::EvictFirst
                            : v == "evict_last" ? EvictionHint::EvictLast
                                                : (fail("unknown eviction hint '" + v + "'"), EvictionHint::None));
      }
    }
    break;
  case OpKind::AsyncWaitGroup: case OpKind::TmaStoreWait: case OpKind::WgmmaWait: {
    // async_wait_group N|all, tma_store_wait [read] N, wgmma_wait N operands
    if (op->kind == OpKind::TmaStoreWait && tok_.kind == Tok::Ident && tok_.text == "read") {
      bump();
      op->sync.read = true;
    }
    if (op->kind == OpKind::AsyncWaitGroup && tok_.kind == Tok::Ident && tok_.text == "all") {
      bump();
      op->sync.all = true;
      finish(*op, results, {});
      return;
    }
    SourceLoc at = tok_.loc;
    int64_t n = number();
    int most = op->kind == OpKind::WgmmaWait ? 7 : 63;
    if (n < 0 || n > most)
      diags_.fatal(at, std::string(ir::name(op->kind)) + " takes 0 to " + std::to_string(most) +
                           " pending groups, got " + std::to_string(n));
    op->sync.pending = static_cast<int>(n);
    // wgmma_wait N without operands (and results) ends its line.
    if (op->kind == OpKind::WgmmaWait && (!results.empty() || tok_.loc.line == at.line))
      break;
    finish(*op, results, {});
    return;
  }
  case OpKind::Wgmma: { // wgmma [trans_a] [trans_b], in either order
    bool ta = false, tb = false;
    while (tok_.kind == Tok::Ident) {
      bool &flag = tok_.text == "trans_a" ? ta : tok_.text == "trans_b" ? tb
                                                    : (fail("unknown wgmma attribute '" + tok_.text + "' (trans_a, trans_b)"), ta);
      if (flag)
        fail("'wgmma' has '" + tok_.text + "' twice");
      flag = true;
      bump();
    }
    op->setWgmmaTrans(ta, tb);
    break;
  }
  case OpKind::WarpSpecialize:
    return warpSpecializeOp(*op, results);
  case OpKind::PipelineSlot: case OpKind::PipelineValue: // pipeline=K
  case OpKind::PipelineMbarrier: { // pipeline=K [slot=S] [empty]
    for (const char *key : {"pipeline", "slot"}) {
      if (key[0] == 's' && (op->kind != OpKind::PipelineMbarrier || tok_.kind != Tok::Ident || tok_.text != "slot"))
        break; // a slot given at run time, as the operand
      expectIdent(key);
      expect("=");
      SourceLoc at = tok_.loc;
      int64_t v = number();
      if (v < 0 || v > std::numeric_limits<int>::max())
        diags_.fatal(at, std::string(key) + "=" + std::to_string(v) + " is out of range");
      (key[0] == 'p' ? op->sync.pipeline : op->sync.slot) = static_cast<int>(v);
    }
    if (tok_.kind == Tok::Ident && tok_.text == "empty") {
      bump();
      op->sync.empty = true;
    }
    break;
  }
  case OpKind::TensormapPrefetch: case OpKind::TmaLoad: case OpKind::TmaStore: { // map=K
    expectIdent("map");
    expect("=");
    SourceLoc at = tok_.loc;
    int64_t k = number();
    if (k < 0 || k > std::numeric_limits<int>::max())
      diags_.fatal(at, "map=" + std::to_string(k) + " is out of range");
    op->sync.map = static_cast<int>(k);
    if (op->kind == OpKind::TmaLoad && tok_.kind == Tok::Ident && tok_.text == "multicast") { // multicast=N issuer=R
      for (const char *key : {"multicast", "issuer"}) {
        expectIdent(key);
        expect("=");
        SourceLoc vat = tok_.loc;
        int64_t v = number();
        if (v < 0 || v > 16)
          diags_.fatal(vat, std::string(key) + "=" + std::to_string(v) + " is out of range");
        (key[0] == 'm' ? op->sync.multicast : op->sync.issuer) = static_cast<int>(v);
      }
    }
    if (op->kind == OpKind::TensormapPrefetch) {
      finish(*op, results, {});
      return;
    }
    break;
  }
  case OpKind::Barrier: case OpKind::BarrierArrive: case OpKind::FenceProxyAsync: case OpKind::FenceMbarrierInit:
  case OpKind::AsyncCommitGroup: case OpKind::TmaStoreCommit:
    syncAttrs(*op);
    [[fallthrough]];
  case OpKind::ClusterArrive: // cluster_arrive [relaxed]; fence_proxy_async [global]
    if (op->kind == OpKind::FenceProxyAsync && tok_.kind == Tok::Ident && tok_.text == "global" &&
        tok_.loc.line == op->loc.line) {
      bump();
      op->sync.global = true;
    }
    if (tok_.kind == Tok::Ident && tok_.text == "relaxed" && tok_.loc.line == op->loc.line) {
      bump();
      op->sync.relaxed = true;
    }
    [[fallthrough]];
  case OpKind::ClusterBarrier: case OpKind::ClusterWait: case OpKind::GridBarrier:
    // no operands: the next line is the next op
    finish(*op, results, {});
    return;
  case OpKind::MbarrierInit: case OpKind::MbarrierArrive: case OpKind::MbarrierExpectTx: case OpKind::MbarrierWait:
  case OpKind::MbarrierInval: case OpKind::AsyncCopyMbarrierArrive: case OpKind::AsyncCopy:
    syncAttrs(*op);
    if (op->kind == OpKind::MbarrierInit && tok_.kind == Tok::Ident && tok_.text == "unchecked" &&
        tok_.loc.line == op->loc.line) { // mbarrier_init count=N unchecked %bar
      bump();
      op->sync.unchecked = true;
    }
    break;
  case OpKind::SignalWait: // signal_wait [keep] slot, target
    if (tok_.kind == Tok::Ident && tok_.text == "keep" && tok_.loc.line == op->loc.line) {
      bump();
      op->sync.keep = true;
    }
    break;
  case OpKind::SubmeshBarrier: // members=[...]
    expectIdent("members");
    expect("=");
    op->setSubmeshMembers(intList());
    break;
  case OpKind::LocalAlloc:
    expectIdent("shape");
    expect("=");
    op->setAllocShape(intList());
    // swizzle= (the NVMMA shared layout; 0, row-major, is written by leaving it out), then
    // offset= (placed by allocate-shared; -1, not placed, is never written out).
    for (const char *key : {"swizzle", "offset"}) {
      if (tok_.kind != Tok::Ident || tok_.text != key)
        continue;
      bump();
      expect("=");
      SourceLoc at = tok_.loc;
      int64_t v = number();
      if (key[0] == 's' && v != 32 && v != 64 && v != 128)
        diags_.fatal(at, "swizzle=" + std::to_string(v) + " is not one of 32, 64, 128");
      if (key[0] == 'o' && v < 0)
        diags_.fatal(at, "offset=" + std::to_string(v) + " is negative");
      key[0] == 's' ? op->setAllocSwizzle(static_cast<int>(v)) : void(op->sharedOffset = v);
    }
    if (tok_.kind == Tok::Ident && (tok_.text == "swizzle" || tok_.text == "offset"))
      fail("'local_alloc' has '" + tok_.text + "=' twice, or after offset=");
    break;
  case OpKind::GridDepControl: {
    std::string w = expectIdentAny();
    if (w != "launch_dependents" && w != "wait")
      fail("unknown griddepcontrol '" + w + "'");
    op->setLaunchDependents(w == "launch_dependents");
    finish(*op, results, {});
    return;
  }
  case OpKind::AtomicRMW: case OpKind::AtomicCAS: {
    auto pick = [&](const std::vector<std::string> &names, const char *what) -> int64_t {
      std::string w = expectIdentAny();
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == w)
          return static_cast<int64_t>(i);
      fail(std::string("unknown atomic ") + what + " '" + w + "'");
    };
    if (op->kind == OpKind::AtomicRMW)
      op->setAtomicKind(static_cast<AtomicKind>(pick({"add", "max", "min", "and", "or", "xor", "xchg"}, "operation")));
    op->setMemSem(static_cast<MemSem>(pick({"relaxed", "acquire", "release", "acq_rel"}, "ordering")));
    op->setMemScope(static_cast<MemScope>(pick({"gpu", "cta", "sys"}, "scope")));
    break;
  }
  case OpKind::Scan: {
    std::string k = expectIdentAny();
    op->setReduceKind(k == "sum" ? ReduceKind::Sum : k == "max" ? ReduceKind::Max : k == "min" ? ReduceKind::Min
                     : k == "prod" ? ReduceKind::Prod : k == "combine" ? ReduceKind::Combine
                                                                       : (fail("unknown scan '" + k + "'"), ReduceKind::Sum));
    expectIdent("axis");
    expect("=");
    op->setAxis(axisNumber());
    if (tok_.kind == Tok::Ident && tok_.text == "reverse") {
      bump();
      op->setReverse(true);
    }
    if (tok_.kind == Tok::Ident && tok_.text == "exclusive") {
      bump();
      op->setExclusive(true);
    }
    break;
  }
  case OpKind::Dot: {
    // [precision] [max_num_imprecise_acc=N] [async] [stage_k=C] (fp16/bf16/int dots print no
    // precision)
    while (tok_.kind == Tok::Ident) {
      std::string word = expectIdentAny();
      if (word == "async") {
        op->setAsyncWgmma(true);
      } else if (word == "max_num_imprecise_acc") {
        expect("=");
        op->setMaxNumImpreciseAcc(number());
      } else if (word == "stage_k") {
        expect("=");
        op->setDotStageK(number());
      } else {
        op->setDotPrecision(word == "ieee"     ? DotPrecision::IEEE
                            : word == "tf32x3" ? DotPrecision::TF32x3
                            : word == "tf32"   ? DotPrecision::TF32
                                               : (fail("unknown dot attribute '" + word + "'"), DotPrecision::TF32));
      }
    }
    break;
  }
  case OpKind::Reduce: {
    std::string k = expectIdentAny();
    op->setReduceKind(k == "sum" ? ReduceKind::Sum : k == "max" ? ReduceKind::Max : k == "min" ? ReduceKind::Min
                     : k == "combine" ? ReduceKind::Combine : (fail("unknown reduction '" + k + "'"), ReduceKind::Sum));
    expectIdent("axis");
    expect("=");
    op->setAxis(axisNumber());
    if (tok_.kind == Tok::Ident && tok_.text == "batch") { // batch-reduces' mark
      bump();
      expect("=");
      int64_t n = number();
      if (n < 1 || n > 64)
        fail("'batch' must count 1 to 64 reduces, got " + std::to_string(n));
      op->setReduceBatchSize(static_cast<int>(n));
    }
    break;
  }
  default:
    break;
  }
  while (tok_.kind == Tok::Value) {
    op->operands.push_back(use());
    if (!accept(","))
      break;
  }
  std::vector<Type> resultTypes;
  std::vector<const Layout *> resultLayouts;
  if (accept(":")) {
    if (!op->operands.empty()) {
      std::vector<Type> ots = typeList();
      if (ots.size() != op->operands.size())
        fail("expected " + std::to_string(op->operands.size()) + " operand types");
      for (size_t i = 0; i < ots.size(); ++i)
        if (ots[i] != op->operands[i]->type)
          fail("operand " + std::to_string(i) + " has type " + op->operands[i]->type.str() + ", not " + ots[i].str());
      if (tok_.kind == Tok::Arrow) {
        bump();
        resultTypes = typeList();
        resultLayouts = listLayouts_;
      }
    } else {
      resultTypes = typeList();
      resultLayouts = listLayouts_;
    }
  }
  finish(*op, results, resultTypes, resultLayouts);
  if (tok_.kind == Tok::Ident && tok_.text == "scratch") { // allocate-shared's scratch offset
    bump();
    expect("=");
    op->sharedOffset = number();
    if (op->sharedOffset < 0)
      fail("'scratch' must be a byte offset, got " + std::to_string(op->sharedOffset));
  }
  if ((op->kind == OpKind::Reduce || op->kind == OpKind::Scan) && op->reduceKind() == ReduceKind::Combine) {
    // The combine region: `(%a0, ..., %b0, ...) { ... yield ... }`, 2N scalar arguments typed
    // like the operands' elements.
    Block *body = region(*op);
    std::vector<Tok> args = valueNames();
    if (args.size() != 2 * op->operands.size())
      fail("the combine region of '" + std::string(ir::name(op->kind)) + "' needs " +
           std::to_string(2 * op->operands.size()) + " arguments, got " + std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i)
      define(args[i], body->addArg(Type(op->operands[i % op->operands.size()]->type.elem)));
    expect("{");
    block(*body);
    expect("}");
  }
}

void Parser::syncAttrs(Op &op) {
  std::string allowed;
  switch (op.kind) {
  case OpKind::Barrier: case OpKind::BarrierArrive: allowed = "id threads"; break;
  case OpKind::MbarrierInit: allowed = "count"; break;
  case OpKind::MbarrierArrive: allowed = "per count tx"; break;
  case OpKind::MbarrierExpectTx: allowed = "tx"; break;
  case OpKind::AsyncCopy: allowed = "vec cache"; break;
  default: break;
  }
  std::set<std::string> seen;
  while (tok_.kind == Tok::Ident && tok_.loc.line == op.loc.line) {
    std::string k = tok_.text;
    if (k != "id" && k != "threads" && k != "per" && k != "count" && k != "tx" && k != "vec" && k != "cache")
      break;
    if ((" " + allowed + " ").find(" " + k + " ") == std::string::npos)
      fail("'" + std::string(name(op.kind)) + "' takes no '" + k + "='" +
           (allowed.empty() ? std::string(" attribute") : " (it takes: " + allowed + ")"));
    if (!seen.insert(k).second)
      fail("'" + std::string(name(op.kind)) + "' has '" + k + "=' twice");
    bump();
    expect("=");
    if (k == "per") {
      std::string w = expectIdentAny();
      op.sync.per = w == "cta"         ? Arrivers::Cta
                    : w == "warp"      ? Arrivers::Warp
                    : w == "thread"    ? Arrivers::Thread
                    : w == "warpgroup" ? Arrivers::Warpgroup
                                       : (fail("unknown per='" + w + "' (cta, warp, warpgroup, thread)"), Arrivers::Cta);
      continue;
    }
    if (k == "cache") {
      std::string w = expectIdentAny();
      op.sync.cache = w == "ca" ? CopyCache::CA : w == "cg" ? CopyCache::CG
                                                              : (fail("unknown cache='" + w + "' (ca, cg)"), CopyCache::Auto);
      continue;
    }
    SourceLoc at = tok_.loc;
    int64_t v = number();
    if ((k == "id" || k == "threads" || k == "vec") && (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()))
      diags_.fatal(at, k + "=" + std::to_string(v) + " is out of range");
    // The defaults mean "not given" (SyncAttrs): written out, they would silently read as absent.
    if ((k == "id" && v < 0) || ((k == "threads" || k == "vec") && v <= 0))
      diags_.fatal(at, k + "=" + std::to_string(v) + " is out of range (" +
                           (k == "id" ? "0 to 15" : k == "threads" ? "a multiple of 32 from 32 to 1024" : "4, 8 or 16") +
                           ")");
    if (k == "id")
      op.sync.barrierId = static_cast<int>(v);
    else if (k == "threads")
      op.sync.threads = static_cast<int>(v);
    else if (k == "vec")
      op.sync.vec = static_cast<int>(v);
    else if (k == "count")
      op.sync.count = v;
    else
      op.sync.tx = v;
  }
  if (op.kind == OpKind::MbarrierInit && !seen.count("count"))
    fail("'mbarrier_init' needs its arrival count (count=N)");
}

void Parser::forOp(Op &op, const std::vector<Tok> &results) {
  Block *body = region(op);
  Tok iv = expectValue();
  expect("=");
  op.operands.push_back(use());
  expectIdent("to");
  op.operands.push_back(use());
  expectIdent("step");
  op.operands.push_back(use());
  if (tok_.kind == Tok::Ident && tok_.text == "num_stages") {
    bump();
    op.setNumStages(number());
  }
  if (tok_.kind == Tok::Ident && tok_.text == "warp_specialize") {
    bump();
    op.setWarpSpecialize(true);
  }
  if (tok_.kind == Tok::Ident && tok_.text == "flatten") {
    bump();
    op.setFlatten(true);
  }
  if (tok_.kind == Tok::Ident && tok_.text == "wgmma_drain") {
    bump();
    op.setWgmmaDrain(true);
  }
  std::vector<Tok> iters;
  if (tok_.kind == Tok::Ident && tok_.text == "iter") {
    bump();
    expect("(");
    while (!is(")")) {
      iters.push_back(expectValue());
      expect("=");
      op.operands.push_back(use());
      if (!accept(","))
        break;
    }
    expect(")");
  }
  expect(":");
  std::vector<Type> ts = typeList();
  std::vector<const Layout *> ls = listLayouts_;
  if (ts.size() != iters.size() + 1)
    fail("expected the induction variable type and one type per iter value");
  define(iv, body->addArg(ts[0]));
  for (size_t i = 0; i < iters.size(); ++i) {
    Value *a = body->addArg(ts[i + 1]);
    a->layout = ls[i + 1];
    define(iters[i], a);
  }
  expect("{");
  block(*body);
  expect("}");
  finish(op, results, std::vector<Type>(ts.begin() + 1, ts.end()),
         std::vector<const Layout *>(ls.begin() + 1, ls.end()));
}

void Parser::warpSpecializeOp(Op &op, const std::vector<Tok> &results) {
  expectIdent("warps");
  expect("=");
  op.setPartitionWarps(intList());
  if (tok_.kind == Tok::Ident && tok_.text == "regs") {
    bump();
    expect("=");
    op.setPartitionRegisters(intList());
  }
  expect("{");
  block(*region(op));
  expect("}");
  for (size_t i = 0; i < op.partitionWarps().size(); ++i) {
    expectIdent("partition");
    expect("{");
    block(*region(op));
    expect("}");
  }
  finish(op, results, {});
}

void Parser::ifOp(Op &op, const std::vector<Tok> &results) {
  op.operands.push_back(use());
  std::vector<Type> ts;
  std::vector<const Layout *> ls;
  if (tok_.kind == Tok::Arrow) {
    bump();
    ts = typeList();
    ls = listLayouts_;
  }
  expect("{");
  block(*region(op));
  expect("}");
  expectIdent("else");
  expect("{");
  block(*region(op));
  expect("}");
  finish(op, results, ts, ls);
}

void Parser::whileOp(Op &op, const std::vector<Tok> &results) {
  Block *before = region(op);
  Block *after = region(op);
  expect("(");
  std::vector<Tok> args;
  while (!is(")")) {
    args.push_back(expectValue());
    expect("=");
    op.operands.push_back(use());
    if (!accept(","))
      break;
  }
  expect(")");
  std::vector<Type> ts;
  std::vector<const Layout *> ls;
  if (tok_.kind == Tok::Arrow) {
    bump();
    ts = typeList();
    ls = listLayouts_;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    Value *a = before->addArg(op.operands[i]->type);
    a->layout = op.operands[i]->layout;
    define(args[i], a);
  }
  expect("{");
  block(*before);
  expect("}");
  expectIdent("do");
  std::vector<Tok> afterArgs = valueNames();
  if (afterArgs.size() != ts.size())
    fail("the 'do' region takes one argument per result");
  for (size_t i = 0; i < afterArgs.size(); ++i) {
    Value *a = after->addArg(ts[i]);
    a->layout = ls[i];
    define(afterArgs[i], a);
  }
  expect("{");
  block(*after);
  expect("}");
  finish(op, results, ts, ls);
}

} // namespace tle::ir::detail
