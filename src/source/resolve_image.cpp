#include <algorithm>
#include <regex>
#include <sstream>

#include "imgsmith/source/image.hpp"
#include "imgsmith/source/limits.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/sha256.hpp"
#include "imgsmith/util/size.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;

const char* const kIndexTypes[] = {
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
};

// A document named by its digest must hash to it, as docker load and the
// registries check: a byte changed in a manifest or config (a damaged
// download, or an edit that altered the history or the diff_ids) is
// refused instead of analysed. `expected` is "sha256:<hex>"; other
// algorithms and names that are no digest (a daemon's config.json) are
// not checked here.
void check_digest(const BlobStore& store, const std::string& path, const std::string& text,
                  const std::string& expected) {
  if (expected.rfind("sha256:", 0) != 0) return;
  const std::string actual = sha256_digest(text);
  if (actual != expected)
    throw InputError(store.name() + ": '" + path + "' does not match its digest: it should be " +
                     expected + ", its bytes are " + actual + kDamagedAdvice);
}

// The digest a docker save's config is named by: "<hex>.json" (before
// Docker 25) or "blobs/sha256/<hex>"; "" for any other name.
std::string digest_in_name(const std::string& path) {
  static const std::regex kNamed(R"((?:^|/)(?:blobs/sha256/)?([0-9a-f]{64})(?:\.json)?$)");
  std::smatch m;
  if (!std::regex_search(path, m, kNamed)) return "";
  return "sha256:" + m[1].str();
}

// A document of the image, refused before it is read when its size is known
// and over its limit (`limit_name` of --limit).
std::string read_document(const BlobStore& store, const std::string& path, const char* what,
                          const char* limit_name, std::uint64_t limit) {
  if (const auto size = store.size_of(path); size && *size > limit)
    throw InputError(store.name() + ": " + what + " '" + path + "' is " + format_count(*size) +
                     " bytes, over " + limit_hint(limit_name) +
                     "; real ones are a few KiB, so the image is damaged or hostile");
  return store.read_text(path, limit);
}

json parse_json(const BlobStore& store, const std::string& path,
                const std::string& expected_digest = "") {
  const std::string text =
      read_document(store, path, "the manifest", "manifest", input_limits().manifest_bytes);
  check_digest(store, path, text, expected_digest);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(store.name() + ": '" + path + "' is not valid JSON (" + e.what() +
                     "); the image is damaged, save it again");
  }
}

std::string string_at(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string blob_path(const BlobStore& store, const std::string& digest) {
  const auto colon = digest.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == digest.size() ||
      digest.find('/') != std::string::npos)
    throw InputError(store.name() + ": malformed digest '" + digest + "'");
  return "blobs/" + digest.substr(0, colon) + "/" + digest.substr(colon + 1);
}

void read_config(const BlobStore& store, const std::string& path, ResolvedImage& image,
                 const std::string& expected_digest) {
  const std::string text =
      read_document(store, path, "the config", "config", input_limits().config_bytes);
  check_digest(store, path, text, expected_digest);
  image.config_digest = sha256_digest(text);
  try {
    image.config = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(store.name() + ": image config '" + path + "' is not valid JSON (" + e.what() +
                     ")");
  }
  if (!image.config.is_object())
    throw InputError(store.name() + ": image config '" + path + "' is not a JSON object");
}

// Layers beyond the limit are refused before any is read: a manifest can list
// one layer thousands of times, and each listing would be scanned.
void check_layer_count(const BlobStore& store, std::size_t count) {
  if (count > input_limits().layers)
    throw InputError(store.name() + ": the manifest lists " + format_count(count) +
                     " layers, over " + limit_hint("layers"));
}

void attach_diff_ids(const BlobStore& store, ResolvedImage& image) {
  const auto rootfs = image.config.find("rootfs");
  if (rootfs == image.config.end() || !rootfs->is_object()) return;
  const auto ids = rootfs->find("diff_ids");
  if (ids == rootfs->end() || !ids->is_array()) return;
  if (ids->size() != image.layers.size())
    image.warnings.push_back(store.name() + ": the config lists " + std::to_string(ids->size()) +
                             " diff_ids but the manifest " + std::to_string(image.layers.size()) +
                             " layers");
  for (std::size_t i = 0; i < image.layers.size() && i < ids->size(); ++i)
    if ((*ids)[i].is_string()) image.layers[i].diff_id = (*ids)[i].get<std::string>();
  for (auto& layer : image.layers)
    if (layer.digest.empty()) layer.digest = layer.diff_id;
}

// ----- docker save: manifest.json ------------------------------------------

ResolvedImage from_docker_manifest(const BlobStore& store, const ImageSelector& selector) {
  const json manifest = parse_json(store, "manifest.json");
  if (!manifest.is_array() || manifest.empty())
    throw InputError(store.name() + ": manifest.json holds no image");
  const json* chosen = nullptr;
  std::vector<std::string> all_tags;
  for (const auto& item : manifest) {
    if (!item.is_object()) continue;
    std::vector<std::string> tags;
    if (auto t = item.find("RepoTags"); t != item.end() && t->is_array())
      for (const auto& tag : *t)
        if (tag.is_string()) tags.push_back(tag.get<std::string>());
    all_tags.insert(all_tags.end(), tags.begin(), tags.end());
    const bool wanted =
        selector.image.empty() || std::find(tags.begin(), tags.end(), selector.image) != tags.end();
    if (wanted && chosen == nullptr) chosen = &item;
  }
  if (chosen == nullptr) {
    std::string list;
    for (const auto& t : all_tags) list += (list.empty() ? "" : ", ") + t;
    throw InputError(store.name() + ": no image tagged '" + selector.image +
                     "' in this save; it holds: " + (list.empty() ? "untagged images" : list));
  }

  ResolvedImage image;
  image.format = store.contains("oci-layout") ? "docker-save+oci" : "docker-save";
  if (auto t = chosen->find("RepoTags"); t != chosen->end() && t->is_array())
    for (const auto& tag : *t)
      if (tag.is_string()) image.tags.push_back(tag.get<std::string>());
  if (manifest.size() > 1 && selector.image.empty())
    image.warnings.push_back(store.name() + ": the save holds " + std::to_string(manifest.size()) +
                             " images; analysing the first (choose another with --image)");
  const std::string config = string_at(*chosen, "Config");
  if (config.empty()) throw InputError(store.name() + ": manifest.json names no Config");
  read_config(store, config, image, digest_in_name(config));
  const auto layers = chosen->find("Layers");
  if (layers == chosen->end() || !layers->is_array())
    throw InputError(store.name() + ": manifest.json names no Layers");
  check_layer_count(store, layers->size());
  for (const auto& l : *layers) {
    if (!l.is_string()) throw InputError(store.name() + ": manifest.json has a malformed layer");
    LayerRef ref;
    ref.blob = l.get<std::string>();
    // Docker >= 25 names layers by blob path, whose name is the digest.
    if (ref.blob.rfind("blobs/", 0) == 0) {
      const std::string rest = ref.blob.substr(6);
      const auto slash = rest.find('/');
      if (slash != std::string::npos)
        ref.digest = rest.substr(0, slash) + ":" + rest.substr(slash + 1);
    }
    image.layers.push_back(std::move(ref));
  }
  attach_diff_ids(store, image);
  if (selector.platform) {
    const std::string os = string_at(image.config, "os");
    const std::string arch = string_at(image.config, "architecture");
    if (os != selector.platform->os || arch != selector.platform->architecture)
      throw InputError(store.name() + ": the image is " + os + "/" + arch + ", not " +
                       selector.platform->str() + " (--platform)");
  }
  return image;
}

// ----- OCI layout: index.json ----------------------------------------------

bool is_index(const json& doc, const std::string& media_type) {
  for (const char* t : kIndexTypes)
    if (media_type == t) return true;
  return doc.contains("manifests") && !doc.contains("layers");
}

bool is_attestation(const json& desc) {
  const auto ann = desc.find("annotations");
  if (ann != desc.end() && ann->is_object() &&
      string_at(*ann, "vnd.docker.reference.type") == "attestation-manifest")
    return true;
  const auto p = desc.find("platform");
  return p != desc.end() && p->is_object() && string_at(*p, "os") == "unknown";
}

// Every name the index gives an image: containerd's full reference and the
// OCI ref.name (often just the tag).
std::vector<std::string> ref_names(const json& desc) {
  std::vector<std::string> names;
  const auto ann = desc.find("annotations");
  if (ann == desc.end() || !ann->is_object()) return names;
  for (const char* key : {"io.containerd.image.name", "org.opencontainers.image.ref.name"}) {
    const std::string v = string_at(*ann, key);
    if (!v.empty()) names.push_back(v);
  }
  return names;
}

// The name to show: the full reference when there is one.
std::vector<std::string> display_tags(const std::vector<std::string>& names) {
  if (names.empty()) return {};
  return {names.front()};
}

std::string platform_of(const json& desc) {
  const auto p = desc.find("platform");
  if (p == desc.end() || !p->is_object()) return "";
  std::string s = string_at(*p, "os") + "/" + string_at(*p, "architecture");
  const std::string v = string_at(*p, "variant");
  return v.empty() ? s : s + "/" + v;
}

bool platform_matches(const json& desc, const Platform& want) {
  const auto p = desc.find("platform");
  if (p == desc.end() || !p->is_object()) return true;  // unlabelled: judged by its config
  if (string_at(*p, "os") != want.os || string_at(*p, "architecture") != want.architecture)
    return false;
  return want.variant.empty() || string_at(*p, "variant") == want.variant;
}

ResolvedImage from_manifest(const BlobStore& store, const json& manifest,
                            std::vector<std::string> tags, const std::string& format) {
  ResolvedImage image;
  image.format = format;
  image.tags = std::move(tags);
  const auto config = manifest.find("config");
  if (config == manifest.end() || !config->is_object())
    throw InputError(store.name() + ": image manifest has no config");
  const std::string config_digest = string_at(*config, "digest");
  read_config(store, blob_path(store, config_digest), image, config_digest);
  const auto layers = manifest.find("layers");
  if (layers == manifest.end() || !layers->is_array())
    throw InputError(store.name() + ": image manifest has no layers");
  check_layer_count(store, layers->size());
  for (const auto& l : *layers) {
    LayerRef ref;
    ref.digest = string_at(l, "digest");
    ref.blob = blob_path(store, ref.digest);
    // A blob of another size than its descriptor gives is cut short or
    // replaced: refused before it is read. (Its digest is the registry's
    // check; a file's layers are checked by their tar and gzip framing.)
    if (const auto size = l.find("size"); size != l.end() && size->is_number_unsigned())
      if (const auto actual = store.size_of(ref.blob);
          actual && *actual != size->get<std::uint64_t>())
        throw InputError(store.name() + ": layer '" + ref.blob + "' is " + std::to_string(*actual) +
                         " bytes, but the manifest says " +
                         std::to_string(size->get<std::uint64_t>()) + kDamagedAdvice);
    image.layers.push_back(std::move(ref));
  }
  attach_diff_ids(store, image);
  return image;
}

ResolvedImage from_index(const BlobStore& store, const json& index, const ImageSelector& selector,
                         const std::string& format, std::vector<std::string> tags, int depth) {
  if (depth > 4) throw InputError(store.name() + ": image indexes nest too deeply");
  const auto manifests = index.find("manifests");
  if (manifests == index.end() || !manifests->is_array() || manifests->empty())
    throw InputError(store.name() + ": the image index lists no manifests");
  const Platform want = selector.platform.value_or(Platform{});
  std::vector<const json*> candidates;
  std::vector<std::string> seen_platforms, seen_names;
  for (const auto& desc : *manifests) {
    if (!desc.is_object() || is_attestation(desc)) continue;
    const auto names = ref_names(desc);
    seen_names.insert(seen_names.end(), names.begin(), names.end());
    if (depth == 0 && !selector.image.empty() &&
        std::none_of(names.begin(), names.end(), [&](const std::string& n) {
          return n == selector.image || n.ends_with(":" + selector.image) ||
                 n.ends_with("/" + selector.image);
        }))
      continue;
    candidates.push_back(&desc);
  }
  // linux/amd64 is only a default for choosing: a single-platform image is
  // analysed whatever its platform, unless --platform insists.
  const bool insist = selector.platform.has_value() || candidates.size() > 1;
  for (const json* candidate : candidates) {
    const json& desc = *candidate;
    const auto names = ref_names(desc);
    const std::string platform = platform_of(desc);
    if (!platform.empty()) seen_platforms.push_back(platform);
    if (insist && !platform_matches(desc, want)) continue;
    const std::string path = blob_path(store, string_at(desc, "digest"));
    const json doc = parse_json(store, path, string_at(desc, "digest"));
    std::vector<std::string> names_here = tags.empty() ? display_tags(names) : tags;
    if (is_index(doc, string_at(desc, "mediaType")))
      return from_index(store, doc, selector, format, names_here, depth + 1);
    ResolvedImage image = from_manifest(store, doc, names_here, format);
    if (platform.empty() && insist) {
      const std::string os = string_at(image.config, "os");
      const std::string arch = string_at(image.config, "architecture");
      if (os != want.os || arch != want.architecture) continue;
    }
    return image;
  }
  if (!selector.image.empty() && depth == 0 && seen_platforms.empty()) {
    std::string list;
    for (const auto& n : seen_names) list += (list.empty() ? "" : ", ") + n;
    throw InputError(store.name() + ": no image named '" + selector.image +
                     "'; it holds: " + (list.empty() ? "unnamed images" : list));
  }
  std::string list;
  for (const auto& p : seen_platforms) list += (list.empty() ? "" : ", ") + p;
  throw InputError(store.name() + ": no image for platform " + want.str() +
                   (list.empty() ? std::string() : "; available: " + list) +
                   " (choose one with --platform)");
}

}  // namespace

Platform Platform::parse(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, '/');) parts.push_back(part);
  if (parts.size() < 2 || parts.size() > 3 ||
      std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); }))
    throw InputError("--platform '" + text + "': expected os/arch[/variant], e.g. linux/arm64");
  Platform p;
  p.os = parts[0];
  p.architecture = parts[1];
  if (parts.size() == 3) p.variant = parts[2];
  return p;
}

std::string Platform::str() const {
  return os + "/" + architecture + (variant.empty() ? "" : "/" + variant);
}

ResolvedImage resolve_image(const BlobStore& store, const ImageSelector& selector) {
  // docker save writes both documents since Docker 25; manifest.json is the
  // one that 25.0.0's misordered OCI manifests do not affect (docs/image-formats.md).
  if (store.contains("manifest.json")) return from_docker_manifest(store, selector);
  if (store.contains("index.json")) {
    const json index = parse_json(store, "index.json");
    const std::string format = store.kind() == "directory"  ? "oci-layout"
                               : store.kind() == "registry" ? "registry"
                                                            : "oci-archive";
    return from_index(store, index, selector, format, {}, 0);
  }
  throw InputError(store.name() +
                   ": not a container image: it has neither manifest.json (docker save) nor "
                   "index.json (OCI layout); give the output of docker save or an OCI archive");
}

}  // namespace imgsmith
