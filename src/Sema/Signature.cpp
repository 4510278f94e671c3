// Kernel signature text (-s, string annotations) and command-line constexpr values (-D, the
// signature's): literals, or expressions evaluated in the kernel's module.
#include "Registry.h"
#include "Sema.h"

#include <llvm/Support/Casting.h>
#include <llvm/Support/SaveAndRestore.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace tle::sema {

namespace {

std::string trim(std::string s) {
  auto ws = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!s.empty() && ws(s.back()))
    s.pop_back();
  size_t i = 0;
  while (i < s.size() && ws(s[i]))
    ++i;
  return s.substr(i);
}

} // namespace

/// Parses a constexpr literal from the command line: int, float, True/False, or a dtype name.
std::optional<SVal> parseConstexprText(const std::string &t) {
  if (t == "True" || t == "true")
    return SVal::boolean(true);
  if (t == "False" || t == "false")
    return SVal::boolean(false);
  if (t == "None")
    return SVal::none();
  if (auto d = ir::parseDType(t))
    return SVal::dtypeOf(ir::ScalarType{*d});
  if (t.empty())
    return std::nullopt;
  if (t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front()) // a string
    return SVal::str(t.substr(1, t.size() - 2));
  try {
    size_t pos = 0;
    long long v = std::stoll(t, &pos, 0);
    if (pos == t.size())
      return SVal::integer(v);
    double d = std::stod(t, &pos);
    if (pos == t.size())
      return SVal::real(d);
  } catch (...) {
  }
  return std::nullopt;
}

namespace {

/// The next ',' at `from` or after that is outside brackets ([], (), {} and <>), or npos.
size_t nextSeparator(const std::string &text, size_t from) {
  int depth = 0;
  for (size_t i = from; i < text.size(); ++i) {
    char c = text[i];
    if (c == '[' || c == '<' || c == '(' || c == '{')
      ++depth;
    else if ((c == ']' || c == '>' || c == ')' || c == '}') && depth > 0)
      --depth;
    else if (c == ',' && depth == 0)
      return i;
  }
  return std::string::npos;
}

/// Parses `tensordesc<DTYPE[B0, B1, ...]>` into `e`; "" or why not.
std::string parseTensorDesc(const std::string &item, SignatureEntry &e) {
  std::string body = trim(item.substr(std::string("tensordesc<").size()));
  if (body.empty() || body.back() != '>')
    return "expected tensordesc<DTYPE[B0, B1, ...]>";
  body = trim(body.substr(0, body.size() - 1));
  size_t open = body.find('['), close = body.rfind(']');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return "expected tensordesc<DTYPE[B0, B1, ...]>";
  if (!trim(body.substr(close + 1)).empty())
    return "a layout after the block shape is not supported (Gluon's shared layouts)";
  auto dt = ir::parseDType(trim(body.substr(0, open)));
  if (!dt)
    return "unknown element type '" + trim(body.substr(0, open)) + "'";
  e.kind = SignatureEntry::Kind::TensorDesc;
  e.type = ir::ScalarType{*dt};
  std::string dims = body.substr(open + 1, close - open - 1);
  for (size_t at = 0; at <= dims.size();) {
    size_t comma = dims.find(',', at);
    std::string d = trim(dims.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    at = comma == std::string::npos ? dims.size() + 1 : comma + 1;
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(d, &used);
    } catch (...) {
      used = 0;
    }
    if (d.empty() || used != d.size() || v <= 0 || (v & (v - 1)) != 0)
      return "block dimension '" + d + "' is not a power of two";
    e.blockShape.push_back(v);
  }
  if (e.blockShape.empty() || e.blockShape.size() > 5)
    return "a tensor descriptor has 1 to 5 block dimensions";
  return "";
}

} // namespace

namespace {

std::string parseItem(const std::string &item, SignatureEntry &e, bool inTuple);

/// Splits `text` at its top-level commas (a trailing comma ends it); each part trimmed, with
/// its column. False when a part other than a trailing one is empty.
bool splitItems(const std::string &text, std::vector<std::pair<std::string, size_t>> &parts) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = nextSeparator(text, start);
    std::string raw = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::string item = trim(raw);
    size_t column = start + (item.empty() ? 0 : raw.find(item[0]));
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) {
      if (comma == std::string::npos && !parts.empty())
        break; // trailing comma
      return false;
    }
    parts.push_back({item, column});
  }
  return true;
}

/// `(T0, T1, ...)`: a tuple parameter when an element is a type (elements are types or tuples
/// of types, with hints; Triton's tuple arguments), else a constexpr expression. "" or why not.
std::string parseTuple(const std::string &item, SignatureEntry &e) {
  std::vector<std::pair<std::string, size_t>> parts;
  bool ok = splitItems(item.substr(1, item.size() - 2), parts);
  std::vector<SignatureEntry> elements;
  bool runtime = false;
  std::string firstError;
  for (auto &[text, column] : parts) {
    SignatureEntry x;
    std::string why = parseItem(text, x, true);
    if (!why.empty() && firstError.empty())
      firstError = why;
    bool typed = x.kind == SignatureEntry::Kind::Runtime || x.kind == SignatureEntry::Kind::Tuple;
    runtime = runtime || (why.empty() && typed);
    elements.push_back(x);
  }
  if (!runtime) { // a tuple of compile-time values (the specializer evaluates it), or `(64)`
    e.kind = SignatureEntry::Kind::Constexpr;
    e.constexprText = item;
    return "";
  }
  if (!firstError.empty())
    return firstError;
  if (!ok)
    return "empty element in tuple '" + item + "'";
  for (size_t i = 0; i < elements.size(); ++i) {
    const SignatureEntry &x = elements[i];
    if (x.specializedToOne)
      return "tuple '" + item + "': element '" + parts[i].first + "': a ':1' hint is not supported in a tuple";
    if (x.kind == SignatureEntry::Kind::Constexpr || x.kind == SignatureEntry::Kind::TensorDesc)
      return "tuple '" + item + "': element '" + parts[i].first + "' is not a runtime type (a tuple parameter's "
             "elements are types such as i32, *fp32:16, or tuples of them)";
  }
  e.kind = SignatureEntry::Kind::Tuple;
  e.elements = std::move(elements);
  return "";
}

/// One signature item into `e`; "" or why not. In a tuple, a bare `B` is not Triton's alias of
/// i1 (a tuple parameter's elements are written as types).
std::string parseItem(const std::string &item, SignatureEntry &e, bool inTuple) {
  if (item.rfind("tensordesc<", 0) == 0) {
    if (std::string why = parseTensorDesc(item, e); !why.empty())
      return "signature entry '" + item + "': " + why;
    return "";
  }
  if (item.size() >= 2 && item.front() == '(' && item.back() == ')')
    return parseTuple(item, e);
  if (item.find_first_of("([{") != std::string::npos) { // a call, list or dict: a constexpr
    e.kind = SignatureEntry::Kind::Constexpr;
    e.constexprText = item;
    return "";
  }
  std::string ty = item, hint;
  if (auto colon = item.find(':'); colon != std::string::npos) {
    ty = trim(item.substr(0, colon));
    hint = trim(item.substr(colon + 1));
  }
  bool ptr = !ty.empty() && ty[0] == '*';
  std::string base = ptr ? ty.substr(1) : ty;
  if (ptr && !base.empty() && base[0] == 'k') // *kfp32: const pointer
    base = base.substr(1);
  auto dt = ir::parseDTypeName(base); // the command lines' vocabulary: fp16, f16, float16, ...
  if (!dt && base == "B" && (ptr || !hint.empty() || !inTuple)) { // Triton's signature alias of i1 (str_to_ty)
    dt = ir::DType::I1;
    e.bareAliasB = !ptr && hint.empty();
  }
  if (!dt && (base == "fp8e4b15" || base == "fp8e4b8" || base == "fp8e5b16"))
    return "type '" + base + "' in signature entry '" + item +
           "' is not supported: TLE targets NVIDIA GPUs, whose fp8 types are fp8e4nv and fp8e5";
  if (!dt && !ptr && hint.empty()) {
    // A literal, or an expression the specializer evaluates in the kernel's module (a name
    // that is neither a type nor a module-level name is reported there).
    e.kind = SignatureEntry::Kind::Constexpr;
    e.constexprText = item;
    return "";
  }
  if (!dt)
    return "unknown type '" + base + "' in signature entry '" + item +
           "' (expected one of i1 i8 i16 i32 i64 u8 u16 u32 u64 fp8e4nv fp8e5 fp16 bf16 fp32 fp64, or "
           "f16 f32 f64, float16 float32 float64 bfloat16, int8..int64, uint8..uint64, bool)";
  if (!ptr && ir::isFP8(*dt))
    return "signature entry '" + item + "': an fp8 scalar parameter is not supported; pass fp8 data "
           "through a pointer (*" + base + ") or the value as fp16/fp32";
  e.type = ptr ? ir::ScalarType::ptrTo(*dt) : ir::ScalarType{*dt};
  if (hint.empty())
    return "";
  if (hint == "16")
    e.divisibility = 16;
  else if (hint == "1" && !ptr && ir::isInteger(*dt))
    e.specializedToOne = true;
  else
    return "unsupported hint ':" + hint + "' in signature entry '" + item +
           "' (':16' for divisibility, ':1' for an integer equal to 1)";
  return "";
}

} // namespace

std::optional<std::vector<SignatureEntry>> parseSignature(const std::string &text, DiagnosticEngine &diags) {
  std::vector<SignatureEntry> out;
  if (trim(text).empty()) // a kernel without parameters
    return out;
  std::vector<std::pair<std::string, size_t>> parts;
  if (!splitItems(text, parts)) {
    diags.error({}, "empty entry in signature '" + text + "'");
    return std::nullopt;
  }
  for (auto &[item, column] : parts) {
    SignatureEntry e;
    e.column = column;
    if (std::string why = parseItem(item, e, false); !why.empty()) {
      diags.error({}, why);
      return std::nullopt;
    }
    out.push_back(e);
  }
  return out;
}

std::string signatureText(const SignatureEntry &e) {
  if (e.kind == SignatureEntry::Kind::Constexpr)
    return e.constexprText;
  if (e.kind != SignatureEntry::Kind::Tuple)
    return e.type.str();
  std::string r = "(";
  for (size_t i = 0; i < e.elements.size(); ++i)
    r += (i ? ", " : "") + signatureText(e.elements[i]);
  return r + (e.elements.size() == 1 ? ",)" : ")");
}

size_t runtimeLeaves(const SignatureEntry &e) {
  if (e.kind != SignatureEntry::Kind::Tuple)
    return e.kind == SignatureEntry::Kind::Runtime && !e.specializedToOne ? 1 : 0;
  size_t n = 0;
  for (const SignatureEntry &x : e.elements)
    n += runtimeLeaves(x);
  return n;
}

std::string constexprRecord(const SVal &v) {
  switch (v.kind) {
  case SVal::Kind::None: return "None";
  case SVal::Kind::Bool: return v.i ? "True" : "False";
  case SVal::Kind::Int: return std::to_string(v.i);
  case SVal::Kind::Float: { // the shortest text that reads back, with a '.0' on whole numbers (Python's repr)
    char buf[64];
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, v.f);
      if (std::strtod(buf, nullptr) == v.f)
        break;
    }
    std::string r = buf;
    return r.find_first_not_of("-0123456789") == std::string::npos ? r + ".0" : r;
  }
  case SVal::Kind::Str: return "'" + v.s + "'";
  case SVal::Kind::DType: return ir::name(v.dtype.dtype);
  case SVal::Kind::Tuple: {
    std::string r = "(";
    for (size_t k = 0; k < v.elts.size(); ++k)
      r += (k ? ", " : "") + constexprRecord(v.elts[k]);
    return r + (v.elts.size() == 1 ? ",)" : ")");
  }
  case SVal::Kind::JitFn: case SVal::Kind::PyFn: return v.fn->name;
  case SVal::Kind::Builtin: return v.s;
  default: return v.describe();
  }
}

namespace {

/// Whether a command-line value of this kind can be a constexpr argument: a compile-time value
/// or a function (Triton passes @jit functions as constexprs).
bool constexprArgument(const SVal &v) {
  switch (v.kind) {
  case SVal::Kind::Tuple:
    for (const SVal &e : v.elts)
      if (!constexprArgument(e))
        return false;
    return true;
  case SVal::Kind::JitFn: case SVal::Kind::Builtin: return true;
  case SVal::Kind::PyFn: return v.i != 0; // a @triton.constexpr_function
  default: return v.isConstexpr();
  }
}

} // namespace

SourceLoc Specializer::commandLineLoc(const std::string &param, const std::string &text, const SignatureEntry *entry) {
  std::string shown = entry ? "-s \"" + opts.signature.value_or("") + "\"" : "-D " + param + "=" + text;
  uint32_t file = diags.sources().addFile(entry ? "-s" : "-D", shown);
  return SourceLoc{file, 1, static_cast<uint32_t>(entry ? 5 + entry->column : 5 + param.size())};
}

bool Specializer::signatureBMeansModuleName(const ast::Param &p, const SignatureEntry &e, bool annotatedConstexpr) {
  if (!e.bareAliasB || (!globals.count("B") && !unresolvedGlobals_.count("B")))
    return false;
  if (annotatedConstexpr)
    return true;
  diags.warning(commandLineLoc(p.name, "B", &e),
                "signature entry 'B' makes parameter '" + p.name + "' a runtime i1 (Triton's alias 'B' of i1), not "
                "the module-level 'B'; annotate it tl.constexpr or write (B) to pass the module's value");
  return false;
}

SVal Specializer::commandLineConstexpr(const std::string &param, const std::string &text, const SignatureEntry *entry,
                                       std::string &record) {
  // A literal, unless it is a name the module defines (a constexpr named like a dtype: `B`, `i1`).
  bool moduleName = globals.count(text) || unresolvedGlobals_.count(text);
  if (auto c = moduleName ? std::nullopt : parseConstexprText(text)) {
    record = text;
    return *c;
  }
  // A pseudo-file showing the option as written, so that errors point into it.
  SourceLoc at = commandLineLoc(param, text, entry);
  uint32_t file = at.file;
  std::string what = entry ? "signature entry '" + text + "'" : "-D " + param + "=" + text;
  if (text.empty())
    fail(at, what + " gives no value");
  if (!opts.parseExpression)
    fail(at, what + " is not a constexpr literal (an integer, a float, True/False, None, a quoted string or a "
                    "dtype name)");
  const ast::Expr *e = opts.parseExpression(file, at, text);
  if (auto *n = llvm::dyn_cast<ast::NameExpr>(e);
      n && !globals.count(n->name) && !unresolvedGlobals_.count(n->name) && !isModuleBuiltin("", n->name))
    fail(at, what + ": '" + n->name + "' is neither " + (entry ? "a type (e.g. *fp32:16, i32), " : "") +
                 "a literal (an integer, a float, True/False, None, a quoted string, a dtype name) nor a name "
                 "defined in the kernel's module");
  Env empty;
  SVal v;
  {
    llvm::SaveAndRestore<bool> helpers(commandLine_, true);
    v = eval(e, empty);
  }
  if (!constexprArgument(v))
    fail(startLoc(e), what + " is a " + v.describe() +
                          ", not a compile-time value (constexpr arguments are numbers, booleans, strings, dtypes, "
                          "tuples, device meshes or functions)");
  record = constexprRecord(v);
  return v;
}

} // namespace tle::sema
