#include "forgiving_cli.hpp"

#include <sys/stat.h>

#include <vector>

#include "imgsmith/render/renderers.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

// The subcommand `word` names (its name or an alias), or null.
const CLI::App* subcommand_named(const CLI::App& app, const std::string& word) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return sub;
    for (const auto& alias : sub->get_aliases())
      if (alias == word) return sub;
  }
  return nullptr;
}

}  // namespace

void use_one_error_prefix(CLI::App& app) {
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    std::string where = "imgsmith";
    for (const CLI::App* at = failed; at != nullptr && at->get_parent() != nullptr;
         at = at->get_parent())
      where.insert(8, " " + at->get_name());
    return "imgsmith: error: " + std::string(e.what()) + "\n" + where +
           " --help lists what it takes.\n";
  });
}

std::optional<std::string> misspelled(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return std::nullopt;
  const std::string first = argv[1];
  if (first.starts_with("-")) return std::nullopt;
  const CLI::App* sub = subcommand_named(app, first);
  if (sub == nullptr) {
    std::vector<std::string> commands;
    for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
      commands.push_back(s->get_name());
    const auto near = closest_match(first, commands);
    return "'" + visible(first) + "' is not a command" +
           (near ? "; did you mean 'imgsmith " + *near + "'?" : std::string()) +
           " (commands: " + join(commands, ", ") + ")";
  }
  std::vector<std::string> options;
  for (const CLI::Option* option : sub->get_options())
    for (const auto& name : option->get_lnames()) options.push_back(name);
  for (int i = 2; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;  // what follows is no option
    if (!word.starts_with("--")) continue;
    const std::string name = word.substr(2, word.find('=') - 2);
    if (std::find(options.begin(), options.end(), name) != options.end()) continue;
    const auto near = closest_match(name, options);
    return "'--" + visible(name) + "' is not an option of imgsmith " + sub->get_name() +
           (near ? "; did you mean '--" + *near + "'?" : std::string()) + " (imgsmith " +
           sub->get_name() + " --help lists them)";
  }
  return std::nullopt;
}

CLI::Validator output_is_a_file() {
  return CLI::Validator(
      [](const std::string& value) -> std::string {
        struct stat st {};
        const bool is_format = std::any_of(renderers().begin(), renderers().end(),
                                           [&](const Renderer& r) { return r.name == value; });
        if (!is_format || ::stat(value.c_str(), &st) == 0) return "";
        return "-o takes the file to write, and '" + value + "' is a format: give --format " +
               value + " (with -o FILE to write it to a file)";
      },
      "FILE");
}

}  // namespace imgsmith
