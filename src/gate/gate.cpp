#include "imgsmith/gate/gate.hpp"

#include <algorithm>
#include <cstdio>

#include "imgsmith/util/error.hpp"
#include "imgsmith/util/size.hpp"

namespace imgsmith {
namespace {

std::string ratio_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void check_at_most(GateResult& r, const std::string& rule, std::uint64_t actual,
                   std::uint64_t limit, const std::string& what) {
  GateCheck c{rule, limit, actual, actual <= limit, ""};
  if (!c.passed)
    c.message = what + " " + format_count(actual) + " B (" + format_size(actual) +
                ") is above the limit " + format_count(limit) + " B (" + format_size(limit) + ")";
  r.checks.push_back(std::move(c));
}

void check_ratio(GateResult& r, const std::string& rule, double actual, double limit, bool at_least,
                 const std::string& what) {
  const bool ok = at_least ? !(actual < limit) : !(actual > limit);
  GateCheck c{rule, limit, actual, ok, ""};
  if (!ok)
    c.message = what + " " + ratio_text(actual) + (at_least ? " is below " : " is above ") +
                "the limit " + ratio_text(limit);
  r.checks.push_back(std::move(c));
}

// "int8 would need 9.9 GB", or what GPU would do, for a model that does
// not fit `limit` bytes per GPU on `gpus` of them at the asked precision.
// `need_on(n)` is a precision's need and whether it fits.
template <typename NeedOn>
std::string what_would_fit(const VramEstimate& v, Precision asked, NeedOn need_on) {
  for (const auto& n : v.needs)
    if (n.precision != asked && !n.as_stored)
      if (const auto [bytes, fits] = need_on(n); fits)
        return std::string(precision_name(n.precision)) + " would fit (" + format_size(bytes) + ")";
  const PrecisionNeed* need = v.at(asked);
  if (need != nullptr && !need->fits_on.empty())
    return "no precision fits; use a GPU with more memory (" + fits_on_text(need->fits_on) + ")";
  return "no precision fits; split it over more GPUs (--fits NAMExN)";
}

// --fits GPU[xN]: each model's engine budget on that target, in the terms
// of the engine's own start-up (vLLM: its share of the board).
void check_fits(GateResult& r, const std::vector<ModelReport>& models, const GateConfig& g) {
  const std::string rule = "fits:" + g.fits->text();
  if (models.empty()) {
    r.checks.push_back(GateCheck{rule, g.fits->gpu.memory_bytes, std::uint64_t{0}, true, ""});
    return;
  }
  for (const auto& [model, vram] : models) {
    const std::string model_rule = rule + ":" + model.path;
    if (vram.at(g.precision) == nullptr) {
      r.checks.push_back(GateCheck{model_rule, g.fits->gpu.memory_bytes, std::uint64_t{0}, false,
                                   "model " + model.path +
                                       ": its parameters could not be read, so only its "
                                       "stored size can be checked (--precision stored)"});
      continue;
    }
    const ServingBudget b = serving_budget(vram, g.precision, *g.fits);
    GateCheck c{model_rule, b.usable, b.need, b.fits, ""};
    if (!b.fits)
      c.message = "model " + model.path + " at " + std::string(precision_name(g.precision)) + " (" +
                  format_count(vram.context) + " tokens of context, batch " +
                  format_count(vram.batch) + ") on " + b.gpu + " under " +
                  std::string(engine_name(b.engine)) + ": " + b.verdict() +
                  (b.fits_at_utilization
                       ? std::string()
                       : "; " + what_would_fit(vram, g.precision,
                                               [&estimate = vram, &g](const PrecisionNeed& n) {
                                                 const ServingBudget other =
                                                     serving_budget(estimate, n.precision, *g.fits);
                                                 return std::pair{other.need, other.fits};
                                               })) +
                  " [" + b.breakdown() + "]";
    r.checks.push_back(std::move(c));
  }
}

void check_models(GateResult& r, const std::vector<ModelReport>& models, const GateConfig& g) {
  const std::string at = std::string(precision_name(g.precision));
  struct Limit {
    std::string rule;
    std::uint64_t bytes;
    unsigned gpus;
  };
  if (g.fits) check_fits(r, models, g);
  std::vector<Limit> limits;
  if (g.max_vram) limits.push_back(Limit{"max-vram", *g.max_vram, 1});
  for (const auto& limit : limits) {
    if (models.empty()) {
      r.checks.push_back(GateCheck{limit.rule, limit.bytes, std::uint64_t{0}, true, ""});
      continue;
    }
    for (const auto& [model, vram] : models) {
      const PrecisionNeed* need = vram.at(g.precision);
      const std::string rule = limit.rule + ":" + model.path;
      if (need == nullptr) {
        r.checks.push_back(GateCheck{rule, limit.bytes, std::uint64_t{0}, false,
                                     "model " + model.path +
                                         ": its parameters could not be read, so only its "
                                         "stored size can be checked (--precision stored)"});
        continue;
      }
      const std::uint64_t actual = vram.per_gpu(*need, limit.gpus);
      GateCheck c{rule, limit.bytes, actual, actual <= limit.bytes, ""};
      if (!c.passed)
        c.message =
            "model " + model.path + " needs " + format_size(actual) +
            (limit.gpus > 1 ? " per GPU" : "") + " at " + at + " (" + format_count(vram.context) +
            " tokens of context, batch " + format_count(vram.batch) + "), above " +
            format_size(limit.bytes) + "; " +
            what_would_fit(vram, g.precision, [&estimate = vram, &limit](const PrecisionNeed& n) {
              const std::uint64_t bytes = estimate.per_gpu(n, limit.gpus);
              return std::pair{bytes, bytes <= limit.bytes};
            });
      r.checks.push_back(std::move(c));
    }
  }
}

// "gpu:H100": no CUDA binary of the image lacks code for it. The figures
// count binaries (the limit is 0), so they are numbers, not bytes.
void check_gpus(GateResult& r, const std::vector<Gpu>& gpus, const KernelInventory* kernels) {
  if (gpus.empty()) return;
  if (kernels == nullptr) {
    for (const Gpu& gpu : gpus)
      r.checks.push_back(GateCheck{"gpu:" + gpu.name, 0.0, 0.0, false,
                                   "the image's CUDA binaries were not read (--no-kernels), so "
                                   "whether it runs on " +
                                       gpu.name + " is unknown"});
    return;
  }
  for (const GpuKernelVerdict& v : verdicts_per_gpu(*kernels, gpus)) {
    GateCheck c{"gpu:" + v.gpu.name, 0.0, static_cast<double>(v.none.size()), v.runs(), ""};
    if (!c.passed) {
      std::string names;
      for (std::size_t i = 0; i < v.none.size() && i < 3; ++i)
        names += (i == 0 ? "" : ", ") + v.none[i];
      if (v.none.size() > 3) names += " and " + std::to_string(v.none.size() - 3) + " more";
      c.message = std::to_string(v.none.size()) + " CUDA binar" +
                  (v.none.size() == 1 ? "y has" : "ies have") + " no code for " + v.gpu.name +
                  " (compute capability " + compute_capability_text(v.gpu.compute_capability) +
                  "): " + names + "; they fail there with \"no kernel image is available for " +
                  "execution on the device\"";
    }
    r.checks.push_back(std::move(c));
  }
}

}  // namespace

std::pair<std::string, std::uint64_t> parse_budget(const std::string& text,
                                                   const std::vector<std::string>& categories) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--budget '" + text +
                     "': expected CATEGORY=SIZE, e.g. cuda=3GiB or cuda/cudnn=1GiB");
  const std::string name = text.substr(0, eq);
  const std::string top = name.substr(0, name.find('/'));
  if (std::find(categories.begin(), categories.end(), top) == categories.end()) {
    std::string list;
    for (const auto& c : categories) list += (list.empty() ? "" : ", ") + c;
    throw InputError("--budget '" + text + "': unknown category '" + top + "' (one of: " + list +
                     ")");
  }
  const auto bytes = parse_size(text.substr(eq + 1));
  if (!bytes)
    throw InputError("--budget '" + text + "': '" + text.substr(eq + 1) + "' is not a size");
  return {name, *bytes};
}

GateResult evaluate_gate(const Analysis& a, const GateConfig& g, const Attribution* attribution,
                         const std::vector<Finding>* findings,
                         const std::vector<ModelReport>* models, const KernelInventory* kernels) {
  GateResult r;
  if (g.max_size) check_at_most(r, "max-size", a.final_bytes, *g.max_size, "final size");
  // What --ignore names is not counted as waste.
  const std::uint64_t wasted = a.wasted_bytes - std::min(a.ignored_waste_bytes, a.wasted_bytes);
  const std::string wasted_label =
      a.ignored_waste_bytes == 0 ? "wasted bytes" : "wasted bytes outside --ignore";
  if (g.max_wasted) check_at_most(r, "max-wasted", wasted, *g.max_wasted, wasted_label);
  if (g.max_wasted_percent) {
    const double pct = a.layers_bytes == 0 ? 0.0
                                           : 100.0 * static_cast<double>(wasted) /
                                                 static_cast<double>(a.layers_bytes);
    check_ratio(r, "max-wasted-percent", pct, *g.max_wasted_percent, false,
                "wasted share of layer bytes (%)");
  }
  if (g.min_efficiency)
    check_ratio(r, "min-efficiency", a.dive.efficiency, *g.min_efficiency, true, "efficiency");
  if (g.max_user_wasted_percent)
    check_ratio(r, "max-user-wasted-percent", a.dive.user_wasted_percent,
                *g.max_user_wasted_percent, false, "user wasted ratio");
  // dive's evaluator: efficiency below the limit fails, wasted bytes above
  // it fail, the user-wasted ratio above it fails (equal passes in all three).
  if (g.dive_lowest_efficiency)
    check_ratio(r, "dive:lowestEfficiency", a.dive.efficiency, *g.dive_lowest_efficiency, true,
                "dive efficiency");
  if (g.dive_highest_wasted_bytes)
    check_at_most(r, "dive:highestWastedBytes", a.dive.wasted_bytes, *g.dive_highest_wasted_bytes,
                  "dive wasted bytes");
  if (g.dive_highest_user_wasted_percent)
    check_ratio(r, "dive:highestUserWastedPercent", a.dive.user_wasted_percent,
                *g.dive_highest_user_wasted_percent, false, "dive user wasted ratio");
  if (attribution != nullptr)
    for (const auto& [name, limit] : g.budgets) {
      const auto slash = name.find('/');
      const CategoryNode* node =
          slash == std::string::npos
              ? attribution->find(name)
              : attribution->find(name.substr(0, slash), name.substr(slash + 1));
      check_at_most(r, "budget:" + name, node != nullptr ? node->bytes : 0, limit, name + " bytes");
    }
  if (findings != nullptr)
    for (const auto& id : g.deny) {
      std::uint64_t bytes = 0;
      const Finding* defect = nullptr;
      // A finding below the significance floor is information, not a failure.
      for (const auto& f : *findings)
        if (f.id == id && !f.info) {
          bytes = f.bytes;
          if (f.defect) defect = &f;
        }
      GateCheck c{"deny:" + id, std::uint64_t{0}, bytes, bytes == 0 && defect == nullptr, ""};
      if (defect != nullptr)
        c.message = "finding " + id + " is present: " + defect->message;
      else if (!c.passed)
        c.message = "finding " + id + " is present (" + format_count(bytes) + " B would be saved)";
      r.checks.push_back(std::move(c));
    }
  check_models(r, models != nullptr ? *models : std::vector<ModelReport>{}, g);
  check_gpus(r, g.gpus, kernels);
  for (const auto& c : r.checks) r.passed = r.passed && c.passed;
  return r;
}

}  // namespace imgsmith
