#include "imgsmith/source/limits.hpp"

#include <charconv>

#include "imgsmith/util/error.hpp"
#include "imgsmith/util/size.hpp"

namespace imgsmith {
namespace {

InputLimits& current() {
  static InputLimits limits;
  return limits;
}

const LimitInfo* find_limit(std::string_view name) {
  for (const auto& l : limit_table())
    if (name == l.name) return &l;
  return nullptr;
}

std::string value_text(const LimitInfo& l, std::uint64_t value) {
  return l.bytes ? format_count(value) + " bytes" : format_count(value);
}

std::string known_names() {
  std::string out;
  for (const auto& l : limit_table()) out += (out.empty() ? "" : ", ") + std::string(l.name);
  return out;
}

}  // namespace

const std::vector<LimitInfo>& limit_table() {
  static const std::vector<LimitInfo> table = {
      {"manifest", &InputLimits::manifest_bytes, true,
       "bytes of a manifest, index or manifest.json"},
      {"config", &InputLimits::config_bytes, true, "bytes of an image config"},
      {"layers", &InputLimits::layers, false, "layers of one image"},
      {"entries", &InputLimits::entries, false, "entries (files, directories, links) of one layer"},
      {"path", &InputLimits::path_bytes, true, "bytes of one path in a layer"},
      {"depth", &InputLimits::depth, false, "directories one path in a layer nests"},
  };
  return table;
}

const InputLimits& input_limits() { return current(); }

void set_input_limits(const InputLimits& limits) { current() = limits; }

void apply_limit(InputLimits& limits, const std::string& assignment) {
  const auto eq = assignment.find('=');
  const LimitInfo* l =
      eq == std::string::npos ? nullptr : find_limit(std::string_view(assignment).substr(0, eq));
  if (l == nullptr)
    throw InputError("--limit " + assignment + ": expected NAME=VALUE with NAME one of " +
                     known_names());
  const std::string_view text = std::string_view(assignment).substr(eq + 1);
  std::optional<std::uint64_t> value;
  if (l->bytes) {
    value = parse_size(text);
  } else {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && end == text.data() + text.size()) value = n;
  }
  if (!value || *value == 0)
    throw InputError("--limit " + assignment + ": " + std::string(l->name) + " takes " +
                     (l->bytes ? "a size above 0, such as 16MiB" : "a whole number above 0"));
  limits.*(l->field) = *value;
}

std::string limit_hint(const char* name) {
  const LimitInfo* l = find_limit(name);
  if (l == nullptr) return std::string("the ") + name + " limit";
  return std::string("the ") + l->name + " limit of " + value_text(*l, input_limits().*(l->field)) +
         " (raise it with --limit " + l->name + "=" + (l->bytes ? "SIZE" : "N") + ")";
}

}  // namespace imgsmith
