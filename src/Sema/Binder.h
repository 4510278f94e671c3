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
  /// A binder that binds nothing (for builtins that read their arguments themselves).
  Binder(Specializer &s, CallArgs &args) : S(s), name(), a(args) {}

  /// Whether `k` was given and is not None (false for a name the signature does not have: a
  /// helper shared by several signatures may ask for any of their parameters).
  bool has(const std::string &k) const { return given(k) && vals[index(k)].val.kind != SVal::Kind::None; }
  /// The argument bound to `k` (None when absent).
  const Arg &get(const std::string &k) const;
  /// Where `k` was given, else the call.
  SourceLoc loc(const std::string &k) const { return given(k) ? vals[index(k)].loc : a.loc; }

  /// A compile-time integer (or bool) argument; `dflt` when absent.
  int64_t constInt(const std::string &k, int64_t dflt) const;
  /// A tensor or a number (made a tensor with Triton's literal typing).
  ir::Value *tensor(const std::string &k) const;
  /// A dtype argument.
  ir::ScalarType dtype(const std::string &k) const;

private:
  size_t index(const std::string &k) const;
  bool given(const std::string &k) const { return index(k) < names.size() && set[index(k)]; }
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

/// Whether the keyword `k`, which must be a compile-time bool, is true (false when absent);
/// errors name `fname`.
bool constBool(Specializer &S, const Binder &p, const std::string &fname, const std::string &k);

/// Whether the keyword `k` is True (False when absent): FlagTree's TLE flags take a compile-time
/// bool and nothing else (a string or a number is an error naming `fname`).
bool strictBool(Specializer &S, const Binder &p, const std::string &fname, const std::string &k);

/// Whether `x` is a power of two (> 0).
inline bool isPow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

} // namespace tle::sema
