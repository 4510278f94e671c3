// Internal to Sema: binds a builtin call's arguments to its parameter list, Python-style.
#pragma once

#include "Sema.h"

#include <string>
#include <vector>

namespace tle::sema {

/// Binds call arguments to a parameter list (positional, then keyword), Python-style.
class Binder {
public:
  Binder(Specializer &s, const std::string &fname, CallArgs &args, std::vector<std::string> params,
         size_t required)
      : S(s), name(fname), a(args), names(std::move(params)), vals(names.size()), set(names.size(), false) {
    if (a.pos.size() > names.size())
      S.fail(a.loc, name + "() takes at most " + std::to_string(names.size()) + " arguments but " +
                        std::to_string(a.pos.size()) + " were given");
    for (size_t i = 0; i < a.pos.size(); ++i) {
      vals[i] = a.pos[i];
      set[i] = true;
    }
    for (auto &[k, v] : a.kw) {
      size_t i = index(k);
      if (i == names.size())
        S.fail(v.loc, name + "() got an unexpected keyword argument '" + k + "'");
      if (set[i])
        S.fail(v.loc, name + "() got multiple values for argument '" + k + "'");
      vals[i] = v;
      set[i] = true;
    }
    for (size_t i = 0; i < required; ++i)
      if (!set[i])
        S.fail(a.loc, name + "() missing required argument '" + names[i] + "'");
  }
  bool has(const std::string &k) const { return set[index(k)] && vals[index(k)].val.kind != SVal::Kind::None; }
  const Arg &get(const std::string &k) const { return vals[index(k)]; }
  SourceLoc loc(const std::string &k) const { return set[index(k)] ? vals[index(k)].loc : a.loc; }

  int64_t constInt(const std::string &k, int64_t dflt) const {
    if (!has(k))
      return dflt;
    const SVal &v = get(k).val;
    if (v.kind != SVal::Kind::Int && v.kind != SVal::Kind::Bool)
      S.fail(get(k).loc, name + "() argument '" + k + "' must be a compile-time integer, got " + v.describe());
    return v.i;
  }
  ir::Value *tensor(const std::string &k) const {
    const Arg &x = get(k);
    if (!x.val.isTensor() && !x.val.isNumber())
      S.fail(x.loc, name + "() argument '" + k + "' must be a tensor or a number, got " + x.val.describe());
    return S.toTensor(x.val, x.loc);
  }
  ir::ScalarType dtype(const std::string &k) const {
    const Arg &x = get(k);
    if (x.val.kind != SVal::Kind::DType)
      S.fail(x.loc, name + "() argument '" + k + "' must be a dtype (e.g. tl.float32), got " + x.val.describe());
    return x.val.dtype;
  }

private:
  size_t index(const std::string &k) const {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == k)
        return i;
    return names.size();
  }
  Specializer &S;
  std::string name;
  CallArgs &a;
  std::vector<std::string> names;
  std::vector<Arg> vals;
  std::vector<bool> set;
};

} // namespace tle::sema
