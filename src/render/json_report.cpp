#include <variant>

#include "imgsmith/render.hpp"
#include "imgsmith/text.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;

json number(const std::variant<std::uint64_t, double>& v) {
  return std::visit([](auto x) { return json(x); }, v);
}

json optional_bytes(const std::optional<std::uint64_t>& v) { return v ? json(*v) : json(nullptr); }

json texts(const std::vector<std::string>& list) {
  json out = json::array();
  for (const auto& s : list) out.push_back(json_text(s));
  return out;
}

json category_json(const CategoryNode& c) {
  json node = {{"name", json_text(c.name)}, {"bytes", c.bytes}, {"files", c.files}};
  if (!c.origins.empty()) {
    json origins = json::object();
    for (const auto& [origin, bytes] : c.origins) origins[utf8_replaced(origin)] = bytes;
    node["origins"] = origins;
  }
  node["children"] = json::array();
  for (const auto& child : c.children) node["children"].push_back(category_json(child));
  return node;
}

}  // namespace

void put_path(json& item, std::string_view path, const std::string& key) {
  if (is_valid_utf8(path)) {
    item[key] = path;
    return;
  }
  item[key] = utf8_replaced(path);
  item[key + "_bytes"] = to_hex(path);
}

std::string path_of(const json& item, const std::string& key) {
  if (const auto raw = item.find(key + "_bytes"); raw != item.end() && raw->is_string())
    if (auto bytes = from_hex(raw->get<std::string>())) return std::move(*bytes);
  const auto text = item.find(key);
  return text != item.end() && text->is_string() ? text->get<std::string>() : std::string();
}

json json_text(std::string_view s) { return json(utf8_replaced(s)); }

json report_to_json(const Report& report) {
  const Analysis& a = report.analysis;
  const GateResult& gate = report.gate;
  json out;
  out["schema"] = "imgsmith.analysis/v1";
  put_path(out, a.source, "source");
  out["format"] = json_text(a.format);
  out["image"] = {{"tags", texts(a.tags)},
                  {"config_digest", json_text(a.config_digest)},
                  {"os", json_text(a.os)},
                  {"architecture", json_text(a.architecture)}};
  if (!a.variant.empty()) out["image"]["variant"] = json_text(a.variant);
  out["size"] = {{"layers_bytes", a.layers_bytes},
                 {"final_bytes", a.final_bytes},
                 {"wasted_bytes", a.wasted_bytes},
                 {"compressed_bytes", optional_bytes(a.compressed_bytes)},
                 {"layer_entries", a.layer_entries},
                 {"final_entries", a.final_entries}};
  // Every list is cut to --top; the totals count everything.
  json inefficient = json::array();
  for (std::size_t i = 0; i < a.dive.inefficient.size() && i < a.top; ++i) {
    const InefficientPath& p = a.dive.inefficient[i];
    json item = json::object();
    put_path(item, p.path);
    item["copies"] = p.copies;
    item["cumulative_bytes"] = p.cumulative_bytes;
    inefficient.push_back(std::move(item));
  }
  out["dive"] = {{"efficiency", a.dive.efficiency},
                 {"wasted_bytes", a.dive.wasted_bytes},
                 {"user_wasted_percent", a.dive.user_wasted_percent},
                 {"size_bytes", a.dive.size_bytes},
                 {"user_size_bytes", a.dive.user_size_bytes},
                 {"inefficient_paths", inefficient},
                 {"inefficient_paths_total", a.dive.inefficient_total}};
  out["layers"] = json::array();
  for (const auto& l : a.layers)
    out["layers"].push_back({{"index", l.index},
                             {"digest", l.digest},
                             {"diff_id", l.diff_id},
                             {"size_bytes", l.size_bytes},
                             {"compressed_bytes", optional_bytes(l.compressed_bytes)},
                             {"compression", l.compression},
                             {"entries", l.entries},
                             {"created_by", json_text(l.created_by)},
                             {"base", l.base}});
  out["provenance"] = {{"base_layers", a.base_layers}, {"evidence", json_text(a.base_evidence)}};
  out["largest_files"] = json::array();
  for (std::size_t i = 0; i < a.largest_files.size() && i < a.top; ++i) {
    const FileReport& f = a.largest_files[i];
    json item = json::object();
    put_path(item, f.path);
    item["bytes"] = f.bytes;
    item["layer"] = f.layer;
    item["hard_links"] = f.hard_links;
    out["largest_files"].push_back(std::move(item));
  }
  out["waste"] = json::array();
  for (std::size_t i = 0; i < a.waste.size() && i < a.top; ++i) {
    const WasteGroup& w = a.waste[i];
    json item = json::object();
    put_path(item, w.path);
    item["bytes"] = w.bytes;
    item["files"] = w.files;
    item["how"] = hidden_by_name(w.how);
    item["added_by_layer"] = w.added_layer;
    item["hidden_by_layer"] = w.hidden_layer;
    out["waste"].push_back(std::move(item));
  }
  if (report.attribution != nullptr) {
    out["categories"] = json::array();
    for (const auto& c : report.attribution->categories) out["categories"].push_back(category_json(c));
  }
  if (report.findings != nullptr) {
    out["findings"] = json::array();
    for (const auto& f : *report.findings) {
      json paths = json::array();
      for (std::size_t i = 0; i < f.paths.size() && i < a.top; ++i) {
        json item = json::object();
        put_path(item, f.paths[i].path);
        item["bytes"] = f.paths[i].bytes;
        paths.push_back(std::move(item));
      }
      out["findings"].push_back({{"id", f.id},
                                 {"bytes", f.bytes},
                                 {"message", json_text(f.message)},
                                 {"fix", json_text(f.fix)},
                                 {"paths", paths},
                                 {"layers", f.layers},
                                 {"base_bytes", f.base_bytes},
                                 {"info", f.info}});
    }
  }
  json violations = json::array(), checks = json::array();
  for (const auto& c : gate.checks) {
    json item = {{"rule", json_text(c.rule)},
                 {"limit", number(c.limit)},
                 {"actual", number(c.actual)},
                 {"passed", c.passed}};
    if (!c.passed) {
      item["message"] = json_text(c.message);
      violations.push_back(item);
    }
    checks.push_back(item);
  }
  out["gate"] = {{"passed", gate.passed}, {"violations", violations}, {"checks", checks}};
  out["warnings"] = texts(a.warnings);
  out["io"] = {{"bytes_read", a.bytes_read}, {"seconds", a.seconds}, {"read_via", a.read_via}};
  return out;
}

}  // namespace imgsmith
