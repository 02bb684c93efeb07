#include "limit_option.hpp"

#include "imgsmith/source/limits.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {
namespace {

// A default as --limit takes it back: 4MiB, 1000.
std::string as_value(std::uint64_t value, bool bytes) {
  if (bytes && value % (1ull << 20) == 0) return std::to_string(value >> 20) + "MiB";
  if (bytes && value % 1024 == 0) return std::to_string(value >> 10) + "KiB";
  return std::to_string(value);
}

}  // namespace

CLI::Option* add_limit_option(CLI::App& command, std::vector<std::string>& limits) {
  std::string help =
      "Raise or lower a cap on what is read from the image (repeatable); going over\n"
      "one is exit 2 with the cap named. NAME, and its default:";
  const InputLimits defaults;
  for (const auto& l : limit_table())
    help +=
        std::string("\n  ") + l.name + "=" + as_value(defaults.*(l.field), l.bytes) + "  " + l.what;
  return command.add_option("--limit", limits, help)
      ->type_name("NAME=VALUE")
      ->check(CLI::Validator(
          [](const std::string& value) {
            InputLimits scratch;
            try {
              apply_limit(scratch, value);
            } catch (const InputError& e) {
              // CLI11 names the option itself.
              const std::string why = e.what();
              return why.rfind("--limit ", 0) == 0 ? why.substr(8) : why;
            }
            return std::string();
          },
          "", "limit"));
}

void apply_limit_options(const std::vector<std::string>& limits) {
  InputLimits chosen;
  for (const auto& assignment : limits) apply_limit(chosen, assignment);
  set_input_limits(chosen);
}

}  // namespace imgsmith
