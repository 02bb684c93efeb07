// The credentials ~/.docker/config.json (or $DOCKER_CONFIG) holds for a
// registry, read as Docker reads them.
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "client.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::registry {
namespace {

using nlohmann::json;

bool is_docker_hub(const std::string& host) {
  return host == "docker.io" || host == "index.docker.io" || host == "registry-1.docker.io";
}

// "https://index.docker.io/v1/" -> "index.docker.io"
std::string config_key_host(std::string key) {
  for (const char* scheme : {"https://", "http://"})
    if (key.rfind(scheme, 0) == 0) key = key.substr(std::string(scheme).size());
  if (const auto slash = key.find('/'); slash != std::string::npos) key.resize(slash);
  return key;
}

bool same_registry(const std::string& a, const std::string& b) {
  return a == b || (is_docker_hub(a) && is_docker_hub(b));
}

}  // namespace

Credentials credentials_for(const std::string& registry, const std::string& config_dir) {
  std::string dir = config_dir;
  if (dir.empty()) {
    if (const char* env = std::getenv("DOCKER_CONFIG"); env != nullptr && *env != '\0')
      dir = env;
    else if (const char* home = std::getenv("HOME"); home != nullptr)
      dir = std::string(home) + "/.docker";
  }
  Credentials c;
  if (dir.empty()) return c;
  const std::string path = dir + "/config.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return c;
  std::ostringstream text;
  text << in.rdbuf();
  json config;
  try {
    config = json::parse(text.str());
  } catch (const json::exception&) {
    throw InputError(path +
                     ": not valid JSON; fix it, or point DOCKER_CONFIG at another directory");
  }
  c.source = path;
  // As Docker does: a credential helper named for the registry wins over
  // anything stored in auths.
  if (const auto helpers = config.find("credHelpers");
      helpers != config.end() && helpers->is_object())
    for (const auto& [host, helper] : helpers->items())
      if (same_registry(host, registry) && helper.is_string()) c.helper = helper.get<std::string>();
  if (!c.helper.empty()) return c;
  if (const auto auths = config.find("auths"); auths != config.end() && auths->is_object())
    for (const auto& [key, entry] : auths->items()) {
      if (!same_registry(config_key_host(key), registry) || !entry.is_object()) continue;
      if (const auto a = entry.find("auth");
          a != entry.end() && a->is_string() && !a->get<std::string>().empty()) {
        std::string pair;
        try {
          pair = base64_decode(a->get<std::string>());
        } catch (const std::invalid_argument&) {
          throw InputError(path + ": the auth entry for " + key + " is not base64; log in again");
        }
        const auto colon = pair.find(':');
        if (colon == std::string::npos)
          throw InputError(path + ": the auth entry for " + key +
                           " is not user:password; log in again");
        c.username = pair.substr(0, colon);
        c.password = pair.substr(colon + 1);
      } else if (entry.contains("username") && entry.contains("password")) {
        c.username = entry.value("username", "");
        c.password = entry.value("password", "");
      }
      if (const auto token = entry.find("identitytoken");
          token != entry.end() && token->is_string() && !token->get<std::string>().empty())
        c.identity_token = token->get<std::string>();
    }
  if (!c.present() && c.helper.empty() && config.contains("credsStore") &&
      config["credsStore"].is_string())
    c.helper = config["credsStore"].get<std::string>();
  return c;
}

Credentials with_helper_answer(Credentials c, const HelperAnswer& answer) {
  if (!answer.found) return c;
  // docker-credential-helpers' convention for an OAuth refresh token.
  if (answer.username == "<token>") {
    c.identity_token = answer.secret;
  } else {
    c.username = answer.username;
    c.password = answer.secret;
  }
  return c;
}

}  // namespace imgsmith::registry
