// The analysis of an image as one library call: a front end (the command
// line, a test, another program) fills a request and reads the result's
// typed parts; it never needs to know the order of the stages.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/gate/gate.hpp"
#include "imgsmith/kernels/kernel_inventory.hpp"
#include "imgsmith/models/vram.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/report/report.hpp"
#include "imgsmith/util/glob.hpp"

namespace imgsmith {

struct AnalyzeRequest {
  // Anything inputs.hpp opens: a saved image or an OCI layout (a file, a
  // directory, "-" for stdin), docker://, podman://, a registry reference.
  std::string image;
  // Which image, how many list entries, threads, --hash, --base-layers.
  // Its capture and progress are the library's to set: see `progress`.
  AnalyzeOptions options;
  RegistryOptions registry;
  RuleSet rules = builtin_rules();  // attribution's rules (a --rules file's first)
  std::vector<Glob> ignore;         // --ignore: out of findings, the waste list, the waste gates
  FindingFloor floor;               // below it a finding is info
  // The models' VRAM estimate assumes these; unset reads no model header
  // (--no-models) and the result has no models.
  std::optional<VramSettings> vram = VramSettings{};
  // Read the GPU code of the image's CUDA binaries (--no-kernels: not).
  bool read_kernels = true;
  GateConfig gates;         // none set: every gate passes, with no checks
  bool keep_files = false;  // every visible file in AnalyzeResult::files (csv, html, ncdu)
  ProgressFn progress;      // each stage as it starts, layers and bytes done
};

// Each stage's part, in the order analyze() runs them.
struct AnalyzeResult {
  // 1. The image read, merged and measured. Its waste list leaves out what
  // the request's `ignore` matches (ignored_waste_bytes counts it).
  Analysis analysis;
  // 2. The model files visible in the final filesystem, grouped into
  // models, with the GPU memory each needs; largest first.
  std::vector<ModelReport> models;
  // 2b. The CUDA binaries visible in the final filesystem, with the GPU
  // code each carries (none read: the request's read_kernels was false).
  std::optional<KernelInventory> kernels;
  // 3. Every visible file's category, and 4. the findings, made from the
  // same files as attribution hands them out.
  Attribution attribution;
  std::vector<Finding> findings;
  std::vector<ReportFile> files;  // with keep_files only
  // 5. The request's gates on all of the above.
  GateResult gate;

  // What the renderers show; valid as long as this result.
  Report report() const {
    return Report{
        analysis, &attribution, &findings, gate, &files, &models, kernels ? &*kernels : nullptr};
  }
};

// Runs the stages in order: read, models and kernels, --ignore, attribution with
// findings, gates. Throws InputError for an input it cannot read.
AnalyzeResult analyze(const AnalyzeRequest& request);

// The built-in rules, with those of a --rules file (if any) tried first.
// Throws InputError for a file that cannot be read.
RuleSet rules_with(const std::string& user_rules_file);

}  // namespace imgsmith
