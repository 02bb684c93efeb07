// A reader for dive's .dive-ci: a YAML file of which only the `rules:` block
// of scalar values matters. Block mappings, comments and quoted scalars are
// understood; anything richer inside `rules:` is reported, not guessed at.
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "imgsmith/gate/gate.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

// Drops a trailing " # comment" outside quotes.
std::string strip_comment(const std::string& line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(line[i - 1])))) {
      return line.substr(0, i);
    }
  }
  return line;
}

std::string unquote(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    return v.substr(1, v.size() - 2);
  return v;
}

bool is_off(std::string v) {
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v.empty() || v == "disabled" || v == "off" || v == "false";
}

double parse_ratio(const std::string& v, const std::string& key, const std::string& label) {
  std::size_t used = 0;
  double r = 0;
  try {
    r = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || used == 0)
    throw InputError(label + ": rules." + key + ": '" + v + "' is not a number");
  if (!(r >= 0.0 && r <= 1.0))
    throw InputError(label + ": rules." + key + ": " + v +
                     " is outside 0..1 (it is a ratio: 0.9 means 90%)");
  return r;
}

}  // namespace

void parse_dive_ci(const std::string& text, const std::string& label, GateConfig& config) {
  // dive's defaults apply to the rules a file leaves out.
  config.dive_lowest_efficiency = 0.9;
  config.dive_highest_user_wasted_percent = 0.1;
  std::istringstream in(text);
  std::string raw;
  bool in_rules = false;
  std::size_t rules_indent = std::string::npos;
  int line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string line = strip_comment(raw);
    if (trim(line).empty() || trim(line) == "---") continue;
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == 0) {
      in_rules = trim(line) == "rules:";
      rules_indent = std::string::npos;
      continue;
    }
    if (!in_rules) continue;
    if (rules_indent == std::string::npos) rules_indent = indent;
    if (indent != rules_indent) continue;  // deeper structure: not a rule value
    const std::string item(trim(line));
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos)
      throw InputError(label + ":" + std::to_string(line_no) +
                       ": expected 'key: value' under "
                       "rules:, found '" +
                       item + "'");
    const std::string key(trim(item.substr(0, colon)));
    const std::string value = unquote(std::string(trim(item.substr(colon + 1))));
    if (key == "lowestEfficiency") {
      config.dive_lowest_efficiency.reset();
      if (!is_off(value)) config.dive_lowest_efficiency = parse_ratio(value, key, label);
    } else if (key == "highestUserWastedPercent") {
      config.dive_highest_user_wasted_percent.reset();
      if (!is_off(value)) config.dive_highest_user_wasted_percent = parse_ratio(value, key, label);
    } else if (key == "highestWastedBytes") {
      config.dive_highest_wasted_bytes.reset();
      if (!is_off(value)) {
        const auto bytes = parse_size(value);
        if (!bytes)
          throw InputError(label + ": rules.highestWastedBytes: '" + value +
                           "' is not a size (e.g. 20MB, 1.5GiB)");
        config.dive_highest_wasted_bytes = *bytes;
      }
    }
  }
}

void load_dive_ci(const std::string& path, GateConfig& config) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read the dive CI file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  parse_dive_ci(text.str(), path, config);
}

}  // namespace imgsmith
