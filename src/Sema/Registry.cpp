// The builtin registry: the families' table lines indexed by qualified name, the generic argument
// binding, and the dispatch of builtin calls and method calls through the table.
#include "Registry.h"
#include "Binder.h"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>

namespace tle::sema {

namespace {

/// A table line whose signature cannot be parsed is a bug of the table: abort at startup.
[[noreturn]] void badTable(const std::string &name, const std::string &why) {
  std::fprintf(stderr, "internal error: builtin table line '%s': %s\n", name.c_str(), why.c_str());
  std::abort();
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// Parses `spec.signature` (see BuiltinSpec::signature).
Builtin parse(const BuiltinSpec &spec) {
  Builtin f;
  f.spec = spec;
  f.name = spec.name;
  f.fname = f.name.substr(f.name.rfind('.') == std::string::npos ? 0 : f.name.rfind('.') + 1);
  // Split at the commas outside brackets and quotes (defaults may be tuples or strings).
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (const char *s = spec.signature; *s; ++s) {
    char ch = *s;
    if (quote) {
      quote = ch == quote ? 0 : quote;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '(' || ch == '[') {
      ++depth;
    } else if (ch == ')' || ch == ']') {
      --depth;
    } else if (ch == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += ch;
  }
  if (!trim(cur).empty() || !parts.empty())
    parts.push_back(trim(cur));
  bool keywordOnly = false, optionalSeen = false;
  for (const std::string &part : parts) {
    if (part.empty())
      badTable(f.name, "empty parameter");
    if (part == "/") {
      for (auto &p : f.params)
        p.keyword = false;
      continue;
    }
    if (part == "*") {
      keywordOnly = true;
      continue;
    }
    if (part[0] == '*') {
      f.variadic = true;
      keywordOnly = true;
      continue;
    }
    BuiltinParam p;
    size_t eq = part.find('=');
    p.name = trim(part.substr(0, eq));
    if (eq != std::string::npos) {
      p.defaultText = trim(part.substr(eq + 1));
      p.required = false;
    }
    p.positional = !keywordOnly;
    if (p.required && optionalSeen && p.positional)
      badTable(f.name, "required parameter '" + p.name + "' after an optional one");
    optionalSeen |= !p.required;
    f.params.push_back(p);
  }
  return f;
}

/// The table: every family's lines, indexed by name (overloads in table order).
struct Registry {
  std::deque<Builtin> all;
  std::map<std::string, std::vector<const Builtin *>> byName;

  Registry() {
    for (auto family : {coreBuiltins, debugBuiltins, memoryBuiltins, atomicBuiltins, mathBuiltins, shapeBuiltins,
                        reduceBuiltins, sortBuiltins, dotBuiltins, randomBuiltins, meshBuiltins, tleBuiltins, deviceBuiltins, pipeBuiltins, barrierBuiltins, copyBuiltins, partitionBuiltins, wgmmaBuiltins, rawBuiltins, pathBuiltins, pyMathBuiltins,
                        tileBuiltins, torchBuiltins,
                        stringBuiltins, standardBuiltins, externBuiltins})
      for (const BuiltinSpec &spec : family()) {
        all.push_back(parse(spec));
        std::vector<const Builtin *> &lines = byName[all.back().name];
        if (!lines.empty() && !lines.back()->spec.when)
          badTable(all.back().name, "a second line after one that applies to every call");
        lines.push_back(&all.back());
      }
  }
};

const Registry &registry() {
  static const Registry r;
  return r;
}

/// The receiver kind of a method call ("tensor", "dtype", ...), as method lines name it.
std::string receiverKind(const SVal &self) {
  switch (self.kind) {
  case SVal::Kind::Buffer: return "buffer";
  case SVal::Kind::Mesh: return "mesh";
  case SVal::Kind::DType: return "dtype";
  case SVal::Kind::TensorDesc: return "tensor_descriptor";
  case SVal::Kind::Int: case SVal::Kind::Bool: return "int";
  case SVal::Kind::Str: return "str";
  case SVal::Kind::Dict: return "dict";
  case SVal::Kind::Namespace: return self.s; // a record's type (pipe, pipe_writer, ...)
  default: return "tensor";
  }
}

} // namespace

const Builtin *findBuiltin(const std::string &name, const CallArgs *args) {
  const Registry &r = registry();
  auto it = r.byName.find(name);
  if (it == r.byName.end())
    return nullptr;
  for (const Builtin *f : it->second)
    if (!args || !f->spec.when || f->spec.when(*args))
      return f;
  return nullptr;
}

std::vector<std::string> builtinNames(const std::string &module) {
  std::vector<std::string> names;
  std::string prefix = module.empty() ? "" : module + ".";
  for (const Builtin &f : registry().all) {
    if (f.name.compare(0, prefix.size(), prefix) != 0)
      continue;
    std::string rest = f.name.substr(prefix.size());
    if (rest.find('.') != std::string::npos || (!names.empty() && names.back() == rest))
      continue;
    names.push_back(rest);
  }
  return names;
}

bool isModuleBuiltin(const std::string &module, const std::string &name) {
  if (name.find('.') != std::string::npos)
    return false;
  return findBuiltin(module.empty() ? name : module + "." + name) != nullptr;
}

bool isBuiltinMethod(const std::string &receiver, const std::string &name) {
  if (findBuiltin(receiver + "." + name))
    return true;
  unsigned flag = receiver == "tensor"              ? unsigned(kTensorMethod)
                  : receiver == "tensor_descriptor" ? unsigned(kDescriptorMethod)
                                                    : 0u;
  auto it = registry().byName.find("tl." + name);
  if (!flag || it == registry().byName.end())
    return false;
  for (const Builtin *f : it->second)
    if (f->spec.flags & flag)
      return true;
  return false;
}

std::vector<std::string> builtinKeywords(const std::string &name) {
  std::vector<std::string> r;
  if (const Builtin *f = findBuiltin(name))
    for (const BuiltinParam &p : f->params)
      if (p.keyword)
        r.push_back(p.name);
  return r;
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string r;
  for (size_t i = 0; i < names.size(); ++i)
    r += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return r;
}

// ---------------------------------------------------------------------------------------------
// Binding

Binder::Binder(Specializer &s, const Builtin &fn, CallArgs &args) : S(s), name(fn.fname), a(args) {
  size_t positional = 0;
  for (const BuiltinParam &p : fn.params) {
    names.push_back(p.name);
    positional += p.positional;
  }
  vals.resize(names.size());
  set.assign(names.size(), false);
  if (a.pos.size() > positional)
    S.fail(a.loc, name + "() takes at most " + std::to_string(positional) +
                      (positional == 1 ? " argument" : " arguments") + " but " + std::to_string(a.pos.size()) +
                      " were given");
  for (size_t i = 0; i < a.pos.size(); ++i) {
    vals[i] = a.pos[i];
    set[i] = true;
  }
  for (auto &[k, v] : a.kw) {
    size_t i = index(k);
    if (i == names.size() || !fn.params[i].keyword)
      S.fail(v.loc, name + "() got an unexpected keyword argument '" + k + "'");
    if (set[i])
      S.fail(v.loc, name + "() got multiple values for argument '" + k + "'");
    vals[i] = v;
    set[i] = true;
  }
  for (size_t i = 0; i < names.size(); ++i)
    if (fn.params[i].required && !set[i])
      S.fail(a.loc, name + "() missing required argument '" + names[i] + "'");
}

size_t Binder::index(const std::string &k) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == k)
      return i;
  return names.size();
}

const Arg &Binder::get(const std::string &k) const {
  static const Arg absent{};
  size_t i = index(k);
  return i < names.size() ? vals[i] : absent;
}

int64_t Binder::constInt(const std::string &k, int64_t dflt) const {
  if (!has(k))
    return dflt;
  const SVal &v = get(k).val;
  if (v.kind != SVal::Kind::Int && v.kind != SVal::Kind::Bool)
    S.fail(get(k).loc, name + "() argument '" + k + "' must be a compile-time integer, got " + v.describe());
  return v.i;
}

ir::Value *Binder::tensor(const std::string &k) const {
  const Arg &x = get(k);
  if (!x.val.isTensor() && !x.val.isNumber())
    S.fail(x.loc, name + "() argument '" + k + "' must be a tensor or a number, got " + x.val.describe());
  return S.toTensor(x.val, x.loc);
}

ir::ScalarType Binder::dtype(const std::string &k) const {
  const Arg &x = get(k);
  if (x.val.kind != SVal::Kind::DType)
    S.fail(x.loc, name + "() argument '" + k + "' must be a dtype (e.g. tl.float32), got " + x.val.describe());
  return x.val.dtype;
}

// ---------------------------------------------------------------------------------------------
// Dispatch

SVal Specializer::invokeBuiltin(const Builtin &f, CallArgs &args, const SVal *self) {
  if (!f.spec.handler)
    fail(args.loc, "'" + f.name + "' is not supported yet");
  if (f.bindsOwnArguments()) {
    Binder unbound(*this, args);
    return f.spec.handler(*this, BuiltinCall{f, args, unbound, self, args.loc, f.name, f.fname});
  }
  Binder p(*this, f, args);
  return f.spec.handler(*this, BuiltinCall{f, args, p, self, args.loc, f.name, f.fname});
}

SVal Specializer::callBuiltin(const std::string &name, CallArgs &args) {
  if (const Builtin *f = findBuiltin(name, &args))
    return invokeBuiltin(*f, args, nullptr);
  if (name.rfind("libdevice.", 0) == 0)
    fail(args.loc, name + " is not available in TLE yet");
  fail(args.loc, "'" + name + "' is not supported yet");
}

SVal Specializer::callMethod(const SVal &m, CallArgs &args) {
  const SVal &self = m.elts[0];
  if (const Builtin *f = findBuiltin(receiverKind(self) + "." + m.s, &args))
    return invokeBuiltin(*f, args, &self);
  // Other methods are the tl functions with the receiver as first argument.
  CallArgs withSelf = args;
  withSelf.pos.insert(withSelf.pos.begin(), Arg{args.loc, self});
  return callBuiltin("tl." + m.s, withSelf);
}

} // namespace tle::sema
