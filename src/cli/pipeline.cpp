#include "pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {

RuleSet rules_with(const std::string& user_rules_file) {
  return user_rules_file.empty() ? builtin_rules()
                                 : with_user_rules(builtin_rules(), user_rules_file);
}

CaptureFn analysis_capture(bool read_models) {
  if (!read_models) return CaptureFn(attribution_capture);
  return CaptureFn(
      [](std::string_view path, std::uint64_t size) {
        return std::max(attribution_capture(path, size), model_capture(path, size));
      },
      // Model files' headers, read as they stream past (their weights are
      // stepped over): what the VRAM estimate needs.
      [](std::string_view, std::uint64_t size, std::string_view head, ForwardReader& rest) {
        return inspect_model_content(head, rest, size);
      });
}

std::vector<ModelReport> image_models(const Analysis& analysis, const VramSettings& settings) {
  std::vector<ModelFileAt> files;
  for (const auto* kept : {&analysis.file_heads, &analysis.metadata})
    for (const auto& file : *kept)
      if (!file.inspected.empty())
        if (auto model = model_file_from_text(file.inspected))
          files.push_back(ModelFileAt{"/" + file.path, std::move(*model)});
  std::vector<TextFileAt> configs;
  for (const auto& file : analysis.metadata)
    if (file.path.ends_with("config.json"))
      configs.push_back(TextFileAt{"/" + file.path, file.content});
  std::vector<ModelReport> reports;
  for (auto& model : collect_models(files, configs)) {
    VramEstimate vram = estimate_vram(model, settings);
    reports.push_back(ModelReport{std::move(model), std::move(vram)});
  }
  return reports;
}

PipelineResult run_pipeline(const std::string& image, AnalyzeOptions options,
                            const RegistryOptions& registry, const RuleSet& rules,
                            const std::vector<Glob>& ignore, const FindingFloor& floor,
                            const std::optional<VramSettings>& vram, bool keep_files) {
  options.capture = analysis_capture(vram.has_value());
  PipelineResult r;
  r.analysis = analyze_image(image, options, registry);
  if (vram) r.analysis.models = image_models(r.analysis, *vram);
  // --ignore keeps paths out of the waste list, and their bytes out of the
  // waste the gates count; the size figures stay.
  std::erase_if(r.analysis.waste, [&](const WasteGroup& w) {
    if (!matches_any(ignore, w.path)) return false;
    r.analysis.ignored_waste_bytes += w.bytes;
    return true;
  });
  if (options.progress) options.progress("attributing bytes");
  // The files go straight from attribution to the findings: no list of
  // every file is kept unless the format shows every file.
  WasteFinder findings(r.analysis, ignore);
  r.attribution =
      attribute(r.analysis, rules, [&](const AttributedFile& file, const std::string& category) {
        findings.add(file, category);
        if (keep_files)
          r.files.push_back(ReportFile{std::string(file.path), file.bytes, file.layer, category,
                                       file.child, file.origin});
      });
  r.findings = findings.finish(r.attribution, floor);
  return r;
}

ProgressMode parse_progress_mode(const std::string& text) {
  if (text == "auto") return ProgressMode::Auto;
  if (text == "always") return ProgressMode::Always;
  if (text == "never") return ProgressMode::Never;
  throw InputError("--progress '" + text + "': one of auto, always, never");
}

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ProgressLine::ProgressLine(ProgressMode mode)
    : enabled_(mode == ProgressMode::Always ||
               (mode == ProgressMode::Auto && ::isatty(STDERR_FILENO) != 0)),
      terminal_(::isatty(STDERR_FILENO) != 0) {}
ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::show(const std::string& text) {
  if (!enabled_ || text == last_text_) return;
  last_text_ = text;
  if (terminal_) {
    // Redrawn in place; cut to the terminal's usual width so it never wraps.
    std::cerr << "\r\033[Kimgsmith: " << text.substr(0, 110) << std::flush;
    shown_ = true;
    return;
  }
  // A log gets a line a second at most.
  const double now = seconds_now();
  if (last_line_ >= 0 && now - last_line_ < 1.0) return;
  last_line_ = now;
  std::cerr << "imgsmith: " << text << "\n" << std::flush;
}

void ProgressLine::clear() {
  if (shown_) std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace imgsmith
