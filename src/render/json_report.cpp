#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <utility>
#include <variant>

#include "format.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"
#include "kernel_sections.hpp"
#include "model_sections.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;

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

// Reading back: the value at `key` of an object, `fallback` where the key
// is missing or null (a report saved by an earlier imgsmith may lack one).
template <class T>
T read(const json& object, const char* key, T fallback = T{}) {
  if (!object.is_object()) return fallback;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? fallback : it->get<T>();
}

// Several fields of one type: {{"key", &field}, ...}.
template <class T>
void read_fields(const json& object, std::initializer_list<std::pair<const char*, T*>> fields) {
  for (const auto& [key, field] : fields) *field = read<T>(object, key);
}

const json& section(const json& object, const char* key) {
  static const json none;
  if (!object.is_object()) return none;
  const auto it = object.find(key);
  return it == object.end() ? none : *it;
}

// Each item of the array at `key` (nothing when there is none).
template <class Each>
void for_each_item(const json& object, const char* key, Each each) {
  const json& list = section(object, key);
  if (list.is_array())
    for (const auto& item : list) each(item);
}

std::optional<std::uint64_t> read_optional_bytes(const json& object, const char* key) {
  const json& v = section(object, key);
  return v.is_null() ? std::nullopt : std::optional<std::uint64_t>(v.get<std::uint64_t>());
}

std::variant<std::uint64_t, double> read_number(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  return v.get<double>();
}

HiddenBy hidden_by_from(const std::string& name) {
  for (const HiddenBy how : {HiddenBy::Deleted, HiddenBy::Opaque, HiddenBy::Overwritten,
                             HiddenBy::Replaced, HiddenBy::Readded})
    if (name == hidden_by_name(how)) return how;
  throw InputError("unknown waste kind '" + name + "'");
}

CategoryNode category_from(const json& node) {
  CategoryNode c;
  c.name = read<std::string>(node, "name");
  c.bytes = read<std::uint64_t>(node, "bytes");
  c.files = read<std::uint64_t>(node, "files");
  c.origins = read<std::map<std::string, std::uint64_t>>(node, "origins");
  for_each_item(node, "children",
                [&](const json& child) { c.children.push_back(category_from(child)); });
  return c;
}

Analysis analysis_from(const json& doc) {
  Analysis a;
  a.source = path_of(doc, "source");
  a.format = read<std::string>(doc, "format");
  const json& image = section(doc, "image");
  a.tags = read<std::vector<std::string>>(image, "tags");
  read_fields<std::string>(image, {{"config_digest", &a.config_digest},
                                   {"os", &a.os},
                                   {"architecture", &a.architecture},
                                   {"variant", &a.variant}});
  const json& size = section(doc, "size");
  read_fields<std::uint64_t>(size, {{"layers_bytes", &a.layers_bytes},
                                    {"final_bytes", &a.final_bytes},
                                    {"wasted_bytes", &a.wasted_bytes},
                                    {"layer_entries", &a.layer_entries},
                                    {"final_entries", &a.final_entries}});
  a.compressed_bytes = read_optional_bytes(size, "compressed_bytes");
  const json& dive = section(doc, "dive");
  a.dive.efficiency = read<double>(dive, "efficiency", 1.0);
  a.dive.user_wasted_percent = read<double>(dive, "user_wasted_percent");
  read_fields<std::uint64_t>(dive, {{"wasted_bytes", &a.dive.wasted_bytes},
                                    {"size_bytes", &a.dive.size_bytes},
                                    {"user_size_bytes", &a.dive.user_size_bytes},
                                    {"inefficient_paths_total", &a.dive.inefficient_total}});
  for_each_item(dive, "inefficient_paths", [&](const json& p) {
    a.dive.inefficient.push_back(InefficientPath{
        path_of(p), read<std::uint64_t>(p, "cumulative_bytes"), read<std::uint32_t>(p, "copies")});
  });
  for_each_item(doc, "layers", [&](const json& l) {
    LayerReport layer;
    layer.index = read<std::uint32_t>(l, "index");
    read_fields<std::string>(l, {{"digest", &layer.digest},
                                 {"diff_id", &layer.diff_id},
                                 {"listing", &layer.listing},
                                 {"compression", &layer.compression},
                                 {"created_by", &layer.created_by}});
    read_fields<std::uint64_t>(l, {{"size_bytes", &layer.size_bytes}, {"entries", &layer.entries}});
    layer.compressed_bytes = read_optional_bytes(l, "compressed_bytes");
    layer.base = read<bool>(l, "base");
    a.layers.push_back(std::move(layer));
  });
  const json& provenance = section(doc, "provenance");
  a.base_layers = read<std::size_t>(provenance, "base_layers");
  a.base_evidence = read<std::string>(provenance, "evidence");
  for_each_item(doc, "largest_files", [&](const json& f) {
    a.largest_files.push_back(FileReport{path_of(f), read<std::uint64_t>(f, "bytes"),
                                         read<std::uint32_t>(f, "layer"),
                                         read<std::uint32_t>(f, "hard_links")});
  });
  for_each_item(doc, "waste", [&](const json& w) {
    WasteGroup group;
    group.path = path_of(w);
    group.how = hidden_by_from(read<std::string>(w, "how", "deleted"));
    group.added_layer = read<std::uint32_t>(w, "added_by_layer");
    group.hidden_layer = read<std::uint32_t>(w, "hidden_by_layer");
    read_fields<std::uint64_t>(w, {{"bytes", &group.bytes}, {"files", &group.files}});
    group.package_state = read<bool>(w, "package_state", false);
    a.waste.push_back(std::move(group));
  });
  a.warnings = read<std::vector<std::string>>(doc, "warnings");
  const json& io = section(doc, "io");
  a.bytes_read = read<std::uint64_t>(io, "bytes_read");
  a.seconds = read<double>(io, "seconds");
  a.read_via = read<std::string>(io, "read_via");
  a.verified = read<std::string>(io, "verified");
  return a;
}

std::vector<Finding> findings_from(const json& list) {
  std::vector<Finding> findings;
  for (const auto& f : list) {
    Finding finding;
    finding.id = read<std::string>(f, "id");
    finding.bytes = read<std::uint64_t>(f, "bytes");
    finding.message = read<std::string>(f, "message");
    finding.fix = read<std::string>(f, "fix");
    for_each_item(f, "paths", [&](const json& p) {
      finding.paths.push_back(FindingPath{path_of(p), read<std::uint64_t>(p, "bytes")});
    });
    finding.layers = read<std::vector<std::uint32_t>>(f, "layers");
    finding.base_bytes = read<std::uint64_t>(f, "base_bytes");
    finding.info = read<bool>(f, "info");
    finding.defect = read<bool>(f, "defect", false);
    findings.push_back(std::move(finding));
  }
  return findings;
}

GateResult gate_from(const json& gate) {
  GateResult result;
  result.passed = read<bool>(gate, "passed", true);
  for_each_item(gate, "checks", [&](const json& c) {
    result.checks.push_back(
        GateCheck{read<std::string>(c, "rule"), read_number(section(c, "limit")),
                  read_number(section(c, "actual")), read<bool>(c, "passed", true),
                  read<std::string>(c, "message")});
  });
  return result;
}

// The longest list a report holds: the --top it was saved with, or fewer.
std::size_t listed(const SavedReport& r) {
  const Analysis& a = r.analysis;
  std::size_t most = std::max({a.largest_files.size(), a.waste.size(), a.dive.inefficient.size()});
  if (r.findings)
    for (const auto& f : *r.findings) most = std::max(most, f.paths.size());
  return most;
}

json triple(const SizeChange& c) {
  return {{"old", c.old_bytes}, {"new", c.new_bytes}, {"delta", c.delta()}};
}

// A {"old","new","delta"} triple with a name field added.
json named(const char* key, const std::string& value, const SizeChange& c) {
  json t = triple(c);
  t[key] = value;
  return t;
}

json origins_json(const std::optional<std::map<std::string, std::uint64_t>>& origins) {
  return origins ? json(*origins) : json(nullptr);
}

json file_changes_json(const FileChanges::List& list, bool resized) {
  json out = json::array();
  for (const auto& c : list.top) {
    json item = json::object();
    put_path(item, c.path);
    if (resized) {
      item["old"] = c.old_bytes;
      item["new"] = c.new_bytes;
      item["delta"] = c.delta();
    } else {
      item["bytes"] = c.bytes();
    }
    if (c.hard_link) item["hard_link"] = true;
    out.push_back(std::move(item));
  }
  return out;
}

json files_json(const FileChanges& f) {
  json out = {{"old_complete", f.old_complete},
              {"new_complete", f.new_complete},
              {"counts",
               {{"added", f.added.count},
                {"removed", f.removed.count},
                {"resized", f.resized.count},
                {"entered_largest", f.entered_largest.count},
                {"left_largest", f.left_largest.count}}},
              {"added_bytes", f.added_bytes},
              {"removed_bytes", f.removed_bytes}};
  if (!f.old_complete) out["old_listed"] = f.old_listed;
  if (!f.new_complete) out["new_listed"] = f.new_listed;
  out["added"] = file_changes_json(f.added, false);
  out["removed"] = file_changes_json(f.removed, false);
  out["resized"] = file_changes_json(f.resized, true);
  out["entered_largest"] = file_changes_json(f.entered_largest, false);
  out["left_largest"] = file_changes_json(f.left_largest, false);
  return out;
}

json layers_json(const std::vector<LayerReport>& layers) {
  json out = json::array();
  for (const auto& l : layers)
    out.push_back({{"index", l.index},
                   {"digest", l.digest},
                   {"size_bytes", l.size_bytes},
                   {"created_by", l.created_by}});
  return out;
}

json finding_changes_json(const std::vector<FindingChange>& list, bool appeared) {
  json out = json::array();
  for (const auto& f : list)
    out.push_back({{"id", f.id}, {"bytes", appeared ? f.bytes.new_bytes : f.bytes.old_bytes}});
  return out;
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
  out["size"] = {
      {"layers_bytes", a.layers_bytes},   {"final_bytes", a.final_bytes},
      {"wasted_bytes", a.wasted_bytes},   {"compressed_bytes", optional_bytes(a.compressed_bytes)},
      {"layer_entries", a.layer_entries}, {"final_entries", a.final_entries}};
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
                             {"listing", l.listing},
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
    if (w.package_state) item["package_state"] = true;
    out["waste"].push_back(std::move(item));
  }
  if (report.attribution != nullptr) {
    out["categories"] = json::array();
    for (const auto& c : report.attribution->categories)
      out["categories"].push_back(category_json(c));
    // Every package a database lists, with its version.
    if (report.attribution->packages_listed) {
      out["packages"] = json::array();
      for (const auto& p : report.attribution->packages)
        out["packages"].push_back({{"installer", json_text(p.installer)},
                                   {"name", json_text(p.name)},
                                   {"version", json_text(p.version)},
                                   {"files", p.files},
                                   {"bytes", p.bytes}});
    }
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
                                 {"info", f.info},
                                 {"defect", f.defect}});
    }
  }
  out["models"] = render_detail::models_to_json(
      report.models != nullptr ? *report.models : std::vector<ModelReport>{});
  if (report.kernels != nullptr) out["kernels"] = render_detail::kernels_to_json(*report.kernels);
  json violations = json::array(), checks = json::array();
  for (const auto& c : gate.checks) {
    json item = {{"rule", json_text(c.rule)},
                 {"limit", render_detail::json_number(c.limit)},
                 {"actual", render_detail::json_number(c.actual)},
                 {"passed", c.passed}};
    if (!c.passed) {
      item["message"] = json_text(c.message);
      violations.push_back(item);
    }
    checks.push_back(item);
  }
  out["gate"] = {{"passed", gate.passed}, {"violations", violations}, {"checks", checks}};
  out["warnings"] = texts(a.warnings);
  out["io"] = {{"bytes_read", a.bytes_read},
               {"seconds", a.seconds},
               {"read_via", a.read_via},
               {"verified", a.verified}};
  return out;
}

SavedReport report_from_json(const json& doc) {
  if (!doc.is_object() || read<std::string>(doc, "schema") != "imgsmith.analysis/v1")
    throw InputError("not an imgsmith.analysis/v1 report");
  try {
    SavedReport r;
    r.analysis = analysis_from(doc);
    r.models = render_detail::models_from_json(section(doc, "models"));
    if (const json& kernels = section(doc, "kernels"); kernels.is_object())
      r.kernels = render_detail::kernels_from_json(kernels);
    if (const json& categories = section(doc, "categories"); categories.is_array()) {
      r.attribution.emplace();
      for (const auto& c : categories) {
        r.attribution->categories.push_back(category_from(c));
        r.attribution->total_bytes += r.attribution->categories.back().bytes;
      }
      r.attribution->packages_listed = section(doc, "packages").is_array();
      for_each_item(doc, "packages", [&](const json& p) {
        r.attribution->packages.push_back(
            InstalledPackage{read<std::string>(p, "installer"), read<std::string>(p, "name"),
                             read<std::string>(p, "version"), read<std::uint64_t>(p, "files"),
                             read<std::uint64_t>(p, "bytes"), ""});
      });
    }
    if (const json& findings = section(doc, "findings"); findings.is_array())
      r.findings = findings_from(findings);
    r.gate = gate_from(section(doc, "gate"));
    if (const std::size_t most = listed(r); most > 0) r.analysis.top = most;
    return r;
  } catch (const json::exception& e) {
    throw InputError(
        std::string("an imgsmith.analysis/v1 report with a value of the wrong type (") + e.what() +
        ")");
  }
}

json diff_to_json(const DiffReport& d) {
  json out;
  out["schema"] = "imgsmith.diff/v1";
  for (const auto& [key, side] : {std::pair{"old", &d.old_side}, std::pair{"new", &d.new_side}}) {
    json s = json::object();
    put_path(s, side->source, "source");
    s["tags"] = texts(side->tags);
    out[key] = s;
  }
  out["size"] = {{"final_bytes", triple(d.final_bytes)},
                 {"layers_bytes", triple(d.layers_bytes)},
                 {"wasted_bytes", triple(d.wasted_bytes)},
                 {"compressed_bytes", triple(d.compressed_bytes)}};
  out["categories"] = json::array();
  for (const auto& c : d.categories) {
    json node = named("name", c.name, c.bytes);
    node["children"] = json::array();
    for (const auto& k : c.children) {
      json child = named("name", k.name, k.bytes);
      if (k.old_origins || k.new_origins)
        child["origins"] = {{"old", origins_json(k.old_origins)},
                            {"new", origins_json(k.new_origins)}};
      node["children"].push_back(std::move(child));
    }
    out["categories"].push_back(std::move(node));
  }
  out["layers"] = {{"shared", d.layers.shared},
                   {"rebuilt", layers_json(d.layers.rebuilt)},
                   {"added", layers_json(d.layers.added)},
                   {"removed", layers_json(d.layers.removed)}};
  out["files"] = files_json(d.files);
  if (d.packages.known) {
    const auto changes = [](const std::vector<PackageChange>& list) {
      json out = json::array();
      for (const auto& c : list)
        out.push_back({{"installer", c.installer},
                       {"name", c.name},
                       {"old_version", c.old_versions},
                       {"new_version", c.new_versions},
                       {"old_bytes", c.old_bytes},
                       {"new_bytes", c.new_bytes}});
      return out;
    };
    out["packages"] = {{"added", changes(d.packages.added)},
                       {"removed", changes(d.packages.removed)},
                       {"changed", changes(d.packages.changed)}};
  }
  json changed = json::array();
  for (const auto& f : d.findings.changed) changed.push_back(named("id", f.id, f.bytes));
  out["findings"] = {{"appeared", finding_changes_json(d.findings.appeared, true)},
                     {"gone", finding_changes_json(d.findings.gone, false)},
                     {"changed", changed}};
  json checks = json::array();
  for (const auto& c : d.checks)
    checks.push_back({{"rule", c.rule},
                      {"limit", render_detail::json_number(c.limit)},
                      {"actual", render_detail::json_number(c.actual)},
                      {"passed", c.passed}});
  out["gate"] = {{"passed", d.passed}, {"checks", checks}};
  return out;
}

// Every string is valid UTF-8 (file names carry path_bytes when they were
// not); replacing is only a guard, never an exception.
void render_json(const Report& report, std::ostream& out) {
  out << report_to_json(report).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

void render_diff_json(const DiffReport& diff, std::ostream& out) {
  out << diff_to_json(diff).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

}  // namespace imgsmith
