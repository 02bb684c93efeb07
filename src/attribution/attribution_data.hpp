// The data files attribution carries (data/attribution-rules.json,
// data/findings.json, data/node-packages.json, data/binary-packages.json), embedded at build time
// by cmake/embed_text.cmake: file name -> text.
#pragma once

#include <map>
#include <string>

namespace imgsmith {

const std::map<std::string, std::string>& attribution_data();

}  // namespace imgsmith
