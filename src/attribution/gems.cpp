#include "gems.hpp"

#include <cctype>
#include <nlohmann/json.hpp>

#include "attribution_data.hpp"

namespace imgsmith::attribution_detail {
namespace {

struct Place {
  std::vector<std::string> under;  // segments, "*" for any
  bool dir = true;                 // the gem's entry is a directory (else a file)
  std::string suffix;              // a file entry's ending
};

struct GemLayout {
  std::string installer;
  std::vector<std::string> holds;
  std::vector<Place> places;
  Place cache;
};

std::vector<std::string> segments(std::string_view path) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= path.size();) {
    const std::size_t slash = std::min(path.find('/', at), path.size());
    out.emplace_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  return out;
}

Place read_place(const nlohmann::json& row) {
  return Place{segments(row.at("under").get<std::string>()), row.value("entry", "file") == "dir",
               row.value("suffix", "")};
}

const GemLayout& layout() {
  static const GemLayout table = [] {
    const auto doc =
        nlohmann::json::parse(attribution_data().at("binary-packages.json")).at("gems");
    GemLayout out;
    out.installer = doc.at("installer").get<std::string>();
    out.holds = doc.at("home_holds").get<std::vector<std::string>>();
    for (const auto& row : doc.at("places")) out.places.push_back(read_place(row));
    out.cache = read_place(doc.at("cache"));
    out.cache.dir = false;
    return out;
  }();
  return table;
}

// The gem's full name where `in_home` lies in `place`, else "".
std::string_view entry_in(const Place& place, std::string_view in_home) {
  std::size_t at = 0;
  for (const std::string& seg : place.under) {
    const std::size_t slash = in_home.find('/', at);
    if (slash == std::string_view::npos) return {};
    if (seg != "*" && in_home.substr(at, slash - at) != seg) return {};
    at = slash + 1;
  }
  const std::size_t slash = in_home.find('/', at);
  std::string_view entry = in_home.substr(at, slash == std::string_view::npos ? slash : slash - at);
  if (place.dir) return slash == std::string_view::npos ? std::string_view() : entry;
  if (slash != std::string_view::npos || !entry.ends_with(place.suffix) ||
      entry.size() == place.suffix.size())
    return {};
  return entry.substr(0, entry.size() - place.suffix.size());
}

}  // namespace

GemName split_gem_name(std::string_view full_name) {
  for (std::size_t dash = full_name.find('-'); dash != std::string_view::npos;
       dash = full_name.find('-', dash + 1)) {
    if (dash == 0 || dash + 1 >= full_name.size() ||
        !std::isdigit(static_cast<unsigned char>(full_name[dash + 1])))
      continue;
    const std::size_t end = full_name.find('-', dash + 1);
    GemName out{full_name.substr(0, dash), full_name.substr(dash + 1, end - (dash + 1)), {}};
    if (end != std::string_view::npos) out.platform = full_name.substr(end + 1);
    return out;
  }
  return GemName{full_name, {}, {}};
}

const std::vector<std::string>& gem_home_holds() { return layout().holds; }

std::string_view gem_of(std::string_view in_home) {
  for (const Place& place : layout().places)
    if (const std::string_view entry = entry_in(place, in_home); !entry.empty()) return entry;
  return {};
}

bool is_gem_cache(std::string_view in_home) { return !entry_in(layout().cache, in_home).empty(); }

const std::string& gem_cache_dir() { return layout().cache.under.front(); }

const std::string& gem_installer() { return layout().installer; }

}  // namespace imgsmith::attribution_detail
