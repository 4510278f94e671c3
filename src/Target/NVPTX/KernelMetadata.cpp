// A kernel's launch metadata: gathered from the gpu-stage function and the launch facts, and
// written as the `__tle_metadata` JSON document.
#include "tle/Target/NVPTX/KernelMetadata.h"
#include "tle/Runtime/Metadata.h"

#include <nlohmann/json.hpp>

namespace tle::nvptx {

namespace {

using Json = nlohmann::ordered_json;

/// A descriptor number with parameter names for the parameter indices of `s`.
TensorMapExtent extentOf(const ir::Function &f, const ir::TensorMapParam::Source &s) {
  TensorMapExtent e;
  for (int p : s.params)
    e.params.push_back(f.params[p].name);
  e.value = s.value;
  e.bits = s.bits;
  return e;
}

/// A constant, a parameter by name, or a product as an array of both, wrapped with its width
/// when it is an i32 product (docs/runtime.md, "tensor_maps").
Json extentJSON(const TensorMapExtent &e) {
  if (e.params.empty())
    return Json(e.value);
  if (e.params.size() == 1 && e.value == 1)
    return Json(e.params[0]);
  Json product = Json::array();
  for (const std::string &p : e.params)
    product.push_back(p);
  if (e.value != 1)
    product.push_back(e.value);
  if (e.bits == 32)
    return Json{{"product", product}, {"bits", 32}};
  return product;
}

Json tensorMapsJSON(const std::vector<TensorMapSpec> &maps) {
  Json out = Json::array();
  for (const TensorMapSpec &t : maps) {
    Json shape = Json::array(), strides = Json::array();
    for (size_t d = 0; d < t.shape.size(); ++d) {
      shape.push_back(extentJSON(t.shape[d]));
      strides.push_back(extentJSON(t.strides[d]));
    }
    out.push_back({{"dtype", t.dtype}, {"base", t.base}, {"shape", shape}, {"strides", strides}, {"box", t.box},
                   {"swizzle", t.swizzle}});
  }
  return out;
}

/// Numbers and booleans as JSON values; anything else (a dtype name) as its text.
Json constexprsJSON(const std::vector<std::pair<std::string, std::string>> &constexprs) {
  Json out = Json::object();
  for (auto &[n, v] : constexprs) {
    Json parsed = Json::parse(v, nullptr, /*allow_exceptions=*/false);
    if (v == "True" || v == "False")
      parsed = v == "True";
    out[n] = parsed.is_number() || parsed.is_boolean() ? parsed : Json(v);
  }
  return out;
}

/// The optional launch keys, after the others (docs/aot.md).
void addLaunchFacts(Json &k, const LaunchFacts &launch) {
  if (launch.numStages)
    k["num_stages"] = *launch.numStages;
  if (!launch.grid.empty())
    k["grid"] = launch.grid;
  if (launch.equalToOne.empty())
    return;
  Json ones = Json::array();
  for (const LaunchFacts::EqualToOne &e : launch.equalToOne)
    ones.push_back({{"name", e.name}, {"type", e.type}, {"index", e.index}});
  k["equal_to_1"] = ones;
}

} // namespace

std::string ptxSymbol(const std::string &name) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : name) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
      out += char(c);
      continue;
    }
    out += '$';
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

KernelMetadata describeKernel(const ir::Function &f, const std::string &arch, const LaunchFacts &launch) {
  KernelMetadata k;
  k.target = arch;
  k.compiler = std::string("tlec ") + TLE_VERSION_STRING;
  k.sourceHash = launch.sourceHash;
  k.name = f.name;
  k.symbol = ptxSymbol(f.name);
  for (const ir::Param &p : f.params)
    k.params.push_back({p.name, p.type.str(), p.divisibility});
  k.numWarps = f.numWarps;
  k.producerWarps = f.producerWarps;
  k.sharedBytes = f.sharedBytes;
  k.cluster = f.cluster;
  // A grid barrier needs every CTA resident at once: a cooperative launch.
  ir::walk(const_cast<ir::Block &>(f.body), [&](const ir::Op &op) {
    k.cooperative |= op.kind == ir::OpKind::GridBarrier || op.kind == ir::OpKind::DeviceBarrier;
  });
  k.maxRegisters = f.maxRegisters;
  for (const ir::TensorMapParam &t : f.tensorMaps) {
    TensorMapSpec s;
    s.dtype = ir::name(t.dtype);
    s.base = f.params[t.base].name;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      s.shape.push_back(extentOf(f, t.shape[d]));
      s.strides.push_back(extentOf(f, t.strides[d]));
    }
    s.box = t.box;
    s.swizzle = t.swizzle;
    k.tensorMaps.push_back(std::move(s));
  }
  k.constexprs = f.constexprs;
  k.launch = launch;
  return k;
}

std::string toJSON(const KernelMetadata &k) {
  Json kernel;
  kernel["name"] = k.name;
  if (!k.symbol.empty() && k.symbol != k.name)
    kernel["symbol"] = k.symbol;
  // A warp-specialised kernel launches its producer warpgroup too (as Triton's metadata counts
  // all warps after warp specialisation).
  kernel["num_warps"] = k.launchWarps();
  kernel["block"] = {32 * k.launchWarps(), 1, 1};
  kernel["shared_bytes"] = k.sharedBytes;
  kernel["cluster"] = {k.cluster[0], k.cluster[1], k.cluster[2]};
  kernel["cooperative"] = k.cooperative;
  Json params = Json::array();
  for (const KernelMetadata::Param &p : k.params)
    params.push_back({{"name", p.name}, {"type", p.type}, {"divisibility", p.divisibility}});
  kernel["params"] = params;
  // Built by the launcher from the arguments and passed after the params (docs/runtime.md).
  if (!k.tensorMaps.empty())
    kernel["tensor_maps"] = tensorMapsJSON(k.tensorMaps);
  kernel["constexprs"] = constexprsJSON(k.constexprs);
  addLaunchFacts(kernel, k.launch);
  Json doc;
  doc["format"] = metadata::kFormat;
  doc["version"] = metadata::kVersion;
  doc["target"] = k.target;
  doc["compiler"] = k.compiler;
  if (!k.sourceHash.empty())
    doc["source_hash"] = k.sourceHash;
  doc["kernels"] = Json::array({kernel});
  return doc.dump();
}

} // namespace tle::nvptx
