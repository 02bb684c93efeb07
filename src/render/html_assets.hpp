// The HTML report's style and script (src/render/html/), embedded at build
// time by cmake/embed_text.cmake: file name -> text.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

namespace imgsmith {

const std::map<std::string, std::string>& html_assets();

inline const std::string& html_asset(const std::string& name) {
  const auto& all = html_assets();
  const auto it = all.find(name);
  if (it == all.end()) throw std::logic_error("no embedded HTML asset " + name);
  return it->second;
}

}  // namespace imgsmith
