#include "pipeline.hpp"

#include <unistd.h>

#include <iostream>

#include "imgsmith/inputs/inputs.hpp"

namespace imgsmith {

RuleSet rules_with(const std::string& user_rules_file) {
  return user_rules_file.empty() ? builtin_rules()
                                 : with_user_rules(builtin_rules(), user_rules_file);
}

PipelineResult run_pipeline(const std::string& image, AnalyzeOptions options,
                            const RegistryOptions& registry, const RuleSet& rules,
                            const std::vector<Glob>& ignore, const FindingFloor& floor) {
  options.capture = attribution_capture;
  PipelineResult r;
  r.analysis = analyze_image(image, options, registry);
  // --ignore keeps paths out of the waste list too; the size figures stay.
  std::erase_if(r.analysis.waste, [&](const WasteGroup& w) { return matches_any(ignore, w.path); });
  if (options.progress) options.progress("attributing bytes");
  // The files go straight from attribution to the findings: no list of
  // every file is kept.
  WasteFinder findings(r.analysis, ignore);
  r.attribution =
      attribute(r.analysis, rules, [&](const AttributedFile& file, const std::string& category) {
        findings.add(file, category);
      });
  r.findings = findings.finish(r.attribution, floor);
  return r;
}

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO) != 0) {}
ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::show(const std::string& text) {
  if (!enabled_) return;
  std::cerr << "\r\033[Kimgsmith: " << text << std::flush;
  shown_ = true;
}

void ProgressLine::clear() {
  if (shown_) std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace imgsmith
