// The --manifest-only report: compressed sizes and history, as text or as
// imgsmith.manifest/v1 JSON.
#include <cstdio>

#include "format.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {

nlohmann::json manifest_to_json(const ManifestReport& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (std::size_t i = 0; i < r.layers.size(); ++i)
    layers.push_back({{"index", i},
                      {"digest", r.layers[i].digest},
                      {"compressed_bytes", r.layers[i].compressed_bytes},
                      {"created_by", json_text(r.layers[i].created_by)}});
  nlohmann::json tags = nlohmann::json::array(), warnings = nlohmann::json::array();
  for (const auto& t : r.tags) tags.push_back(json_text(t));
  for (const auto& w : r.warnings) warnings.push_back(json_text(w));
  return {{"schema", "imgsmith.manifest/v1"},
          {"source", json_text(r.source)},
          {"tags", tags},
          {"platform", json_text(r.platform)},
          {"config_digest", json_text(r.config_digest)},
          {"created", json_text(r.created)},
          {"compressed_bytes", r.compressed_bytes},
          {"layers", layers},
          {"warnings", warnings},
          {"io", {{"bytes_read", r.bytes_read}, {"seconds", r.seconds}}}};
}

void render_manifest_text(const ManifestReport& r, std::ostream& out) {
  char line[512];
  out << "IMAGE   " << visible(r.source) << "\n";
  out << "SOURCE  registry manifest (" << visible(r.platform) << ", " << r.layers.size()
      << " layers)\n";
  out << "CONFIG  " << visible(r.config_digest) << "\n\n";
  out << "LAYER  COMPRESSED       %  DIGEST         CREATED BY\n";
  for (std::size_t i = 0; i < r.layers.size(); ++i) {
    const ManifestLayer& l = r.layers[i];
    const std::string digest = visible(l.digest.substr(l.digest.find(':') + 1, 12));
    const std::string created = shorten(visible(l.created_by), 60);
    std::snprintf(line, sizeof line, "%5zu  %10s  %6s  %-13s  %s\n", i,
                  format_size(l.compressed_bytes).c_str(),
                  render_detail::percent(l.compressed_bytes, r.compressed_bytes).c_str(),
                  digest.c_str(), created.c_str());
    out << line;
  }
  std::snprintf(line, sizeof line, "TOTAL  %10s  (%s B compressed)\n\n",
                format_size(r.compressed_bytes).c_str(), format_count(r.compressed_bytes).c_str());
  out << line;
  out << "Read " << format_count(r.bytes_read)
      << " B from the registry: the manifests and the config, no layer. The uncompressed\n"
         "sizes, the waste and where the bytes are need the full analysis (without "
         "--manifest-only).\n";
}

}  // namespace imgsmith
