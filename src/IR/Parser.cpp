// Parser for the tile IR text form written by ir::print, so that passes can be tested on
// hand-written IR (`tlec --from=tile x.tir --pass=NAME --emit=tile`) and gpu-stage IR reads
// back: the function and its attributes here (the Parser class is in ParserImpl.h).
#include "ParserImpl.h"

namespace tle::ir {

namespace detail {

std::unique_ptr<Function> Parser::function() {
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
      else if (key == "bounded_waits")
        f->boundedWaits = count() != 0;
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

void Parser::pipelineFieldsCheck(const PipelineBuffer &b, int64_t slots, int64_t elemBytes, int64_t swizzle,
                                  int64_t tma, int64_t copy) {
  auto bad = [&](const std::string &why) { fail("a pipeline's fields are inconsistent: " + why); };
  if (slots < 1 || slots > 64)
    bad("slots must be 1 to 64, got " + std::to_string(slots));
  if (elemBytes != 1 && elemBytes != 2 && elemBytes != 4 && elemBytes != 8)
    bad("elem_bytes must be 1, 2, 4 or 8, got " + std::to_string(elemBytes));
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    bad("swizzle must be 0, 32, 64 or 128, got " + std::to_string(swizzle));
  if (copy != 4 && copy != 8 && copy != 16)
    bad("copy must be 4, 8 or 16 bytes, got " + std::to_string(copy));
  if (b.rows < 0 || b.cols < 0 || b.base < 0 || b.slotBytes < 0 || b.barBase < 0 || b.ld < 0)
    bad("offsets, sizes and the tile must not be negative");
  if (tma >= 0 && (swizzle == 0 || b.rows < 1 || b.cols < 1 || b.cols % (swizzle / elemBytes) != 0))
    bad("a TMA pipeline (tma=) needs a swizzle and a tile of whole swizzle spans of columns");
}

void Parser::pipelines(Function &f) {
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
    pipelineFieldsCheck(b, slots, elemBytes, swizzle, tma, copy);
    b.slots = int(slots), b.elemBytes = unsigned(elemBytes), b.swizzle = int(swizzle), b.tmaMap = int(tma);
    b.copyBytes = int(copy);
    expect("}");
    f.pipelines.push_back(b);
    if (!accept(","))
      break;
  }
  expect("]");
}

void Parser::tensorMaps(Function &f) {
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

int Parser::paramIndex(const Function &f) {
  SourceLoc at = tok_.loc;
  Value *v = use();
  for (size_t i = 0; i < f.body.args.size(); ++i)
    if (f.body.args[i].get() == v)
      return static_cast<int>(i);
  diags_.fatal(at, "a tensor map names kernel parameters only");
}

TensorMapParam::Source Parser::source(const Function &f) {
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

} // namespace detail

std::unique_ptr<Function> parseFunction(uint32_t file, DiagnosticEngine &diags) {
  detail::Parser p(diags.sources().text(file), file, diags);
  return p.function();
}

} // namespace tle::ir
