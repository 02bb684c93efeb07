// Where an image's files live: a tar on disk, a compressed tar read as a
// stream, or a directory. Every source answers the same few questions, so the
// image resolver and the analyzer never know which one they read.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "imgsmith/source/byte_stream.hpp"
#include "imgsmith/source/layer_scan.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {

using ProgressFn = std::function<void(const std::string&)>;

class BlobStore {
 public:
  virtual ~BlobStore() = default;

  // How the source is described in reports and messages, e.g. "img.tar".
  virtual const std::string& name() const = 0;
  // "tar", "compressed tar" or "directory".
  virtual std::string kind() const = 0;
  // What the read checked the bytes against, for the report ("" for
  // nothing beyond the formats' own checks): a registry's digests, the
  // daemon's tar-split records, a file's size and time at the end.
  virtual std::string verified() const { return ""; }

  // Names are relative paths inside the image ("manifest.json",
  // "blobs/sha256/<hex>", "<id>/layer.tar"); symbolic links are followed.
  virtual bool contains(const std::string& path) const = 0;
  // Unset where the file is missing, or where its size is not known until
  // it is read (a layer the daemon's storage rebuilds): never a made-up 0.
  virtual std::optional<std::uint64_t> size_of(const std::string& path) const = 0;
  // Reads a small file (JSON documents). Throws InputError if it is missing
  // or larger than `limit`.
  virtual std::string read_text(const std::string& path, std::uint64_t limit) const = 0;
  // Scans a layer blob, digesting the files `hash` picks. Safe to call from
  // several threads at once. Stores that read local files hand the entries
  // to `sink` as they go; others (a stream read in one pass, a registry
  // blob whose digest is checked at its end) may not call it at all.
  virtual std::shared_ptr<const LayerScan> scan_layer(const std::string& path,
                                                      const CaptureFn& hash = {},
                                                      const EntrySink& sink = {}) const = 0;
  // Whether scan_layer calls may run in parallel to good effect; such
  // stores can also be scanned a second time.
  virtual bool parallel_scans() const = 0;
  // How many scans at once suit the source when the user did not say; 0:
  // one per core (local files). A registry is bound by the network instead.
  virtual unsigned preferred_parallelism() const { return 0; }
  // Bytes read from disk so far, for the I/O report.
  virtual std::uint64_t bytes_read() const = 0;
  // Problems seen while opening that do not stop the analysis.
  virtual std::vector<std::string> warnings() const { return {}; }
};

// Opens PATH: a directory (OCI layout or an unpacked docker save), a tar file
// (docker save in any format, OCI archive), a gzip/zstd-compressed such tar,
// or "-" for a tar on standard input. Detected from content, never from the
// file name. Throws InputError naming PATH.
// `capture` picks the small files whose content layer scans keep. A source
// that can only be read once digests the files `stream_hash` picks on its
// one pass; the others digest on request in scan_layer.
std::unique_ptr<BlobStore> open_blob_store(const std::string& path, const ProgressFn& progress,
                                           const CaptureFn& capture = {},
                                           const CaptureFn& stream_hash = {});

// A tar (plain or compressed) read once from `in`, e.g. `docker save` output
// streamed from the Docker daemon. `label` names it in messages, `kind`
// says how it was read (BlobStore::kind).
std::unique_ptr<BlobStore> open_stream_store(ByteStream& in, const std::string& label,
                                             const std::string& kind, const ProgressFn& progress,
                                             const CaptureFn& capture = {},
                                             const CaptureFn& stream_hash = {});

// An image in the Docker daemon's own overlay2 storage, as src/registry
// found it through the Engine API: the config (already checked against the
// image ID) and, per layer, overlay2's diff directory and the tar-split
// record of the layer's tar when the daemon kept one.
struct DaemonStorageLayer {
  std::string diff_dir;   // the layer's files, unpacked
  std::string tar_split;  // tar-split.json.gz, or "" to walk diff_dir instead
};
struct DaemonStorageImage {
  std::string label;   // docker://NAME, for reports and messages
  std::string config;  // the image config JSON, as stored
  std::vector<std::string> tags;
  std::vector<DaemonStorageLayer> layers;  // bottom first
  // The daemon runs rootless: overlay2 marks opaque directories with
  // user.overlay.opaque, not trusted.overlay.opaque.
  bool rootless = false;
};
// Why the daemon's storage cannot be read in place, found before the image
// is analysed, so that a caller can stream `docker save` instead.
class StorageUnreadable : public InputError {
 public:
  using InputError::InputError;
};
// Reads the layers in place: a tar rebuilt from tar-split (headers from the
// record, data from the diff directory) or, without a record, the diff
// directory walked with overlay2's whiteout conventions. Several layers may
// be read at once. Throws StorageUnreadable when a layer is to be walked
// and its opaque marks cannot be read (trusted.* attributes without
// CAP_SYS_ADMIN), and with `check_first` when a record names a file beyond a
// symbolic link (each record is read once more to find out); a layer read
// later throws StorageUnreadable there too (docs/docker-engine.md).
std::unique_ptr<BlobStore> open_daemon_storage(DaemonStorageImage image, const CaptureFn& capture,
                                               bool check_first = false);

}  // namespace imgsmith
