// Parser for the tile IR text form written by ir::print (without layouts), so that passes can
// be tested on hand-written IR (`tlec --from=tile x.tir --pass=NAME --emit=tile`).
#include "tle/IR/Parser.h"
#include "TextLexer.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

namespace tle::ir {

namespace {

using text::Lexer;
using text::Tok;

class Parser {
public:
  Parser(const std::string &text, uint32_t file, DiagnosticEngine &d) : lex_(text, file), diags_(d) { tok_ = lex_.next(); }

  std::unique_ptr<Function> function() {
    auto f = std::make_unique<Function>();
    while (is("#")) // the layouts of a gpu-stage function, as Printer writes them
      layoutAlias(*f);
    f->loc = tok_.loc; // problems of the function as a whole are reported here
    expectIdent("func");
    if (tok_.kind != Tok::Ident || tok_.text[0] != '@')
      fail("expected '@name' after 'func'");
    f->name = tok_.text.substr(1);
    bump();
    expect("(");
    while (!is(")")) {
      Tok v = expectValue();
      expect(":");
      Type t = type();
      if (t.isTile())
        fail("kernel parameters are scalars or pointers");
      if (t.elem.isPointer() && t.elem.space != AddrSpace::Global)
        fail("kernel parameters point to global memory, not " + std::string(name(t.elem.space)) + " memory");
      Param p{hintOf(v.text), t.elem, 1, v.loc};
      if (accept("{")) {
        expectIdent("divisibility");
        expect("=");
        p.divisibility = number();
        expect("}");
      }
      f->params.push_back(p);
      define(v, f->body.addArg(t, p.name));
      if (!accept(","))
        break;
    }
    expect(")");
    if (tok_.kind == Tok::Ident && tok_.text == "attributes") {
      bump();
      expect("{");
      while (!is("}")) {
        std::string key = expectIdentAny();
        expect("=");
        if (key == "tensor_maps" || key == "pipelines") {
          if (key == "tensor_maps")
            tensorMaps(*f);
          else
            pipelines(*f);
          if (!accept(","))
            break;
          continue;
        }
        std::string val = tok_.text;
        SourceLoc at = tok_.loc;
        bump();
        // A count of the function (the verifier checks its range): a decimal int.
        auto count = [&]() {
          int64_t v = integer(val, at);
          if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
            diags_.fatal(at, key + " = " + val + " is out of range");
          return static_cast<int>(v);
        };
        if (key == "num_warps")
          f->numWarps = count();
        else if (key == "num_stages")
          f->numStages = count();
        else if (key == "shared_bytes" || key == "pipeline_bytes" || key == "pipeline_offset")
          (key == "shared_bytes" ? f->sharedBytes : key == "pipeline_bytes" ? f->pipelineBytes : f->pipelineOffset) =
              integer(val, at);
        else if (key == "max_registers" || key == "producer_warps")
          (key == "max_registers" ? f->maxRegisters : f->producerWarps) = count();
        else if (key == "consumer_registers" || key == "producer_registers")
          (key == "consumer_registers" ? f->consumerRegisters : f->producerRegisters) = count();
        else if (key == "cluster") { // XxYxZ
          int x = 0, y = 0, z = 0;
          char tail = 0;
          if (std::sscanf(val.c_str(), "%dx%dx%d%c", &x, &y, &z, &tail) != 3 || x < 1 || y < 1 || z < 1)
            fail("cluster must be XxYxZ with positive dims, got '" + val + "'");
          f->cluster = {x, y, z};
        }
        else
          f->constexprs.push_back({key, val});
        if (!accept(","))
          break;
      }
      expect("}");
    }
    expect("{");
    block(f->body);
    expect("}");
    if (tok_.kind != Tok::End)
      fail("unexpected text after the function");
    if (!f->layouts.empty())
      checkLayouts(*f);
    return f;
  }

private:
  Lexer lex_;
  DiagnosticEngine &diags_;
  Tok tok_;
  std::map<std::string, Value *> values_;
  std::map<std::string, const Layout *> layoutNames_; ///< "#Lk" -> the function's layout
  const Layout *typeLayout_ = nullptr;           ///< the layout of the last type() (null: none)
  std::vector<const Layout *> listLayouts_;      ///< those of the last typeList()

  [[noreturn]] void fail(const std::string &msg) { diags_.fatal(tok_.loc, msg); }

  // --- Layouts: `#Lk = #linear<[AxB] reg=[(r,c),...] lane=[...] warp=[...]>` lines before
  // `func`, named in tile types as `tile<AxBxT, #Lk>` (Layout::str, Printer).
  static std::string dimsText(const std::vector<int64_t> &d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i)
      s += (i ? "x" : "") + std::to_string(d[i]);
    return s + "]";
  }
  std::string layoutName(const Layout *l) const {
    for (auto &[n, p] : layoutNames_)
      if (p == l)
        return n;
    return l->str();
  }
  void layoutAlias(Function &f) {
    SourceLoc at = tok_.loc;
    expect("#");
    if (tok_.kind != Tok::Ident || tok_.text[0] != 'L')
      fail("expected a layout name '#Lk', found " + found());
    std::string n = "#" + tok_.text;
    bump();
    if (layoutNames_.count(n))
      diags_.fatal(at, "layout '" + n + "' is defined twice");
    expect("=");
    expect("#");
    expectIdent("linear");
    expect("<");
    expect("[");
    Layout l;
    SourceLoc dimsAt = tok_.loc;
    std::string dims;
    while (!is("]") && tok_.kind != Tok::End) {
      dims += tok_.text;
      bump();
    }
    expect("]");
    for (size_t pos = 0; pos <= dims.size();) {
      size_t x = std::min(dims.find('x', pos), dims.size());
      l.shape.push_back(integer(dims.substr(pos, x - pos), dimsAt));
      pos = x + 1;
    }
    for (auto *bases : {&l.reg, &l.lane, &l.warp}) {
      expectIdent(bases == &l.reg ? "reg" : bases == &l.lane ? "lane" : "warp");
      expect("=");
      *bases = basisList(l.rank());
    }
    expect(">");
    if (std::string why = layoutError(l); !why.empty())
      diags_.fatal(at, "layout '" + n + "' " + why);
    f.layouts.push_back(std::make_unique<Layout>(l));
    layoutNames_[n] = f.layouts.back().get();
  }
  std::vector<Layout::Basis> basisList(unsigned rank) {
    std::vector<Layout::Basis> out;
    expect("[");
    while (!is("]")) {
      SourceLoc at = tok_.loc;
      expect("(");
      Layout::Basis b;
      while (!is(")")) {
        b.push_back(number());
        if (!accept(","))
          break;
      }
      expect(")");
      if (b.size() != rank)
        diags_.fatal(at, "a basis of a rank-" + std::to_string(rank) + " layout has " + std::to_string(rank) +
                             " coordinates, got " + std::to_string(b.size()));
      out.push_back(b);
      if (!accept(","))
        break;
    }
    expect("]");
    return out;
  }
  const Layout *layoutRef() {
    SourceLoc at = tok_.loc;
    expect("#");
    std::string n = "#" + (tok_.kind == Tok::Ident ? tok_.text : std::string());
    auto it = layoutNames_.find(n);
    if (it == layoutNames_.end())
      diags_.fatal(at, "unknown layout '" + n + "' (a layout is defined before 'func' as '#Lk = #linear<...>')");
    bump();
    return it->second;
  }
  /// A function with layouts gives every tile value one, spread over its num_warps warps.
  void checkLayouts(Function &f) {
    for (auto &l : f.layouts)
      if (l->numWarps() != f.numWarps)
        diags_.fatal(f.loc, "layout '" + layoutName(l.get()) + "' spreads a tile over " +
                                std::to_string(l->numWarps()) + " warps; the function has num_warps = " +
                                std::to_string(f.numWarps));
    auto check = [&](const Value *v, SourceLoc loc) {
      if (v->type.isTile() && !v->layout)
        diags_.fatal(loc, "a tile value has no layout ('tile<..., #Lk>'): in a function with layouts every tile has one");
    };
    walk(f.body, [&](Op &op) {
      for (auto &r : op.results)
        check(r.get(), op.loc);
      for (auto &region : op.regions)
        for (auto &a : region->args)
          check(a.get(), op.loc);
    });
  }
  /// The current token as an error message names it: 'text', or "the end of the file".
  std::string found() const { return tok_.kind == Tok::End ? "the end of the file" : "'" + tok_.text + "'"; }
  void bump() { tok_ = lex_.next(); }
  bool is(const char *p) const { return tok_.kind == Tok::Punct && tok_.text == p; }
  bool accept(const char *p) {
    if (!is(p))
      return false;
    bump();
    return true;
  }
  void expect(const char *p) {
    if (!accept(p))
      fail(std::string("expected '") + p + "', found " + found());
  }
  void expectIdent(const char *w) {
    if (tok_.kind != Tok::Ident || tok_.text != w)
      fail(std::string("expected '") + w + "', found " + found());
    bump();
  }
  std::string expectIdentAny() {
    if (tok_.kind != Tok::Ident)
      fail("expected a name, found " + found());
    std::string s = tok_.text;
    bump();
    return s;
  }
  std::string expectString() {
    if (tok_.kind != Tok::Str)
      fail("expected a \"string\", found " + found());
    std::string s = tok_.text;
    bump();
    return s;
  }
  Tok expectValue() {
    if (tok_.kind != Tok::Value)
      fail("expected a %value, found " + found());
    Tok t = tok_;
    bump();
    return t;
  }
  int64_t number() {
    if (tok_.kind != Tok::Number)
      fail("expected a number, found " + found());
    int64_t v = integer(tok_.text, tok_.loc);
    bump();
    return v;
  }
  /// The whole of `text` as a decimal int64 (no hex, fraction or trailing letters); a located
  /// error at `at` otherwise.
  int64_t integer(const std::string &text, SourceLoc at) {
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end || errno == ERANGE)
      diags_.fatal(at, "expected a decimal integer that fits in 64 bits, found '" + text + "'");
    return v;
  }
  /// The whole of `text` as a float (decimal, with an exponent, or inf, -inf, nan).
  double real(const std::string &text, SourceLoc at) {
    if (text == "inf" || text == "-inf" || text == "nan")
      return text == "inf" ? 1.0 / 0.0 : text == "-inf" ? -1.0 / 0.0 : 0.0 / 0.0;
    char *end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end || text.find_first_of("xXpP") != std::string::npos)
      diags_.fatal(at, "expected a decimal floating-point number, found '" + text + "'");
    return v;
  }
  /// `[n, n, ...]`: a list attribute (Permute's order, a descriptor load's block shape).
  std::vector<int64_t> intList() {
    std::vector<int64_t> v;
    expect("[");
    while (!is("]")) {
      v.push_back(number());
      if (!accept(","))
        break;
    }
    expect("]");
    return v;
  }
  /// An `axis=` attribute: a number that fits an int (the verifier checks its range per op).
  int axisNumber() {
    SourceLoc at = tok_.loc;
    int64_t v = number();
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      diags_.fatal(at, "axis " + std::to_string(v) + " is out of range");
    return static_cast<int>(v);
  }
  static std::string hintOf(const std::string &v) {
    auto dot = v.rfind('.');
    return dot == std::string::npos ? "" : v.substr(1, dot - 1);
  }
  void define(const Tok &t, Value *v) {
    if (values_.count(t.text))
      diags_.fatal(t.loc, "value '" + t.text + "' is defined twice");
    values_[t.text] = v;
    v->nameHint = hintOf(t.text);
  }
  Value *use() {
    Tok t = expectValue();
    auto it = values_.find(t.text);
    if (it == values_.end())
      diags_.fatal(t.loc, "use of undefined value '" + t.text + "'");
    return it->second;
  }
  ScalarType scalarType() {
    if (tok_.kind != Tok::Ident)
      fail("expected a type, found " + found());
    auto st = parseScalarType(tok_.text);
    if (!st)
      fail("unknown type '" + tok_.text + "'");
    bump();
    return *st;
  }
  /// "fp32", "*fp32", "*fp32_shared", "*fp32_cluster" (ScalarType::str's spellings).
  static std::optional<ScalarType> parseScalarType(std::string t) {
    bool ptr = !t.empty() && t[0] == '*';
    if (!ptr) {
      auto d = parseDType(t);
      return d ? std::optional<ScalarType>(ScalarType{*d}) : std::nullopt;
    }
    t = t.substr(1);
    AddrSpace space = AddrSpace::Global;
    for (AddrSpace s : {AddrSpace::Shared, AddrSpace::Cluster}) {
      std::string suffix = std::string("_") + name(s);
      if (t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0) {
        space = s;
        t.resize(t.size() - suffix.size());
      }
    }
    auto d = parseDType(t);
    return d ? std::optional<ScalarType>(ScalarType::ptrTo(*d, space)) : std::nullopt;
  }
  Type type() {
    typeLayout_ = nullptr;
    if (tok_.kind == Tok::Ident && tok_.text == "tile") {
      SourceLoc at = tok_.loc; // errors point at the type, not at the token after it
      bump();
      expect("<");
      std::vector<int64_t> shape;
      // dims are "NxNx...xTYPE": the lexer gives "1024xfp32" as one number token, or
      // "64x" pieces; split on 'x'. A gpu-stage type ends with its layout: ", #Lk".
      std::string acc;
      while (!is(">") && !is(",")) {
        acc += tok_.text;
        bump();
        if (tok_.kind == Tok::End)
          fail("unterminated tile type");
      }
      SourceLoc layoutAt = tok_.loc;
      const Layout *layout = accept(",") ? layoutRef() : nullptr;
      expect(">");
      size_t pos = 0;
      for (;;) {
        size_t x = acc.find('x', pos);
        if (x == std::string::npos || !std::isdigit(static_cast<unsigned char>(acc[pos])))
          break;
        shape.push_back(std::strtoll(acc.substr(pos, x - pos).c_str(), nullptr, 10));
        pos = x + 1;
      }
      auto d = parseScalarType(acc.substr(pos));
      if (!d || shape.empty())
        diags_.fatal(at, "bad tile type 'tile<" + acc + ">'");
      for (int64_t dim : shape)
        if (dim <= 0 || (dim & (dim - 1)))
          diags_.fatal(at, "every tile dim must be a power of two, got 'tile<" + acc + ">'");
      if (std::string why = tileLimitError(shape); !why.empty())
        diags_.fatal(at, "tile 'tile<" + acc + ">' has " + why);
      if (layout && layout->shape != shape)
        diags_.fatal(layoutAt, "layout " + layoutName(layout) + " is for a tile of shape " + dimsText(layout->shape) +
                                   ", not " + dimsText(shape));
      typeLayout_ = layout;
      return Type(*d, shape);
    }
    return Type(scalarType());
  }
  /// Types separated by commas; listLayouts_ receives each one's layout (null: none).
  std::vector<Type> typeList() {
    std::vector<Type> ts = {type()};
    std::vector<const Layout *> ls = {typeLayout_};
    while (accept(",")) {
      ts.push_back(type());
      ls.push_back(typeLayout_);
    }
    listLayouts_ = ls;
    return ts;
  }

  void block(Block &b) {
    while (!is("}") && tok_.kind != Tok::End)
      op(b);
  }

  void op(Block &b) {
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
      // Optional hints: cache=cg eviction=evict_last volatile (loads), before the operands.
      while (tok_.kind == Tok::Ident && (tok_.text == "cache" || tok_.text == "eviction" || tok_.text == "volatile" ||
                                         tok_.text == "desc" || tok_.text == "tma" || tok_.text == "pipeline" ||
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
        if (k == "tma" && op->kind != OpKind::Store)
          fail("'tma' marks stores only");
        if (k == "volatile" && op->kind != OpKind::Load)
          fail("'volatile' marks loads only");
        if (k == "volatile" || k == "tma") {
          if (k == "volatile")
            op->setVolatile(true);
          else
            op->setTmaStore(true);
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
    case OpKind::PipelineMbarrier: { // pipeline=K slot=S [empty]
      for (const char *key : {"pipeline", "slot"}) {
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
      // [precision] [max_num_imprecise_acc=N] [async] (fp16/bf16/int dots print no precision)
      while (tok_.kind == Tok::Ident) {
        std::string word = expectIdentAny();
        if (word == "async") {
          op->setAsyncWgmma(true);
        } else if (word == "max_num_imprecise_acc") {
          expect("=");
          op->setMaxNumImpreciseAcc(number());
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
      expect("(");
      std::vector<Tok> args;
      while (!is(")")) {
        args.push_back(expectValue());
        if (!accept(","))
          break;
      }
      expect(")");
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

  /// `tensor_maps = [{fp16, base = %a, shape = [...], strides = [...], box = [...], swizzle = N},
  /// ...]`: the tensor maps the function declares (ir::TensorMapParam), in order.
  /// `pipelines = [{offset = N, slots = S, slot_bytes = B, elem_bytes = E, tile = [R, C],
  /// swizzle = W, ld = L, tma = K, barriers = N, dynamic, restaged, private, copy = C}, ...]`
  /// (IR.h, PipelineBuffer; the pipeline pass recomputes them before emission).
  void pipelines(Function &f) {
    expect("[");
    while (!is("]")) {
      PipelineBuffer b;
      int64_t slots = 1, elemBytes = 2, swizzle = 0, tma = -1, copy = 16;
      const std::map<std::string, int64_t *> ints = {
          {"offset", &b.base}, {"slots", &slots},   {"slot_bytes", &b.slotBytes}, {"elem_bytes", &elemBytes},
          {"swizzle", &swizzle}, {"ld", &b.ld},      {"tma", &tma},               {"barriers", &b.barBase},
          {"copy", &copy}};
      const std::map<std::string, bool *> flags = {
          {"dynamic", &b.dynamicFills}, {"restaged", &b.restaged}, {"private", &b.privateSlots}};
      expect("{");
      while (!is("}")) {
        SourceLoc at = tok_.loc;
        std::string k = expectIdentAny();
        if (flags.count(k)) {
          *flags.at(k) = true;
        } else if (k == "tile") {
          expect("=");
          std::vector<int64_t> t = intList();
          if (t.size() != 2)
            diags_.fatal(at, "a pipeline's tile is [rows, cols]");
          b.rows = t[0], b.cols = t[1];
        } else if (ints.count(k)) {
          expect("=");
          *ints.at(k) = number();
        } else {
          diags_.fatal(at, "unknown pipeline field '" + k + "'");
        }
        if (!accept(","))
          break;
      }
      for (int64_t v : {slots, elemBytes, swizzle, tma, copy})
        if (v < -1 || v > std::numeric_limits<int>::max())
          fail("a pipeline field is out of range: " + std::to_string(v));
      b.slots = int(slots), b.elemBytes = unsigned(elemBytes), b.swizzle = int(swizzle), b.tmaMap = int(tma);
      b.copyBytes = int(copy);
      expect("}");
      f.pipelines.push_back(b);
      if (!accept(","))
        break;
    }
    expect("]");
  }

  void tensorMaps(Function &f) {
    expect("[");
    while (!is("]")) {
      TensorMapParam t;
      expect("{");
      SourceLoc at = tok_.loc;
      auto d = parseDType(expectIdentAny());
      if (!d)
        diags_.fatal(at, "expected the tensor map's element type");
      t.dtype = *d;
      auto field = [&](const char *k) {
        expect(",");
        expectIdent(k);
        expect("=");
      };
      field("base");
      t.base = paramIndex(f);
      for (const char *k : {"shape", "strides"}) {
        field(k);
        auto &list = std::string(k) == "shape" ? t.shape : t.strides;
        expect("[");
        while (!is("]")) {
          list.push_back(source(f));
          if (!accept(","))
            break;
        }
        expect("]");
      }
      field("box");
      t.box = intList();
      field("swizzle");
      t.swizzle = static_cast<int>(number());
      expect("}");
      f.tensorMaps.push_back(t);
      if (!accept(","))
        break;
    }
    expect("]");
    f.declaredTensorMaps = static_cast<int>(f.tensorMaps.size());
  }
  /// The index of the parameter named by the next %value.
  int paramIndex(const Function &f) {
    SourceLoc at = tok_.loc;
    Value *v = use();
    for (size_t i = 0; i < f.body.args.size(); ++i)
      if (f.body.args[i].get() == v)
        return static_cast<int>(i);
    diags_.fatal(at, "a tensor map names kernel parameters only");
  }
  /// A tensor-map number: N, %param, or a product `(%a * %b * N)`, `i32(...)` in 32 bits.
  TensorMapParam::Source source(const Function &f) {
    TensorMapParam::Source s;
    bool paren = false;
    if (tok_.kind == Tok::Ident && tok_.text == "i32") {
      bump();
      s.bits = 32;
      expect("(");
      paren = true;
    } else {
      paren = accept("(");
    }
    for (;;) {
      if (tok_.kind == Tok::Value)
        s.params.push_back(paramIndex(f));
      else
        s.value *= number();
      if (!paren || tok_.kind != Tok::Ident || tok_.text != "*")
        break;
      bump();
    }
    if (paren)
      expect(")");
    return s;
  }

  /// The `key=value` attributes of a GPU synchronisation op (SyncAttrs), on the op's line:
  /// id= and threads= (named barriers), per=, count= and tx= (mbarriers), each only where its
  /// kind reads it; mbarrier_init needs count=.
  void syncAttrs(Op &op) {
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
        op.sync.per = w == "cta" ? Arrivers::Cta : w == "warp" ? Arrivers::Warp : w == "thread" ? Arrivers::Thread
                                                                  : (fail("unknown per='" + w + "' (cta, warp, thread)"), Arrivers::Cta);
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

  /// Defines the op's results with `types` (and `layouts`, when given: one per type).
  void finish(Op &op, const std::vector<Tok> &results, const std::vector<Type> &types,
              const std::vector<const Layout *> &layouts = {}) {
    if (results.size() != types.size())
      diags_.fatal(op.loc, "'" + std::string(name(op.kind)) + "' defines " + std::to_string(results.size()) +
                               " values but has " + std::to_string(types.size()) + " result types");
    for (size_t i = 0; i < results.size(); ++i) {
      Value *v = op.addResult(types[i]);
      v->layout = i < layouts.size() ? layouts[i] : nullptr;
      define(results[i], v);
    }
  }

  Block *region(Op &op) {
    op.regions.push_back(std::make_unique<Block>());
    op.regions.back()->parent = &op;
    return op.regions.back().get();
  }

  void forOp(Op &op, const std::vector<Tok> &results) {
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

  /// `warp_specialize warps=[W1, ...] [regs=[R0, R1, ...]] { default } partition { worker 1 }
  /// ...`: one worker region per entry of warps=.
  void warpSpecializeOp(Op &op, const std::vector<Tok> &results) {
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

  void ifOp(Op &op, const std::vector<Tok> &results) {
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

  void whileOp(Op &op, const std::vector<Tok> &results) {
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
    expect("(");
    std::vector<Tok> afterArgs;
    while (!is(")")) {
      afterArgs.push_back(expectValue());
      if (!accept(","))
        break;
    }
    expect(")");
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
};

} // namespace

std::unique_ptr<Function> parseFunction(uint32_t file, DiagnosticEngine &diags) {
  Parser p(diags.sources().text(file), file, diags);
  return p.function();
}

} // namespace tle::ir
