// The model files of a project, read as analyze reads an image's: by
// content, header-only (src/models/), so gen can size the GPU the image
// needs and tell the probe.
#include <algorithm>
#include <fstream>
#include <optional>
#include <set>

#include "detect_internal.hpp"
#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/forward_reader.hpp"

namespace imgsmith::gen {
namespace {

namespace fs = std::filesystem;

// How deep --model folders and the project are searched for weights.
constexpr int kMaxModelDepth = 8;
constexpr std::uint64_t kMaxConfigBytes = 16 << 20;  // a weight map of thousands of tensors

struct Found {
  std::vector<ModelFileAt> files;
  std::vector<TextFileAt> configs;
  std::set<fs::path> seen;       // canonical paths: --model inside the project counts once
  std::vector<fs::path> models;  // the canonical paths of the model files among them
};

// Reads one file if it is a model (or a model's config.json); `shown` is
// the path the report gives it.
void read_candidate(const fs::path& path, std::uint64_t size, const std::string& shown,
                    Found& found) {
  std::error_code canonical_ec;
  const fs::path canonical = fs::canonical(path, canonical_ec);
  if (!found.seen.insert(canonical_ec ? path : canonical).second) return;
  const std::uint64_t keep = model_capture(shown, size);
  if (path.filename() == "config.json" || path.filename().string().ends_with(".index.json")) {
    if (size <= kMaxConfigBytes) {
      std::ifstream in(path, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (in.good() || in.eof()) found.configs.push_back(TextFileAt{shown, std::move(text)});
    }
    return;
  }
  if (keep == 0 && size < kModelMinBytes) return;
  std::optional<ModelFile> file;
  try {
    FileReader reader(path.string());
    std::string head;
    reader.read_exact(head,
                      static_cast<std::size_t>(std::min<std::uint64_t>(size, kModelHeadBytes)));
    file = inspect_model_content(head, reader, size);
  } catch (const InputError&) {
    return;  // unreadable: not this project's model as far as gen can tell
  }
  if (file) {
    found.files.push_back(ModelFileAt{shown, std::move(*file)});
    found.models.push_back(canonical_ec ? path : canonical);
  }
}

// Whether a model file found so far is `p` or lies under it (a --model
// inside the project was found by the project's walk already).
bool holds_model(const Found& found, const fs::path& p) {
  std::error_code ec;
  const fs::path root = fs::canonical(p, ec);
  if (ec) return false;
  return std::any_of(found.models.begin(), found.models.end(), [&](const fs::path& m) {
    const auto [end, at] = std::mismatch(root.begin(), root.end(), m.begin(), m.end());
    return end == root.end();
  });
}

// A Hugging Face cache (models--ORG--NAME/{blobs,snapshots,refs}) is read
// through its snapshots' names, symlinks to the blobs: a blob has no name
// to group shards by or to find config.json with. So the blobs folder is
// not walked, nor a snapshot other than the one refs/main names (when that
// one is there).
bool skipped_in_hf_cache(const fs::path& dir) {
  const fs::path parent = dir.parent_path();
  const auto is_cache = [](const fs::path& p) {
    return p.filename().string().starts_with("models--");
  };
  if (dir.filename() == "blobs" && is_cache(parent)) return true;
  if (parent.filename() != "snapshots" || !is_cache(parent.parent_path())) return false;
  std::ifstream ref(parent.parent_path() / "refs" / "main");
  std::string main;
  if (!(ref >> main) || main == dir.filename().string()) return false;
  std::error_code ec;
  return fs::is_directory(parent / main, ec);
}

void search_models(const fs::path& root, const std::string& shown_root, Found& found) {
  std::error_code ec;
  const auto status = fs::status(root, ec);
  if (fs::is_regular_file(status)) {
    read_candidate(root, fs::file_size(root, ec), shown_root, found);
    return;
  }
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) return;
  std::size_t seen = 0;
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec || ++seen > kMaxEntries) break;
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (it->is_directory(type_ec)) {
      if (it.depth() >= kMaxModelDepth || kSkippedDirs.count(name) != 0 ||
          (name.size() > 1 && name[0] == '.') || skipped_in_hf_cache(it->path()))
        it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(type_ec)) continue;
    const std::uint64_t size = it->file_size(type_ec);
    if (type_ec) continue;
    // Lexically: fs::relative resolves symlinks, and a link's own name is the
    // one that counts (a Hugging Face snapshot's, over its blob's).
    const std::string rel = it->path().lexically_relative(root).generic_string();
    read_candidate(it->path(), size, shown_root + "/" + rel, found);
  }
}

}  // namespace

std::vector<ModelReport> detect_models(const fs::path& dir, const std::vector<std::string>& paths) {
  Found found;
  search_models(dir, ".", found);
  for (const auto& p : paths) {
    std::error_code ec;
    const auto status = fs::status(p, ec);
    if (ec || !fs::exists(status))
      throw InputError("--model " + p +
                       ": no such file or folder; name the model's weights or their folder");
    if (!fs::is_regular_file(status) && !fs::is_directory(status))
      throw InputError("--model " + p + ": not a file or folder");
    // Shown as given, less a trailing slash ("model/" -> "model/x", not
    // "model//x").
    std::string shown = fs::path(p).lexically_normal().generic_string();
    while (shown.size() > 1 && shown.ends_with('/')) shown.pop_back();
    search_models(fs::path(p), shown, found);
    if (!holds_model(found, p))
      throw InputError(
          "--model " + p +
          ": no model weights found there (safetensors, GGUF, PyTorch, ONNX; judged by content)");
  }
  std::vector<ModelReport> reports;
  for (auto& model : collect_models(found.files, found.configs)) {
    VramEstimate vram = estimate_vram(model, {});
    reports.push_back(ModelReport{std::move(model), std::move(vram)});
  }
  return reports;
}

}  // namespace imgsmith::gen
