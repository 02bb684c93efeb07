#include "diff_command.hpp"

#include <iostream>
#include <memory>
#include <sstream>

#include "forgiving_cli.hpp"
#include "imgsmith/api/analyze.hpp"
#include "imgsmith/api/diff.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/render/renderers.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/size.hpp"
#include "limit_option.hpp"
#include "output_file.hpp"
#include "policy.hpp"
#include "progress_line.hpp"

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
  DiffRequest request;
  request.old_input = args.old_input;
  request.new_input = args.new_input;
  request.rules = rules_with(args.rules);
  request.gate = gate;
  if (!args.platform.empty()) request.selector.platform = Platform::parse(args.platform);
  request.registry.docker_read = args.docker_read;
  request.top = args.top;
  ProgressLine progress(args.quiet ? ProgressMode::Never : parse_progress_mode(args.progress));
  request.progress = [&progress](const std::string& s) { progress.show(s); };
  const DiffResult result = diff(request);
  progress.clear();
  const DiffReport& d = result.diff;
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
      "2 bad usage or bad input; 70 a bug in imgsmith (please report it); 74 the\n"
      "report could not be written.");
  cmd->add_option("OLD", args->old_input, "The baseline image or saved report")->required();
  cmd->add_option("NEW", args->new_input, "The image or report to compare with it")->required();
  add_format_option(*cmd, args->format, true);
  cmd->add_option("-o,--output", args->output, "Write the report to FILE (default stdout)")
      ->check(output_is_a_file());
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
