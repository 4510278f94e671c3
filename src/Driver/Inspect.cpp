// tle-inspect's report: a module's __tle_metadata joined with its own facts (ELF or PTX), written
// as JSON or as text.
#include "tle/Driver/Inspect.h"
#include "tle/Driver/Launcher.h"
#include "tle/Runtime/Metadata.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace tle::driver {

namespace {

using Json = nlohmann::ordered_json;
/// Bytes that are not UTF-8 (a damaged module's names) are written as U+FFFD, never thrown on.
constexpr auto kReplace = Json::error_handler_t::replace;

/// The metadata document, or null when absent or not an object.
Json metadataDoc(const InspectReport &r) {
  if (r.metadata.empty())
    return Json();
  Json doc = Json::parse(r.metadata, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() ? doc : Json();
}

template <class T> Json opt(const std::optional<T> &v) { return v ? Json(*v) : Json(); }

Json resourcesJSON(const KernelResources &k) {
  Json r;
  r["registers"] = opt(k.registers);
  r["max_registers"] = opt(k.maxRegisters);
  r["stack_frame_bytes"] = opt(k.frameBytes);
  r["min_stack_bytes"] = opt(k.minStackBytes);
  r["max_stack_bytes"] = opt(k.maxStackBytes);
  r["static_shared_bytes"] = opt(k.staticSharedBytes);
  r["code_bytes"] = opt(k.codeBytes);
  r["param_bytes"] = opt(k.paramBytes);
  r["param_count"] = k.paramCount;
  r["required_block"] = opt(k.requiredBlock);
  r["cluster"] = opt(k.cluster);
  r["explicit_cluster"] = k.explicitCluster;
  return r;
}

/// The module's facts for the kernel whose entry symbol is `symbol`, or null.
const KernelResources *factsFor(const ModuleFacts &f, const std::string &symbol) {
  for (const KernelResources &k : f.kernels)
    if (k.symbol == symbol)
      return &k;
  return nullptr;
}

/// Every kernel: the metadata's entries (each with the facts of its entry symbol), then entries
/// the metadata does not describe (facts only).
Json kernelsJSON(const InspectReport &r, const Json &doc) {
  Json out = Json::array();
  std::vector<std::string> described;
  if (doc.is_object() && doc.contains("kernels") && doc["kernels"].is_array())
    for (const Json &k : doc["kernels"]) {
      if (!k.is_object())
        continue;
      Json entry = k;
      std::string symbol = k.value("symbol", k.value("name", std::string()));
      described.push_back(symbol);
      const KernelResources *f = factsFor(r.facts, symbol);
      entry["resources"] = f ? resourcesJSON(*f) : Json();
      out.push_back(entry);
    }
  for (const KernelResources &f : r.facts.kernels) {
    if (std::find(described.begin(), described.end(), f.symbol) != described.end())
      continue;
    Json entry;
    entry["name"] = f.symbol;
    entry["resources"] = resourcesJSON(f);
    out.push_back(entry);
  }
  return out;
}

Json reportJSON(const InspectReport &r) {
  Json doc = metadataDoc(r);
  Json out;
  out["file"] = r.origin;
  out["kind"] = r.facts.ptx ? "ptx" : "cubin";
  out["target"] = doc.is_object() && doc["target"].is_string() ? doc["target"] : Json(r.facts.arch);
  out["compiler"] = doc.is_object() && doc["compiler"].is_string() ? doc["compiler"] : Json();
  // null for a module without one (no metadata, or a tlec that did not record it).
  out["source_hash"] = doc.is_object() && doc["source_hash"].is_string() ? doc["source_hash"] : Json();
  // Keys the document holds beyond the kernels and those above, as they are.
  if (doc.is_object())
    for (auto it = doc.begin(); it != doc.end(); ++it)
      if (it.key() != "kernels" && it.key() != "target" && it.key() != "compiler" && it.key() != "source_hash")
        out["metadata_" + it.key()] = it.value();
  out["metadata"] = doc.is_object();
  if (!r.metadataError.empty())
    out["metadata_error"] = r.metadataError;
  if (r.facts.ptx) {
    out["ptx"] = {{"version", r.facts.ptxVersion}, {"target", r.facts.arch}};
  } else {
    out["elf"] = {{"arch", r.facts.arch},
                  {"abi_version", r.facts.elfAbiVersion},
                  {"assembler", r.facts.assembler},
                  {"assembler_options", r.facts.assemblerOptions}};
  }
  out["kernels"] = kernelsJSON(r, doc);
  return out;
}

// --- Text.

std::string dims(const Json &d) {
  if (!d.is_array())
    return "?";
  std::string s;
  for (const Json &v : d)
    s += (s.empty() ? "" : " x ") + (v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, kReplace));
  return s;
}

/// Grid expressions as "(cdiv(n, 1024), 1, 1)".
std::string gridText(const Json &g) {
  std::string s;
  if (g.is_array())
    for (const Json &e : g)
      s += (s.empty() ? "" : ", ") + (e.is_string() ? e.get<std::string>() : e.dump(-1, ' ', false, kReplace));
  return "(" + s + ")";
}

std::string num(const Json &v, const std::string &unknown) { return v.is_null() ? unknown : v.dump(-1, ' ', false, kReplace); }

std::string paramsText(const Json &k) {
  std::string s;
  if (!k.contains("params") || !k["params"].is_array())
    return "";
  for (const Json &p : k["params"]) {
    if (!p.is_object())
      continue;
    std::string type = p.value("type", std::string("?"));
    int64_t div = p.contains("divisibility") && p["divisibility"].is_number_integer() ? p["divisibility"].get<int64_t>() : 1;
    s += (s.empty() ? "" : ", ") + type + (div > 1 ? ":" + std::to_string(div) : "") + " " +
         p.value("name", std::string("?"));
  }
  return s;
}

std::string constexprsText(const Json &k) {
  std::string s;
  if (k.contains("constexprs") && k["constexprs"].is_object())
    for (auto it = k["constexprs"].begin(); it != k["constexprs"].end(); ++it)
      s += (s.empty() ? "" : ", ") + it.key() + "=" + (it.value().is_string() ? it.value().get<std::string>() : it.value().dump(-1, ' ', false, kReplace));
  return s;
}

std::string tensorMapsText(const Json &k) {
  std::string s;
  if (!k.contains("tensor_maps") || !k["tensor_maps"].is_array())
    return s;
  size_t i = 0;
  for (const Json &t : k["tensor_maps"]) {
    if (!t.is_object())
      continue;
    s += "    [" + std::to_string(i++) + "] " + t.value("dtype", std::string("?")) + " at " +
         t.value("base", std::string("?")) + ": shape " + (t.contains("shape") ? t["shape"].dump(-1, ' ', false, kReplace) : "?") +
         ", strides " + (t.contains("strides") ? t["strides"].dump(-1, ' ', false, kReplace) : "?") + ", box " +
         (t.contains("box") ? t["box"].dump(-1, ' ', false, kReplace) : "?") + ", swizzle " + (t.contains("swizzle") ? t["swizzle"].dump(-1, ' ', false, kReplace) : "?") +
         "\n";
  }
  return s;
}

/// The lines of one kernel.
std::string kernelText(const Json &k, bool ptx) {
  const Json &res = k.contains("resources") ? k["resources"] : Json();
  auto r = [&](const char *key) { return res.is_object() && res.contains(key) ? res[key] : Json(); };
  std::string s = "kernel " + k.value("name", std::string("?"));
  if (k.contains("symbol") && k["symbol"].is_string())
    s += " (entry " + k["symbol"].get<std::string>() + ")";
  s += "\n";
  bool meta = k.contains("params");
  if (meta) {
    s += "  params:      " + paramsText(k) + "\n";
    std::string ce = constexprsText(k);
    s += "  constexprs:  " + (ce.empty() ? "none" : ce) + "\n";
    s += "  grid:        " + (k.contains("grid") ? gridText(k["grid"]) : "not recorded (tlec -g)") + "\n";
    s += "  num_warps:   " + num(k.value("num_warps", Json()), "?") + " (block " + dims(k.value("block", Json())) + ")\n";
    s += "  num_stages:  " + num(k.value("num_stages", Json()), "not recorded (tlec -ns)") + "\n";
    s += "  shared:      " + num(k.value("shared_bytes", Json()), "?") + " bytes dynamic";
    s += r("static_shared_bytes").is_null() ? "\n" : ", " + r("static_shared_bytes").dump(-1, ' ', false, kReplace) + " bytes static (with what the assembler reserves)\n";
    s += "  cluster:     " + dims(k.value("cluster", Json())) +
         (k.value("cooperative", false) ? ", cooperative launch\n" : ", not cooperative\n");
  } else {
    s += "  (no TLE metadata for this entry)\n";
    if (!r("static_shared_bytes").is_null())
      s += "  shared:      " + r("static_shared_bytes").dump(-1, ' ', false, kReplace) + " bytes static\n";
    if (!r("cluster").is_null())
      s += "  cluster:     " + dims(r("cluster")) + "\n";
  }
  if (ptx) {
    s += "  registers:   decided by ptxas (a PTX module)";
    s += r("max_registers").is_null() ? "\n" : ", at most " + r("max_registers").dump(-1, ' ', false, kReplace) + " (.maxnreg)\n";
  } else {
    s += "  registers:   " + num(r("registers"), "?") + " per thread";
    s += r("max_registers").is_null() ? "\n" : " (cap " + r("max_registers").dump(-1, ' ', false, kReplace) + ")\n";
    s += "  spills:      stack frame " + num(r("stack_frame_bytes"), "?") +
         " bytes per thread (spilled registers and local arrays; 0: no spills)\n";
  }
  if (!r("required_block").is_null())
    s += "  block:       " + dims(r("required_block")) + " threads required\n";
  if (!r("param_bytes").is_null() || r("param_count").is_number())
    s += "  abi:         " + num(r("param_count"), "?") + " parameters" +
         (r("param_bytes").is_null() ? "" : ", " + r("param_bytes").dump(-1, ' ', false, kReplace) + " bytes") +
         (r("code_bytes").is_null() ? "" : "; code " + r("code_bytes").dump(-1, ' ', false, kReplace) + " bytes") + "\n";
  std::string maps = tensorMapsText(k);
  if (!maps.empty())
    s += "  tensor maps (built by the launcher, passed after the params):\n" + maps;
  return s;
}

} // namespace

bool inspectModule(const std::string &bytes, const std::string &origin, InspectReport &report, std::string &error) {
  report = InspectReport();
  report.origin = origin;
  if (!readModuleFacts(bytes, report.facts, error))
    return false;
  bool isPtx = false;
  std::string json;
  if (!readImageMetadata(bytes, json, isPtx, report.metadataError))
    return true;
  Json doc = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || doc.value("format", Json()) != metadata::kFormat)
    report.metadataError = "__tle_metadata is not a tle-module JSON document";
  else
    report.metadata = json;
  return true;
}

std::string inspectJSON(const InspectReport &report) { return reportJSON(report).dump(2, ' ', false, kReplace) + "\n"; }

std::string inspectText(const InspectReport &report) {
  Json j = reportJSON(report);
  std::string s = report.origin + ": " + j["kind"].get<std::string>() + " for " +
                  (j["target"].is_string() ? j["target"].get<std::string>() : "?");
  if (j["compiler"].is_string())
    s += ", compiled by " + j["compiler"].get<std::string>();
  s += "\n";
  if (!report.facts.ptx) {
    s += "  elf:         " + report.facts.arch + ", ELF ABI version " + std::to_string(report.facts.elfAbiVersion) + "\n";
    if (!report.facts.assembler.empty())
      s += "  assembler:   " + report.facts.assembler +
           (report.facts.assemblerOptions.empty() ? "" : " (" + report.facts.assemblerOptions + ")") + "\n";
  } else {
    s += "  ptx:         version " + report.facts.ptxVersion + ", .target " + report.facts.arch + "\n";
  }
  if (j["metadata"].get<bool>())
    s += "  source hash: " + (j["source_hash"].is_string() ? j["source_hash"].get<std::string>() : "-") + "\n";
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key().rfind("metadata_", 0) == 0 && it.key() != "metadata_error" && it.key() != "metadata_format")
      s += "  metadata " + it.key().substr(9) + ": " + (it.value().is_string() ? it.value().get<std::string>() : it.value().dump(-1, ' ', false, kReplace)) + "\n";
  if (!report.metadataError.empty())
    s += "  no TLE metadata: " + report.metadataError + "\n";
  for (const Json &k : j["kernels"])
    s += kernelText(k, report.facts.ptx);
  if (j["kernels"].empty())
    s += "  no kernel entries\n";
  return s;
}

} // namespace tle::driver
