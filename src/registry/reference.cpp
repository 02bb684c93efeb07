// Image references, normalised as Docker normalises them (docs/docker-engine.md):
// no registry means Docker Hub, whose one-word names live under library/.
#include <sys/stat.h>

#include <algorithm>
#include <regex>

#include "imgsmith/registry/registry.hpp"

namespace imgsmith {
namespace {

// Compiled on first use, not at start: every run of imgsmith would
// otherwise compile them, --version and file analyses included.
const std::regex& component_pattern() {
  static const std::regex pattern(R"([a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)");
  return pattern;
}
const std::regex& tag_pattern() {
  static const std::regex pattern(R"([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})");
  return pattern;
}
const std::regex& digest_pattern() {
  // sha512 is refused later, by name.
  static const std::regex pattern(R"(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})");
  return pattern;
}
const std::regex& host_pattern() {
  static const std::regex pattern(
      R"((?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]+)?)");
  return pattern;
}

bool is_docker_hub(const std::string& registry) {
  return registry == "docker.io" || registry == "index.docker.io";
}

}  // namespace

std::optional<RegistryRef> RegistryRef::parse(const std::string& text) {
  RegistryRef ref;
  std::string name = text;
  if (const auto at = name.find('@'); at != std::string::npos) {
    ref.digest = name.substr(at + 1);
    name.resize(at);
    if (!std::regex_match(ref.digest, digest_pattern())) return std::nullopt;
  }
  if (name.empty()) return std::nullopt;
  std::string rest = name;
  if (const auto slash = name.find('/'); slash != std::string::npos) {
    const std::string first = name.substr(0, slash);
    // Docker's rule: a first part with a dot, a colon or an upper-case
    // letter, or "localhost", is a registry.
    const bool upper =
        std::any_of(first.begin(), first.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    if (first.find('.') != std::string::npos || first.find(':') != std::string::npos ||
        first == "localhost" || upper) {
      if (!std::regex_match(first, host_pattern())) return std::nullopt;
      ref.registry = first;
      rest = name.substr(slash + 1);
    }
  }
  if (ref.registry.empty()) ref.registry = "docker.io";
  const auto last_slash = rest.rfind('/');
  const auto colon = rest.rfind(':');
  if (colon != std::string::npos && (last_slash == std::string::npos || colon > last_slash)) {
    ref.tag = rest.substr(colon + 1);
    rest.resize(colon);
    if (!std::regex_match(ref.tag, tag_pattern())) return std::nullopt;
  }
  if (rest.empty()) return std::nullopt;
  std::size_t start = 0;
  while (true) {
    const auto end = rest.find('/', start);
    const std::string part =
        rest.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!std::regex_match(part, component_pattern())) return std::nullopt;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (is_docker_hub(ref.registry) && rest.find('/') == std::string::npos) rest = "library/" + rest;
  if (ref.registry.size() + 1 + rest.size() > 255) return std::nullopt;  // Docker's limit on a name
  ref.repository = rest;
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  return ref;
}

std::string RegistryRef::api_host() const {
  return is_docker_hub(registry) ? "registry-1.docker.io" : registry;
}

std::string RegistryRef::reference() const { return digest.empty() ? tag : digest; }

std::string RegistryRef::str() const {
  return registry + "/" + repository + (tag.empty() ? "" : ":" + tag) +
         (digest.empty() ? "" : "@" + digest);
}

bool is_registry_input(const std::string& input) {
  if (input.empty() || input == "-") return false;
  struct stat st {};
  if (::lstat(input.c_str(), &st) == 0) return false;  // an existing file always wins
  for (const char* prefix : {"/", "./", "../", "~"})
    if (input.rfind(prefix, 0) == 0) return false;
  // A missing "app.tar" is a typo'd file, not an image called app.tar.
  for (const char* ext :
       {".tar", ".tar.gz", ".tgz", ".tar.zst", ".tzst", ".gz", ".zst", ".json", ".oci"})
    if (input.size() > std::string(ext).size() &&
        input.compare(input.size() - std::string(ext).size(), std::string::npos, ext) == 0)
      return false;
  return RegistryRef::parse(input).has_value();
}

}  // namespace imgsmith
