// The analysis as the commands run it: read and merge, attribute, find.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/report/report.hpp"
#include "imgsmith/util/glob.hpp"

namespace imgsmith {

struct PipelineResult {
  Analysis analysis;
  Attribution attribution;
  std::vector<Finding> findings;
  std::vector<ReportFile> files;  // every visible file, with keep_files only
};

// The built-in rules, with those of a --rules file (if any) tried first.
RuleSet rules_with(const std::string& user_rules_file);

PipelineResult run_pipeline(const std::string& image, AnalyzeOptions options,
                            const RegistryOptions& registry, const RuleSet& rules,
                            const std::vector<Glob>& ignore, const FindingFloor& floor = {},
                            const std::optional<VramSettings>& vram = VramSettings{},
                            bool keep_files = false);

// What an analysis keeps of the files it streams: attribution's package
// databases and file heads, and unless told not to, the models' headers
// and configs.
CaptureFn analysis_capture(bool read_models);
// The models among an analysis's file heads, with their VRAM estimates.
std::vector<ModelReport> image_models(const Analysis& analysis, const VramSettings& settings);

// --progress: auto shows a progress line when stderr is a terminal (CI
// logs get the report, not a ticker), always shows it anyway (on a
// terminal one line redrawn, elsewhere a line a second at most), never
// shows none. -q is never.
enum class ProgressMode { Auto, Always, Never };
// "auto", "always" or "never"; throws InputError otherwise.
ProgressMode parse_progress_mode(const std::string& text);
inline const char* kProgressHelp =
    "Progress on stderr (stage, layers and bytes done, rate, time left): auto\n"
    "(when stderr is a terminal), always, never";

// The progress line, on stderr only: stdout holds the report.
class ProgressLine {
 public:
  explicit ProgressLine(ProgressMode mode);
  ~ProgressLine();
  void show(const std::string& text);
  // Erases the line (on a terminal): what follows starts on a clean line.
  void clear();

 private:
  bool enabled_;
  bool terminal_;
  bool shown_ = false;
  double last_line_ = -1;  // seconds since start, of the last line (not a terminal)
  std::string last_text_;
};

}  // namespace imgsmith
