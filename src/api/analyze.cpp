#include "imgsmith/api/analyze.hpp"

#include <algorithm>
#include <any>
#include <utility>

#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/models/model_file.hpp"
#include "imgsmith/util/size.hpp"

namespace imgsmith {
namespace {

// What the read keeps of the files it streams: attribution's package
// databases and file heads, and when models are read, their headers (as
// typed records, read while the weights stream past) and configs.
CaptureFn capture_for(bool read_models) {
  if (!read_models) return CaptureFn(attribution_capture);
  return CaptureFn(
      [](std::string_view path, std::uint64_t size) {
        return std::max(attribution_capture(path, size), model_capture(path, size));
      },
      [](std::string_view, std::uint64_t size, std::string_view head,
         ForwardReader& rest) -> std::any {
        if (auto model = inspect_model_content(head, rest, size)) return std::move(*model);
        return {};
      },
      hf_cache_link);
}

// 1. Read: the image's layers, merged and measured.
Analysis read_image(const AnalyzeRequest& request) {
  AnalyzeOptions options = request.options;
  options.capture = capture_for(request.vram.has_value());
  options.progress = request.progress;
  return analyze_image(request.image, options, request.registry);
}

// 2. Models: the model files among the read's captured files, with their
// VRAM estimates.
std::vector<ModelReport> read_models(const Analysis& analysis,
                                     const std::optional<VramSettings>& settings) {
  if (!settings) return {};
  std::vector<ModelFileAt> files;
  for (const auto* kept : {&analysis.file_heads, &analysis.metadata})
    for (const auto& file : *kept)
      if (const auto* model = std::any_cast<ModelFile>(&file.inspected))
        files.push_back(ModelFileAt{"/" + file.path, *model});
  std::vector<TextFileAt> texts;
  for (const auto& file : analysis.metadata)
    if (file.path.ends_with("config.json") || hf_cache_text(file.path, file.content.size()))
      texts.push_back(TextFileAt{"/" + file.path, file.content});
  std::vector<LinkAt> links;
  for (const auto& link : analysis.links) links.push_back(LinkAt{"/" + link.path, link.content});
  std::vector<ModelReport> reports;
  for (auto& model : collect_models(resolve_hf_caches(std::move(files), std::move(texts), links))) {
    VramEstimate vram = estimate_vram(model, *settings);
    // A context past the model's maximum is sized as asked, and said: vLLM
    // refuses a max_model_len above it (unless VLLM_ALLOW_LONG_MAX_MODEL_LEN
    // is set), and the model was not trained for it.
    if (settings->context && model.shape.context_length > 0 &&
        *settings->context > model.shape.context_length)
      model.warnings.push_back("--context " + format_count(*settings->context) +
                               " is above its maximum of " +
                               format_count(model.shape.context_length) +
                               " tokens (config.json max_position_embeddings, GGUF "
                               "context_length); vLLM refuses it unless "
                               "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1; sized as asked");
    reports.push_back(ModelReport{std::move(model), std::move(vram)});
  }
  return reports;
}

// 3. --ignore keeps paths out of the waste list, and their bytes out of the
// waste the gates count; the size figures stay.
void leave_out_ignored(Analysis& analysis, const std::vector<Glob>& ignore) {
  std::erase_if(analysis.waste, [&](const WasteGroup& w) {
    if (!matches_any(ignore, w.path)) return false;
    analysis.ignored_waste_bytes += w.bytes;
    return true;
  });
}

struct Attributed {
  Attribution attribution;
  std::vector<Finding> findings;
  std::vector<ReportFile> files;
};

// 4. Attribution and findings: the files go straight from attribution to
// the findings, so no list of every file is kept unless the request asks
// for one.
Attributed attribute_and_find(const Analysis& analysis, const AnalyzeRequest& request) {
  Attributed out;
  WasteFinder findings(analysis, request.ignore);
  out.attribution = attribute(
      analysis, request.rules, [&](const AttributedFile& file, const std::string& category) {
        findings.add(file, category);
        if (request.keep_files)
          out.files.push_back(ReportFile{std::string(file.path), file.bytes, file.layer, category,
                                         file.child, file.origin});
      });
  out.findings = findings.finish(out.attribution, request.floor);
  return out;
}

}  // namespace

AnalyzeResult analyze(const AnalyzeRequest& request) {
  AnalyzeResult r;
  r.analysis = read_image(request);
  r.models = read_models(r.analysis, request.vram);
  leave_out_ignored(r.analysis, request.ignore);
  if (request.progress) request.progress("attributing bytes");
  Attributed attributed = attribute_and_find(r.analysis, request);
  r.attribution = std::move(attributed.attribution);
  r.findings = std::move(attributed.findings);
  r.files = std::move(attributed.files);
  r.gate = evaluate_gate(r.analysis, request.gates, &r.attribution, &r.findings, &r.models);
  return r;
}

RuleSet rules_with(const std::string& user_rules_file) {
  return user_rules_file.empty() ? builtin_rules()
                                 : with_user_rules(builtin_rules(), user_rules_file);
}

}  // namespace imgsmith
