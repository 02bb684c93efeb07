// The probe image (probe_image.hpp), as the OCI image specification lays
// out an image (https://github.com/opencontainers/image-spec: image-layout,
// image-index, manifest, config): index.json names one image index by its
// tag; that index lists one manifest per CPU with its platform; each
// manifest one config and one uncompressed layer holding /imgsmith-probe.
#include "probe_image.hpp"

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>

#include "imgsmith/util/error.hpp"
#include "imgsmith/util/sha256.hpp"
#include "imgsmith/version.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;

constexpr const char* kIndexType = "application/vnd.oci.image.index.v1+json";
constexpr const char* kManifestType = "application/vnd.oci.image.manifest.v1+json";
constexpr const char* kConfigType = "application/vnd.oci.image.config.v1+json";
constexpr const char* kLayerType = "application/vnd.oci.image.layer.v1.tar";

// A tar made in memory: POSIX ustar entries (every name here is short, a
// layout's longest is blobs/sha256/ and 64 hex digits), owned by root and
// dated 0. Written here rather than with libarchive, which imgsmith would
// otherwise load at every start for this alone.
class TarInMemory {
 public:
  void add(const std::string& name, const std::string& content, unsigned mode) {
    header(name, '0', mode, content.size());
    bytes_ += content;
    bytes_.append((512 - content.size() % 512) % 512, '\0');
  }
  void add_directory(const std::string& name) { header(name, '5', 0755, 0); }
  std::string finish() {
    bytes_.append(1024, '\0');  // two zero blocks end the archive
    return std::move(bytes_);
  }

 private:
  // An octal field of `width` bytes: width - 1 digits, then NUL, as ustar
  // writes them.
  static void octal(char* field, std::size_t width, std::uint64_t value) {
    if (value >> (3 * (width - 1)) != 0) throw std::logic_error("probe image: too large for tar");
    field[width - 1] = '\0';
    for (std::size_t i = width - 1; i-- > 0; value >>= 3)
      field[i] = static_cast<char>('0' + (value & 7));
  }
  void header(const std::string& name, char type, unsigned mode, std::uint64_t size) {
    if (name.size() >= 100) throw std::logic_error("probe image: tar name too long: " + name);
    char h[512] = {};
    std::memcpy(h, name.data(), name.size());
    octal(h + 100, 8, mode);
    octal(h + 108, 8, 0);      // uid
    octal(h + 116, 8, 0);      // gid
    octal(h + 124, 12, size);  // at most 8 GiB, far above a probe
    octal(h + 136, 12, 0);     // mtime
    h[156] = type;
    std::memcpy(h + 257, "ustar", 6);  // magic, NUL-terminated
    std::memcpy(h + 263, "00", 2);     // version
    // The checksum: every byte of the header, the checksum field as spaces.
    std::memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (const char c : h) sum += static_cast<unsigned char>(c);
    octal(h + 148, 7, sum);  // six digits, NUL, and the space left
    bytes_.append(h, sizeof h);
  }

  std::string bytes_;
};

struct Blob {
  std::string digest;  // "sha256:<hex>"
  std::size_t size = 0;
};

}  // namespace

std::string probe_image_archive(const std::vector<ProbeBinary>& probes, const std::string& tag) {
  if (probes.empty()) throw InputError("no probe to put in the image");
  TarInMemory layout;
  layout.add("oci-layout", json{{"imageLayoutVersion", "1.0.0"}}.dump(), 0644);
  layout.add_directory("blobs/");
  layout.add_directory("blobs/sha256/");
  const auto add_blob = [&](const std::string& bytes) {
    const Blob blob{sha256_digest(bytes), bytes.size()};
    layout.add("blobs/sha256/" + blob.digest.substr(7), bytes, 0644);
    return blob;
  };
  const std::string version = kVersion;
  json platforms = json::array();
  for (const ProbeBinary& probe : probes) {
    TarInMemory layer_tar;
    layer_tar.add("imgsmith-probe", probe.bytes, 0755);
    const Blob layer = add_blob(layer_tar.finish());
    const json config = {
        {"architecture", probe.arch},
        {"os", "linux"},
        {"config",
         {{"Entrypoint", json::array({"/imgsmith-probe"})},
          {"Labels",
           {{"org.opencontainers.image.title", "imgsmith-probe"},
            {"org.opencontainers.image.version", version}}}}},
        // An uncompressed layer's digest is its diff_id.
        {"rootfs", {{"type", "layers"}, {"diff_ids", json::array({layer.digest})}}},
        {"history", json::array({{{"created_by",
                                   "imgsmith probe --write-image (imgsmith " + version + ")"}}})}};
    const Blob config_blob = add_blob(config.dump());
    const json manifest = {
        {"schemaVersion", 2},
        {"mediaType", kManifestType},
        {"config",
         {{"mediaType", kConfigType}, {"digest", config_blob.digest}, {"size", config_blob.size}}},
        {"layers",
         json::array(
             {{{"mediaType", kLayerType}, {"digest", layer.digest}, {"size", layer.size}}})},
        {"annotations", {{"org.opencontainers.image.version", version}}}};
    const Blob manifest_blob = add_blob(manifest.dump());
    platforms.push_back({{"mediaType", kManifestType},
                         {"digest", manifest_blob.digest},
                         {"size", manifest_blob.size},
                         {"platform", {{"architecture", probe.arch}, {"os", "linux"}}}});
  }
  const json index = {{"schemaVersion", 2}, {"mediaType", kIndexType}, {"manifests", platforms}};
  const Blob index_blob = add_blob(index.dump());
  const json top = {
      {"schemaVersion", 2},
      {"mediaType", kIndexType},
      {"manifests",
       json::array({{{"mediaType", kIndexType},
                     {"digest", index_blob.digest},
                     {"size", index_blob.size},
                     {"annotations", {{"org.opencontainers.image.ref.name", tag}}}}})}};
  layout.add("index.json", top.dump(), 0644);
  return layout.finish();
}

}  // namespace imgsmith
