// The analysis as the commands run it: read and merge, attribute, find.
#pragma once

#include <string>
#include <vector>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/util/glob.hpp"

namespace imgsmith {

struct PipelineResult {
  Analysis analysis;
  Attribution attribution;
  std::vector<Finding> findings;
};

// The built-in rules, with those of a --rules file (if any) tried first.
RuleSet rules_with(const std::string& user_rules_file);

PipelineResult run_pipeline(const std::string& image, AnalyzeOptions options,
                            const RegistryOptions& registry, const RuleSet& rules,
                            const std::vector<Glob>& ignore, const FindingFloor& floor = {});

// Shows progress on a terminal only: CI logs get the report, not a ticker.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ~ProgressLine();
  void show(const std::string& text);
  void clear();

 private:
  bool enabled_;
  bool shown_ = false;
};

}  // namespace imgsmith
