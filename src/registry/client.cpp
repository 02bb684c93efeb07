// The client's requests: one repository's manifests and blobs, over HTTPS
// (or plain HTTP to an insecure registry), each checked against its digest.
#include "client.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>

#include "imgsmith/source/limits.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::registry {
namespace {

const char* const kManifestAccept =
    "Accept: application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json";

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

std::string media_type_of(const std::string& content_type) {
  std::string t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t;
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

}  // namespace

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
      Request ping{base_ + "/v2/", {}, false, false, ref_.str(), "", ""};
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
  Request r{base_ + path, extra, verify_tls_, false, what, "", ""};
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
    throw InputError(
        what + ": " + ref_.registry + " refused " +
        (credentials_.present() || !credentials_.helper.empty()
             ? "the credentials for it in " + (credentials_.helper.empty()
                                                   ? credentials_.source
                                                   : "docker-credential-" + credentials_.helper)
             : std::string("anonymous access")) +
        " (401 Unauthorized); log in with the right account (docker login " + ref_.registry + ")");
  return s;
}

Document Client::manifest(const std::string& reference) const {
  const std::string what = ref_.str();
  require_sha256(reference, what);
  auto s = get("/v2/" + ref_.repository + "/manifests/" + reference, {kManifestAccept}, what);
  if (s->status() != 200) fail(*s, what, reference);
  Document d;
  const std::uint64_t limit = input_limits().manifest_bytes;
  if (const std::string length = s->header("content-length");
      !length.empty() && std::strtoull(length.c_str(), nullptr, 10) > limit)
    throw InputError(what + ": the manifest " + reference + " is " + length + " bytes, over " +
                     limit_hint("manifest"));
  d.body = s->read_all(static_cast<std::size_t>(limit));
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

}  // namespace imgsmith::registry
