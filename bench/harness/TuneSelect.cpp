// The tune spec's model expressions to a Workload, and replayTune() over a recorded exhaustive tuning (see TuneSelect.h).
#include "TuneSelect.h"

#include "TuneSpace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

namespace tle::bench {

namespace {

double evalModel(const ojson &model, const char *key, const Env &env, double dflt) {
  if (!model.is_object() || !model.contains(key))
    return dflt;
  const ojson &v = model[key];
  if (v.is_number())
    return v.get<double>();
  if (!v.is_string())
    throw BenchError(fmt::format("tune \"model\".{} must be a number or an expression", key));
  return evalExpr(v.get<std::string>(), env).asDouble();
}

int64_t envInt(const Env &env, const std::string &name) {
  auto it = env.find(name);
  if (it == env.end())
    throw BenchError(fmt::format("tune \"model\": '{}' is not a constexpr or variable of the case", name));
  return it->second.isFloat ? int64_t(it->second.f) : it->second.i;
}

} // namespace

Workload modelWorkload(const ojson &model, const Env &env, int64_t ctas, int numWarps, int numStages, bool hasDot,
                       double caseFlops, double caseBytes) {
  Workload w;
  w.ctas = ctas;
  w.flops = evalModel(model, "flops", env, caseFlops);
  w.tensorCores = model.is_object() ? model.value("tensor_cores", hasDot) : hasDot;
  w.dramBytes = evalModel(model, "dram_bytes", env, caseBytes);
  w.l2Bytes = evalModel(model, "l2_bytes", env, 0);
  w.extraEfficiency = evalModel(model, "efficiency", env, 1.0);
  w.inflightBytes = evalModel(model, "inflight_bytes", env, 0.0);
  w.items = int64_t(std::llround(evalModel(model, "items", env, 0.0)));
  if (w.items < 0)
    throw BenchError("tune \"model\".items must be at least 0");
  w.numWarps = numWarps;
  w.numStages = numStages;
  if (model.is_object() && model.contains("tile"))
    for (const auto &[cx, dimExpr] : model["tile"].items()) {
      double dim = evalExpr(dimExpr.get<std::string>(), env).asDouble();
      double blk = double(envInt(env, cx));
      w.tileEfficiency *= dim / (std::ceil(dim / blk) * blk);
    }
  if (model.is_object() && model.contains("mma_tile")) {
    const ojson &t = model["mma_tile"];
    w.tileM = envInt(env, t.at(0).get<std::string>());
    w.tileN = envInt(env, t.at(1).get<std::string>());
    if (t.size() > 2)
      w.tileK = envInt(env, t.at(2).get<std::string>());
  }
  return w;
}

ReplayResult replayTune(const Suite &spec, const ojson &run, const std::string &caseName, const SelectionOptions &sel,
                        const ModelOptions &modelOpt) {
  if (!spec.tune.is_object())
    throw BenchError(spec.path + ": no \"tune\" object");
  if (!run.contains("cases") || !run["cases"].is_array() || run["cases"].empty())
    throw BenchError("the recorded run has no \"cases\"");
  const ojson *rcase = nullptr;
  for (const ojson &c : run["cases"])
    if (caseName.empty() || c.value("case", "") == caseName) {
      rcase = &c;
      break;
    }
  if (!rcase)
    throw BenchError("the recorded run has no case '" + caseName + "'");
  if (!rcase->contains("candidates"))
    throw BenchError("case '" + rcase->value("case", "") + "' of the recorded run has no candidates");
  const CaseSpec *cspec = nullptr;
  for (const CaseSpec &c : spec.cases)
    if (c.name == rcase->value("case", ""))
      cspec = &c;
  if (!cspec)
    throw BenchError(fmt::format("{}: no case '{}'", spec.path, rcase->value("case", "")));
  const ojson dev = run.value("device", ojson::object());
  DeviceModel dm = DeviceModel::forArch(dev.value("arch", std::string("sm_90a")), dev.value("sm_count", 0));
  if (dev.contains("smem_per_block_optin"))
    dm.smemPerBlockOptin = dev["smem_per_block_optin"].get<int64_t>();

  const ojson &tune = spec.tune;
  const KernelSpec &kspec = spec.kernel(tune.value("kernel", spec.kernels.size() == 1 ? spec.kernels[0].name : ""));
  std::ifstream src(spec.root + "/" + kspec.source, std::ios::binary);
  if (!src)
    throw BenchError("cannot read " + spec.root + "/" + kspec.source);
  const std::string source((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  const bool hasDot = kernelBody(source, kspec.entry).find("dot(") != std::string::npos;
  const ojson model = tune.value("model", ojson::object());
  const LaunchSpec &launch = cspec->launches.at(0);
  Env builtins;
  builtins["SMS"] = Value::ofInt(dm.smCount);

  ReplayResult r;
  r.caseName = cspec->name;
  std::vector<Estimate> ests;
  std::vector<std::string> classes;
  for (const ojson &j : (*rcase)["candidates"]) {
    const std::string status = j.value("status", "");
    if (status == "compile-error" || status == "duplicate" || status == "error" || !j.contains("registers"))
      continue;
    Candidate cd = Candidate::fromJson(j.at("config"));
    std::vector<std::pair<std::string, std::string>> ov;
    for (const auto &[n, v] : cd.launchVars)
      ov.emplace_back(n, std::to_string(v));
    ResolvedCase rc = resolveCase(*cspec, builtins, ov);
    Env env = rc.env;
    for (const auto &[n, v] : cd.constexprs)
      env[n] = Value::ofInt(v);
    int64_t ctas = 1;
    for (const std::string &g : launch.grid)
      ctas *= evalExpr(g, env).asInt("grid");
    ResourceUsage res;
    res.threads = 32 * cd.numWarps;
    res.registers = j.at("registers").get<int>();
    res.sharedBytes = j.value("shared_bytes", int64_t(0));
    res.localBytes = j.value("local_bytes", int64_t(0));
    Workload w = modelWorkload(model, env, ctas, cd.numWarps, cd.numStages, hasDot, rc.flops, rc.bytes);
    ReplayCandidate c;
    c.id = cd.id();
    c.est = estimateCandidate(dm, res, w, modelOpt);
    c.cls = structuralClass(cd.numWarps, c.est);
    if (j.contains("time") && j["time"].contains("median_ms") && j.value("correct", true)) {
      c.measured = true;
      c.medianMs = j["time"]["median_ms"].get<double>();
    }
    r.candidates.push_back(c);
    ests.push_back(c.est);
    classes.push_back(c.cls);
  }
  const std::vector<size_t> order = topK(ests, ests.size());
  r.valid = order.size();
  for (size_t k = 0; k < order.size(); ++k)
    r.candidates[order[k]].rank = int(k);
  std::vector<size_t> picked = selectForTiming(ests, classes, sel);
  // The second round: more of the class of the first round's fastest (refineForTiming).
  int first = -1;
  for (size_t i : picked)
    if (r.candidates[i].measured && (first < 0 || r.candidates[i].medianMs < r.candidates[size_t(first)].medianMs))
      first = int(i);
  if (first >= 0)
    for (size_t i : refineForTiming(ests, classes, r.candidates[size_t(first)].cls, picked, sel)) {
      picked.push_back(i);
      ++r.refined;
    }
  r.selected = picked.size();
  for (size_t i : picked)
    r.candidates[i].selected = true;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const ReplayCandidate &c = r.candidates[i];
    if (!c.measured)
      continue;
    if (r.best < 0 || c.medianMs < r.candidates[size_t(r.best)].medianMs)
      r.best = int(i);
    if (c.selected && (r.winner < 0 || c.medianMs < r.candidates[size_t(r.winner)].medianMs))
      r.winner = int(i);
  }
  if (r.best < 0)
    throw BenchError("the recorded run has no timed candidate");
  if (r.winner >= 0)
    r.gapPct = (r.candidates[size_t(r.winner)].medianMs / r.candidates[size_t(r.best)].medianMs - 1.0) * 100.0;
  else
    r.gapPct = INFINITY;
  return r;
}

} // namespace tle::bench
