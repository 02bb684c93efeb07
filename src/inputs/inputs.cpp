#include "imgsmith/inputs/inputs.hpp"

#include <chrono>

#include "imgsmith/util/error.hpp"

namespace imgsmith {

std::unique_ptr<BlobStore> open_input(const std::string& input, const RegistryOptions& registry,
                                      const ProgressFn& progress, const CaptureFn& capture,
                                      const CaptureFn& stream_hash) {
  if (input.rfind("docker://", 0) == 0)
    return open_docker_daemon(input.substr(9), registry.docker_read, progress, capture,
                              stream_hash);
  if (input.rfind("podman://", 0) == 0) {
    if (registry.docker_read != "auto" && registry.docker_read != "save")
      throw InputError("--docker-read " + registry.docker_read +
                       ": podman:// is always streamed as podman save writes it");
    return open_podman(input.substr(9), progress, capture, stream_hash);
  }
  if (is_registry_input(input)) {
    const RegistryRef ref = *RegistryRef::parse(input);
    try {
      return open_registry_store(ref, registry, progress, capture, stream_hash);
    } catch (const InputError& e) {
      // "myimage" may be a mistyped file name as well as a Docker Hub image.
      if (input.find('/') == std::string::npos)
        throw InputError(std::string(e.what()) + " (no file named '" + input + "' exists either)");
      throw;
    }
  }
  return open_blob_store(input, progress, capture, stream_hash);
}

Analysis analyze_image(const std::string& input, const AnalyzeOptions& options,
                       const RegistryOptions& registry) {
  const auto start = std::chrono::steady_clock::now();
  // A source read once digests every file on its pass; others digest only
  // the files whose size collides, on a second pass.
  const CaptureFn hash_all = [](std::string_view, std::uint64_t size) { return size > 0; };
  const auto store = open_input(input, registry, options.progress, options.capture,
                                options.hash_duplicates ? hash_all : CaptureFn{});
  Analysis a = analyze_store(*store, options);
  a.source = input;
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

ManifestReport inspect_manifest(const std::string& input, const AnalyzeOptions& options,
                                const RegistryOptions& registry) {
  const auto start = std::chrono::steady_clock::now();
  if (!is_registry_input(input) || input.rfind("docker://", 0) == 0 ||
      input.rfind("podman://", 0) == 0)
    throw InputError(input +
                     ": --manifest-only reads an image's manifest from a registry; a local file is "
                     "analysed in full (drop --manifest-only)");
  const auto ref = RegistryRef::parse(input);
  const auto store = open_registry_store(*ref, registry, options.progress, {}, {});
  const ResolvedImage image = resolve_image(*store, options.selector);
  ManifestReport r;
  r.source = ref->str();
  r.tags = image.tags;
  r.config_digest = image.config_digest;
  r.created = config_string(image.config, "created");
  r.platform =
      config_string(image.config, "os") + "/" + config_string(image.config, "architecture");
  if (const std::string v = config_string(image.config, "variant"); !v.empty())
    r.platform += "/" + v;
  const auto created_by = created_by_per_layer(image.config, image.layers.size(), r.warnings);
  for (std::size_t i = 0; i < image.layers.size(); ++i) {
    ManifestLayer l;
    l.digest = image.layers[i].digest;
    l.compressed_bytes = store->size_of(image.layers[i].blob).value_or(0);
    if (i < created_by.size()) l.created_by = created_by[i];
    r.compressed_bytes += l.compressed_bytes;
    r.layers.push_back(std::move(l));
  }
  r.warnings.insert(r.warnings.end(), image.warnings.begin(), image.warnings.end());
  r.bytes_read = store->bytes_read();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace imgsmith
