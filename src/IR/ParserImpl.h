// The tile IR text parser's class (ir::parseFunction): its token helpers, types and layouts
// here; function-level attributes in Parser.cpp, ops and their regions in ParseOps.cpp.
#pragma once

#include "tle/IR/Parser.h"
#include "TextLexer.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tle::ir::detail {

using text::Lexer;
using text::Tok;

class Parser {
public:
  Parser(const std::string &text, uint32_t file, DiagnosticEngine &d) : lex_(text, file), diags_(d) { tok_ = lex_.next(); }

  std::unique_ptr<Function> function();

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
  /// `(%a, %b, ...)`: a region's argument names, possibly none.
  std::vector<Tok> valueNames() {
    std::vector<Tok> names;
    commaList("(", ")", [&] { names.push_back(expectValue()); });
    return names;
  }
  /// `OPEN item, item, ... CLOSE` (possibly empty, a trailing comma allowed): `item()` reads one.
  template <class Item> void commaList(const char *open, const char *close, Item item) {
    expect(open);
    while (!is(close)) {
      item();
      if (!accept(","))
        break;
    }
    expect(close);
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
    commaList("[", "]", [&] { v.push_back(number()); });
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

  void op(Block &b);

  /// `tensor_maps = [{fp16, base = %a, shape = [...], strides = [...], box = [...], swizzle = N},
  /// ...]`: the tensor maps the function declares (ir::TensorMapParam), in order.
  /// `pipelines = [{offset = N, slots = S, slot_bytes = B, elem_bytes = E, tile = [R, C],
  /// swizzle = W, ld = L, tma = K, barriers = N, dynamic, restaged, private, copy = C}, ...]`
  /// (IR.h, PipelineBuffer; the pipeline pass recomputes them before emission).
  void pipelines(Function &f);
  /// A located error when one pipeline's fields cannot describe slots the backend can address
  /// (slots 1 to 64; element sizes 1, 2, 4, 8; swizzles 0, 32, 64, 128; copies of 4, 8, 16 bytes;
  /// a TMA pipeline: a swizzle and a tile of whole swizzle spans).
  void pipelineFieldsCheck(const PipelineBuffer &b, int64_t slots, int64_t elemBytes, int64_t swizzle, int64_t tma,
                           int64_t copy);

  void tensorMaps(Function &f);
  /// The index of the parameter named by the next %value.
  int paramIndex(const Function &f);
  /// A tensor-map number: N, %param, or a product `(%a * %b * N)`, `i32(...)` in 32 bits.
  TensorMapParam::Source source(const Function &f);

  /// The `key=value` attributes of a GPU synchronisation op (SyncAttrs), on the op's line:
  /// id= and threads= (named barriers), per=, count= and tx= (mbarriers), each only where its
  /// kind reads it; mbarrier_init needs count=.
  void syncAttrs(Op &op);

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

  void forOp(Op &op, const std::vector<Tok> &results);

  /// `warp_specialize warps=[W1, ...] [regs=[R0, R1, ...]] { default } partition { worker 1 }
  /// ...`: one worker region per entry of warps=.
  void warpSpecializeOp(Op &op, const std::vector<Tok> &results);

  void ifOp(Op &op, const std::vector<Tok> &results);

  void whileOp(Op &op, const std::vector<Tok> &results);
};

} // namespace tle::ir::detail
