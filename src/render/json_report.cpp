#include <variant>

#include "imgsmith/render.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;

json number(const std::variant<std::uint64_t, double>& v) {
  return std::visit([](auto x) { return json(x); }, v);
}

json optional_bytes(const std::optional<std::uint64_t>& v) { return v ? json(*v) : json(nullptr); }

json category_json(const CategoryNode& c) {
  json node = {{"name", c.name}, {"bytes", c.bytes}, {"files", c.files}};
  if (!c.origins.empty()) node["origins"] = c.origins;
  node["children"] = json::array();
  for (const auto& child : c.children) node["children"].push_back(category_json(child));
  return node;
}

}  // namespace

json report_to_json(const Report& report) {
  const Analysis& a = report.analysis;
  const GateResult& gate = report.gate;
  json out;
  out["schema"] = "imgsmith.analysis/v1";
  out["source"] = a.source;
  out["format"] = a.format;
  out["image"] = {{"tags", a.tags},
                  {"config_digest", a.config_digest},
                  {"os", a.os},
                  {"architecture", a.architecture}};
  if (!a.variant.empty()) out["image"]["variant"] = a.variant;
  out["size"] = {{"layers_bytes", a.layers_bytes},
                 {"final_bytes", a.final_bytes},
                 {"wasted_bytes", a.wasted_bytes},
                 {"compressed_bytes", optional_bytes(a.compressed_bytes)},
                 {"layer_entries", a.layer_entries},
                 {"final_entries", a.final_entries}};
  json inefficient = json::array();
  for (const auto& p : a.dive.inefficient)
    inefficient.push_back(
        {{"path", p.path}, {"copies", p.copies}, {"cumulative_bytes", p.cumulative_bytes}});
  out["dive"] = {{"efficiency", a.dive.efficiency},
                 {"wasted_bytes", a.dive.wasted_bytes},
                 {"user_wasted_percent", a.dive.user_wasted_percent},
                 {"size_bytes", a.dive.size_bytes},
                 {"user_size_bytes", a.dive.user_size_bytes},
                 {"inefficient_paths", inefficient}};
  out["layers"] = json::array();
  for (const auto& l : a.layers)
    out["layers"].push_back({{"index", l.index},
                             {"digest", l.digest},
                             {"diff_id", l.diff_id},
                             {"size_bytes", l.size_bytes},
                             {"compressed_bytes", optional_bytes(l.compressed_bytes)},
                             {"compression", l.compression},
                             {"entries", l.entries},
                             {"created_by", l.created_by}});
  out["largest_files"] = json::array();
  for (const auto& f : a.largest_files)
    out["largest_files"].push_back({{"path", f.path}, {"bytes", f.bytes}, {"layer", f.layer}, {"hard_links", f.hard_links}});
  out["waste"] = json::array();
  for (std::size_t i = 0; i < a.waste.size() && i < a.top; ++i) {
    const WasteGroup& w = a.waste[i];
    out["waste"].push_back({{"path", w.path},
                            {"bytes", w.bytes},
                            {"files", w.files},
                            {"how", hidden_by_name(w.how)},
                            {"added_by_layer", w.added_layer},
                            {"hidden_by_layer", w.hidden_layer}});
  }
  if (report.attribution != nullptr) {
    out["categories"] = json::array();
    for (const auto& c : report.attribution->categories) out["categories"].push_back(category_json(c));
  }
  if (report.findings != nullptr) {
    out["findings"] = json::array();
    for (const auto& f : *report.findings) {
      json paths = json::array();
      for (const auto& p : f.paths) paths.push_back({{"path", p.path}, {"bytes", p.bytes}});
      out["findings"].push_back({{"id", f.id},
                                 {"bytes", f.bytes},
                                 {"message", f.message},
                                 {"fix", f.fix},
                                 {"paths", paths},
                                 {"layers", f.layers}});
    }
  }
  json violations = json::array(), checks = json::array();
  for (const auto& c : gate.checks) {
    json item = {{"rule", c.rule},
                 {"limit", number(c.limit)},
                 {"actual", number(c.actual)},
                 {"passed", c.passed}};
    if (!c.passed) {
      item["message"] = c.message;
      violations.push_back(item);
    }
    checks.push_back(item);
  }
  out["gate"] = {{"passed", gate.passed}, {"violations", violations}, {"checks", checks}};
  out["warnings"] = a.warnings;
  out["io"] = {{"bytes_read", a.bytes_read}, {"seconds", a.seconds}};
  return out;
}

}  // namespace imgsmith
