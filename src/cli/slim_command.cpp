#include "slim_command.hpp"

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "forgiving_cli.hpp"
#include "imgsmith/api/slim.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"
#include "limit_option.hpp"
#include "output_file.hpp"
#include "progress_line.hpp"

namespace imgsmith {
namespace {

struct SlimArgs {
  std::string image;
  bool dry_run = false;
  std::string remove = "caches";
  bool no_squash = false;
  std::optional<std::size_t> keep_base;
  std::string format = "text";
  std::string output = "-";
  std::string platform;
  std::string image_name;
  std::string docker_read = "auto";
  std::vector<std::string> limits;
  bool quiet = false;
  std::string progress = "auto";
};

std::string layer_range(std::size_t first, std::size_t end) {
  return end - first == 1 ? "layer " + std::to_string(first)
                          : "layers " + std::to_string(first) + "-" + std::to_string(end - 1);
}

std::string percent_of(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return "0%";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << 100.0 * static_cast<double>(part) / static_cast<double>(whole) << "%";
  return s.str();
}

// Every path, so that the plan can be checked line by line: the removed
// files, the hiding operations the squash drops, the files a finding names
// that stay in kept layers.
void render_text(const SlimPlan& plan, const std::string& image, std::ostream& out) {
  const std::size_t layers = plan.analysis.layers.size();
  out << "imgsmith slim: the plan for " << visible(image) << " (dry run: nothing written)\n";
  if (plan.keep_base > 0) {
    std::uint64_t kept_layer_bytes = 0;
    for (std::size_t i = 0; i < plan.keep_base; ++i)
      kept_layer_bytes += plan.analysis.layers[i].size_bytes;
    out << "keep:    " << layer_range(0, plan.keep_base) << " byte for byte, "
        << format_size(kept_layer_bytes) << " ("
        << (plan.keep_evidence == "--keep-base" ? "--keep-base"
                                                : "the base image's, as the history shows")
        << ")\n";
  } else {
    out << "keep:    no layer (no base image found in the history; --keep-base N keeps the "
           "first N)\n";
  }
  if (plan.keep_base < layers) {
    if (plan.squash && layers - plan.keep_base > 1) {
      out << "squash:  " << layer_range(plan.keep_base, layers) << " into one, dropping "
          << format_size(plan.squashed_bytes) << " hidden in them ("
          << format_count(plan.squashed.size()) << " hiding operation"
          << (plan.squashed.size() == 1 ? "" : "s") << ")\n";
      for (const WasteGroup& w : plan.squashed)
        out << "  " << hidden_by_name(w.how) << "  " << format_size(w.bytes) << "  added by layer "
            << w.added_layer << ", hidden by layer " << w.hidden_layer << "  " << visible(w.path)
            << "\n";
    } else {
      out << "rewrite: each of " << layer_range(plan.keep_base, layers)
          << " that holds a removed file"
          << (plan.squash ? "" : " (--no-squash: what they hide stays)") << "\n";
    }
  }
  out << "remove:  " << format_count(plan.removed.size()) << " file"
      << (plan.removed.size() == 1 ? "" : "s") << ", " << format_size(plan.removed_bytes) << " ("
      << (plan.remove.empty() ? std::string("--remove none") : join(plan.remove, ", ")) << ")\n";
  for (const SlimPath& p : plan.removed)
    out << "  " << p.finding << "  " << format_size(p.bytes) << "  layer " << p.layer << "  "
        << visible(p.path) << "\n";
  if (!plan.kept.empty()) {
    out << "stays:   " << format_count(plan.kept.size()) << " file"
        << (plan.kept.size() == 1 ? "" : "s") << ", " << format_size(plan.kept_bytes)
        << ", that the findings name and the plan keeps\n";
    for (const SlimPath& p : plan.kept)
      out << "  " << p.finding << "  " << format_size(p.bytes) << "  layer " << p.layer << "  "
          << visible(p.path) << "  (" << p.why << ")\n";
  }
  const std::uint64_t saved = plan.before_bytes() - plan.after_bytes();
  out << "result:  " << format_size(plan.before_bytes()) << " -> "
      << format_size(plan.after_bytes()) << " of files in the layers (" << format_size(saved)
      << " less, " << percent_of(saved, plan.before_bytes()) << ")\n";
}

nlohmann::json path_json(const SlimPath& p) {
  nlohmann::json j = {{"path", utf8_replaced(p.path)},
                      {"bytes", p.bytes},
                      {"layer", p.layer},
                      {"finding", p.finding}};
  if (!p.why.empty()) j["why"] = p.why;
  return j;
}

void render_json(const SlimPlan& plan, const std::string& image, std::ostream& out) {
  nlohmann::json doc = {{"schema", "imgsmith.slim-plan/v1"},
                        {"image", utf8_replaced(image)},
                        {"dry_run", true},
                        {"layers", plan.analysis.layers.size()},
                        {"keep_layers", plan.keep_base},
                        {"keep_evidence", plan.keep_evidence},
                        {"squash", plan.squash},
                        {"remove", plan.remove},
                        {"before_bytes", plan.before_bytes()},
                        {"after_bytes", plan.after_bytes()},
                        {"squashed_bytes", plan.squashed_bytes},
                        {"removed_bytes", plan.removed_bytes},
                        {"kept_bytes", plan.kept_bytes}};
  nlohmann::json squashed = nlohmann::json::array();
  for (const WasteGroup& w : plan.squashed)
    squashed.push_back({{"path", utf8_replaced(w.path)},
                        {"how", hidden_by_name(w.how)},
                        {"added_layer", w.added_layer},
                        {"hidden_layer", w.hidden_layer},
                        {"bytes", w.bytes},
                        {"files", w.files}});
  doc["squashed"] = std::move(squashed);
  nlohmann::json removed = nlohmann::json::array(), kept = nlohmann::json::array();
  for (const SlimPath& p : plan.removed) removed.push_back(path_json(p));
  for (const SlimPath& p : plan.kept) kept.push_back(path_json(p));
  doc["removed"] = std::move(removed);
  doc["kept"] = std::move(kept);
  out << doc.dump(2) << "\n";
}

int run_slim(const SlimArgs& args) {
  if (!args.dry_run)
    throw InputError(
        "imgsmith slim writes no image yet: run it with --dry-run for the plan (every file "
        "it would remove, the bytes, the finding each came from, and the size after)");
  apply_limit_options(args.limits);
  SlimRequest request;
  request.analyze.image = args.image;
  if (!args.platform.empty())
    request.analyze.options.selector.platform = Platform::parse(args.platform);
  request.analyze.options.selector.image = args.image_name;
  request.analyze.registry.docker_read = args.docker_read;
  request.remove = parse_slim_removals(args.remove);
  request.squash = !args.no_squash;
  request.keep_base = args.keep_base;
  ProgressLine progress(args.quiet ? ProgressMode::Never : parse_progress_mode(args.progress));
  request.analyze.progress = [&progress](const std::string& s) { progress.show(s); };
  const SlimPlan plan = plan_slim(request);
  progress.clear();
  if (!args.quiet)
    for (const auto& w : plan.analysis.warnings) std::cerr << "imgsmith: warning: " << w << "\n";
  std::ostringstream out;
  if (args.format == "json")
    render_json(plan, args.image, out);
  else
    render_text(plan, args.image, out);
  write_output(args.output, out.str());
  return kExitOk;
}

}  // namespace

void register_slim_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SlimArgs>();
  CLI::App* cmd = app.add_subcommand(
      "slim",
      "Plan how to make an existing image smaller: squash the layers above the base\n"
      "image's, dropping what they hide, and remove the caches analyze finds.");
  cmd->footer(
      "The plan names every file removed, its bytes, its layer and the finding it\n"
      "came from, every hiding operation the squash drops, and the files a finding\n"
      "names that stay: a kept layer holds them, or their content has other\n"
      "names (hard links) that stay, so removing one would free nothing. The base\n"
      "image's layers (from the history, or --keep-base N) are kept byte for byte.\n"
      "The size after is the regular-file bytes over all layers, exact. Writing\n"
      "the slimmed image is not built yet: --dry-run is required.\n"
      "\n"
      "--remove takes finding ids: pip-cache, node-cache, gem-cache, build-cache,\n"
      "package-cache, apt-lists (\"caches\", the default, is these six), docs and\n"
      "static-libs (only when named), or none.\n"
      "\n"
      "Exit status: 0 the plan was made; 2 bad usage or bad input (or no --dry-run);\n"
      "70 a bug in imgsmith (please report it); 74 the plan could not be written.");
  cmd->add_option("IMAGE", args->image,
                  "Anything analyze reads: a saved image, an OCI layout, "
                  "docker://, podman://, a registry reference")
      ->required();
  cmd->add_flag("--dry-run", args->dry_run, "Print the plan and write nothing (required for now)");
  cmd->add_option("--remove", args->remove,
                  "Finding ids whose files go, comma-separated (default: caches)");
  cmd->add_flag("--no-squash", args->no_squash,
                "Keep the layers apart: what a later layer hides stays in the image");
  cmd->add_option("--keep-base", args->keep_base,
                  "Keep the first N layers byte for byte (default: the base image's, from the "
                  "history)");
  cmd->add_option("--format", args->format, "text (the default) or json (imgsmith.slim-plan/v1)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("-o,--output", args->output, "Write the plan to FILE (default stdout)")
      ->check(output_is_a_file());
  cmd->add_option("--platform", args->platform, "Platform to pick from multi-platform images");
  cmd->add_option("--image", args->image_name, "Image to pick when the archive holds several");
  cmd->add_option("--docker-read", args->docker_read,
                  "docker:// images: auto, storage, walk or save (as for analyze)")
      ->check(CLI::IsMember({"auto", "storage", "walk", "save"}));
  add_limit_option(*cmd, args->limits);
  cmd->add_flag("-q,--quiet", args->quiet, "No progress line and no warnings on stderr");
  cmd->add_option("--progress", args->progress, kProgressHelp)
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([args, &exit_code] { exit_code = run_slim(*args); });
}

}  // namespace imgsmith
