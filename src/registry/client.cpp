#include "client.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::registry {
namespace {

using nlohmann::json;

constexpr std::size_t kDocumentLimit = 64u << 20;
constexpr std::size_t kErrorBodyLimit = 64u << 10;

const char* const kManifestAccept =
    "Accept: application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json";

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

std::string host_of_url(const std::string& url) {
  std::string rest = url.substr(url.find("://") == std::string::npos ? 0 : url.find("://") + 3);
  return rest.substr(0, rest.find_first_of("/?#"));
}

// localhost, 127.x.y.z written as numbers, or [::1]; a name such as
// 127.example.com is not loopback.
bool loopback(const std::string& host_port) {
  std::string host = host_port;
  if (const auto colon = host.rfind(':');
      colon != std::string::npos && host.find(']') == std::string::npos)
    host.resize(colon);
  if (host == "localhost" || host == "[::1]") return true;
  int parts = 0;
  std::size_t i = 0;
  if (host.rfind("127.", 0) != 0) return false;
  while (i < host.size()) {
    std::size_t digits = 0;
    while (i < host.size() && std::isdigit(static_cast<unsigned char>(host[i]))) ++i, ++digits;
    if (digits == 0 || digits > 3) return false;
    ++parts;
    if (i < host.size() && host[i++] != '.') return false;
  }
  return parts == 4;
}

std::string percent_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string media_type_of(const std::string& content_type) {
  std::string t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t;
}

}  // namespace

// ----- credentials ---------------------------------------------------------

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
      if (entry.contains("identitytoken") && c.password.empty())
        c.helper = "identity-token";  // an OAuth refresh token, which imgsmith does not exchange
    }
  if (!c.present() && c.helper.empty() && config.contains("credsStore") &&
      config["credsStore"].is_string())
    c.helper = config["credsStore"].get<std::string>();
  return c;
}

std::map<std::string, std::string> parse_challenge(const std::string& header) {
  std::map<std::string, std::string> out;
  std::size_t i = header.find(' ');
  out["scheme"] = to_lower(header.substr(0, i));
  while (i != std::string::npos && i < header.size()) {
    while (i < header.size() && (header[i] == ' ' || header[i] == ',')) ++i;
    const auto eq = header.find('=', i);
    if (eq == std::string::npos) break;
    const std::string key = to_lower(header.substr(i, eq - i));
    std::string value;
    i = eq + 1;
    if (i < header.size() && header[i] == '"') {
      ++i;
      while (i < header.size() && header[i] != '"') {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        value += header[i++];
      }
      ++i;
    } else {
      const auto end = header.find(',', i);
      value = header.substr(i, end == std::string::npos ? std::string::npos : end - i);
      i = end;
    }
    out[key] = value;
  }
  return out;
}

// ----- the client ----------------------------------------------------------

bool Client::insecure_host(const std::string& host) const {
  return loopback(host) || std::find(insecure_.begin(), insecure_.end(), host) != insecure_.end();
}

Client::Client(RegistryRef ref, const RegistryOptions& options)
    : ref_(std::move(ref)),
      insecure_(options.insecure),
      http_(HttpOptions{options.connect_timeout_s, options.stall_timeout_s, options.retries, 0.5}) {
  credentials_ = credentials_for(ref_.registry, options.docker_config);
  const std::string host = ref_.api_host();
  const bool insecure = insecure_host(host) || insecure_host(ref_.registry);
  verify_tls_ = !insecure;
  base_ = "https://" + host;
  if (insecure) {
    // As Docker does for an insecure registry: HTTPS without verification,
    // and plain HTTP when the registry does not speak TLS at all.
    try {
      Request ping{base_ + "/v2/", {}, false, false, ref_.str(), ""};
      HttpOptions once = http_.options();
      Http probe(HttpOptions{once.connect_timeout_s, once.stall_timeout_s, 0, 0});
      probe.open(ping);
    } catch (const InputError&) {
      base_ = "http://" + host;
    }
  }
}

std::unique_ptr<HttpStream> Client::get(const std::string& path, const Headers& extra,
                                        const std::string& what) const {
  Request r{base_ + path, extra, verify_tls_, false, what, ""};
  {
    std::lock_guard<std::mutex> lock(auth_lock_);
    if (!auth_header_.empty() && std::chrono::steady_clock::now() < auth_expires_)
      r.headers.push_back(auth_header_);
  }
  auto s = http_.open(r);
  if (s->status() != 401) return s;
  const auto challenge = parse_challenge(s->header("www-authenticate"));
  const std::string header = authorization(challenge, what);
  r.headers = extra;
  r.headers.push_back(header);
  s = http_.open(r);
  if (s->status() == 401)
    throw InputError(what + ": " + ref_.registry + " refused " +
                     (credentials_.present() ? "the credentials for it in " + credentials_.source
                                             : std::string("anonymous access")) +
                     " (401 Unauthorized); log in with the right account (docker login " +
                     ref_.registry + ")");
  return s;
}

std::string Client::authorization(const std::map<std::string, std::string>& challenge,
                                  const std::string& what) const {
  const auto field = [&](const char* k) {
    const auto it = challenge.find(k);
    return it == challenge.end() ? std::string() : it->second;
  };
  const std::string scheme = field("scheme");
  const std::string basic =
      credentials_.present() && credentials_.helper.empty()
          ? "Authorization: Basic " +
                base64_encode(credentials_.username + ":" + credentials_.password)
          : "";
  auto needs_credentials = [&](const std::string& why) -> InputError {
    if (credentials_.helper == "identity-token")
      return InputError(
          what + ": " + ref_.registry + " " + why + ", and " + credentials_.source +
          " holds only an identity token (an OAuth refresh token) for it, which imgsmith does not "
          "exchange; store a user name and password or an access token in auths");
    if (!credentials_.helper.empty())
      return InputError(what + ": " + ref_.registry + " " + why +
                        ", and its credentials are kept by the credential "
                        "helper docker-credential-" +
                        credentials_.helper +
                        ", which imgsmith does not run; put them "
                        "in config.json's auths (docker login with no credsStore) or use a "
                        "DOCKER_CONFIG that has them");
    return InputError(what + ": " + ref_.registry + " " + why +
                      " and no credentials for it were found" +
                      (credentials_.source.empty() ? "" : " in " + credentials_.source) +
                      "; log in first (docker login " + ref_.registry + ")");
  };
  if (scheme == "basic") {
    if (basic.empty()) throw needs_credentials("asks for a user name and password");
    std::lock_guard<std::mutex> lock(auth_lock_);
    auth_header_ = basic;
    auth_expires_ = std::chrono::steady_clock::time_point::max();
    return basic;
  }
  if (scheme != "bearer" || field("realm").empty())
    throw InputError(what + ": " + ref_.registry +
                     " asks for authentication imgsmith does not know ('" + scheme + "')");
  std::string scope = field("scope");
  if (scope.empty()) scope = "repository:" + ref_.repository + ":pull";
  std::string url = field("realm");
  url += (url.find('?') == std::string::npos ? "?" : "&");
  url += "scope=" + percent_encode(scope);
  if (!field("service").empty()) url += "&service=" + percent_encode(field("service"));
  const std::string realm_host = host_of_url(url);
  const bool realm_plain = url.rfind("http://", 0) == 0;
  if (url.rfind("https://", 0) != 0 && !realm_plain)
    throw InputError(what + ": the token realm " + field("realm") + " is not an http(s) URL");
  // Credentials go in clear text only to a host the user called insecure.
  if (realm_plain && !basic.empty() && !insecure_host(realm_host))
    throw InputError(
        what + ": " + ref_.registry + " sends its token requests to " + field("realm") +
        " over plain HTTP; imgsmith will not send the credentials there (--insecure-registry " +
        realm_host + " allows it)");
  Request token_request{
      url, {}, !insecure_host(realm_host), false, what + " (token from " + field("realm") + ")",
      ""};
  if (!basic.empty()) token_request.headers.push_back(basic);
  const Http::Response r = http_.fetch(token_request, kErrorBodyLimit);
  if (r.status == 401 || r.status == 403) {
    if (basic.empty())
      throw needs_credentials("gives no anonymous token (" + std::to_string(r.status) + ")");
    throw InputError(what + ": the token service " + field("realm") +
                     " refused the credentials for " + ref_.registry + " in " +
                     credentials_.source + " (" + std::to_string(r.status) +
                     "); log in again (docker login " + ref_.registry + ")");
  }
  if (r.status != 200)
    throw InputError(what + ": the token service " + field("realm") + " answered " +
                     std::to_string(r.status));
  json doc;
  try {
    doc = json::parse(r.body);
  } catch (const json::exception&) {
    throw InputError(what + ": the token service " + field("realm") +
                     " answered with something that is not JSON");
  }
  std::string token = doc.value("token", "");
  if (token.empty()) token = doc.value("access_token", "");
  if (token.empty())
    throw InputError(what + ": the token service " + field("realm") + " gave no token");
  long lifetime = 60;
  if (const auto e = doc.find("expires_in"); e != doc.end() && e->is_number_integer())
    lifetime = std::clamp(e->get<long>(), 5L, 86400L);
  const std::string header = "Authorization: Bearer " + token;
  std::lock_guard<std::mutex> lock(auth_lock_);
  auth_header_ = header;
  // Renewed a little early, so a long download never starts on a dying token.
  auth_expires_ =
      std::chrono::steady_clock::now() + std::chrono::seconds(std::max(5L, lifetime - 10));
  return header;
}

void Client::fail(HttpStream& response, const std::string& what, const std::string& subject) const {
  std::string code;
  std::string message;
  try {
    const json doc = json::parse(response.read_all(kErrorBodyLimit));
    if (doc.contains("errors") && doc["errors"].is_array() && !doc["errors"].empty()) {
      code = doc["errors"][0].value("code", "");
      message = doc["errors"][0].value("message", "");
    }
  } catch (const std::exception&) {
    // Not every error has a JSON body; the status says enough.
  }
  const long status = response.status();
  const std::string where = ref_.registry + "/" + ref_.repository;
  if (status == 404 && code == "NAME_UNKNOWN")
    throw InputError(what + ": no repository " + ref_.repository + " on " + ref_.registry +
                     "; check the name");
  const bool tag = subject.find(':') == std::string::npos && subject.rfind("blob ", 0) != 0;
  if (status == 404 && tag)
    throw InputError(what + ": no tag '" + subject + "' in " + where + "; check the tag");
  if (status == 404)
    throw InputError(what + ": " + where + " has no " + subject +
                     (code.empty() ? "" : " (" + code + ")"));
  if (status == 429) {
    std::string limits;
    for (const char* h : {"ratelimit-limit", "ratelimit-remaining", "retry-after"})
      if (!response.header(h).empty()) limits += std::string(", ") + h + ": " + response.header(h);
    throw InputError(what + ": " + ref_.registry +
                     " is rate-limiting this client (429 Too Many Requests" + limits +
                     "); wait, or log in for a higher limit");
  }
  if (status == 403)
    throw InputError(what + ": " + ref_.registry + " denies access to " + ref_.repository +
                     " (403" + (message.empty() ? "" : ": " + message) + ")");
  throw InputError(what + ": " + ref_.registry + " answered " + std::to_string(status) +
                   (code.empty() ? "" : " " + code) + (message.empty() ? "" : ": " + message));
}

// imgsmith checks sha256, the digest every registry and image tool uses; a
// document or blob named by any other algorithm could not be checked, so it
// is refused rather than trusted.
void require_sha256(const std::string& digest, const std::string& what) {
  if (digest.find(':') != std::string::npos && digest.rfind("sha256:", 0) != 0)
    throw InputError(what + ": " + digest +
                     " uses a digest algorithm imgsmith cannot verify (only sha256); "
                     "refusing to trust it");
}

Document Client::manifest(const std::string& reference) const {
  const std::string what = ref_.str();
  require_sha256(reference, what);
  auto s = get("/v2/" + ref_.repository + "/manifests/" + reference, {kManifestAccept}, what);
  if (s->status() != 200) fail(*s, what, reference);
  Document d;
  d.body = s->read_all(kDocumentLimit);
  d.media_type = media_type_of(s->header("content-type"));
  d.digest = sha256_digest(d.body);
  const std::string announced = s->header("docker-content-digest");
  if (reference.rfind("sha256:", 0) == 0 && d.digest != reference)
    throw InputError(what + ": the manifest " + reference + " arrived with digest " + d.digest +
                     "; the registry's copy is corrupt or was tampered with");
  if (!announced.empty() && announced != d.digest && announced.rfind("sha256:", 0) == 0)
    throw InputError(what + ": the manifest's digest is " + d.digest +
                     ", but the registry announced " + announced +
                     "; the registry's copy is corrupt or was tampered with");
  return d;
}

Document Client::blob(const std::string& digest, std::size_t limit) const {
  const std::string what = ref_.str();
  auto s = blob_stream(digest);
  Document d;
  d.body = s->read_all(limit);
  d.media_type = media_type_of(s->header("content-type"));
  d.digest = sha256_digest(d.body);
  if (d.digest != digest)
    throw InputError(what + ": the blob " + digest + " arrived with digest " + d.digest +
                     "; the registry's copy is corrupt or was tampered with");
  return d;
}

std::unique_ptr<HttpStream> Client::blob_stream(const std::string& digest) const {
  const std::string what = ref_.str();
  require_sha256(digest, what);
  auto s = get("/v2/" + ref_.repository + "/blobs/" + digest, {}, what);
  if (s->status() != 200) fail(*s, what, "blob " + digest);
  return s;
}

// ----- digest checking -----------------------------------------------------

std::size_t DigestingStream::read(void* buf, std::size_t size) {
  const std::size_t n = in_.read(buf, size);
  sha_.update(buf, n);
  seen_ += n;
  if (size_ != 0 && seen_ > size_)
    throw InputError(what_ + ": more than the " + std::to_string(size_) +
                     " bytes its manifest gives; the registry's copy does not match the manifest");
  return n;
}

bool DigestingStream::matches() {
  char chunk[64 * 1024];
  while (read(chunk, sizeof chunk) != 0) {
  }
  if (actual_.empty()) actual_ = sha_.digest();
  return actual_ == expected_ && (size_ == 0 || seen_ == size_);
}

void DigestingStream::verify() {
  if (matches()) return;
  throw InputError(what_ + ": digest mismatch: the manifest says " + expected_ + " (" +
                   std::to_string(size_) + " bytes), the registry sent " + actual_ + " (" +
                   std::to_string(seen_) +
                   " bytes); the registry's copy is corrupt or was tampered with");
}

}  // namespace imgsmith::registry
