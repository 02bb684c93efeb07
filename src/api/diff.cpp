#include "imgsmith/api/diff.hpp"

#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

#include "imgsmith/api/analyze.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {
namespace {

// A saved report is a JSON document; anything else is an image to analyse.
std::optional<nlohmann::json> saved_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  char c = 0;
  while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  if (!in || c != '{') return std::nullopt;
  std::ostringstream text;
  text << c << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not valid JSON (" + e.what() +
                     "); give an image or a report "
                     "saved with imgsmith analyze --format json");
  }
}

// An image's result kept as its saved report would keep it, so that an
// image analysed now and a saved baseline compare alike: the tree and the
// files read for attribution go (an image can hold millions of files), the
// waste list is cut to the analysis's `top`.
SavedReport as_saved(AnalyzeResult&& r) {
  SavedReport saved;
  saved.analysis = std::move(r.analysis);
  saved.analysis.tree.reset();
  saved.analysis.metadata.clear();
  saved.analysis.file_heads.clear();
  saved.analysis.duplicates.clear();
  if (saved.analysis.waste.size() > saved.analysis.top)
    saved.analysis.waste.resize(saved.analysis.top);
  saved.models = std::move(r.models);
  saved.attribution = std::move(r.attribution);
  saved.findings = std::move(r.findings);
  return saved;
}

DiffSide read_side(const std::string& input, const DiffRequest& request) {
  if (auto report = saved_report(input)) {
    if (report->value("schema", "") != "imgsmith.analysis/v1")
      throw InputError(input + ": a JSON file that is not an imgsmith.analysis/v1 report");
    try {
      return DiffSide{report_from_json(*report), std::nullopt};
    } catch (const InputError& e) {
      throw InputError(input + ": " + e.what());
    }
  }
  AnalyzeRequest analyze_request;
  analyze_request.image = input;
  analyze_request.options.selector = request.selector;
  analyze_request.options.top = request.top;
  analyze_request.registry = request.registry;
  analyze_request.rules = request.rules;
  if (request.progress)
    analyze_request.progress = [&request, &input](const std::string& stage) {
      request.progress(input + ": " + stage);
    };
  AnalyzeResult result = analyze(analyze_request);
  DiffSide side;
  if (result.analysis.tree) side.files = file_set(*result.analysis.tree);
  side.report = as_saved(std::move(result));
  return side;
}

}  // namespace

DiffResult diff(const DiffRequest& request) {
  DiffResult r;
  r.old_side = read_side(request.old_input, request);
  r.new_side = read_side(request.new_input, request);
  DiffOptions options;
  options.old_files = r.old_side.files ? &*r.old_side.files : nullptr;
  options.new_files = r.new_side.files ? &*r.new_side.files : nullptr;
  options.top = request.top;
  r.diff = diff_reports(r.old_side.report.view(), r.new_side.report.view(), request.gate, options);
  return r;
}

}  // namespace imgsmith
