// Builds real image archives for the tests, in every layout imgsmith reads:
// layers are written by libarchive's tar writer, digests are real SHA-256,
// and each container format is laid out as the tool that makes it does.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace imgsmith::testing {

enum class Encoding { None, Gzip, Zstd };

struct Entry {
  enum Kind { File, Dir, Symlink, Hardlink } kind = File;
  std::string path;
  std::string content;  // File
  std::string link;     // Symlink / Hardlink target
};

Entry file(std::string path, std::size_t size, char fill = 'x');
Entry file_with(std::string path, std::string content);
Entry dir(std::string path);
Entry soft_link(std::string path, std::string target);
Entry hardlink(std::string path, std::string target);
Entry whiteout(const std::string& deleted_path);  // DIR/.wh.NAME
Entry opaque(const std::string& directory);       // DIR/.wh..wh..opq

struct Layer {
  std::vector<Entry> entries;
  Encoding encoding = Encoding::None;
  bool end_blocks = true;  // false: as umoci writes, without end blocks or final padding
  std::string created_by;
};

// The blob bytes of a layer, and its uncompressed tar.
std::string layer_tar(const Layer& layer);
std::string encode(const std::string& bytes, Encoding encoding);
std::string sha256(const std::string& bytes);   // "sha256:<hex>"
std::string hex_of(const std::string& digest);  // "sha256:abc" -> "abc"

// A member of an outer tar, in the order given.
struct Member {
  std::string path;
  std::string data;
  std::string symlink;  // when set, a symbolic link to this target
};
std::string tar_of(const std::vector<Member>& members);

struct Image {
  std::vector<Layer> layers;
  std::string tag = "test/image:1";
  std::string os = "linux";
  std::string architecture = "amd64";
  // History entries that create no layer, interleaved before layer i.
  std::vector<std::pair<std::size_t, std::string>> empty_history;
  std::vector<std::string> env = {"PATH=/usr/bin:/bin"};  // the config's Env

  nlohmann::json config() const;
  std::string config_bytes() const { return config().dump(); }
};

// File names are bytes: an image carrying every odd class of name, as
// paths without the leading "/". Layer 0 adds a file under each name (sizes
// 1000, 1100, ... in the order of odd_names(), so each is among the largest
// files), a hard link to a missing target and a lost file; layer 1, whose
// created_by holds an escape sequence, a carriage return and a multi-byte
// character that a 67-byte prefix cuts, deletes the Latin-1 name and
// rewrites the escape-sequence name.
struct OddName {
  std::string path;
  bool valid_utf8 = true;
};
const std::vector<OddName>& odd_names();
Image odd_names_image();

// docker save from Docker <= 24: <id>/layer.tar, config <hex>.json,
// manifest.json and repositories written last; a layer listed twice is
// stored once and linked (../<id>/layer.tar) the second time.
std::string docker_legacy_save(const Image& image);
// docker save from Docker >= 25: an OCI layout plus manifest.json, with an
// unreferenced legacy-style JSON blob.
std::string docker25_save(const Image& image);
// docker save from the containerd image store: blobs as stored (the layers'
// own encoding), members sorted by name, blobs before index.json.
std::string containerd_save(const Image& image);

// OCI layout members (oci-layout, index.json, blobs/...). `platforms` adds
// a multi-platform index: one image per entry, plus an attestation manifest.
std::vector<Member> oci_layout(const Image& image);
std::vector<Member> oci_multi_platform(const std::vector<Image>& images);

// Writes members under a directory (an OCI layout directory).
void write_tree(const std::string& dir, const std::vector<Member>& members);
void write_file(const std::string& path, const std::string& bytes);

// A fresh empty directory under the system's temporary directory, removed
// when the object goes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace imgsmith::testing
