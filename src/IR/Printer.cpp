// The tile IR text form.
#include "tle/IR/IR.h"
#include "tle/IR/Layout.h"
#include "tle/IR/RawCode.h"

#include <cmath>
#include <map>
#include <ostream>
#include <sstream>

namespace tle::ir {

namespace {

/// `s` as a double-quoted string with C escapes (\\, \", \n, \t, \xHH), as the parser reads it.
std::string quoted(const std::string &s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '\\' || c == '"') {
      r += '\\';
      r += static_cast<char>(c);
    } else if (c == '\n') {
      r += "\\n";
    } else if (c == '\t') {
      r += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      static const char *hex = "0123456789abcdef";
      r += "\\x";
      r += hex[c >> 4];
      r += hex[c & 15];
    } else {
      r += static_cast<char>(c);
    }
  }
  return r + "\"";
}

class Printer {
public:
  Printer(std::ostream &os, bool layouts) : os_(os), layouts_(layouts) {}

  void function(const Function &f) {
    if (layouts_) {
      // Layouts are printed once, as aliases, and referred to by name in types.
      for (auto &l : f.layouts) {
        std::string n = "#L" + std::to_string(layoutIds_.size());
        layoutIds_[l.get()] = static_cast<unsigned>(layoutIds_.size());
        os_ << n << " = " << l->str() << "\n";
      }
    }
    os_ << "func @" << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (i)
        os_ << ", ";
      os_ << ref(f.body.args[i].get()) << ": " << f.params[i].type.str();
      if (f.params[i].divisibility > 1)
        os_ << " {divisibility = " << f.params[i].divisibility << "}";
    }
    os_ << ") attributes {num_warps = " << f.numWarps;
    if (f.numStages)
      os_ << ", num_stages = " << f.numStages;
    if (f.sharedBytes)
      os_ << ", shared_bytes = " << f.sharedBytes;
    if (f.maxRegisters)
      os_ << ", max_registers = " << f.maxRegisters;
    if (f.producerWarps)
      os_ << ", producer_warps = " << f.producerWarps;
    if (f.boundedWaits)
      os_ << ", bounded_waits = 1";
    if (f.consumerRegisters)
      os_ << ", consumer_registers = " << f.consumerRegisters;
    if (f.producerRegisters)
      os_ << ", producer_registers = " << f.producerRegisters;
    if (f.cluster != std::array<int, 3>{1, 1, 1})
      os_ << ", cluster = " << f.cluster[0] << "x" << f.cluster[1] << "x" << f.cluster[2];
    if (!f.tensorMaps.empty()) { // the IR's own, then the pipeline pass's (read back as declared)
      os_ << ", tensor_maps = [";
      for (size_t k = 0; k < f.tensorMaps.size(); ++k)
        os_ << (k ? ", " : "") << tensorMap(f, f.tensorMaps[k]);
      os_ << "]";
    }
    if (!f.pipelines.empty()) {
      os_ << ", pipelines = [";
      for (size_t k = 0; k < f.pipelines.size(); ++k)
        os_ << (k ? ", " : "") << pipelineText(f.pipelines[k]);
      os_ << "]";
    }
    if (f.pipelineBytes)
      os_ << ", pipeline_bytes = " << f.pipelineBytes;
    if (f.pipelineBytes && f.pipelineOffset)
      os_ << ", pipeline_offset = " << f.pipelineOffset;
    for (auto &[k, v] : f.constexprs) // one token as it is, anything else (a tuple, a mesh) quoted
      os_ << ", " << k << " = "
          << (!v.empty() && v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-") ==
                                std::string::npos
                  ? v
                  : quoted(v));
    os_ << "} {\n";
    block(f.body, 1);
    os_ << "}\n";
  }

private:
  std::ostream &os_;
  bool layouts_;
  std::map<const Value *, unsigned> ids_;
  std::map<const Layout *, unsigned> layoutIds_;

  /// A tensor-map number: a constant, a parameter, or a product `(%a * %b * 4)`, `i32(...)` when
  /// computed in 32 bits.
  std::string source(const Function &f, const TensorMapParam::Source &s) {
    std::vector<std::string> terms;
    for (int p : s.params)
      terms.push_back(ref(f.body.args[size_t(p)].get()));
    if (s.value != 1 || terms.empty())
      terms.push_back(std::to_string(s.value));
    if (terms.size() == 1 && s.bits != 32)
      return terms[0];
    std::string r = s.bits == 32 ? "i32(" : "(";
    for (size_t i = 0; i < terms.size(); ++i)
      r += (i ? " * " : "") + terms[i];
    return r + ")";
  }

  std::string tensorMap(const Function &f, const TensorMapParam &t) {
    std::string r = std::string("{") + name(t.dtype) + ", base = " + ref(f.body.args[size_t(t.base)].get());
    for (const char *which : {"shape", "strides"}) {
      const auto &list = std::string(which) == "shape" ? t.shape : t.strides;
      r += std::string(", ") + which + " = [";
      for (size_t i = 0; i < list.size(); ++i)
        r += (i ? ", " : "") + source(f, list[i]);
      r += "]";
    }
    r += ", box = [";
    for (size_t i = 0; i < t.box.size(); ++i)
      r += (i ? ", " : "") + std::to_string(t.box[i]);
    return r + "], swizzle = " + std::to_string(t.swizzle) + "}";
  }

  /// A pipeline class's slots (Function::pipelines): `{offset = N, slots = S, slot_bytes = B,
  /// ...}` with the tile, layout and copy fields that apply.
  static std::string pipelineText(const PipelineBuffer &b) {
    std::string r = "{offset = " + std::to_string(b.base) + ", slots = " + std::to_string(b.slots) +
                    ", slot_bytes = " + std::to_string(b.slotBytes) + ", elem_bytes = " + std::to_string(b.elemBytes);
    if (b.privateSlots)
      return r + ", private, copy = " + std::to_string(b.copyBytes) + "}";
    r += ", tile = [" + std::to_string(b.rows) + ", " + std::to_string(b.cols) + "]";
    if (b.swizzle)
      r += ", swizzle = " + std::to_string(b.swizzle);
    if (b.ld)
      r += ", ld = " + std::to_string(b.ld);
    if (b.tmaMap >= 0)
      r += ", tma = " + std::to_string(b.tmaMap) + ", barriers = " + std::to_string(b.barBase);
    if (b.dynamicFills)
      r += ", dynamic";
    if (b.restaged)
      r += ", restaged";
    return r + "}";
  }

  std::string ref(const Value *v) {
    auto it = ids_.find(v);
    if (it == ids_.end())
      it = ids_.emplace(v, static_cast<unsigned>(ids_.size())).first;
    std::string s = "%";
    if (!v->nameHint.empty())
      s += v->nameHint + ".";
    return s + std::to_string(it->second);
  }

  std::string type(const Value *v) {
    std::string s = v->type.str();
    if (layouts_ && v->layout) {
      s.pop_back();
      auto it = layoutIds_.find(v->layout);
      s += ", " + (it != layoutIds_.end() ? "#L" + std::to_string(it->second) : v->layout->str()) + ">";
    }
    return s;
  }

  /// Prints `label` and the list as `[a,b,...]`.
  void intList(const char *label, const std::vector<int64_t> &v) {
    os_ << label << "[";
    for (size_t i = 0; i < v.size(); ++i)
      os_ << (i ? "," : "") << v[i];
    os_ << "]";
  }

  void indent(int n) {
    for (int i = 0; i < n; ++i)
      os_ << "  ";
  }

  static std::string floatText(double d) {
    if (std::isinf(d))
      return d > 0 ? "inf" : "-inf";
    if (std::isnan(d))
      return "nan";
    std::ostringstream s;
    s.precision(17);
    s << d;
    std::string t = s.str();
    if (t.find_first_of(".e") == std::string::npos)
      t += ".0";
    return t;
  }

  void block(const Block &b, int depth) {
    for (auto &op : b.ops)
      opLine(*op, depth);
  }

  /// The named attributes of a GPU synchronisation op (SyncAttrs), defaults left out except an
  /// mbarrier_init's count.
  void syncAttrs(const Op &op) {
    const SyncAttrs &a = op.sync;
    if (a.barrierId >= 0)
      os_ << " id=" << a.barrierId;
    if (a.threads)
      os_ << " threads=" << a.threads;
    if (a.per != Arrivers::Cta)
      os_ << " per=" << name(a.per);
    if (a.count != 1 || op.kind == OpKind::MbarrierInit)
      os_ << " count=" << a.count;
    if (a.tx)
      os_ << " tx=" << a.tx;
    if (a.vec)
      os_ << " vec=" << a.vec;
    if (a.cache != CopyCache::Auto)
      os_ << " cache=" << (a.cache == CopyCache::CA ? "ca" : "cg");
    if (a.relaxed)
      os_ << " relaxed";
    if (a.global)
      os_ << " global";
    if (a.unchecked)
      os_ << " unchecked";
  }

  void opLine(const Op &op, int depth) {
    indent(depth);
    for (size_t i = 0; i < op.results.size(); ++i)
      os_ << (i ? ", " : "") << ref(op.result(i));
    if (!op.results.empty())
      os_ << " = ";
    os_ << name(op.kind);
    switch (op.kind) {
    case OpKind::Constant:
      os_ << " " << (isFloat(op.result()->type.dtype()) ? floatText(op.floatValue()) : std::to_string(op.intValue()));
      break;
    case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::ExpandDims: case OpKind::Flip:
    case OpKind::Gather:
      os_ << " axis=" << op.axis();
      break;
    case OpKind::Arange:
      os_ << " " << op.arangeStart() << ", " << op.arangeEnd();
      break;
    case OpKind::Cmp:
      os_ << " " << name(op.predicate());
      break;
    case OpKind::Load: case OpKind::Store:
      if (op.cacheHint() != CacheHint::None)
        os_ << " cache=" << (cacheHintName(op.cacheHint()) + 1);
      if (op.evictionHint() != EvictionHint::None)
        os_ << " eviction=" << evictionHintName(op.evictionHint());
      if (op.kind == OpKind::Load && op.isVolatile())
        os_ << " volatile";
      if (op.kind == OpKind::Load && op.isAsyncHint())
        os_ << " async";
      if (op.kind == OpKind::Store && op.isTmaStore())
        os_ << " tma";
      if (op.kind == OpKind::Store && op.isBoundsMask())
        os_ << " bounds";
      if (op.kind == OpKind::Store && op.storeTensorMap() >= 0)
        os_ << " map=" << op.storeTensorMap();
      if (op.kind == OpKind::Store && op.tmaStaging() >= 0)
        os_ << " staging=" << op.tmaStaging();
      if (op.kind == OpKind::Load && op.pipeline() >= 0)
        os_ << " pipeline=" << op.pipeline();
      if (op.hasDescriptor())
        intList(" desc=", op.blockShape());
      break;
    case OpKind::Reduce:
      os_ << " " << name(op.reduceKind()) << " axis=" << op.axis();
      if (op.reduceBatchSize() > 0)
        os_ << " batch=" << op.reduceBatchSize();
      break;
    case OpKind::Dot:
      if (op.operands[0]->type.dtype() == DType::F32)
        os_ << " " << name(op.dotPrecision());
      if (op.maxNumImpreciseAcc() > 0)
        os_ << " max_num_imprecise_acc=" << op.maxNumImpreciseAcc();
      if (op.isAsyncWgmma())
        os_ << " async";
      if (op.dotStageK() > 0)
        os_ << " stage_k=" << op.dotStageK();
      break;
    case OpKind::Permute: {
      intList(" order=", op.permutation());
      if (op.pipeline() >= 0)
        os_ << " pipeline=" << op.pipeline();
      if (op.sharedOffset >= 0)
        os_ << " offset=" << op.sharedOffset;
      break;
    }
    case OpKind::FDiv:
      if (op.isDivRn())
        os_ << " rn";
      break;
    case OpKind::Cast:
      if (op.roundsTowardZero())
        os_ << " rtz";
      break;
    case OpKind::ExternCall:
      os_ << " \"" << op.callee() << "\"";
      break;
    case OpKind::InlineAsm:
      os_ << " " << quoted(op.asmText()) << " " << quoted(op.asmConstraints()) << " pack=" << op.asmPack()
          << (op.asmPure() ? " pure" : "");
      break;
    case OpKind::RawCall: { // raw_call "sym" [memref shapes, _ for as-is: _, [64, 64]] "module text"
      os_ << " " << quoted(op.rawSymbol()) << " [";
      auto shapes = op.rawMemrefs();
      for (size_t i = 0; i < shapes.size(); ++i) {
        os_ << (i ? ", " : "");
        if (shapes[i].empty())
          os_ << "_";
        else
          os_ << "[";
        for (size_t d = 0; d < shapes[i].size(); ++d)
          os_ << (d ? ", " : "") << shapes[i][d];
        if (!shapes[i].empty())
          os_ << "]";
      }
      os_ << "]";
      if (op.rawContiguous())
        os_ << " contiguous";
      if (int e = op.rawSharedEffects()) {
        std::string names;
        for (const auto &n : kRawSharedEffectNames)
          if (e & n.bit)
            names += (names.empty() ? "" : "+") + std::string(n.name);
        os_ << " shared=" << (names.empty() ? "none" : names);
      }
      if (!op.rawResultOperands().empty()) {
        os_ << " outs [";
        for (size_t i = 0; i < op.rawResultOperands().size(); ++i)
          os_ << (i ? ", " : "") << op.rawResultOperands()[i];
        os_ << "]";
      }
      os_ << " " << quoted(op.rawModule());
      break;
    }
    case OpKind::Print:
      os_ << (op.printHex() ? " hex " : " ") << quoted(op.printPrefix());
      break;
    case OpKind::Assert:
      os_ << " " << quoted(op.assertMessage());
      break;
    case OpKind::GridDepControl:
      os_ << (op.launchDependents() ? " launch_dependents" : " wait");
      break;
    case OpKind::AtomicRMW:
      os_ << " " << name(op.atomicKind()) << " " << name(op.memSem()) << " " << name(op.memScope());
      break;
    case OpKind::AtomicCAS:
      os_ << " " << name(op.memSem()) << " " << name(op.memScope());
      break;
    case OpKind::ExtractTile: case OpKind::InsertTile:
      if (op.kind == OpKind::InsertTile && op.windowBuffer())
        os_ << " window";
      if (!op.tileStrides().empty())
        intList(" strides=", op.tileStrides());
      break;
    case OpKind::Scan:
      os_ << " " << name(op.reduceKind()) << " axis=" << op.axis() << (op.isReverse() ? " reverse" : "")
          << (op.isExclusive() ? " exclusive" : "");
      break;
    case OpKind::Barrier: case OpKind::BarrierArrive: case OpKind::MbarrierInit: case OpKind::MbarrierArrive:
    case OpKind::MbarrierExpectTx: case OpKind::AsyncCopy: case OpKind::ClusterArrive: case OpKind::FenceProxyAsync:
      syncAttrs(op);
      break;
    case OpKind::SignalWait:
      if (op.sync.keep)
        os_ << " keep";
      break;
    case OpKind::AsyncWaitGroup: case OpKind::TmaStoreWait: case OpKind::WgmmaWait:
      if (op.sync.all)
        os_ << " all";
      else
        os_ << (op.sync.read ? " read " : " ") << op.sync.pending;
      break;
    case OpKind::PipelineMbarrier:
      os_ << " pipeline=" << op.sync.pipeline;
      if (op.operands.empty())
        os_ << " slot=" << op.sync.slot;
      os_ << (op.sync.empty ? " empty" : "");
      break;
    case OpKind::PipelineSlot: case OpKind::PipelineValue:
      os_ << " pipeline=" << op.sync.pipeline;
      break;
    case OpKind::TensormapPrefetch:
      os_ << " map=" << op.sync.map;
      break;
    case OpKind::Wgmma:
      os_ << (op.wgmmaTransA() ? " trans_a" : "") << (op.wgmmaTransB() ? " trans_b" : "");
      break;
    case OpKind::TmaLoad: case OpKind::TmaStore:
      os_ << " map=" << op.sync.map;
      if (op.sync.multicast)
        os_ << " multicast=" << op.sync.multicast << " issuer=" << op.sync.issuer;
      break;
    case OpKind::SubmeshBarrier:
      intList(" members=", op.submeshMembers());
      break;
    case OpKind::LocalAlloc:
      intList(" shape=", op.allocShape());
      if (op.allocSwizzle())
        os_ << " swizzle=" << op.allocSwizzle();
      if (op.sharedOffset >= 0)
        os_ << " offset=" << op.sharedOffset;
      break;
    default:
      break;
    }
    if (op.kind == OpKind::For) {
      const Block &body = *op.regions[0];
      os_ << " " << ref(body.args[0].get()) << " = " << ref(op.operands[0]) << " to " << ref(op.operands[1])
          << " step " << ref(op.operands[2]);
      if (op.numStages())
        os_ << " num_stages " << op.numStages();
      if (op.warpSpecialize())
        os_ << " warp_specialize";
      if (op.flatten())
        os_ << " flatten";
      if (op.wgmmaDrain())
        os_ << " wgmma_drain";
      if (op.operands.size() > 3) {
        os_ << " iter(";
        for (size_t i = 3; i < op.operands.size(); ++i)
          os_ << (i > 3 ? ", " : "") << ref(body.args[i - 2].get()) << " = " << ref(op.operands[i]);
        os_ << ")";
      }
      os_ << " : " << type(body.args[0].get());
      for (auto &r : op.results)
        os_ << ", " << type(r.get());
      os_ << " {\n";
      block(body, depth + 1);
      indent(depth);
      os_ << "}\n";
      return;
    }
    if (op.kind == OpKind::WarpSpecialize) {
      intList(" warps=", op.partitionWarps());
      if (!op.partitionRegisters().empty())
        intList(" regs=", op.partitionRegisters());
      for (size_t r = 0; r < op.regions.size(); ++r) {
        os_ << (r ? " partition {\n" : " {\n");
        block(*op.regions[r], depth + 1);
        indent(depth);
        os_ << "}";
      }
      os_ << "\n";
      return;
    }
    if (op.kind == OpKind::If || op.kind == OpKind::While) {
      if (op.kind == OpKind::If) {
        os_ << " " << ref(op.operands[0]);
      } else {
        os_ << " (";
        for (size_t i = 0; i < op.operands.size(); ++i)
          os_ << (i ? ", " : "") << ref(op.regions[0]->args[i].get()) << " = " << ref(op.operands[i]);
        os_ << ")";
      }
      if (!op.results.empty()) {
        os_ << " ->";
        for (size_t i = 0; i < op.results.size(); ++i)
          os_ << (i ? ", " : " ") << type(op.result(static_cast<unsigned>(i)));
      }
      os_ << " {\n";
      for (size_t r = 0; r < op.regions.size(); ++r) {
        if (r) {
          indent(depth);
          os_ << (op.kind == OpKind::If ? "} else {\n" : "} do");
          if (op.kind == OpKind::While) {
            os_ << " (";
            for (size_t i = 0; i < op.regions[1]->args.size(); ++i)
              os_ << (i ? ", " : "") << ref(op.regions[1]->args[i].get());
            os_ << ") {\n";
          }
        }
        block(*op.regions[r], depth + 1);
      }
      indent(depth);
      os_ << "}\n";
      return;
    }
    for (size_t i = 0; i < op.operands.size(); ++i)
      os_ << (i ? ", " : " ") << ref(op.operands[i]);
    if (!op.operands.empty() || !op.results.empty())
      os_ << " :";
    for (size_t i = 0; i < op.operands.size(); ++i)
      os_ << (i ? ", " : " ") << type(op.operands[i]);
    if (!op.results.empty()) {
      os_ << (op.operands.empty() ? " " : " -> ");
      for (size_t i = 0; i < op.results.size(); ++i)
        os_ << (i ? ", " : "") << type(op.result(i));
    }
    if (op.sharedOffset >= 0 && op.kind != OpKind::LocalAlloc)
      os_ << " scratch=" << op.sharedOffset;
    if (!op.regions.empty() && (op.kind == OpKind::Reduce || op.kind == OpKind::Scan)) {
      // The combine region: its arguments (typed like the operands' elements), then its body.
      const Block &r = *op.regions[0];
      os_ << " (";
      for (size_t i = 0; i < r.args.size(); ++i)
        os_ << (i ? ", " : "") << ref(r.args[i].get());
      os_ << ") {\n";
      block(r, depth + 1);
      indent(depth);
      os_ << "}";
    }
    os_ << "\n";
  }
};

} // namespace

void print(std::ostream &os, const Function &f, bool withLayouts) { Printer(os, withLayouts).function(f); }

} // namespace tle::ir
