// A registry seen as a blob store. The resolver asks for "index.json" and
// "blobs/sha256/<hex>" as it would of an OCI layout; this store answers from
// the distribution API: a synthetic index naming the manifest the registry
// returned for the reference, manifests from /manifests/, everything else
// from /blobs/. Layers are never stored: they stream into the scanner, their
// digest checked as they pass.
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "client.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;
using registry::Client;

// How much of a layer is still read after a scan error to tell a digest
// mismatch from a merely broken layer.
constexpr std::uint64_t kVerifyAfterErrorLimit = 64ull << 20;
using registry::DigestingStream;

class RegistryStore final : public BlobStore {
 public:
  RegistryStore(const RegistryRef& ref, const RegistryOptions& options, const ProgressFn& progress,
                CaptureFn capture, CaptureFn stream_hash)
      : client_(ref, options),
        name_(ref.str()),
        parallel_(options.parallel),
        capture_(std::move(capture)),
        stream_hash_(std::move(stream_hash)) {
    if (progress) progress(name_ + ": manifest");
    const registry::Document top = client_.manifest(ref.reference());
    remember(top.digest, top.body, top.body.size(), /*manifest=*/true);
    json index = {{"schemaVersion", 2},
                  {"mediaType", "application/vnd.oci.image.index.v1+json"},
                  {"manifests",
                   {{{"mediaType", top.media_type},
                     {"digest", top.digest},
                     {"size", top.body.size()},
                     {"annotations", {{"org.opencontainers.image.ref.name", name_}}}}}}};
    index_ = index.dump();
  }

  const std::string& name() const override { return name_; }
  std::string kind() const override { return "registry"; }
  std::string verified() const override {
    return "every manifest, config and layer against its digest, as it arrived";
  }

  bool contains(const std::string& path) const override {
    return path == "index.json" || path == "oci-layout" || path.rfind("blobs/", 0) == 0;
  }

  std::optional<std::uint64_t> size_of(const std::string& path) const override {
    std::lock_guard<std::mutex> lock(lock_);
    const auto it = sizes_.find(digest_of(path));
    if (it == sizes_.end()) return std::nullopt;
    return it->second;
  }

  std::string read_text(const std::string& path, std::uint64_t limit) const override {
    if (path == "index.json") return index_;
    if (path == "oci-layout") return R"({"imageLayoutVersion":"1.0.0"})";
    const std::string digest = digest_of(path);
    bool manifest = false;
    {
      std::lock_guard<std::mutex> lock(lock_);
      if (const auto it = documents_.find(digest); it != documents_.end()) return it->second;
      manifest = manifests_.count(digest) != 0;
    }
    const registry::Document d =
        manifest ? client_.manifest(digest) : client_.blob(digest, static_cast<std::size_t>(limit));
    if (d.body.size() > limit)
      throw InputError(name_ + ": " + digest + " is larger than " + std::to_string(limit) +
                       " bytes");
    remember(digest, d.body, d.body.size(), manifest);
    return d.body;
  }

  // Entries are not handed out before the blob's digest is checked.
  std::shared_ptr<const LayerScan> scan_layer(const std::string& path, const CaptureFn& hash,
                                              const EntrySink& /*sink*/) const override {
    const std::string digest = digest_of(path);
    const std::uint64_t size = size_of(path).value_or(0);
    const std::string what = name_ + ": layer " + digest;
    auto body = client_.blob_stream(digest);
    DigestingStream checked(*body, digest, size, what);
    std::shared_ptr<const LayerScan> scan;
    try {
      scan = std::make_shared<LayerScan>(
          imgsmith::scan_layer(checked, size, what, capture_, hash ? hash : stream_hash_));
    } catch (const InputError&) {
      // A tampered blob usually breaks its compression first; the digest
      // says what really happened, when the rest is small enough to read.
      if (size != 0 && size - std::min(size, checked.seen()) <= kVerifyAfterErrorLimit)
        checked.verify();
      throw;
    }
    checked.verify();
    return scan;
  }

  bool parallel_scans() const override { return true; }
  unsigned preferred_parallelism() const override { return parallel_; }
  std::uint64_t bytes_read() const override { return client_.bytes_received(); }

 private:
  static std::string digest_of(const std::string& path) {
    // blobs/<algorithm>/<hex> -> <algorithm>:<hex>
    const std::string rest = path.substr(std::string("blobs/").size());
    const auto slash = rest.find('/');
    if (slash == std::string::npos) return rest;
    return rest.substr(0, slash) + ":" + rest.substr(slash + 1);
  }

  // Keeps a document, and the sizes and kinds of what it refers to: the
  // digests an index lists are manifests, fetched from /manifests/.
  void remember(const std::string& digest, const std::string& body, std::uint64_t size,
                bool manifest) const {
    std::lock_guard<std::mutex> lock(lock_);
    documents_[digest] = body;
    sizes_[digest] = size;
    if (manifest) manifests_.insert(digest);
    const json doc = json::parse(body, nullptr, false);
    if (!doc.is_object()) return;
    auto note = [&](const json& desc, bool is_manifest) {
      if (!desc.is_object() || !desc.contains("digest") || !desc["digest"].is_string()) return;
      const std::string d = desc["digest"].get<std::string>();
      if (desc.contains("size") && desc["size"].is_number_unsigned())
        sizes_[d] = desc["size"].get<std::uint64_t>();
      if (is_manifest) manifests_.insert(d);
    };
    if (doc.contains("manifests") && doc["manifests"].is_array())
      for (const auto& m : doc["manifests"]) note(m, true);
    if (doc.contains("config")) note(doc["config"], false);
    if (doc.contains("layers") && doc["layers"].is_array())
      for (const auto& l : doc["layers"]) note(l, false);
  }

  Client client_;
  std::string name_;
  unsigned parallel_;
  CaptureFn capture_;
  CaptureFn stream_hash_;
  std::string index_;
  mutable std::mutex lock_;
  mutable std::map<std::string, std::string> documents_;
  mutable std::map<std::string, std::uint64_t> sizes_;
  mutable std::set<std::string> manifests_;
};

}  // namespace

std::unique_ptr<BlobStore> open_registry_store(const RegistryRef& ref,
                                               const RegistryOptions& options,
                                               const ProgressFn& progress, const CaptureFn& capture,
                                               const CaptureFn& stream_hash) {
  return std::make_unique<RegistryStore>(ref, options, progress, capture, stream_hash);
}

}  // namespace imgsmith
