// SARIF 2.1.0 (OASIS, https://docs.oasis-open.org/sarif/sarif/v2.1.0/),
// shaped as GitHub's code scanning takes it (docs.github.com, "SARIF support
// for code scanning": rules with id, shortDescription, fullDescription and
// help; results with message, level, at least one location with a region,
// and partialFingerprints so that the same problem is one alert from run to
// run). Each finding is a result at its largest path in the image, the
// other paths its related locations; each failed gate check a result of
// level error. Paths are relative to the image's root (uriBaseId
// IMAGEROOT); the layers that added the bytes are logical locations.
// Deterministic: the same image and options give the same document.
#include <map>
#include <nlohmann/json.hpp>

#include "ci_results.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/version.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;
using render_detail::ResultWeight;

// Related locations a result lists at most: the report's --top already
// bounds the paths; this keeps one result readable in code scanning's view.
constexpr std::size_t kMaxRelatedLocations = 10;

const char* level_of(ResultWeight w) {
  switch (w) {
    case ResultWeight::info:
      return "note";
    case ResultWeight::waste:
      return "warning";
    case ResultWeight::defect:
    case ResultWeight::failed_gate:
      return "error";
  }
  return "warning";
}

json physical_location(const std::string& path) {
  return {
      {"artifactLocation", {{"uri", render_detail::image_uri(path)}, {"uriBaseId", "IMAGEROOT"}}},
      {"region", {{"startLine", 1}}}};
}

}  // namespace

void render_sarif(const Report& report, std::ostream& out) {
  const Analysis& a = report.analysis;
  const auto results_in = render_detail::ci_results(report);
  json rules = json::array();
  std::map<std::string, std::size_t> rule_index;
  json results = json::array();
  for (const auto& r : results_in) {
    auto [it, added] = rule_index.emplace(r.rule, rules.size());
    if (added)
      rules.push_back(
          {{"id", r.rule},
           {"name", r.rule},
           {"shortDescription", {{"text", json_text(r.title)}}},
           {"fullDescription", {{"text", json_text(r.title)}}},
           {"help", {{"text", json_text(r.fix)}}},
           {"defaultConfiguration", {{"level", level_of(r.weight)}}},
           {"properties",
            {{"tags", json::array({r.weight == ResultWeight::failed_gate ? "gate" : "image-size"})},
             {"precision", "very-high"}}}});
    json location = {{"physicalLocation", physical_location(r.path)}};
    if (!r.layers.empty()) {
      json layers = json::array();
      for (const std::uint32_t index : r.layers) {
        json layer = {{"name", "layer " + std::to_string(index)}, {"kind", "module"}};
        if (index < a.layers.size() && !a.layers[index].digest.empty())
          layer["fullyQualifiedName"] = json_text(a.layers[index].digest);
        layers.push_back(std::move(layer));
      }
      location["logicalLocations"] = std::move(layers);
    }
    json result = {
        {"ruleId", r.rule},
        {"ruleIndex", it->second},
        {"level", level_of(r.weight)},
        {"message", {{"text", json_text(r.message)}}},
        {"locations", json::array({std::move(location)})},
        {"partialFingerprints", {{"imgsmithResult/v1", render_detail::fingerprint(r.identity)}}}};
    if (!r.other_paths.empty()) {
      json related = json::array();
      for (std::size_t i = 0; i < r.other_paths.size() && i < kMaxRelatedLocations; ++i) {
        json place = {{"id", static_cast<int>(i + 1)},
                      {"physicalLocation", physical_location(r.other_paths[i].path)},
                      {"message",
                       {{"text", json_text(r.other_paths[i].path + " (" +
                                           format_size(r.other_paths[i].bytes) + ")")}}}};
        related.push_back(std::move(place));
      }
      result["relatedLocations"] = std::move(related);
    }
    if (r.weight != ResultWeight::failed_gate)
      result["properties"] = {{"bytes", r.bytes},
                              {"paths", r.path.empty() ? 0 : r.other_paths.size() + 1}};
    results.push_back(std::move(result));
  }
  const json doc = {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs",
       json::array(
           {{{"tool",
              {{"driver",
                {{"name", "imgsmith"},
                 {"version", kVersion},
                 {"semanticVersion", kVersion},
                 {"rules", rules}}}}},
             {"originalUriBaseIds",
              {{"IMAGEROOT",
                {{"uri", "file:///"},
                 {"description", {{"text", "the root of the image's merged filesystem"}}}}}}},
             {"properties",
              {{"image", json_text(a.source)},
               {"configDigest", json_text(a.config_digest)},
               {"finalBytes", a.final_bytes},
               {"gatePassed", report.gate.passed}}},
             {"results", results}}})}};
  out << doc.dump(2) << "\n";
}

}  // namespace imgsmith
