// docker://NAME: an image from the local Docker daemon, through the Engine
// API's GET /images/{name}/get, which streams `docker save` output. The
// stream goes straight into the one-pass tar store: no temporary file, no
// second copy of a multi-GB image on disk.
#include <nlohmann/json.hpp>

#include <cstdlib>

#include "http.hpp"
#include "imgsmith/error.hpp"
#include "imgsmith/registry.hpp"

namespace imgsmith {
namespace {

struct DaemonEndpoint {
  std::string base;    // http://localhost, or http://host:port for tcp://
  std::string socket;  // the unix socket, when there is one
  std::string shown;   // for messages
};

DaemonEndpoint daemon_endpoint() {
  const char* env = std::getenv("DOCKER_HOST");
  const std::string host = env != nullptr && *env != '\0' ? env : "unix:///var/run/docker.sock";
  if (host.rfind("unix://", 0) == 0) return {"http://localhost", host.substr(7), host};
  if (host.rfind("tcp://", 0) == 0) {
    const char* tls = std::getenv("DOCKER_TLS_VERIFY");
    if (tls != nullptr && *tls != '\0')
      throw InputError("DOCKER_HOST=" + host + " with DOCKER_TLS_VERIFY: imgsmith does not speak TLS to the "
                       "daemon; point DOCKER_HOST at its unix socket");
    return {"http://" + host.substr(6), "", host};
  }
  throw InputError("DOCKER_HOST=" + host + ": imgsmith reaches the Docker daemon over unix:// or tcp:// only");
}

std::string daemon_message(const std::string& body) {
  const auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_object() && doc.contains("message") && doc["message"].is_string()) return doc["message"].get<std::string>();
  return body.substr(0, 200);
}

}  // namespace

std::unique_ptr<BlobStore> open_docker_daemon(const std::string& name, const ProgressFn& progress,
                                              const CaptureFn& capture, const CaptureFn& stream_hash) {
  const std::string what = "docker://" + name;
  if (name.empty() || name.find_first_of(" \t\n?#") != std::string::npos)
    throw InputError(what + ": give an image the daemon knows, e.g. docker://app:1");
  const DaemonEndpoint at = daemon_endpoint();
  // The daemon assembles the tar before it sends much, so it may be silent
  // for a while on a large image.
  registry::Http http(registry::HttpOptions{10, 600, 0, 0});
  registry::Request info{at.base + "/images/" + name + "/json", {}, true, false, what, at.socket};
  registry::Http::Response r;
  try {
    r = http.fetch(info, 16u << 20);
  } catch (const InputError&) {
    throw InputError(what + ": cannot reach the Docker daemon at " + at.shown +
                     "; is dockerd running, and may this user use its socket? (DOCKER_HOST chooses another)");
  }
  if (r.status == 404)
    throw InputError(what + ": the Docker daemon at " + at.shown + " has no image '" + name +
                     "'; `docker images` lists what it has");
  if (r.status != 200)
    throw InputError(what + ": the Docker daemon answered " + std::to_string(r.status) + ": " + daemon_message(r.body));
  if (progress) progress(what + ": reading the image from the daemon");
  registry::Request get{at.base + "/images/" + name + "/get", {}, true, false, what, at.socket};
  auto body = http.open(get);
  if (body->status() != 200)
    throw InputError(what + ": the Docker daemon answered " + std::to_string(body->status()) + ": " +
                     daemon_message(body->read_all(1u << 20)));
  return open_stream_store(*body, what, progress, capture, stream_hash);
}

}  // namespace imgsmith
