// An image from tests/support/image_builder.hpp, saved, analysed with the
// package databases and model heads captured, attributed with the built-in
// rules and searched for findings (no significance floor): what the
// provenance and evidence tests read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "image_builder.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/inputs/inputs.hpp"

namespace imgsmith::testing {

struct Analysed {
  TempDir tmp;
  Analysis analysis;
  Attribution attribution;
  std::vector<Finding> findings;

  explicit Analysed(const Image& image, std::optional<std::size_t> base_layers = {}) {
    write_file(tmp / "img.tar", docker_legacy_save(image));
    AnalyzeOptions options;
    options.capture = attribution_capture_inspected();
    options.base_layers = base_layers;
    analysis = analyze_image(tmp / "img.tar", options);
    attribution = attribute(analysis, builtin_rules());
    findings = find_waste(analysis, attribution, {}, FindingFloor{0, 0.0});
  }
  std::string category_of(const std::string& path) const {
    for (const auto& f : attribution.files)
      if (f.path == path) return attribution.categories[f.category].name + "/" + f.child;
    return "missing";
  }
  const Finding* finding(const std::string& id) const {
    for (const auto& f : findings)
      if (f.id == id) return &f;
    return nullptr;
  }
};

}  // namespace imgsmith::testing
