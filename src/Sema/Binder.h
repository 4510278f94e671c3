// Internal to Sema: binds a builtin call's arguments to its parameter list, Python-style, and
// reads bound arguments as the kinds of value builtins take.
#pragma once

#include "Registry.h"
#include "Sema.h"

#include <string>
#include <vector>

namespace tle::sema {

/// Binds call arguments to a builtin's parameters (positional, then keyword), Python-style.
/// Errors, located at the call or at the offending argument: "load() takes at most 8 arguments
/// but 9 were given", "load() got an unexpected keyword argument 'x'", "load() got multiple
/// values for argument 'mask'", "load() missing required argument 'pointer'".
class Binder {
public:
  /// Binds `args` to `fn`'s parameters; `fn.fname` names it in messages.
  Binder(Specializer &s, const Builtin &fn, CallArgs &args);
  /// Binds `args` to `params` (the first `required` of them required); `fname` names the
  /// function in messages. (For the builtins not yet in the registry.)
  Binder(Specializer &s, const std::string &fname, CallArgs &args, std::vector<std::string> params, size_t required);
  /// A binder that binds nothing (for builtins that read their arguments themselves).
  Binder(Specializer &s, CallArgs &args) : S(s), name(), a(args) {}

  bool has(const std::string &k) const { return set[index(k)] && vals[index(k)].val.kind != SVal::Kind::None; }
  const Arg &get(const std::string &k) const { return vals[index(k)]; }
  SourceLoc loc(const std::string &k) const { return set[index(k)] ? vals[index(k)].loc : a.loc; }

  /// A compile-time integer (or bool) argument; `dflt` when absent.
  int64_t constInt(const std::string &k, int64_t dflt) const;
  /// A tensor or a number (made a tensor with Triton's literal typing).
  ir::Value *tensor(const std::string &k) const;
  /// A dtype argument.
  ir::ScalarType dtype(const std::string &k) const;

private:
  size_t index(const std::string &k) const;
  Specializer &S;
  std::string name;
  CallArgs &a;
  std::vector<std::string> names;
  std::vector<Arg> vals;
  std::vector<bool> set;
};

/// A shape argument (an int or a tuple of compile-time ints, each a power of two, within the
/// tile limit); errors name `fname`.
std::vector<int64_t> shapeArg(Specializer &S, const Arg &a, const std::string &fname);

/// Whether `x` is a power of two (> 0).
inline bool isPow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

} // namespace tle::sema
