// A device's published peaks (data/gpu-peaks.json), found by its CUDA name.
#pragma once

#include <cctype>
#include <string_view>

#include "probe_tables.hpp"

namespace imgsmith::probe_tables {

// The first row whose name is in `device` as a whole token: "L4" is not the
// start of "NVIDIA L40", nor "H200" the end of "NVIDIA GH200 480GB", so a
// GPU missing from the table gets no peak rather than a wrong one. Rows run
// most specific first ("H100 PCIe" before "H100"). nullptr when none.
inline const Peak* peak_for(std::string_view device) {
  const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (const auto& p : kPeaks) {
    const std::string_view name = p.name;
    for (auto at = device.find(name); at != std::string_view::npos;
         at = device.find(name, at + 1)) {
      const bool starts = at == 0 || !word_char(device[at - 1]);
      const bool ends = at + name.size() == device.size() || !word_char(device[at + name.size()]);
      if (starts && ends) return &p;
    }
  }
  return nullptr;
}

}  // namespace imgsmith::probe_tables
