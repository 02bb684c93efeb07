// Hugging Face hub caches, the layout `huggingface-cli download`,
// `snapshot_download` and `from_pretrained` leave in an image:
//   .../models--ORG--NAME/blobs/<sha>            the content, nameless
//   .../models--ORG--NAME/snapshots/<rev>/<name> symlinks to ../../blobs/<sha>
//   .../models--ORG--NAME/refs/main              the revision `main` is
// Read by the blobs' names, every shard is a model of its own and
// config.json is never found. Here each snapshot's names take the place of
// the blobs they point to, so a checkpoint groups and finds its config as
// it would in a plain folder.
#include <algorithm>
#include <map>
#include <set>

#include "imgsmith/models/vram.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

constexpr std::string_view kCachePrefix = "models--";

// The cache folder ".../models--ORG--NAME" a path lies in, and the part of
// the path after it; nullopt outside a cache.
struct CachePath {
  std::string cache;  // ".../models--ORG--NAME"
  std::string rest;   // "snapshots/<rev>/config.json", "blobs/<sha>", "refs/main"
};
std::optional<CachePath> cache_path(const std::string& path) {
  for (std::size_t at = path.find(kCachePrefix); at != std::string::npos;
       at = path.find(kCachePrefix, at + 1)) {
    if (at != 0 && path[at - 1] != '/') continue;
    const std::size_t end = path.find('/', at);
    if (end == std::string::npos) return std::nullopt;
    return CachePath{path.substr(0, end), path.substr(end + 1)};
  }
  return std::nullopt;
}

// "snapshots/<rev>/<name...>" -> {rev, name}.
std::optional<std::pair<std::string, std::string>> snapshot_entry(const std::string& rest) {
  if (!rest.starts_with("snapshots/")) return std::nullopt;
  const std::size_t slash = rest.find('/', 10);
  if (slash == std::string::npos || slash == 10 || slash + 1 >= rest.size()) return std::nullopt;
  return std::pair{rest.substr(10, slash - 10), rest.substr(slash + 1)};
}

// A link's target made absolute against the folder the link is in, ".."
// resolved: "../../blobs/abc" from ".../snapshots/r/x" is ".../blobs/abc".
std::string resolve(const std::string& link_path, const std::string& target) {
  if (target.starts_with('/')) return "/" + normalise_path(target);
  return "/" + normalise_path(link_path.substr(0, link_path.rfind('/') + 1) + target);
}

}  // namespace

bool hf_cache_link(std::string_view path) {
  const std::optional<CachePath> at = cache_path(std::string(path));
  return at && at->rest.starts_with("snapshots/");
}

bool hf_cache_text(std::string_view path, std::uint64_t size) {
  const std::optional<CachePath> at = cache_path(std::string(path));
  return at && size <= kHfCacheTextBytes &&
         (at->rest.starts_with("blobs/") || at->rest.starts_with("refs/"));
}

ModelInputs resolve_hf_caches(std::vector<ModelFileAt> files, std::vector<TextFileAt> texts,
                              const std::vector<LinkAt>& links) {
  ModelInputs out;
  // The revision each cache's refs/main names.
  std::map<std::string, std::string> main_revision;
  for (const auto& t : texts)
    if (const auto at = cache_path(t.path); at && at->rest == "refs/main")
      main_revision[at->cache] = std::string(trim(t.text));
  // Every snapshot of every cache, and what its links point to.
  std::map<std::string, std::set<std::string>> revisions;  // cache -> revisions
  struct SnapshotLink {
    const std::string* path;  // the link's, the name its blob takes
    std::string cache, revision;
  };
  std::map<std::string, std::vector<SnapshotLink>> by_target;
  for (const auto& link : links) {
    const auto at = cache_path(link.path);
    const auto entry = at ? snapshot_entry(at->rest) : std::nullopt;
    if (!entry) continue;
    revisions[at->cache].insert(entry->first);
    by_target[resolve(link.path, link.target)].push_back({&link.path, at->cache, entry->first});
  }
  // The snapshot that counts: refs/main's where the image has it and it is
  // there; otherwise each snapshot is a checkpoint of its own.
  const auto counts = [&](const std::string& cache, const std::string& revision) {
    const auto main = main_revision.find(cache);
    return main == main_revision.end() || revisions[cache].count(main->second) == 0 ||
           main->second == revision;
  };
  const auto rename = [&](const std::string& path, auto&& add) {
    const auto at = cache_path(path);
    if (!at || !at->rest.starts_with("blobs/")) return false;  // not a cache's blob
    if (const auto it = by_target.find(path); it != by_target.end())
      for (const SnapshotLink& link : it->second)
        if (counts(link.cache, link.revision)) add(*link.path);
    return true;  // a blob no counted snapshot names is no model: left out
  };
  for (auto& f : files)
    if (!rename(f.path, [&](const std::string& name) { out.files.push_back({name, f.file}); }))
      out.files.push_back(std::move(f));
  for (auto& t : texts)
    if (!rename(t.path,
                [&](const std::string& name) {
                  out.configs.push_back({name, t.text});
                }) &&
        !cache_path(t.path))
      out.configs.push_back(std::move(t));
  for (const auto& [cache, revs] : revisions) {
    const auto main = main_revision.find(cache);
    if (main == main_revision.end() || revs.count(main->second) == 0 || revs.size() < 2) continue;
    std::string others;
    for (const auto& r : revs)
      if (r != main->second) others += (others.empty() ? "" : ", ") + r;
    out.warnings.push_back({cache, "the Hugging Face cache holds other revisions than main's (" +
                                       main->second + "): " + others +
                                       "; no one loads them by default (huggingface-cli "
                                       "delete-cache removes them)"});
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const ModelFileAt& a, const ModelFileAt& b) { return a.path < b.path; });
  return out;
}

std::vector<Model> collect_models(ModelInputs inputs) {
  std::vector<Model> models = collect_models(inputs.files, inputs.configs);
  for (const auto& [cache, warning] : inputs.warnings)
    for (auto& m : models)
      if (m.path.starts_with(cache + "/")) m.warnings.push_back(warning);
  return models;
}

}  // namespace imgsmith
