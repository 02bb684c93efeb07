// Package managers' own state files (data/package-manager-state.json).
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "imgsmith/analysis/waste.hpp"
#include "imgsmith/util/glob.hpp"

namespace imgsmith {

const std::map<std::string, std::string>& analysis_data();

bool is_package_manager_state(std::string_view path) {
  static const std::vector<Glob> globs = [] {
    std::vector<Glob> out;
    const auto doc = nlohmann::json::parse(analysis_data().at("package-manager-state.json"));
    for (const auto& row : doc.at("state"))
      for (const auto& p : row.at("paths")) out.emplace_back(p.get<std::string>());
    return out;
  }();
  return matches_any(globs, path);
}

}  // namespace imgsmith
