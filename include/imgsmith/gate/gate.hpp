// Size gates for CI: imgsmith's own rules and dive's .dive-ci rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/kernels/kernel_inventory.hpp"
#include "imgsmith/models/vram.hpp"

namespace imgsmith {

struct GateConfig {
  std::optional<std::uint64_t> max_size;          // on final_bytes
  std::optional<std::uint64_t> max_wasted;        // on wasted_bytes
  std::optional<double> max_wasted_percent;       // wasted_bytes as % of layers_bytes
  std::optional<double> min_efficiency;           // dive efficiency, 0..1
  std::optional<double> max_user_wasted_percent;  // dive ratio, 0..1
  // From a .dive-ci file; named after dive's keys in the report.
  std::optional<double> dive_lowest_efficiency;
  std::optional<std::uint64_t> dive_highest_wasted_bytes;
  std::optional<double> dive_highest_user_wasted_percent;
  // --budget CATEGORY[/CHILD]=SIZE and --deny FINDING_ID.
  std::vector<std::pair<std::string, std::uint64_t>> budgets;
  std::vector<std::string> deny;
  // --max-vram SIZE and --fits GPU[xN]: every model's need at `precision`
  // (the models evaluate_gate is given, sized with the --context and
  // --batch they were read with).
  std::optional<std::uint64_t> max_vram;
  std::optional<GpuTarget> fits;
  Precision precision = Precision::Stored;
  // --gpu H100,B200: every CUDA binary of the image has code (SASS, or PTX
  // the driver compiles) that runs on each of them.
  std::vector<Gpu> gpus;
};

// Parses "cuda=3GiB" or "cuda/cudnn=1GiB" against the known categories.
// Throws InputError for a malformed budget or an unknown category.
std::pair<std::string, std::uint64_t> parse_budget(const std::string& text,
                                                   const std::vector<std::string>& categories);

struct GateCheck {
  std::string rule;
  std::variant<std::uint64_t, double> limit;
  std::variant<std::uint64_t, double> actual;
  bool passed = true;
  std::string message;  // why it failed, with both values
};

struct GateResult {
  bool passed = true;
  std::vector<GateCheck> checks;  // every rule evaluated, passed or not
};

// Budgets need the attribution and denials the findings; without them,
// those rules are not evaluated. The VRAM gates check `models` (none: the
// image has no models to check); the --gpu gates check `kernels` (none:
// the kernels were not read, and each --gpu check fails saying so).
GateResult evaluate_gate(const Analysis& analysis, const GateConfig& config,
                         const Attribution* attribution = nullptr,
                         const std::vector<Finding>* findings = nullptr,
                         const std::vector<ModelReport>* models = nullptr,
                         const KernelInventory* kernels = nullptr);

// Reads dive's CI rules file (YAML, `rules:` mapping) into `config`.
// Unknown keys are ignored as dive ignores them; "disabled", "off", "false"
// or an empty value turns a rule off. Throws InputError naming the file for
// an unreadable file, a malformed value or a ratio outside 0..1.
void load_dive_ci(const std::string& path, GateConfig& config);
// The same, from text (tests).
void parse_dive_ci(const std::string& text, const std::string& label, GateConfig& config);

}  // namespace imgsmith
