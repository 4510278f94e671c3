// The tune cache file, shape buckets and dispatch tables of tle-bench --tune (see TuneCache.h).
#include "TuneCache.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

namespace tle::bench {

using ojson = nlohmann::ordered_json;

std::string ShapeBucket::str() const {
  std::string s;
  for (const auto &[n, v] : dims)
    s += fmt::format("{}{}={}", s.empty() ? "" : ",", n, v);
  return s;
}

ShapeBucket bucketOf(const std::vector<std::string> &names, const Env &env) {
  ShapeBucket b;
  for (const std::string &n : names) {
    auto it = env.find(n);
    if (it == env.end())
      throw BenchError(fmt::format("tune \"bucket\": the case has no variable '{}'", n));
    int64_t v = it->second.asInt("bucket dimension " + n);
    if (v < 1)
      throw BenchError(fmt::format("tune \"bucket\": '{}' = {} is not positive", n, v));
    int64_t p = 1;
    while (p < v)
      p *= 2;
    b.dims.emplace_back(n, p);
  }
  return b;
}

std::string DeviceKey::str() const { return fmt::format("{}|{}|{}", name, arch, driver); }

std::string fnv1aHex(const std::string &text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::string kernelKey(const std::string &sourceText, const std::string &entry, const std::string &signature,
                      const std::vector<std::pair<std::string, std::string>> &defines, const std::string &compiler) {
  std::string s = sourceText;
  s += '\0' + entry + '\0' + signature + '\0' + compiler;
  for (const auto &[n, v] : defines)
    s += '\0' + n + "=" + v;
  return fnv1aHex(s);
}

namespace {
ojson pairsJson(const std::vector<std::pair<std::string, std::string>> &ps) {
  ojson o = ojson::object();
  for (const auto &[n, v] : ps)
    o[n] = v;
  return o;
}
} // namespace

ojson CacheEntry::toJson() const {
  ojson b = ojson::object();
  for (const auto &[n, v] : bucket.dims)
    b[n] = v;
  return {{"kernel_key", kernelKey},
          {"kernel", kernel},
          {"entry", entry},
          {"source", source},
          {"signature", signature},
          {"defines", pairsJson(defines)},
          {"bucket", b},
          {"device", {{"name", device.name}, {"arch", device.arch}, {"driver", device.driver}}},
          {"config", best.toJson()},
          {"median_ms", medianMs},
          {"case", caseName},
          {"tuned_at", tunedAt},
          {"candidates", candidates},
          {"timed", timed}};
}

CacheEntry CacheEntry::fromJson(const ojson &j) {
  CacheEntry e;
  try {
    e.kernelKey = j.at("kernel_key").get<std::string>();
    e.kernel = j.at("kernel").get<std::string>();
    e.entry = j.value("entry", "");
    e.source = j.value("source", "");
    e.signature = j.value("signature", "");
    if (j.contains("defines"))
      for (const auto &[n, v] : j.at("defines").items())
        e.defines.emplace_back(n, v.get<std::string>());
    for (const auto &[n, v] : j.at("bucket").items())
      e.bucket.dims.emplace_back(n, v.get<int64_t>());
    const ojson &d = j.at("device");
    e.device = {d.at("name").get<std::string>(), d.at("arch").get<std::string>(), d.at("driver").get<int>()};
    e.best = Candidate::fromJson(j.at("config"));
    e.medianMs = j.value("median_ms", 0.0);
    e.caseName = j.value("case", "");
    e.tunedAt = j.value("tuned_at", "");
    e.candidates = j.value("candidates", 0);
    e.timed = j.value("timed", 0);
  } catch (const nlohmann::json::exception &ex) {
    throw BenchError(std::string("malformed tune cache entry: ") + ex.what());
  }
  return e;
}

TuneCache TuneCache::load(const std::string &path) {
  TuneCache c;
  std::ifstream f(path);
  if (!f)
    return c;
  ojson j;
  try {
    j = ojson::parse(f);
  } catch (const std::exception &e) {
    throw BenchError(fmt::format("tune cache {}: invalid JSON: {} (delete it to start afresh)", path, e.what()));
  }
  if (!j.is_object() || j.value("format", "") != "tle-tune-cache" || !j.contains("entries") ||
      !j["entries"].is_array())
    throw BenchError(fmt::format("tune cache {}: not a tle-tune-cache file", path));
  if (j.value("version", 0) != 1)
    throw BenchError(fmt::format("tune cache {}: unsupported version {}", path, j.value("version", 0)));
  for (const ojson &e : j["entries"])
    c.entries_.push_back(CacheEntry::fromJson(e));
  return c;
}

std::optional<CacheEntry> TuneCache::lookup(const std::string &key, const ShapeBucket &bucket,
                                            const DeviceKey &device) const {
  for (const CacheEntry &e : entries_)
    if (e.kernelKey == key && e.bucket == bucket && e.device.str() == device.str())
      return e;
  return std::nullopt;
}

void TuneCache::store(const CacheEntry &n) {
  for (CacheEntry &e : entries_)
    if (e.kernelKey == n.kernelKey && e.bucket == n.bucket && e.device.str() == n.device.str()) {
      e = n;
      return;
    }
  entries_.push_back(n);
}

namespace {
void makeDirs(const std::string &dir) {
  if (dir.empty())
    return;
  std::string cur;
  size_t at = 0;
  while (at != std::string::npos) {
    at = dir.find('/', at + 1);
    cur = dir.substr(0, at);
    if (!cur.empty())
      mkdir(cur.c_str(), 0755);
  }
}
} // namespace

void TuneCache::save(const std::string &path) const {
  size_t slash = path.rfind('/');
  if (slash != std::string::npos)
    makeDirs(path.substr(0, slash));
  ojson j = {{"format", "tle-tune-cache"}, {"version", 1}, {"entries", ojson::array()}};
  for (const CacheEntry &e : entries_)
    j["entries"].push_back(e.toJson());
  std::string tmp = fmt::format("{}.tmp{}", path, getpid());
  {
    std::ofstream f(tmp);
    f << j.dump(2) << "\n";
    if (!f)
      throw BenchError("cannot write the tune cache " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw BenchError("cannot rename " + tmp + " to " + path);
}

std::string defaultCachePath(const std::string &flag) {
  if (!flag.empty())
    return flag;
  if (const char *e = std::getenv("TLE_TUNE_CACHE"); e && *e)
    return e;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/tle/tune-cache.json";
  if (const char *h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/tle/tune-cache.json";
  return ".tle-tune-cache.json";
}

// ------------------------------------------------------------------------------------------------
// Dispatch tables
// ------------------------------------------------------------------------------------------------

ojson dispatchTable(const std::vector<CacheEntry> &entries) {
  if (entries.empty())
    throw BenchError("dispatch table: no tuned entries");
  const CacheEntry &first = entries.front();
  for (const CacheEntry &e : entries)
    if (e.kernelKey != first.kernelKey || e.device.str() != first.device.str())
      throw BenchError("dispatch table: entries of different kernels or devices");
  ojson dims = ojson::array();
  for (const auto &[n, v] : first.bucket.dims)
    dims.push_back(n);
  ojson specs = ojson::array(), buckets = ojson::array();
  std::map<std::string, int> specOf;
  std::string link = fmt::format("tle-link -n {}_tuned", first.kernel);
  for (const CacheEntry &e : entries) {
    std::string id = e.best.id();
    auto it = specOf.find(id);
    if (it == specOf.end()) {
      int i = int(specs.size());
      it = specOf.emplace(id, i).first;
      std::string module = fmt::format("{}.spec{}.{}.cubin", first.kernel, i, first.device.arch);
      std::string cmd = fmt::format("tlec {} -n {} -s \"{}\"", first.source, first.entry, first.signature);
      for (const auto &[n, v] : first.defines)
        cmd += fmt::format(" -D {}={}", n, v);
      for (const auto &[n, v] : e.best.constexprs)
        cmd += fmt::format(" -D {}={}", n, v);
      cmd += fmt::format(" -w {} -ns {} --arch {} -o {}", e.best.numWarps, e.best.numStages, first.device.arch, module);
      specs.push_back({{"spec", i}, {"config", e.best.toJson()}, {"module", module}, {"tlec", cmd}});
      link += " " + module;
    }
    ojson b = ojson::object();
    for (const auto &[n, v] : e.bucket.dims)
      b[n] = v;
    buckets.push_back({{"bucket", b}, {"spec", it->second}, {"median_ms", e.medianMs}, {"case", e.caseName}});
  }
  link += fmt::format(" -o {0}_tuned.h --source {0}_tuned.cpp", first.kernel);
  return {{"format", "tle-dispatch"},
          {"version", 1},
          {"kernel", first.kernel},
          {"entry", first.entry},
          {"source", first.source},
          {"signature", first.signature},
          {"kernel_key", first.kernelKey},
          {"device", {{"name", first.device.name}, {"arch", first.device.arch}, {"driver", first.device.driver}}},
          {"dims", dims},
          {"specs", specs},
          {"buckets", buckets},
          {"tle_link", link}};
}

std::string dispatchHeader(const ojson &table, const std::string &name) {
  std::vector<std::string> dims;
  for (const ojson &d : table.at("dims"))
    dims.push_back(d.get<std::string>());
  std::string params, out;
  for (size_t i = 0; i < dims.size(); ++i)
    params += fmt::format("{}int64_t {}", i ? ", " : "", dims[i]);
  out += fmt::format("// Shape-bucket dispatch for {} generated by tle-bench --tune (device {}, {}).\n",
                     table.at("kernel").get<std::string>(), table.at("device").at("name").get<std::string>(),
                     table.at("device").at("arch").get<std::string>());
  out += "// Specs are the launchers `" + name + "_spec<i>` that `tle-link` writes from the modules listed in\n"
         "// the dispatch JSON (\"tle_link\").\n#pragma once\n\n#include <cstdint>\n\n";
  out += fmt::format("/// The spec index for a launch over ({}): the tuned bucket that holds these dimensions\n"
                     "/// (each rounded up to a power of two), else the nearest tuned bucket.\n",
                     fmt::join(dims, ", "));
  out += fmt::format("inline int {}_dispatch_spec({}) {{\n", name, params);
  out += "  auto log2up = [](int64_t v) { int l = 0; while ((int64_t(1) << l) < v && l < 62) ++l; return l; };\n";
  out += fmt::format("  static const int kBuckets[][{}] = {{", dims.size() + 1);
  bool firstRow = true;
  for (const ojson &b : table.at("buckets")) {
    out += firstRow ? "\n      {" : ",\n      {";
    firstRow = false;
    for (const std::string &d : dims) {
      int64_t v = b.at("bucket").at(d).get<int64_t>();
      int l = 0;
      while ((int64_t(1) << l) < v)
        ++l;
      out += fmt::format("{}, ", l);
    }
    out += fmt::format("{}}}", b.at("spec").get<int>());
  }
  out += "};\n";
  out += fmt::format("  const int want[{}] = {{", std::max<size_t>(dims.size(), 1));
  for (size_t i = 0; i < dims.size(); ++i)
    out += fmt::format("{}log2up({})", i ? ", " : "", dims[i]);
  if (dims.empty())
    out += "0";
  out += "};\n";
  out += "  int best = kBuckets[0][" + std::to_string(dims.size()) + "], bestDist = 1 << 30;\n";
  out += "  for (const auto &b : kBuckets) {\n    int dist = 0;\n";
  out += fmt::format("    for (int i = 0; i < {}; ++i)\n      dist += b[i] > want[i] ? b[i] - want[i] : want[i] - b[i];\n",
                     dims.size());
  out += fmt::format("    if (dist < bestDist) {{\n      bestDist = dist;\n      best = b[{}];\n    }}\n  }}\n", dims.size());
  out += "  return best;\n}\n";
  return out;
}

} // namespace tle::bench
