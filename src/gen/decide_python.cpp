// The Pythons a project can be installed on, from the wheels its
// frameworks publish: torch 2.1 has none for 3.12, so an image of 3.12
// fails at `pip install`.
#include <algorithm>

#include "decisions.hpp"

namespace imgsmith::gen {
namespace {

// "==2.1.0+cu121" as pip compares it against releases: the local label
// names a build, not a release.
std::string without_local_labels(const std::string& specifier) {
  std::string out;
  bool skipping = false;
  for (char c : specifier) {
    if (c == '+') skipping = true;
    if (c == ',') skipping = false;
    if (!skipping) out += c;
  }
  return out;
}

// Whether the specifier allows some release of the row: an X.Y series, or
// an A-B range of X.Y.Z releases of one series.
bool row_allows(const std::string& release, const std::string& specifier) {
  const auto dash = release.find('-');
  if (dash == std::string::npos) return python_satisfies(release, specifier);
  const std::string lo = release.substr(0, dash), hi = release.substr(dash + 1);
  const auto lo_dot = lo.rfind('.'), hi_dot = hi.rfind('.');
  if (lo_dot == std::string::npos || hi_dot == std::string::npos) return false;
  const std::string series = lo.substr(0, lo_dot);
  for (int patch = std::stoi(lo.substr(lo_dot + 1)); patch <= std::stoi(hi.substr(hi_dot + 1));
       ++patch)
    if (release_satisfies(series + "." + std::to_string(patch), specifier)) return true;
  return false;
}

}  // namespace

PythonFromWheels python_from_wheels(const std::vector<Requirement>& requirements,
                                    const Tables& tables) {
  PythonFromWheels out;
  for (const auto& r : requirements) {
    const auto it = tables.wheel_pythons.find(r.name);
    if (it == tables.wheel_pythons.end()) continue;
    const std::string spec = without_local_labels(r.specifier);
    std::set<std::string> pythons;
    std::string source;
    for (const auto& row : it->second) {
      bool allowed = false;
      for (const auto& release : row.releases) allowed = allowed || row_allows(release, spec);
      if (!allowed) continue;
      pythons.insert(row.python.begin(), row.python.end());
      source = row.source;
    }
    if (pythons.empty()) {
      out.reasons.push_back({r.source, r.name + r.specifier +
                                           ": no release of gen's wheel table "
                                           "(data/python-wheels.json) matches, so it does not "
                                           "narrow the Python"});
      continue;
    }
    std::set<std::string> kept;
    for (const auto& p : pythons)
      if (!out.constrained || out.allowed.count(p) != 0) kept.insert(p);
    out.allowed = kept;
    out.constrained = true;
    std::vector<std::string> shown(pythons.begin(), pythons.end());
    std::sort(shown.begin(), shown.end(), version_less);
    out.reasons.push_back(
        {r.source, r.name + (r.specifier.empty() ? std::string(" unpinned") : r.specifier) +
                       " has wheels for Python " + join(shown, ", ") + " (" + source + ")"});
  }
  return out;
}

}  // namespace imgsmith::gen
