#include "imgsmith/attribution/findings.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "attribution_data.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"
#include "owners.hpp"

namespace imgsmith {
namespace {

// Collects files into one finding: bytes, the layers, and the largest
// paths (kept to `top` as they come: a finding can cover 100,000 files).
struct Builder {
  Finding f;
  std::set<std::uint32_t> layers;
  std::map<std::uint32_t, std::uint64_t> layer_bytes;  // the bytes each layer added
  std::vector<FindingPath> paths;                      // a min-heap on bytes while collecting
  std::size_t top = 10;
  const std::vector<LayerReport>* image_layers = nullptr;

  static bool larger(const FindingPath& a, const FindingPath& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.path < b.path;
  }
  void add(std::string_view path, std::uint64_t bytes, std::uint32_t layer) {
    f.bytes += bytes;
    layers.insert(layer);
    layer_bytes[layer] += bytes;
    if (image_layers != nullptr && layer < image_layers->size() && (*image_layers)[layer].base)
      f.base_bytes += bytes;
    keep_path(path, bytes);
  }
  // Everything `other` collected, as if its files had been added here.
  void absorb(const Builder& other) {
    f.bytes += other.f.bytes;
    f.base_bytes += other.f.base_bytes;
    layers.insert(other.layers.begin(), other.layers.end());
    for (const auto& [layer, bytes] : other.layer_bytes) layer_bytes[layer] += bytes;
    // Its largest paths hold every one of its paths that can be among ours.
    for (const auto& p : other.paths) keep_path(p.path, p.bytes);
  }
  void keep_path(std::string_view path, std::uint64_t bytes) {
    // The heap's smallest, compared without copying the path first.
    const bool fits = paths.size() < top || bytes > paths.front().bytes ||
                      (bytes == paths.front().bytes && path < paths.front().path);
    if (fits) {
      paths.push_back(FindingPath{std::string(path), bytes});
      std::push_heap(paths.begin(), paths.end(), larger);
      if (paths.size() > top) {
        std::pop_heap(paths.begin(), paths.end(), larger);
        paths.pop_back();
      }
    }
  }
  Finding done() {
    std::sort(paths.begin(), paths.end(), larger);
    f.paths = std::move(paths);
    f.layers.assign(layers.begin(), layers.end());
    return std::move(f);
  }
};

// A CUDA library file whose owner a fix may name.
struct CudaFile {
  std::string path;
  std::uint32_t layer;
  std::uint64_t bytes;
};

std::string created_by(const Analysis& a, std::uint32_t layer) {
  std::string text =
      layer < a.layers.size() ? dockerfile_step(a.layers[layer].created_by) : std::string();
  if (text.size() > 70) text = text.substr(0, 67) + "...";
  return "layer " + std::to_string(layer) + (text.empty() ? "" : " (" + text + ")");
}

// A build tool that is CUDA's (nvcc, CUDA's headers and -dev packages) rather
// than the host's C toolchain: by where it lies, or by the Debian package that
// owns it. Package families are named whole: "libcu" alone would take
// libcurl4-openssl-dev for CUDA.
bool is_cuda_devel(std::string_view path, std::string_view child) {
  if (path.starts_with("/usr/local/cuda") || path.starts_with("/opt/nvidia/") ||
      path.find("-packages/nvidia/") != std::string_view::npos)
    return true;
  static constexpr std::string_view kCudaPackages[] = {
      "cuda-",     "nsight",       "libcudnn",    "libnccl",     "libcublas",
      "libcufft",  "libcurand",    "libcusolver", "libcusparse", "libnpp",
      "libnvjpeg", "libnvjitlink", "libnvrtc"};
  if (child == "cuda-compiler") return true;
  for (const auto prefix : kCudaPackages)
    if (child.starts_with(prefix)) return true;
  return false;
}

}  // namespace

namespace {

// data/findings.json, read once: the ids in report order, with each one's
// title and fix.
struct FindingText {
  std::string id, title, fix;
  // The fix for the copy that can go, by its origin (cuda-duplicated).
  std::map<std::string, std::string> fix_by_origin;
  // Added to the fix with {step}: the step that added the most of it.
  std::string fix_in_step;
};
const std::vector<FindingText>& finding_table() {
  static const std::vector<FindingText> table = [] {
    std::vector<FindingText> rows;
    const auto doc = nlohmann::json::parse(attribution_data().at("findings.json"));
    for (const auto& f : doc.at("findings"))
      rows.push_back({f.at("id").get<std::string>(), f.at("title").get<std::string>(),
                      f.at("fix").get<std::string>(),
                      f.value("fix_by_origin", std::map<std::string, std::string>{}),
                      f.value("fix_in_step", std::string())});
    return rows;
  }();
  return table;
}

}  // namespace

namespace {

const FindingText& finding_row(const std::string& id) {
  const auto& table = finding_table();
  const auto row =
      std::find_if(table.begin(), table.end(), [&](const FindingText& t) { return t.id == id; });
  if (row == table.end())
    throw std::logic_error("finding '" + id + "' is not in data/findings.json");
  return *row;
}

// What a template of data/findings.json says with {packages}, {step} and
// {origin} filled in.
std::string fill(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values)
    for (std::size_t at = 0; (at = text.find("{" + key + "}", at)) != std::string::npos;
         at += value.size())
      text.replace(at, key.size() + 2, value);
  return text;
}

// cuda-duplicated's fix from the evidence: for each origin whose copy can
// go, who installed its files (the packages and distributions their
// databases name) and the step of the layer that added the most bytes of
// it; the toolkit's is the base-flavour fix; any other origin (a copy
// bundled inside a package) has none that is safe, and the text says so.
std::string duplicate_fix(
    const Analysis& a, const std::map<std::string, std::string>& removable_origin,
    const std::map<std::pair<std::string, std::string>, std::vector<CudaFile>>& cuda_paths) {
  const FindingText& row = finding_row("cuda-duplicated");
  std::map<std::string, std::set<std::string>> packages;                      // origin -> owners
  std::map<std::string, std::map<std::uint32_t, std::uint64_t>> layer_bytes;  // origin -> ...
  std::unique_ptr<attribution_detail::Ownership> owners;
  for (const auto& [family, origin] : removable_origin) {
    const auto files = cuda_paths.find({family, origin});
    if (files == cuda_paths.end()) continue;
    if (!owners) owners = std::make_unique<attribution_detail::Ownership>(a.metadata);
    for (const CudaFile& file : files->second) {
      layer_bytes[origin][file.layer] += file.bytes;
      const attribution_detail::FileOwners own = owners->of(std::string_view(file.path).substr(1));
      const bool python = origin == "pip" || origin == "bundled";
      const attribution_detail::Owner* owner = python ? own.python : own.system;
      if (owner == nullptr) owner = python ? own.system : own.python;
      if (owner != nullptr) packages[origin].insert(owner->package);
    }
  }
  std::string fix;
  std::set<std::string> done;
  for (const auto& [family, origin] : removable_origin) {
    if (!done.insert(origin).second) continue;
    std::string names;
    for (const auto& name : packages[origin]) names += (names.empty() ? "" : " ") + name;
    std::string text;
    if (origin == "toolkit") {
      text = row.fix;
    } else if (const auto tmpl = row.fix_by_origin.find(origin);
               tmpl != row.fix_by_origin.end() && !names.empty()) {
      // The step of the layer that added the most of this origin's copy.
      std::uint32_t layer = 0;
      std::uint64_t most = 0;
      for (const auto& [l, bytes] : layer_bytes[origin])
        if (bytes > most) most = bytes, layer = l;
      text = fill(tmpl->second,
                  {{"packages", names}, {"step", created_by(a, layer)}, {"origin", origin}});
    } else {
      text = "no safe fix is known for the " + origin + " copy" +
             (names.empty() ? "" : " (in " + names + ")") +
             ": what carries it loads that copy itself; remove the other copy instead, or ask for "
             "a build without its own";
    }
    fix += (fix.empty() ? "" : "; ") + text;
  }
  return fix;
}

bool below_floor(const Finding& f, std::uint64_t final_bytes, const FindingFloor& floor) {
  return f.bytes < floor.min_bytes &&
         static_cast<double>(f.bytes) <
             static_cast<double>(final_bytes) * floor.min_percent / 100.0;
}

// Report order: significant findings first, each group largest saving first.
bool reported_before(const Finding& x, const Finding& y) {
  if (x.info != y.info) return !x.info;
  return x.bytes != y.bytes ? x.bytes > y.bytes : x.id < y.id;
}

}  // namespace

Finding finding_of(const std::string& id) {
  const FindingText& row = finding_row(id);
  Finding f;
  f.id = id;
  f.message = row.title;
  f.fix = row.fix;
  return f;
}

void insert_finding(std::vector<Finding>& findings, Finding f, std::uint64_t final_bytes,
                    const FindingFloor& floor) {
  f.info = !f.defect && below_floor(f, final_bytes, floor);
  findings.insert(std::upper_bound(findings.begin(), findings.end(), f, reported_before),
                  std::move(f));
}

const std::vector<std::string>& finding_ids() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> out;
    for (const auto& f : finding_table()) out.push_back(f.id);
    return out;
  }();
  return ids;
}

struct WasteFinder::Builders {
  const Analysis& a;
  const std::vector<Glob> ignore;
  std::map<std::string, Builder> b;
  Builder *devel, *pip, *node, *gem, *build_cache, *pkgcache, *lists, *weights, *statics, *docs;
  // The host's C toolchain and headers (gcc, binutils, libc and Python
  // headers), apart from CUDA's devel files: an image that compiles at run
  // time needs the former, never the latter.
  Builder host_toolchain;
  // CUDA files by family and origin: which origin's copy can go is known
  // only once every file is counted.
  std::map<std::pair<std::string, std::string>, Builder> cuda;
  // Every path of those whose fix names their owners (a few hundred files
  // at most: CUDA's libraries), by family and origin.
  std::map<std::pair<std::string, std::string>, std::vector<CudaFile>> cuda_paths;
  // The categories that findings read, by AttributedFile::category.
  enum class Kind : std::uint8_t { Unknown, BuildTools, Cache, ModelWeights, Cuda, Other };
  std::vector<Kind> kinds;

  // A finding of data/findings.json, with its title and fix from there.
  Builder& start(const std::string& id) {
    Builder& x = b[id];
    x.top = a.top;
    x.image_layers = &a.layers;
    x.f = finding_of(id);
    return x;
  }

  Builders(const Analysis& analysis, const std::vector<Glob>& ignored)
      : a(analysis), ignore(ignored) {
    devel = &start("devel-in-final");
    host_toolchain.top = a.top;
    host_toolchain.image_layers = &a.layers;
    pip = &start("pip-cache");
    node = &start("node-cache");
    gem = &start("gem-cache");
    build_cache = &start("build-cache");
    pkgcache = &start("package-cache");
    lists = &start("apt-lists");
    weights = &start("model-weights-baked");
    statics = &start("static-libs");
    docs = &start("docs");
  }
};

WasteFinder::WasteFinder(const Analysis& analysis, const std::vector<Glob>& ignore)
    : builders_(std::make_unique<Builders>(analysis, ignore)) {}

WasteFinder::~WasteFinder() = default;

void WasteFinder::add(const AttributedFile& file, const std::string& category_name) {
  using Kind = Builders::Kind;
  Builders& x = *builders_;
  if (matches_any(x.ignore, file.path)) return;
  // What the category means here, worked out once per category: millions of
  // files share a handful of them.
  if (file.category >= x.kinds.size()) x.kinds.resize(file.category + 1, Kind::Unknown);
  Kind& kind = x.kinds[file.category];
  if (kind == Kind::Unknown)
    kind = category_name == "build-tools"     ? Kind::BuildTools
           : category_name == "cache"         ? Kind::Cache
           : category_name == "model-weights" ? Kind::ModelWeights
           : category_name == "cuda"          ? Kind::Cuda
                                              : Kind::Other;
  const std::string_view child = file.child;
  if (kind == Kind::BuildTools) {
    (is_cuda_devel(file.path, child) ? *x.devel : x.host_toolchain)
        .add(file.path, file.bytes, file.layer);
  }
  if (kind == Kind::Cache && (child == "pip" || child == "uv"))
    x.pip->add(file.path, file.bytes, file.layer);
  if (kind == Kind::Cache && (child == "npm" || child == "yarn" || child == "pnpm-store" ||
                              child == "next" || child == "node_modules-cache"))
    x.node->add(file.path, file.bytes, file.layer);
  if (kind == Kind::Cache && child == "gem") x.gem->add(file.path, file.bytes, file.layer);
  if (kind == Kind::Cache && (child == "go-build" || child == "go-mod" || child == "cargo"))
    x.build_cache->add(file.path, file.bytes, file.layer);
  if (kind == Kind::Cache && (child == "apt-archives" || child == "conda-pkgs"))
    x.pkgcache->add(file.path, file.bytes, file.layer);
  if (kind == Kind::Cache && child == "apt-lists") x.lists->add(file.path, file.bytes, file.layer);
  if (kind == Kind::ModelWeights) x.weights->add(file.path, file.bytes, file.layer);
  // Only archives that are build tools: a Python distribution's own (numpy's
  // libnpymath.a) cannot be removed without it.
  if (kind == Kind::BuildTools && file.path.ends_with(".a"))
    x.statics->add(file.path, file.bytes, file.layer);
  if (file.path.starts_with("/usr/share/doc/") || file.path.starts_with("/usr/share/man/") ||
      file.path.starts_with("/usr/share/info/") || file.path.starts_with("/usr/share/locale/"))
    x.docs->add(file.path, file.bytes, file.layer);
  if (kind == Kind::Cuda) {
    auto [it, fresh] = x.cuda.try_emplace({file.child, file.origin});
    if (fresh) {
      it->second.top = x.a.top;
      it->second.image_layers = &x.a.layers;
    }
    it->second.add(file.path, file.bytes, file.layer);
    if (file.origin != "toolkit")
      x.cuda_paths[{file.child, file.origin}].push_back(
          CudaFile{std::string(file.path), file.layer, file.bytes});
  }
}

std::vector<Finding> find_waste(const Analysis& a, const Attribution& attr,
                                const std::vector<Glob>& ignore, const FindingFloor& floor) {
  WasteFinder finder(a, ignore);
  for (const auto& file : attr.files) finder.add(file, attr.categories[file.category].name);
  return finder.finish(attr, floor);
}

std::vector<Finding> WasteFinder::finish(const Attribution& attr, const FindingFloor& floor) {
  const Analysis& a = builders_->a;
  const std::vector<Glob>& ignore = builders_->ignore;
  std::map<std::string, Builder>& b = builders_->b;
  const auto start = [&](const std::string& id) -> Builder& { return builders_->start(id); };

  // The CUDA families that ship in more than one origin.
  const CategoryNode* cuda = attr.find("cuda");
  std::set<std::string> duplicated;
  if (cuda != nullptr)
    for (const auto& family : cuda->children)
      if (family.name != "other" && family.origins.size() >= 2) duplicated.insert(family.name);
  std::map<std::string, std::string> removable_origin;  // family -> origin whose copy can go
  if (cuda != nullptr)
    for (const auto& family : cuda->children) {
      if (duplicated.count(family.name) == 0) continue;
      // The system's copy (the toolkit's, or one apt or rpm installed, as
      // in NVIDIA's cudnn images) is the one a smaller base image leaves
      // out, while a framework loads its own wheels; otherwise the smallest.
      std::string pick;
      for (const char* system : {"rpm", "apt", "toolkit"})
        if (family.origins.count(system) != 0) pick = system;
      if (pick.empty()) {
        std::uint64_t least = UINT64_MAX;
        for (const auto& [origin, bytes] : family.origins)
          if (bytes < least) least = bytes, pick = origin;
      }
      removable_origin[family.name] = pick;
    }
  std::set<std::string> origins_seen;
  for (const auto& [family, origin] : removable_origin) origins_seen.insert(origin);
  Builder& dup = start("cuda-duplicated");
  for (const auto& [family, origin] : removable_origin)
    if (const auto it = builders_->cuda.find({family, origin}); it != builders_->cuda.end())
      dup.absorb(it->second);

  if (!removable_origin.empty()) {
    dup.f.fix = duplicate_fix(a, removable_origin, builders_->cuda_paths);
    std::string families;
    for (const auto& [family, origin] : removable_origin)
      families += (families.empty() ? "" : ", ") + family;
    std::string origins;
    for (const auto& o : origins_seen) origins += (origins.empty() ? "" : ", ") + o;
    dup.f.message = "CUDA libraries ship in more than one copy (" + families + "); the " + origins +
                    " copy can go";
  }

  Builder& deleted = start("deleted-in-later-layer");
  Builder& overwritten = start("overwritten-in-later-layer");
  Builder& readded = start("metadata-only-readd");
  std::uint64_t largest_readded = 0;
  std::uint64_t largest_deleted = 0, largest_overwritten = 0;
  for (const auto& w : a.waste) {
    if (matches_any(ignore, w.path)) continue;
    // A package manager rewrites its database, logs and caches on every
    // install: hidden bytes that dive counts, but no Dockerfile change other
    // than fewer installs avoids them, and no base or --chown would.
    const bool deletion = w.how == HiddenBy::Deleted || w.how == HiddenBy::Opaque;
    if (w.package_state && !deletion) continue;
    // apt's binary caches (pkgcache.bin, srcpkgcache.bin), rewritten at one
    // size by each apt-get update: the cache's waste, which apt-get clean in
    // the same RUN removes, not a chmod's.
    if (!deletion && (w.path == "/var/cache/apt" || w.path.starts_with("/var/cache/apt/"))) {
      builders_->pkgcache->add(w.path, w.bytes, w.added_layer);
      builders_->pkgcache->layers.insert(w.hidden_layer);
      continue;
    }
    if (w.how == HiddenBy::Readded) {
      readded.add(w.path, w.bytes, w.added_layer);
      readded.layers.insert(w.hidden_layer);
      if (w.bytes > largest_readded) {
        largest_readded = w.bytes;
        readded.f.message = created_by(a, w.hidden_layer) + " re-added " + w.path + " (" +
                            std::to_string(w.files) + (w.files == 1 ? " file, " : " files, ") +
                            format_size(w.bytes) + ") unchanged in size from " +
                            created_by(a, w.added_layer) + ": most likely a metadata-only change";
      }
      continue;
    }
    Builder& x = deletion ? deleted : overwritten;
    std::uint64_t& largest = deletion ? largest_deleted : largest_overwritten;
    x.add(w.path, w.bytes, w.added_layer);
    x.layers.insert(w.hidden_layer);
    if (w.bytes > largest) {
      largest = w.bytes;
      x.f.message = std::string(deletion ? "bytes added by one layer are deleted by a later one"
                                         : "bytes added by one layer are replaced by a later one") +
                    "; the largest: " + w.path + " (" + format_size(w.bytes) + "), added by " +
                    created_by(a, w.added_layer) + ", hidden by " + created_by(a, w.hidden_layer);
    }
  }

  // Identical content (found with --hash): every copy but one could go.
  Builder& dups = start("duplicate-content");
  std::size_t groups = 0;
  for (const auto& g : a.duplicates) {
    std::vector<const FileReport*> kept;
    for (const auto& f : g.files)
      if (!matches_any(ignore, f.path)) kept.push_back(&f);
    if (kept.size() < 2) continue;
    ++groups;
    for (std::size_t i = 1; i < kept.size(); ++i) dups.add(kept[i]->path, g.size, kept[i]->layer);
    dups.layers.insert(kept[0]->layer);
  }
  if (groups > 0)
    dups.f.message =
        std::to_string(groups) + " sets of identical files are stored at different paths";

  // A package that compiles C at run time needs the host toolchain in the
  // final image: Triton (vLLM, SGLang, torch.compile) builds its launcher
  // with gcc and Python's headers when the app starts, and dies without them
  // ("Failed to find C compiler"). Only CUDA's devel files are then waste.
  static const std::set<std::string, std::less<>> runtime_compilers = {"triton"};
  bool compiles_at_run_time = false;
  if (const CategoryNode* frameworks = attr.find("framework"))
    for (const auto& child : frameworks->children)
      if (runtime_compilers.count(child.name) != 0 && child.bytes > 0) compiles_at_run_time = true;
  Builder& devel = *builders_->devel;
  if (!compiles_at_run_time) {
    devel.absorb(builders_->host_toolchain);
  } else if (builders_->host_toolchain.f.bytes > 0 && devel.f.bytes > 0) {
    devel.f.message =
        "CUDA's compilers, headers or static libraries are in the final image (gcc and the "
        "headers Triton compiles with at start are needed, and not counted)";
  }

  // What the base image brought: the user's Dockerfile cannot remove it,
  // only hide it, so the fix is another base (or a slimmer flavour of it).
  for (auto& [id, builder] : b) {
    Finding& f = builder.f;
    if (f.base_bytes == 0 || id == "cuda-duplicated" || id == "duplicate-content") continue;
    if (f.base_bytes == f.bytes) {
      f.message = "from the base image: " + f.message;
      f.fix =
          "these bytes are in the base image's layers, which no later RUN can remove (rm only "
          "hides "
          "them): choose a smaller base or flavour (-slim, runtime instead of devel, base instead "
          "of "
          "runtime), or copy what you need FROM it into a smaller final stage";
    } else {
      f.message += " (" + format_size(f.base_bytes) +
                   " of it from the base image, which only another "
                   "base removes)";
    }
  }

  // Where the user's Dockerfile put the bytes: the step of the user's layer
  // that added the most, for the findings whose fix is done in that step.
  for (auto& [id, builder] : b) {
    const std::string& tmpl = finding_row(id).fix_in_step;
    if (tmpl.empty() || builder.f.bytes == 0 || builder.f.base_bytes == builder.f.bytes) continue;
    std::uint32_t layer = 0;
    std::uint64_t most = 0;
    for (const auto& [l, bytes] : builder.layer_bytes)
      if (bytes > most && !(l < a.layers.size() && a.layers[l].base)) most = bytes, layer = l;
    if (most > 0) builder.f.fix += "; " + fill(tmpl, {{"step", created_by(a, layer)}});
  }

  std::vector<Finding> out;
  for (auto& [id, builder] : b) {
    if (builder.f.bytes == 0) continue;
    Finding f = builder.done();
    f.info = below_floor(f, a.final_bytes, floor);
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), reported_before);
  return out;
}

}  // namespace imgsmith
