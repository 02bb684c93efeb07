// docker://NAME: an image of the local Docker daemon. Two ways in:
//  - in place, from the daemon's overlay2 storage, when this process can
//    read it: the Engine API's image inspect names each layer's diff
//    directory (GraphDriver.Data), GET /info the daemon's root, under which
//    the image config and each layer's tar-split record are stored by
//    content address. Everything found is checked against the IDs the API
//    gave (the config's sha256 is the image ID, each layer record names its
//    diff_id and its overlay2 directory) before it is used;
//  - streamed, through GET /images/{name}/get, which sends `docker save`
//    output: it goes straight into the one-pass tar store, with no temporary
//    file. This works with any daemon, remote or not, at the cost of the
//    daemon building the whole tar.
// podman://NAME goes the second way through Podman's Docker-compatible API
// service (its storage is not Docker's overlay2 layout).
// docs/docker-engine.md ("What the in-place reader relies on") lists the
// daemon's storage layout and API fields this depends on.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "http.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/source/file_io.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/sha256.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

struct DaemonEndpoint {
  std::string base;    // http://localhost, or http://host:port for tcp://
  std::string socket;  // the unix socket, when there is one
  std::string shown;   // for messages
};

DaemonEndpoint endpoint_of(const std::string& host, const char* variable,
                           const std::string& engine) {
  if (host.rfind("unix://", 0) == 0) return {"http://localhost", host.substr(7), host};
  if (host.rfind("tcp://", 0) == 0) {
    const char* tls = std::getenv("DOCKER_TLS_VERIFY");
    if (engine == "Docker" && tls != nullptr && *tls != '\0')
      throw InputError(std::string(variable) + "=" + host +
                       " with DOCKER_TLS_VERIFY: imgsmith does not speak TLS to the "
                       "daemon; point DOCKER_HOST at its unix socket");
    return {"http://" + host.substr(6), "", host};
  }
  throw InputError(std::string(variable) + "=" + host + ": imgsmith reaches " + engine +
                   " over unix:// or tcp:// only");
}

DaemonEndpoint daemon_endpoint() {
  const char* env = std::getenv("DOCKER_HOST");
  const std::string host = env != nullptr && *env != '\0' ? env : "unix:///var/run/docker.sock";
  return endpoint_of(host, "DOCKER_HOST", "Docker");
}

std::string daemon_message(const std::string& body) {
  const auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_object() && doc.contains("message") && doc["message"].is_string())
    return doc["message"].get<std::string>();
  return body.substr(0, 200);
}

using nlohmann::json;

// A small file of the daemon's storage, read whole.
std::string read_storage_file(const std::string& path, std::uint64_t limit) {
  std::error_code error;
  std::string text = read_small_file(path, limit, error);
  if (error == std::errc::permission_denied || error == std::errc::operation_not_permitted)
    throw StorageUnreadable("this user may not read " + path +
                            " (run as root, or as a user the daemon's "
                            "storage is readable by)");
  if (error == std::errc::file_too_large)
    throw StorageUnreadable(path + " is larger than any such record");
  if (error == std::errc::invalid_argument)
    throw StorageUnreadable(path + " is not a regular file");
  if (error)
    throw StorageUnreadable(path + ": " + error.message() +
                            " (is the daemon in a VM, a container or another "
                            "mount namespace?)");
  return text;
}

bool is_sha256_digest(const std::string& id) {
  return id.size() == 71 && id.rfind("sha256:", 0) == 0 &&
         id.find_first_not_of("0123456789abcdef", 7) == std::string::npos;
}

std::string json_string(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The image's layers and config in the daemon's overlay2 storage, each
// checked against what the API says the image is.
DaemonStorageImage locate_in_storage(const std::string& what, const DaemonEndpoint& at,
                                     registry::Http& http, const json& inspect, bool walk) {
  if (at.socket.empty())
    throw StorageUnreadable(
        "the daemon is reached over TCP, so its storage is not on this machine");
  const auto driver = inspect.find("GraphDriver");
  const std::string driver_name =
      driver != inspect.end() && driver->is_object() ? json_string(*driver, "Name") : std::string();
  if (driver_name.empty())
    throw StorageUnreadable("image inspect names no storage driver (GraphDriver.Name)");
  if (driver_name != "overlay2")
    throw StorageUnreadable(
        "the daemon keeps this image in '" + driver_name +
        "' storage, not overlay2 (containerd's image store, or another driver)");
  const auto data = driver->find("Data");
  if (data == driver->end() || !data->is_object() || json_string(*data, "UpperDir").empty())
    throw StorageUnreadable("image inspect names no layer directories");

  registry::Request info_request{at.base + "/info", {}, true, false, what, at.socket, ""};
  registry::Http::Response info_response;
  try {
    info_response = http.fetch(info_request, 16u << 20);
  } catch (const InputError& e) {
    throw StorageUnreadable(std::string("GET /info failed: ") + e.what());
  }
  const auto info = json::parse(info_response.body, nullptr, false);
  const std::string root = info.is_object() ? json_string(info, "DockerRootDir") : "";
  if (info_response.status != 200 || root.empty())
    throw StorageUnreadable("GET /info names no DockerRootDir");
  const std::string store = root + "/image/overlay2";

  DaemonStorageImage image;
  image.label = what;
  // A rootless daemon says so among its security options.
  if (const auto options = info.find("SecurityOptions");
      options != info.end() && options->is_array())
    for (const auto& o : *options)
      if (o.is_string() && o.get<std::string>() == "name=rootless") image.rootless = true;
  const std::string id = json_string(inspect, "Id");
  if (!is_sha256_digest(id)) throw StorageUnreadable("the image ID is not a sha256 digest");
  image.config = read_storage_file(store + "/imagedb/content/sha256/" + id.substr(7), 64u << 20);
  if (sha256_digest(image.config) != id)
    throw StorageUnreadable("the stored config does not hash to the image ID " + id);
  if (const auto tags = inspect.find("RepoTags"); tags != inspect.end() && tags->is_array())
    for (const auto& t : *tags)
      if (t.is_string()) image.tags.push_back(t.get<std::string>());

  std::vector<std::string> diff_ids;
  const auto config = json::parse(image.config, nullptr, false);
  if (config.is_object())
    if (const auto rootfs = config.find("rootfs"); rootfs != config.end() && rootfs->is_object())
      if (const auto ids = rootfs->find("diff_ids"); ids != rootfs->end() && ids->is_array())
        for (const auto& d : *ids) diff_ids.push_back(d.is_string() ? d.get<std::string>() : "");
  // image inspect lists the top layer's directory as UpperDir and the ones
  // below as LowerDir, top first.
  std::vector<std::string> dirs = split(json_string(*data, "LowerDir"), ":");
  dirs.erase(std::remove(dirs.begin(), dirs.end(), std::string()), dirs.end());
  dirs.insert(dirs.begin(), json_string(*data, "UpperDir"));
  std::reverse(dirs.begin(), dirs.end());
  if (dirs.size() != diff_ids.size())
    throw StorageUnreadable("image inspect names " + std::to_string(dirs.size()) +
                            " layer directories for " + std::to_string(diff_ids.size()) +
                            " layers");

  std::string chain;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    // The diff_id names a directory of the layer database: nothing else
    // may go into that path.
    if (!is_sha256_digest(diff_ids[i]))
      throw StorageUnreadable("layer " + std::to_string(i) +
                              "'s diff_id is not sha256: and 64 hex digits");
    // The layer's record is filed under its chain ID (the OCI image spec's
    // ChainID: a digest over the diff_ids up to this layer).
    chain = i == 0 ? diff_ids[0] : sha256_digest(chain + " " + diff_ids[i]);
    const std::string record = store + "/layerdb/sha256/" + chain.substr(7);
    if (std::string(trim(read_storage_file(record + "/diff", 4096))) != diff_ids[i])
      throw StorageUnreadable(record + " is not the record of layer " + std::to_string(i));
    const std::string cache_id(trim(read_storage_file(record + "/cache-id", 4096)));
    if (cache_id.empty() || !dirs[i].ends_with("/" + cache_id + "/diff"))
      throw StorageUnreadable("layer " + std::to_string(i) + "'s directory " + dirs[i] +
                              " is not the one its record names (" + cache_id + ")");
    if (::access(dirs[i].c_str(), R_OK | X_OK) != 0)
      throw StorageUnreadable("this user may not read " + dirs[i] + ": " + std::strerror(errno));
    DaemonStorageLayer layer;
    layer.diff_dir = dirs[i];
    const std::string split_record = record + "/tar-split.json.gz";
    if (!walk && ::access(split_record.c_str(), R_OK) == 0) layer.tar_split = split_record;
    image.layers.push_back(std::move(layer));
  }
  return image;
}

// What differs between the engines that speak Docker's image API.
struct Engine {
  std::string scheme;       // "docker://"
  std::string called;       // "the Docker daemon", in messages
  std::string unreachable;  // what to do when its socket does not answer
  std::string lister;       // the command that lists its images
  std::string save_kind;    // the stream's name in the report's io.read_via
};

std::string checked_name(const std::string& name, const Engine& engine) {
  const std::string what = engine.scheme + name;
  if (name.empty() || name.find_first_of(" \t\n?#") != std::string::npos)
    throw InputError(what + ": give an image " + engine.called + " knows, e.g. " + engine.scheme +
                     "app:1");
  return what;
}

// GET /images/NAME/json: the image's inspect document, or InputError
// saying why not.
registry::Http::Response inspect_image(registry::Http& http, const DaemonEndpoint& at,
                                       const std::string& name, const Engine& engine) {
  const std::string what = engine.scheme + name;
  registry::Request info{
      at.base + "/images/" + name + "/json", {}, true, false, what, at.socket, ""};
  registry::Http::Response r;
  try {
    r = http.fetch(info, 16u << 20);
  } catch (const InputError&) {
    throw InputError(what + ": cannot reach " + engine.called + " at " + at.shown + "; " +
                     engine.unreachable);
  }
  if (r.status == 404)
    throw InputError(what + ": " + engine.called + " at " + at.shown + " has no image '" + name +
                     "'; `" + engine.lister + "` lists what it has");
  if (r.status != 200)
    throw InputError(what + ": " + engine.called + " answered " + std::to_string(r.status) + ": " +
                     daemon_message(r.body));
  return r;
}

// GET /images/NAME/get: the image as its engine saves it (docker-archive),
// straight into the one-pass tar store.
std::unique_ptr<BlobStore> stream_saved(registry::Http& http, const DaemonEndpoint& at,
                                        const std::string& name, const Engine& engine,
                                        const ProgressFn& progress, const CaptureFn& capture,
                                        const CaptureFn& stream_hash) {
  const std::string what = engine.scheme + name;
  registry::Request get{at.base + "/images/" + name + "/get", {}, true, false, what, at.socket, ""};
  auto body = http.open(get);
  if (body->status() != 200)
    throw InputError(what + ": " + engine.called + " answered " + std::to_string(body->status()) +
                     ": " + daemon_message(body->read_all(1u << 20)));
  return open_stream_store(*body, what, engine.save_kind, progress, capture, stream_hash);
}

// The save is asked for by name, as the user gave it (so it carries the
// image's tags); the name may have moved to another image since the
// inspect (a retag, a rebuild). The save's config must be the image the
// inspect named (its Id is the config's digest), or the report would mix
// two images.
void check_saved_is_inspected(const BlobStore& store, const std::string& what,
                              const std::string& inspect_body) {
  const auto inspect = json::parse(inspect_body, nullptr, false);
  const std::string id = inspect.is_object() ? json_string(inspect, "Id") : std::string();
  const auto colon = id.find(':');
  if (colon == std::string::npos) return;  // no Id to hold it to
  const std::string hex = id.substr(colon + 1);
  const auto manifest = json::parse(store.read_text("manifest.json", 1u << 24), nullptr, false);
  if (!manifest.is_array() || manifest.empty() || !manifest[0].is_object()) return;
  const std::string config = json_string(manifest[0], "Config");
  if (config.find(hex) != std::string::npos) return;
  throw InputError(what + ": the image changed between its inspect (" + id.substr(0, 19) +
                   "...) and its save (config " + visible(config) +
                   "): it was retagged or rebuilt meanwhile; run imgsmith again");
}

}  // namespace

std::unique_ptr<BlobStore> open_docker_daemon(const std::string& name, const std::string& mode,
                                              const ProgressFn& progress, const CaptureFn& capture,
                                              const CaptureFn& stream_hash) {
  static const Engine docker{
      "docker://", "the Docker daemon",
      "is dockerd running, and may this user use its socket? (DOCKER_HOST chooses another)",
      "docker images", "docker save stream"};
  if (mode != "auto" && mode != "storage" && mode != "walk" && mode != "save")
    throw InputError("--docker-read " + mode + ": choose auto, storage, walk or save");
  const std::string what = checked_name(name, docker);
  const DaemonEndpoint at = daemon_endpoint();
  // The daemon assembles the tar before it sends much, so it may be silent
  // for a while on a large image.
  registry::Http http(registry::HttpOptions{10, 600, 0, 0});
  const auto r = inspect_image(http, at, name, docker);

  std::string why_not;
  if (mode != "save") {
    const auto inspect = json::parse(r.body, nullptr, false);
    try {
      if (!inspect.is_object()) throw StorageUnreadable("image inspect is not a JSON object");
      DaemonStorageImage image = locate_in_storage(what, at, http, inspect, mode == "walk");
      // In auto mode each record is checked before anything is read, so
      // that a layer that cannot be read in place is streamed instead.
      auto store = open_daemon_storage(std::move(image), capture, mode == "auto");
      if (progress)
        progress(what + ": reading the layers in place from the daemon's overlay2 storage");
      return store;
    } catch (const StorageUnreadable& e) {
      if (mode != "auto")
        throw InputError(what + ": cannot read the daemon's storage in place: " + e.what() +
                         "; --docker-read save streams the image from the daemon instead");
      why_not = e.what();
    }
  }
  if (progress)
    progress(
        what + ": streaming `docker save` from the daemon" +
        (why_not.empty() ? std::string() : " (its storage is not read in place: " + why_not + ")"));
  auto store = stream_saved(http, at, name, docker, progress, capture, stream_hash);
  check_saved_is_inspected(*store, what, r.body);
  return store;
}

std::string podman_socket(const char* container_host, unsigned uid, const char* xdg_runtime_dir) {
  if (container_host != nullptr && *container_host != '\0') return container_host;
  if (uid == 0) return "unix:///run/podman/podman.sock";
  const std::string runtime = xdg_runtime_dir != nullptr && *xdg_runtime_dir != '\0'
                                  ? xdg_runtime_dir
                                  : "/run/user/" + std::to_string(uid);
  return "unix://" + runtime + "/podman/podman.sock";
}

std::unique_ptr<BlobStore> open_podman(const std::string& name, const ProgressFn& progress,
                                       const CaptureFn& capture, const CaptureFn& stream_hash) {
  static const Engine podman{"podman://", "Podman",
                             "start its API service (`podman system service --time=0`, or rootless "
                             "`systemctl --user start podman.socket`), or point CONTAINER_HOST at "
                             "its socket",
                             "podman images", "podman save stream"};
  const std::string what = checked_name(name, podman);
  const std::string host =
      podman_socket(std::getenv("CONTAINER_HOST"), ::geteuid(), std::getenv("XDG_RUNTIME_DIR"));
  const DaemonEndpoint at = endpoint_of(host, "CONTAINER_HOST", "Podman");
  registry::Http http(registry::HttpOptions{10, 600, 0, 0});
  // The compatible API takes Docker's paths; a name with a registry part
  // (localhost/app:1) keeps its slashes, as Podman expects.
  inspect_image(http, at, name, podman);
  if (progress) progress(what + ": streaming the image as `podman save` writes it");
  return stream_saved(http, at, name, podman, progress, capture, stream_hash);
}

}  // namespace imgsmith
