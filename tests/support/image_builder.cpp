#include "image_builder.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "imgsmith/util/sha256.hpp"

namespace imgsmith::testing {
namespace {

using nlohmann::json;

la_ssize_t append_to_string(archive*, void* out, const void* buf, size_t size) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buf), size);
  return static_cast<la_ssize_t>(size);
}

void check(archive* a, int rc) {
  if (rc < ARCHIVE_WARN) throw std::runtime_error(archive_error_string(a));
}

struct Writer {
  archive* a = archive_write_new();
  std::string out;

  Writer(bool raw, Encoding encoding) {
    check(a, raw ? archive_write_set_format_raw(a) : archive_write_set_format_pax_restricted(a));
    if (encoding == Encoding::Gzip) {
      check(a, archive_write_add_filter_gzip(a));
      // gzip's header carries the time of writing by default; without it the
      // same layer built twice across a second boundary gets another digest.
      check(a, archive_write_set_filter_option(a, "gzip", "timestamp", nullptr));
    }
    if (encoding == Encoding::Zstd) check(a, archive_write_add_filter_zstd(a));
    check(a, archive_write_set_bytes_in_last_block(a, 1));
    check(a, archive_write_open(a, &out, nullptr, append_to_string, nullptr));
  }
  ~Writer() { archive_write_free(a); }

  void add(const std::string& path, int type, const std::string& data, const std::string& link,
           bool hard) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, path.c_str());
    archive_entry_set_mtime(e, 1700000000, 0);
    if (hard) {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, 0644);
      archive_entry_set_hardlink(e, link.c_str());
      archive_entry_set_size(e, 0);
    } else {
      archive_entry_set_filetype(e, static_cast<unsigned>(type));
      archive_entry_set_perm(e, type == AE_IFDIR ? 0755 : 0644);
      if (type == AE_IFLNK) archive_entry_set_symlink(e, link.c_str());
      archive_entry_set_size(e, type == AE_IFREG ? static_cast<la_int64_t>(data.size()) : 0);
    }
    check(a, archive_write_header(a, e));
    if (!hard && type == AE_IFREG && !data.empty()) archive_write_data(a, data.data(), data.size());
    archive_entry_free(e);
  }
  std::string finish() {
    check(a, archive_write_close(a));
    return out;
  }
};

json descriptor(const std::string& media_type, const std::string& bytes) {
  return {{"mediaType", media_type}, {"digest", sha256(bytes)}, {"size", bytes.size()}};
}

const char* layer_media_type(Encoding e) {
  switch (e) {
    case Encoding::Gzip:
      return "application/vnd.oci.image.layer.v1.tar+gzip";
    case Encoding::Zstd:
      return "application/vnd.oci.image.layer.v1.tar+zstd";
    default:
      return "application/vnd.oci.image.layer.v1.tar";
  }
}

struct OciParts {
  std::vector<Member> blobs;
  std::string manifest;
};

OciParts oci_parts(const Image& image) {
  OciParts parts;
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", "application/vnd.oci.image.manifest.v1+json"}};
  const std::string config = image.config_bytes();
  manifest["config"] = descriptor("application/vnd.oci.image.config.v1+json", config);
  parts.blobs.push_back({"blobs/sha256/" + hex_of(sha256(config)), config, ""});
  manifest["layers"] = json::array();
  std::set<std::string> seen;
  for (const auto& layer : image.layers) {
    const std::string blob = layer_tar(layer);
    manifest["layers"].push_back(descriptor(layer_media_type(layer.encoding), blob));
    if (seen.insert(sha256(blob)).second)
      parts.blobs.push_back({"blobs/sha256/" + hex_of(sha256(blob)), blob, ""});
  }
  parts.manifest = manifest.dump();
  parts.blobs.push_back({"blobs/sha256/" + hex_of(sha256(parts.manifest)), parts.manifest, ""});
  return parts;
}

}  // namespace

Entry file(std::string path, std::size_t size, char fill) {
  return Entry{Entry::File, std::move(path), std::string(size, fill), ""};
}
Entry file_with(std::string path, std::string content) {
  return Entry{Entry::File, std::move(path), std::move(content), ""};
}
Entry dir(std::string path) { return Entry{Entry::Dir, std::move(path), "", ""}; }
Entry soft_link(std::string path, std::string target) {
  return Entry{Entry::Symlink, std::move(path), "", std::move(target)};
}
Entry hardlink(std::string path, std::string target) {
  return Entry{Entry::Hardlink, std::move(path), "", std::move(target)};
}
Entry whiteout(const std::string& deleted) {
  const auto slash = deleted.rfind('/');
  const std::string d = slash == std::string::npos ? "" : deleted.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? deleted : deleted.substr(slash + 1);
  return Entry{Entry::File, d + ".wh." + name, "", ""};
}
Entry opaque(const std::string& directory) {
  return Entry{Entry::File, directory + "/.wh..wh..opq", "", ""};
}

std::string layer_tar(const Layer& layer) {
  Writer w(false, Encoding::None);
  for (const auto& e : layer.entries) {
    switch (e.kind) {
      case Entry::File:
        w.add(e.path, AE_IFREG, e.content, "", false);
        break;
      case Entry::Dir:
        w.add(e.path + "/", AE_IFDIR, "", "", false);
        break;
      case Entry::Symlink:
        w.add(e.path, AE_IFLNK, "", e.link, false);
        break;
      case Entry::Hardlink:
        w.add(e.path, AE_IFREG, "", e.link, true);
        break;
    }
  }
  std::string tar = w.finish();
  if (!layer.end_blocks) {
    if (tar.size() < 1024 || tar.substr(tar.size() - 1024) != std::string(1024, '\0'))
      throw std::runtime_error("layer tar does not end with two zero blocks");
    // A writer that is never closed leaves out the end blocks and the last
    // entry's padding too.
    std::size_t padding = 0;
    if (!layer.entries.empty() && layer.entries.back().kind == Entry::File)
      padding = (512 - layer.entries.back().content.size() % 512) % 512;
    tar.resize(tar.size() - 1024 - padding);
  }
  return encode(tar, layer.encoding);
}

std::string encode(const std::string& bytes, Encoding encoding) {
  if (encoding == Encoding::None) return bytes;
  Writer w(true, encoding);
  w.add("data", AE_IFREG, bytes, "", false);
  return w.finish();
}

std::string sha256(const std::string& bytes) { return imgsmith::sha256_digest(bytes); }
std::string hex_of(const std::string& digest) { return digest.substr(digest.find(':') + 1); }

std::string tar_of(const std::vector<Member>& members) {
  Writer w(false, Encoding::None);
  for (const auto& m : members) {
    if (!m.symlink.empty())
      w.add(m.path, AE_IFLNK, "", m.symlink, false);
    else if (!m.path.empty() && m.path.back() == '/')
      w.add(m.path, AE_IFDIR, "", "", false);
    else
      w.add(m.path, AE_IFREG, m.data, "", false);
  }
  return w.finish();
}

const std::vector<OddName>& odd_names() {
  static const std::vector<OddName> names = [] {
    // 4,000 bytes: "odd/long/" then 99-byte directories, the last one cut to fit.
    std::string long_name = "odd/long/";
    while (long_name.size() < 4000) long_name += std::string(99, 'd') + "/";
    long_name.resize(3995);
    long_name += "/file";
    return std::vector<OddName>{
        {"odd/latin1-caf\xe9", false},
        {"odd/new\nline", true},
        {"odd/carriage\rreturn", true},
        {"odd/tab\there", true},
        {"odd/esc\x1b[2J\x1b[31mred", true},
        {"odd/bytes-\xff\xfe\xc3", false},
        {"odd/del\x7f", true},
        {"odd/c1-\xc2\x9b"
         "2J",
         true},
        {"odd/bidi-\xe2\x80\xaetxt.exe", true},
        {"odd/na\xc3\xafve-\xc3\xbcnic\xc3\xb8"
         "de",
         true},
        {long_name, true},
        // Zero-width and bidi marks: print nothing, yet make another name.
        {"odd/zero\xe2\x80\x8bwidth-\xef\xbb\xbf"
         "bom",
         true},
        {"odd/rlm\xe2\x80\x8f-isolate\xe2\x81\xa7txt", true},
    };
  }();
  return names;
}

Image odd_names_image() {
  Image image;
  Layer base;
  base.created_by = "ADD odd.tar /";
  base.entries.push_back(dir("odd"));
  std::size_t size = 1000;
  for (const auto& n : odd_names()) {
    base.entries.push_back(file(n.path, size));
    size += 100;
  }
  base.entries.push_back(hardlink("odd/link-\xe9", "odd/missing-\xe9"));
  Layer next;
  next.created_by =
      "RUN \x1b[2J\rprintf '\\n' && " + std::string(42, 'a') + "\xc3\xa9\xc3\xa9 done";
  next.entries.push_back(whiteout(odd_names()[0].path));
  next.entries.push_back(file(odd_names()[4].path, 5000));
  image.layers = {base, next};
  return image;
}

json Image::config() const {
  json c = {{"architecture", architecture}, {"os", os}};
  c["config"] = {{"Env", env}};
  c["rootfs"] = {{"type", "layers"}, {"diff_ids", json::array()}};
  c["history"] = json::array();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (const auto& [before, text] : empty_history)
      if (before == i) c["history"].push_back({{"created_by", text}, {"empty_layer", true}});
    Layer plain = layers[i];
    plain.encoding = Encoding::None;
    c["rootfs"]["diff_ids"].push_back(sha256(layer_tar(plain)));
    c["history"].push_back(
        {{"created_by",
          layers[i].created_by.empty() ? "RUN layer " + std::to_string(i) : layers[i].created_by}});
  }
  for (const auto& [before, text] : empty_history)
    if (before >= layers.size())
      c["history"].push_back({{"created_by", text}, {"empty_layer", true}});
  return c;
}

std::string docker_legacy_save(const Image& image) {
  std::vector<Member> members;
  json layers = json::array();
  std::map<std::string, std::string> first_dir;  // blob digest -> v1 id
  for (std::size_t i = 0; i < image.layers.size(); ++i) {
    const std::string blob = layer_tar(image.layers[i]);
    const std::string digest = sha256(blob);
    // A v1 id is per position, so a repeated layer gets its own directory
    // whose layer.tar links to the first copy.
    const std::string id = hex_of(sha256(digest + std::to_string(i)));
    members.push_back({id + "/", "", ""});
    members.push_back({id + "/VERSION", "1.0", ""});
    members.push_back({id + "/json", json{{"id", id}}.dump(), ""});
    if (auto it = first_dir.find(digest); it != first_dir.end()) {
      members.push_back({id + "/layer.tar", "", "../" + it->second + "/layer.tar"});
    } else {
      members.push_back({id + "/layer.tar", blob, ""});
      first_dir[digest] = id;
    }
    layers.push_back(id + "/layer.tar");
  }
  const std::string config = image.config_bytes();
  const std::string config_name = hex_of(sha256(config)) + ".json";
  members.push_back({config_name, config, ""});
  json manifest =
      json::array({{{"Config", config_name}, {"RepoTags", {image.tag}}, {"Layers", layers}}});
  members.push_back({"manifest.json", manifest.dump(), ""});
  members.push_back({"repositories", "{}", ""});
  return tar_of(members);
}

std::string docker25_save(const Image& image) {
  Image plain = image;
  for (auto& l : plain.layers) l.encoding = Encoding::None;  // Docker 25 writes plain tars
  OciParts parts = oci_parts(plain);
  std::vector<Member> members = {{"blobs/", "", ""}, {"blobs/sha256/", "", ""}};
  for (auto& b : parts.blobs) members.push_back(b);
  // Old per-layer JSON configs are written as blobs that nothing references.
  const std::string stray = json{{"id", "legacy"}, {"created", "2024-01-01T00:00:00Z"}}.dump();
  members.push_back({"blobs/sha256/" + hex_of(sha256(stray)), stray, ""});
  json index = {{"schemaVersion", 2},
                {"mediaType", "application/vnd.oci.image.index.v1+json"},
                {"manifests",
                 {{{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                   {"digest", sha256(parts.manifest)},
                   {"size", parts.manifest.size()},
                   {"annotations",
                    {{"io.containerd.image.name", "docker.io/" + image.tag},
                     {"org.opencontainers.image.ref.name", "1"}}}}}}};
  members.push_back({"index.json", index.dump(), ""});
  json layers = json::array();
  for (const auto& l : plain.layers)
    layers.push_back("blobs/sha256/" + hex_of(sha256(layer_tar(l))));
  json manifest = json::array({{{"Config", "blobs/sha256/" + hex_of(sha256(plain.config_bytes()))},
                                {"RepoTags", {image.tag}},
                                {"Layers", layers}}});
  members.push_back({"manifest.json", manifest.dump(), ""});
  members.push_back({"oci-layout", R"({"imageLayoutVersion":"1.0.0"})", ""});
  members.push_back({"repositories", "{}", ""});
  return tar_of(members);
}

std::string containerd_save(const Image& image) {
  OciParts parts = oci_parts(image);
  std::vector<Member> members = parts.blobs;
  json index = {{"schemaVersion", 2},
                {"manifests",
                 {{{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                   {"digest", sha256(parts.manifest)},
                   {"size", parts.manifest.size()}}}}};
  members.push_back({"index.json", index.dump(), ""});
  json layers = json::array();
  for (const auto& l : image.layers)
    layers.push_back("blobs/sha256/" + hex_of(sha256(layer_tar(l))));
  json manifest = json::array({{{"Config", "blobs/sha256/" + hex_of(sha256(image.config_bytes()))},
                                {"RepoTags", {image.tag}},
                                {"Layers", layers}}});
  members.push_back({"manifest.json", manifest.dump(), ""});
  members.push_back({"oci-layout", R"({"imageLayoutVersion":"1.0.0"})", ""});
  std::sort(members.begin(), members.end(),
            [](const Member& a, const Member& b) { return a.path < b.path; });
  return tar_of(members);
}

std::vector<Member> oci_layout(const Image& image) {
  OciParts parts = oci_parts(image);
  std::vector<Member> members = {{"oci-layout", R"({"imageLayoutVersion":"1.0.0"})", ""}};
  for (auto& b : parts.blobs) members.push_back(b);
  json index = {{"schemaVersion", 2},
                {"mediaType", "application/vnd.oci.image.index.v1+json"},
                {"manifests",
                 {{{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                   {"digest", sha256(parts.manifest)},
                   {"size", parts.manifest.size()},
                   {"annotations", {{"org.opencontainers.image.ref.name", image.tag}}}}}}};
  members.push_back({"index.json", index.dump(), ""});
  return members;
}

std::vector<Member> oci_multi_platform(const std::vector<Image>& images) {
  std::vector<Member> members = {{"oci-layout", R"({"imageLayoutVersion":"1.0.0"})", ""}};
  json list = {{"schemaVersion", 2},
               {"mediaType", "application/vnd.oci.image.index.v1+json"},
               {"manifests", json::array()}};
  for (const auto& image : images) {
    OciParts parts = oci_parts(image);
    for (auto& b : parts.blobs) members.push_back(b);
    list["manifests"].push_back(
        {{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
         {"digest", sha256(parts.manifest)},
         {"size", parts.manifest.size()},
         {"platform", {{"os", image.os}, {"architecture", image.architecture}}}});
    // BuildKit's provenance attestation rides along as unknown/unknown, and
    // comes first here so that a reader that does not skip it fails.
    Image attestation;
    attestation.layers = {Layer{{file_with("provenance.json", "{}")}}};
    OciParts att = oci_parts(attestation);
    for (auto& b : att.blobs) members.push_back(b);
    list["manifests"].insert(
        list["manifests"].begin(),
        json{{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
             {"digest", sha256(att.manifest)},
             {"size", att.manifest.size()},
             {"platform", {{"os", "unknown"}, {"architecture", "unknown"}}},
             {"annotations", {{"vnd.docker.reference.type", "attestation-manifest"}}}});
  }
  const std::string list_bytes = list.dump();
  members.push_back({"blobs/sha256/" + hex_of(sha256(list_bytes)), list_bytes, ""});
  json index = {{"schemaVersion", 2},
                {"manifests",
                 {{{"mediaType", "application/vnd.oci.image.index.v1+json"},
                   {"digest", sha256(list_bytes)},
                   {"size", list_bytes.size()},
                   {"annotations", {{"org.opencontainers.image.ref.name", "multi"}}}}}}};
  members.push_back({"index.json", index.dump(), ""});
  return members;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

void write_tree(const std::string& dir, const std::vector<Member>& members) {
  for (const auto& m : members) {
    if (!m.path.empty() && m.path.back() == '/') {
      std::filesystem::create_directories(dir + "/" + m.path);
      continue;
    }
    write_file(dir + "/" + m.path, m.data);
  }
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "imgsmith-test-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace imgsmith::testing
