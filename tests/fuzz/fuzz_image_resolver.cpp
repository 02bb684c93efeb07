// The image resolver and the analysis behind it: an archive either taken as
// the fuzzer wrote it, or laid out from its strings as an OCI layout
// (oci-layout, index.json, a manifest, a config and a layer under
// blobs/sha256/, named by their real digests, so the documents are read) or
// as a docker save (manifest.json, a config, a layer). Bad documents must
// end in InputError, never a crash.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_support.hpp"
#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/source/blob_store.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/sha256.hpp"

namespace {

std::string hex_of(const std::string& blob) { return imgsmith::sha256_digest(blob).substr(7); }

// A layer: a few files from the fuzzer's strings, or its bytes as they are.
std::string layer(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) return in.ConsumeRandomLengthString(4096);
  std::vector<std::pair<std::string, std::string>> files;
  const int n = in.ConsumeIntegralInRange(0, 6);
  for (int i = 0; i < n; ++i)
    files.emplace_back(in.ConsumeRandomLengthString(120), in.ConsumeRandomLengthString(200));
  return fuzz::ustar(files);
}

// A document with the fuzzer's text spliced into a valid skeleton, so both
// structure and values vary.
std::string document(FuzzedDataProvider& in, const std::string& skeleton) {
  if (in.ConsumeBool()) return in.ConsumeRandomLengthString(2048);
  std::string out = skeleton;
  const std::string at = "@@";
  for (auto pos = out.find(at); pos != std::string::npos; pos = out.find(at))
    out.replace(pos, at.size(), in.ConsumeRandomLengthString(40));
  return out;
}

std::string oci_layout(FuzzedDataProvider& in) {
  const std::string blob = layer(in);
  const std::string config = document(
      in, R"({"architecture":"@@","os":"linux","rootfs":{"type":"layers","diff_ids":["sha256:)" +
              hex_of(blob) + R"("]},"history":[{"created_by":"@@"},{"empty_layer":@@}]})");
  const std::string manifest =
      document(in, R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
                   R"("config":{"digest":"sha256:)" +
                       hex_of(config) +
                       R"(","size":@@},)"
                       R"("layers":[{"mediaType":"@@","digest":"sha256:)" +
                       hex_of(blob) + R"(","size":)" + std::to_string(blob.size()) + "}]}");
  const std::string index = document(
      in,
      R"({"schemaVersion":2,"manifests":[{"mediaType":"@@","digest":"sha256:)" + hex_of(manifest) +
          R"(","size":)" + std::to_string(manifest.size()) +
          R"(,"platform":{"os":"linux","architecture":"@@"},"annotations":{"org.opencontainers.image.ref.name":"@@"}}]})");
  return fuzz::ustar({{"oci-layout", R"({"imageLayoutVersion":"1.0.0"})"},
                      {"index.json", index},
                      {"blobs/sha256/" + hex_of(manifest), manifest},
                      {"blobs/sha256/" + hex_of(config), config},
                      {"blobs/sha256/" + hex_of(blob), blob}});
}

std::string docker_save(FuzzedDataProvider& in) {
  const std::string blob = layer(in);
  const std::string config = document(
      in, R"({"architecture":"amd64","os":"@@","rootfs":{"type":"layers","diff_ids":["sha256:)" +
              hex_of(blob) + R"("]},"history":[{"created_by":"@@"}]})");
  const std::string manifest =
      document(in, R"([{"Config":"@@.json","RepoTags":["@@"],"Layers":["l/layer.tar","@@"]}])");
  return fuzz::ustar({{"manifest.json", manifest}, {"c.json", config}, {"l/layer.tar", blob}});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const int mode = in.ConsumeIntegralInRange(0, 2);
  const std::string archive = mode == 0   ? oci_layout(in)
                              : mode == 1 ? docker_save(in)
                                          : in.ConsumeRemainingBytesAsString();
  auto stream = fuzz::chunked(archive, {in.ConsumeIntegralInRange<std::size_t>(1, 70000)});
  try {
    const auto store = imgsmith::open_stream_store(
        stream, "fuzz", "tar", {},
        [](std::string_view, std::uint64_t) -> std::uint64_t { return 0; });
    imgsmith::AnalyzeOptions options;
    options.threads = 1;
    imgsmith::analyze_store(*store, options);
  } catch (const imgsmith::InputError&) {
  }
  return 0;
}
