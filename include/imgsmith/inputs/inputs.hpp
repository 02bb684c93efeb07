// What the user names on the command line, turned into something to read:
// a saved image or an OCI layout (a file, a directory, "-" for stdin),
// docker://NAME (the local daemon) or a registry reference. This layer is
// the one that knows every kind of source; the analysis takes the
// BlobStore it opens and never reaches the network. A new kind of source
// is a change here and in its own library.
#pragma once

#include <memory>
#include <string>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/source/blob_store.hpp"

namespace imgsmith {

// The store for `input`, whichever kind it is. `capture` picks the files to
// keep (package databases), `stream_hash` those to digest on a source read
// once. Throws InputError naming the input.
std::unique_ptr<BlobStore> open_input(const std::string& input, const RegistryOptions& registry,
                                      const ProgressFn& progress, const CaptureFn& capture,
                                      const CaptureFn& stream_hash);

// Opens, resolves and analyses the image `input` names. Throws InputError.
Analysis analyze_image(const std::string& input, const AnalyzeOptions& options,
                       const RegistryOptions& registry = {});

// --manifest-only: the manifest and config of a registry image, no layer.
// Throws InputError when `input` is not a registry reference (a local file
// is analysed in full) or the registry cannot answer.
ManifestReport inspect_manifest(const std::string& input, const AnalyzeOptions& options,
                                const RegistryOptions& registry);

}  // namespace imgsmith
