// The report model: what every renderer and diff read. An analysis run now
// and a report saved earlier (imgsmith.analysis/v1, read back with
// report_from_json) are the same structs, so they render and compare alike.
#pragma once

#include <optional>
#include <vector>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/gate/gate.hpp"
#include "imgsmith/kernels/kernel_inventory.hpp"
#include "imgsmith/models/vram.hpp"

namespace imgsmith {

// One visible file as attribution placed it, for the formats that list
// every file (csv, html, ncdu).
struct ReportFile {
  std::string path;  // "/usr/bin/env", exact bytes
  std::uint64_t bytes = 0;
  std::uint32_t layer = 0;
  std::string category, child, origin;
};

// What a report shows: the analysis, and when attribution ran, the
// categories and the findings; `files` when the format asked for every
// file (Renderer::needs_files) and the image was read now, not a saved
// report; `models` when model headers were read (none: no models).
struct Report {
  const Analysis& analysis;
  const Attribution* attribution = nullptr;
  const std::vector<Finding>* findings = nullptr;
  const GateResult& gate;
  const std::vector<ReportFile>* files = nullptr;
  const std::vector<ModelReport>* models = nullptr;
  // The CUDA binaries' GPU code, when the image was read now with kernels
  // (none: a saved report, or --no-kernels).
  const KernelInventory* kernels = nullptr;
};

// A report that owns what it shows: one read back from a saved document
// (report_from_json), or an image's report kept as a saved one keeps it
// (diff, once it has the image's files). What a saved report leaves out
// stays empty: the analysis has no tree, metadata, file heads or
// duplicates, and the attribution only categories (total_bytes their sum)
// and packages.
// Read back, strings are as the document holds them (valid UTF-8) and file
// names their exact bytes.
struct SavedReport {
  Analysis analysis;
  std::optional<Attribution> attribution;
  std::optional<std::vector<Finding>> findings;
  GateResult gate;
  std::vector<ModelReport> models;
  std::optional<KernelInventory> kernels;  // when the report has a kernels section

  Report view() const {
    return Report{analysis,
                  attribution ? &*attribution : nullptr,
                  findings ? &*findings : nullptr,
                  gate,
                  nullptr,
                  &models,
                  kernels ? &*kernels : nullptr};
  }
};

}  // namespace imgsmith
