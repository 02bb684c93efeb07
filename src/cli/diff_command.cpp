#include "diff_command.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "imgsmith/diff/diff.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/render/renderers.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/size.hpp"
#include "limit_option.hpp"
#include "output_file.hpp"
#include "pipeline.hpp"
#include "policy.hpp"

namespace imgsmith {
namespace {

struct DiffArgs {
  std::string old_input, new_input;
  std::vector<std::string> limits;  // --limit NAME=VALUE
  std::string format = "text";
  std::string output = "-";
  std::vector<std::string> reports;  // --report FORMAT=FILE
  std::string max_growth;
  std::string platform;
  std::string rules;
  std::string policy;
  std::string docker_read = "auto";
  bool no_policy = false;
  bool quiet = false;
  std::string progress = "auto";
  std::size_t top = 10;
};

// One side of the comparison: its report, and every file when it is an
// image analysed now (a saved report lists only its largest files).
struct Side {
  SavedReport report;
  std::optional<FileSet> files;
};

// A saved report is a JSON document; anything else is an image to analyse.
std::optional<nlohmann::json> saved_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  char c = 0;
  while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  if (!in || c != '{') return std::nullopt;
  std::ostringstream text;
  text << c << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not valid JSON (" + e.what() +
                     "); give an image or a report "
                     "saved with imgsmith analyze --format json");
  }
}

Side side(const std::string& input, const DiffArgs& args, const RuleSet& rules,
          ProgressLine& progress) {
  if (auto report = saved_report(input)) {
    if (report->value("schema", "") != "imgsmith.analysis/v1")
      throw InputError(input + ": a JSON file that is not an imgsmith.analysis/v1 report");
    try {
      return Side{report_from_json(*report), std::nullopt};
    } catch (const InputError& e) {
      throw InputError(input + ": " + e.what());
    }
  }
  AnalyzeOptions options;
  if (!args.platform.empty()) options.selector.platform = Platform::parse(args.platform);
  options.top = args.top;
  options.progress = [&progress, &input](const std::string& s) { progress.show(input + ": " + s); };
  RegistryOptions registry;
  registry.docker_read = args.docker_read;
  PipelineResult r = run_pipeline(input, options, registry, rules, {});
  Side out{SavedReport{}, std::nullopt};
  if (r.analysis.tree) out.files = file_set(*r.analysis.tree);
  // Kept as a saved report would keep it: the tree and the files read for
  // attribution go (an image can hold millions of files), the lists are cut
  // to --top.
  r.analysis.tree.reset();
  r.analysis.metadata.clear();
  r.analysis.file_heads.clear();
  r.analysis.duplicates.clear();
  if (r.analysis.waste.size() > r.analysis.top) r.analysis.waste.resize(r.analysis.top);
  out.report.analysis = std::move(r.analysis);
  out.report.attribution = std::move(r.attribution);
  out.report.findings = std::move(r.findings);
  return out;
}

int run_diff(DiffArgs args) {
  apply_limit_options(args.limits);
  if (const auto p = command_policy(args.policy, args.no_policy)) {
    if (args.max_growth.empty() && p->max_growth) args.max_growth = *p->max_growth;
    if (args.rules.empty() && p->rules) args.rules = *p->rules;
  }
  DiffGate gate;
  if (!args.max_growth.empty()) {
    if (const auto pct = parse_percent(args.max_growth)) {
      gate.max_growth_percent = *pct;
    } else if (const auto bytes = parse_size(args.max_growth)) {
      gate.max_growth_bytes = *bytes;
    } else {
      throw InputError("--max-growth '" + args.max_growth +
                       "': a size (50MB) or a percentage (5%)");
    }
  }
  const RuleSet rules = rules_with(args.rules);
  ProgressLine progress(args.quiet ? ProgressMode::Never : parse_progress_mode(args.progress));
  const Side old_side = side(args.old_input, args, rules, progress);
  const Side new_side = side(args.new_input, args, rules, progress);
  progress.clear();
  DiffOptions options;
  options.old_files = old_side.files ? &*old_side.files : nullptr;
  options.new_files = new_side.files ? &*new_side.files : nullptr;
  options.top = args.top;
  const DiffReport d = diff_reports(old_side.report.view(), new_side.report.view(), gate, options);
  std::ostringstream out;
  render_diff(args.format, d, out);
  write_output(args.output, out.str());
  for (const ExtraReport& extra : extra_reports(args.reports)) {
    std::ostringstream more;
    render_diff(extra.format, d, more);
    write_output(extra.path, more.str());
  }
  if (!d.passed) {
    std::cerr << "imgsmith: gate failed: the image grew past --max-growth " << args.max_growth
              << "\n";
    return kExitGateFailed;
  }
  return kExitOk;
}

}  // namespace

void register_diff_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Compare two images: growth per category and layer, files that came, went\n"
      "or changed size, findings that appeared or went away.");
  cmd->footer(
      "OLD and NEW are anything analyze reads, or a report saved earlier with\n"
      "`imgsmith analyze --format json -o base.json`, so CI can keep a baseline file.\n"
      "Two images are compared file by file; a saved report knows only its largest\n"
      "files, so against one a file is said to have entered or left that list\n"
      "unless it is known to be new or gone.\n"
      "\n"
      "Exit status: 0 the gate passed (or none was set); 1 --max-growth was exceeded;\n"
      "2 bad usage or bad input.");
  cmd->add_option("OLD", args->old_input, "The baseline image or saved report")->required();
  cmd->add_option("NEW", args->new_input, "The image or report to compare with it")->required();
  add_format_option(*cmd, args->format, true);
  cmd->add_option("-o,--output", args->output, "Write the report to FILE (default stdout)");
  add_report_option(*cmd, args->reports, true);
  cmd->add_option("--max-growth", args->max_growth,
                  "Fail when the final size grew by more than SIZE, or PCT% of the old size");
  cmd->add_option("--platform", args->platform, "Platform to pick from multi-platform images");
  add_limit_option(*cmd, args->limits);
  cmd->add_option("--docker-read", args->docker_read,
                  "docker:// images: auto, storage, walk or save (as for analyze)")
      ->check(CLI::IsMember({"auto", "storage", "walk", "save"}));
  cmd->add_option("--top", args->top, "How many files to list in each list (the counts count all)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--rules", args->rules, "Attribution rules tried before the built-in ones");
  cmd->add_option("--policy", args->policy, "Read max-growth from this imgsmith.toml ([diff])");
  cmd->add_flag("--no-policy", args->no_policy, "Ignore any imgsmith.toml");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress line on stderr");
  cmd->add_option("--progress", args->progress, kProgressHelp)
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([args, &exit_code] { exit_code = run_diff(*args); });
}

}  // namespace imgsmith
