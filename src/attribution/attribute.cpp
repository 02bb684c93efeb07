#include <algorithm>
#include <atomic>
#include <bitset>
#include <exception>
#include <map>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "gems.hpp"
#include "imgsmith/analysis/merged_tree.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/models/model_format.hpp"
#include "imgsmith/util/text.hpp"
#include "imgsmith/util/worker_threads.hpp"
#include "owners.hpp"

namespace imgsmith {
namespace {

using attribution_detail::FileOwners;
using attribution_detail::is_system_installer;
using attribution_detail::normalise_dist;
using attribution_detail::Owner;
using attribution_detail::Ownership;

std::string expand_child(const std::string& child, const std::string* dist, const std::string* pkg,
                         const Owner* node, std::string_view content) {
  if (child == "{content}") return content.empty() ? "unknown" : std::string(content);
  // A rule for {package} that matched on a Python distribution, a Node.js
  // package, a gem or a Go or Rust program alone (no system package) names
  // that (`node` is whichever of the last three the file has).
  if (child == "{dist}") return dist != nullptr ? *dist : "unknown";
  if (child == "{node}") return node != nullptr ? node->package : "unknown";
  if (child == "{package}")
    return pkg != nullptr    ? *pkg
           : dist != nullptr ? *dist
           : node != nullptr ? node->package
                             : "unknown";
  return child;
}

std::uint16_t index_of(const RuleSet& rules, const std::string& category) {
  return static_cast<std::uint16_t>(
      std::find(rules.categories.begin(), rules.categories.end(), category) -
      rules.categories.begin());
}

// Path globs compiled for the walk. Most rules say "everything under this
// directory" (they end in "/**"): a file matches such a glob exactly when one
// of its ancestor directories matches the part before "/**", which is worked
// out once per directory as the walk enters it, not once per file.
struct CompiledGlobs {
  std::vector<std::size_t> tree;      // indexes into the directory tests
  std::vector<const Glob*> per_file;  // tested on every file
  // The bytes a file name must start with for one of `per_file` to match
  // it ("**/libcudnn*" needs an 'l'): one bit test spares most files the
  // glob calls.
  std::bitset<256> first_bytes;
};

// The bytes a name matched by `pattern` can start with: the literal first
// byte of its last segment, or any byte where that segment starts with a
// wildcard or "**" can carry the match across segments.
std::bitset<256> name_first_bytes(const std::string& pattern) {
  std::bitset<256> any;
  any.set();
  const auto slash = pattern.rfind('/');
  if (slash == std::string::npos) return any;
  const std::string_view last = std::string_view(pattern).substr(slash + 1);
  if (last.empty() || last.find("**") != std::string_view::npos) return any;
  if (std::string_view("*?[\\").find(last.front()) != std::string_view::npos) return any;
  std::bitset<256> one;
  one.set(static_cast<unsigned char>(last.front()));
  return one;
}

struct CompiledRules {
  std::vector<Glob> directory_tests;  // "Q" of each "Q/**"
  std::vector<CompiledGlobs> rules, origins;
  std::vector<char> needs_owner;  // per rule: it names packages or distributions to match

  explicit CompiledRules(const RuleSet& set) {
    for (const auto& r : set.rules) {
      rules.push_back(compile(r.paths));
      needs_owner.push_back(!r.python_dists.empty() || !r.node_packages.empty() ||
                                    !r.deb_packages.empty() || !r.packages.empty()
                                ? 1
                                : 0);
    }
    for (const auto& o : set.origins) origins.push_back(compile(o.paths));
  }

 private:
  CompiledGlobs compile(const std::vector<Glob>& globs) {
    CompiledGlobs c;
    for (const auto& g : globs) {
      const std::string& p = g.pattern();
      if (p.size() >= 3 && p.ends_with("/**")) {
        c.tree.push_back(directory_tests.size());
        directory_tests.emplace_back(p.substr(0, p.size() - 3));
      } else {
        c.per_file.push_back(&g);
        c.first_bytes |= name_first_bytes(p);
      }
    }
    return c;
  }
};

// A rule a file of some directory can match: rules whose paths are all
// trees the directory is not under cannot, and are left out of its list.
struct RuleCandidate {
  std::uint32_t rule;
  bool path_matched;  // no paths, or a tree the directory is under; else per-file globs decide
};

// Attribution in two steps, a chunk of files at a time. A walk, in tree
// order, lists visible contents once each (under the first name the walk
// meets) with their directory and which directory tests that directory
// passed. Then the files are classified, in parallel on large images:
// classifying is most of the cost, and each file's answer depends on
// nothing but its own path, size and owners.
struct Directory {
  std::string path;         // "/usr/lib"; "" for the root
  std::vector<char> under;  // which directory tests it (or an ancestor) passed
  // The rules its files can match, in rule order: worked out once per
  // directory, so that a file is only tried against those (most files of
  // an image are under no rule's tree but a few). A file that no package
  // or Python distribution owns takes the shorter list, without the rules
  // that need an owner.
  std::vector<RuleCandidate> candidates, unowned_candidates;
};

struct FileToClassify {
  const FileNode* node;
  std::uint32_t directory;
};

// The walk, resumable: it stops whenever a chunk is full, so the files of
// a large tree are never all listed at once.
class Walker {
 public:
  Walker(const CompiledRules& compiled, const FileNode& root, std::size_t contents)
      : compiled_(compiled), seen_(contents, false) {
    Directory top;
    top.under.resize(compiled.directory_tests.size());
    for (std::size_t i = 0; i < compiled.directory_tests.size(); ++i)
      top.under[i] = compiled.directory_tests[i].matches("", "") ? 1 : 0;
    list_candidates(top);
    directories_.push_back(std::move(top));
    stack_.push_back(Frame{root.children().begin(), 0});
  }

  // The next files of the walk, at most `max`, into `out`; false when none are left.
  bool next(std::vector<FileToClassify>& out, std::size_t max) {
    out.clear();
    while (!stack_.empty() && out.size() < max) {
      auto& next = stack_.back().next;
      if (next.at_end()) {
        stack_.pop_back();
        continue;
      }
      const FileNode* child = *next;
      ++next;
      const std::uint32_t directory = stack_.back().directory;
      if (child->inode() >= 0 && !seen_[static_cast<std::size_t>(child->inode())]) {
        seen_[static_cast<std::size_t>(child->inode())] = true;
        out.push_back(FileToClassify{child, directory});
      }
      if (child->has_children()) {
        Directory sub;
        sub.path = directories_[directory].path + "/" + std::string(child->name());
        sub.under = directories_[directory].under;
        for (std::size_t i = 0; i < sub.under.size(); ++i)
          if (!sub.under[i]) sub.under[i] = compiled_.directory_tests[i].matches(sub.path) ? 1 : 0;
        list_candidates(sub);
        directories_.push_back(std::move(sub));
        // Depth first: the directory's children come before its next sibling.
        stack_.push_back(
            Frame{child->children().begin(), static_cast<std::uint32_t>(directories_.size() - 1)});
      }
    }
    return !out.empty();
  }

  const std::vector<Directory>& directories() const { return directories_; }

 private:
  void list_candidates(Directory& dir) const {
    dir.candidates.clear();
    dir.unowned_candidates.clear();
    for (std::size_t i = 0; i < compiled_.rules.size(); ++i) {
      const CompiledGlobs& c = compiled_.rules[i];
      const bool no_paths = c.tree.empty() && c.per_file.empty();
      const bool under_tree =
          std::any_of(c.tree.begin(), c.tree.end(), [&](std::size_t t) { return dir.under[t]; });
      RuleCandidate candidate{static_cast<std::uint32_t>(i), true};
      if (!no_paths && !under_tree) {
        if (c.per_file.empty()) continue;
        candidate.path_matched = false;
      }
      dir.candidates.push_back(candidate);
      if (!compiled_.needs_owner[i]) dir.unowned_candidates.push_back(candidate);
    }
  }

  struct Frame {
    FileNode::ChildRange::iterator next;  // the next child to visit
    std::uint32_t directory;
  };
  const CompiledRules& compiled_;
  std::vector<bool> seen_;  // per content
  std::vector<Directory> directories_;
  std::vector<Frame> stack_;
};

struct Classifier {
  const RuleSet& rules;
  const CompiledRules& compiled;
  const Ownership& owners;
  // Files judged by their first bytes: normalised path -> format name.
  const std::unordered_map<std::string_view, std::string_view>& content_formats;
  std::span<const MergedTree::Inode> inodes;
  const std::vector<Directory>& directories;
  std::vector<std::uint16_t> category_index;  // rule -> category
  std::uint16_t other, cuda, framework, python, nodejs;
  // The categories of gems and of Go and Rust programs: their installer is
  // their origin too.
  std::uint16_t ruby, go, rust;
  // Virtual environments (PEP 405: a directory holding pyvenv.cfg), so that
  // what pip put in a venv is told apart from what it put in the system's
  // site-packages.
  std::vector<std::string> venvs;
  // Owner (by its index in owners.owners()) -> Attribution::packages index.
  const std::vector<std::int32_t>* package_of = nullptr;

  bool matches(const CompiledGlobs& c, const Directory& dir, std::string_view path,
               std::string_view base) const {
    for (const std::size_t i : c.tree)
      if (dir.under[i]) return true;
    for (const Glob* g : c.per_file)
      if (g->matches(path, base)) return true;
    return false;
  }

  // The name's first byte was tested already (classify).
  static bool matches_per_file(const CompiledGlobs& c, std::string_view path,
                               std::string_view base) {
    for (const Glob* g : c.per_file)
      if (g->matches(path, base)) return true;
    return false;
  }

  // `scratch` is a buffer to build the path in; `text` keeps it.
  AttributedFile classify(const FileToClassify& file, std::string& scratch, TextArena& text) const {
    const FileNode& node = *file.node;
    const Directory& dir = directories[file.directory];
    const auto& inode = inodes[static_cast<std::size_t>(node.inode())];
    AttributedFile f;
    scratch.assign(dir.path).append("/").append(node.name());
    f.path = text.store(scratch);
    const std::string_view path = f.path;
    const std::string_view base = node.name();
    f.bytes = inode.size;
    f.layer = inode.layer;
    const std::string_view key = path.substr(1);
    const FileOwners own = owners.of(key);
    const std::string* dist = own.dist();
    const Owner* system = own.system;
    const std::string* pkg = system != nullptr ? &system->package : nullptr;
    const std::string* deb = system != nullptr && system->installer == "apt" ? pkg : nullptr;
    const Owner* node_package = own.node;
    const Owner* module = own.module;
    const std::string_view installer = own.installer();
    const std::string dist_key = dist != nullptr ? normalise_dist(*dist) : std::string();
    f.category = other;
    f.child = "other";
    if (const Owner* o = own.primary(); o != nullptr && package_of != nullptr)
      f.package = (*package_of)[static_cast<std::size_t>(o - owners.owners().data())];
    const unsigned char first = base.empty() ? 0 : static_cast<unsigned char>(base.front());
    const bool owned =
        dist != nullptr || system != nullptr || node_package != nullptr || module != nullptr;
    for (const RuleCandidate& candidate : owned ? dir.candidates : dir.unowned_candidates) {
      const std::size_t i = candidate.rule;
      // The name's first byte rules out most per-file globs before the
      // rule itself is read.
      if (!candidate.path_matched && !base.empty() && !compiled.rules[i].first_bytes.test(first))
        continue;
      const AttributionRule& r = rules.rules[i];
      if (r.min_bytes && f.bytes < *r.min_bytes) continue;
      if (!r.python_dists.empty() && (dist == nullptr || !matches_any(r.python_dists, dist_key)))
        continue;
      if (!r.node_packages.empty() &&
          (node_package == nullptr || !matches_any(r.node_packages, node_package->package)))
        continue;
      if (!r.except_python_dists.empty() && dist != nullptr &&
          matches_any(r.except_python_dists, dist_key))
        continue;
      if (!r.except_packages.empty() && pkg != nullptr && matches_any(r.except_packages, *pkg))
        continue;
      if (!r.deb_packages.empty() && (deb == nullptr || !matches_any(r.deb_packages, *deb)))
        continue;
      if (!r.packages.empty() && (pkg == nullptr || !matches_any(r.packages, *pkg))) continue;
      if (!r.installers.empty() && !matches_any(r.installers, installer)) continue;
      std::string_view content;
      if (!r.content.empty()) {
        const auto it = content_formats.find(key);
        if (it == content_formats.end() || !matches_any(r.content, it->second)) continue;
        content = it->second;
      }
      if (!candidate.path_matched && !matches_per_file(compiled.rules[i], path, base)) continue;
      f.category = category_index[i];
      f.child = expand_child(r.child, dist, pkg, node_package != nullptr ? node_package : module,
                             content);
      break;
    }
    if (f.category == cuda) {
      f.origin = "other";
      for (std::size_t i = 0; i < rules.origins.size(); ++i) {
        const OriginRule& o = rules.origins[i];
        if (!o.installers.empty() && !matches_any(o.installers, installer)) continue;
        if (!o.paths.empty() && !matches(compiled.origins[i], dir, path, base)) continue;
        f.origin = o.origin;
        break;
      }
    } else if (f.category == framework || f.category == python || f.category == nodejs ||
               f.category == ruby || f.category == go || f.category == rust) {
      // Who installed it: the same torch from pip, apt or conda; a Node.js
      // package from npm, pnpm or Yarn.
      f.origin = std::string(installer);
      if (installer == "pip")
        for (const std::string& venv : venvs)
          if (path.size() > venv.size() && path.starts_with(venv) && path[venv.size()] == '/') {
            f.origin = "pip, venv " + venv;
            break;
          }
    }
    return f;
  }

  // Classifies `files` into `out`, in their order, their paths kept in
  // `text` (one arena per thread).
  void classify_all(const std::vector<FileToClassify>& files, std::vector<AttributedFile>& out,
                    std::vector<TextArena>& text) const {
    // Below this many files a thread costs more than it saves.
    constexpr std::size_t kPerThread = 16384;
    const std::size_t threads = std::max<std::size_t>(
        1, std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()),
                                 (files.size() + kPerThread - 1) / kPerThread));
    text.resize(threads);
    out.resize(files.size());
    // Contiguous shares, each writing its own part of `out` and its paths
    // to its own arena; each thread takes the next share until none is
    // left, this thread too, so fewer threads (the system may refuse some)
    // still classify every file.
    const std::size_t share = (files.size() + threads - 1) / threads;
    const auto classify_share = [&](std::size_t t) {
      std::string scratch;
      const std::size_t from = std::min(files.size(), t * share);
      const std::size_t to = std::min(files.size(), from + share);
      for (std::size_t i = from; i < to; ++i) out[i] = classify(files[i], scratch, text[t]);
    };
    std::vector<std::exception_ptr> errors(threads);
    std::atomic<std::size_t> next_share{0};
    const auto worker = [&] {
      for (std::size_t t = next_share++; t < threads; t = next_share++) {
        try {
          classify_share(t);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      }
    };
    WorkerThreads pool;
    pool.start(threads - 1, worker);
    worker();
    pool.join();
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
  }
};

}  // namespace

const CategoryNode* Attribution::find(const std::string& category, const std::string& child) const {
  for (const auto& c : categories) {
    if (c.name != category) continue;
    if (child.empty()) return &c;
    for (const auto& k : c.children)
      if (k.name == child) return &k;
    return nullptr;
  }
  return nullptr;
}

namespace {

// The image's own application files, which no fixed path can name: its
// WORKDIR (a rule placed after the caches, weights, build tools and the
// CUDA, framework, Python, Node.js and OS rules, so that what they name
// under it, a venv's and node_modules' packages included, keeps its
// category) and
// files that COPY or ADD layers put outside system paths (a fallback for
// what no rule claims).
RuleSet with_image_rules(const RuleSet& rules, const Analysis& analysis,
                         const std::vector<std::string>& gem_homes) {
  RuleSet out = rules;
  // The archives gem and bundler keep in each gem home's cache: a cache
  // like pip's, before every other rule.
  if (!gem_homes.empty()) {
    AttributionRule cache;
    cache.category = "cache";
    cache.child = "gem";
    for (const std::string& home : gem_homes)
      cache.paths.emplace_back(home + "/" + attribution_detail::gem_cache_dir() + "/*.gem");
    cache.installers.emplace_back("unowned");
    cache.source = "the image's gem homes (data/binary-packages.json)";
    out.rules.insert(out.rules.begin(), std::move(cache));
  }
  const std::string dir = normalise_path(analysis.working_dir);
  if (!dir.empty()) {
    AttributionRule workdir;
    workdir.category = "app";
    workdir.child = "workdir";
    workdir.paths.emplace_back("/" + dir + "/**");
    workdir.source = "the image's WorkingDir";
    // What a more particular rule names stays its own inside the WORKDIR
    // too: a venv there (uv's /app/.venv) holds CUDA, frameworks and
    // Python packages, not the app. The WORKDIR comes after the last of
    // those rules, and before the generic paths (/usr, /opt, /app).
    const auto last_particular =
        std::find_if(out.rules.rbegin(), out.rules.rend(), [](const AttributionRule& r) {
          return r.category == "cuda" || r.category == "framework" || r.category == "python" ||
                 r.category == "os";
        });
    out.rules.insert(last_particular.base(), std::move(workdir));
  }
  return out;
}

// What each layer's Dockerfile step was, worked out once per layer (the
// attribution loop asks it for every file).
struct LayerSteps {
  std::vector<char> copied;  // a COPY or ADD of the app (not a root filesystem at /)
  std::vector<char> ran;     // a RUN

  explicit LayerSteps(const Analysis& analysis) {
    for (const auto& layer : analysis.layers) {
      std::string step = dockerfile_step(layer.created_by);
      while (!step.empty() && step.back() == ' ') step.pop_back();
      const bool copy = step.starts_with("COPY ") || step.starts_with("ADD ");
      // A root filesystem added at / ("ADD file:... in /") is a base image, not the app.
      copied.push_back(copy && !step.ends_with(" /") && !step.ends_with(" in /") ? 1 : 0);
      ran.push_back(step.starts_with("RUN ") ? 1 : 0);
    }
  }
  bool copied_by(std::uint32_t layer) const { return layer < copied.size() && copied[layer]; }
  bool ran_by(std::uint32_t layer) const { return layer < ran.size() && ran[layer]; }
};

}  // namespace

namespace {

// The virtual environments of the tree (PEP 405: a directory holding
// pyvenv.cfg), in walk order, from the same walk the files take: a
// pyvenv.cfg counts where the walk lists its content, not under the root.
// Known before any file is classified. And the gem homes: directories
// holding every directory gem_home_holds() names ("specifications" and
// "gems"), recognised by the first of them.
struct Landmarks {
  std::vector<std::string> venvs, gem_homes;
};

bool is_gem_home(const FileNode& dir) {
  for (const std::string& name : attribution_detail::gem_home_holds()) {
    bool held = false;
    for (const FileNode* child : dir.children())
      held |= child->name() == name && child->has_children();
    if (!held) return false;
  }
  return true;
}

Landmarks landmarks(const FileNode& root, std::size_t contents) {
  Landmarks out;
  std::vector<std::string>& venvs = out.venvs;
  const std::string& home_mark = attribution_detail::gem_home_holds().front();
  std::vector<bool> seen(contents, false);
  std::vector<FileNode::ChildRange::iterator> stack{root.children().begin()};
  while (!stack.empty()) {
    auto& next = stack.back();
    if (next.at_end()) {
      stack.pop_back();
      continue;
    }
    const FileNode* child = *next;
    ++next;
    if (child->inode() >= 0 && !seen[static_cast<std::size_t>(child->inode())]) {
      seen[static_cast<std::size_t>(child->inode())] = true;
      if (child->name() == "pyvenv.cfg" && child->parent() != &root)
        venvs.push_back(child->parent()->path());
    }
    if (child->has_children()) {
      if (child->name() == home_mark && child->parent() != &root && is_gem_home(*child->parent()))
        out.gem_homes.push_back(child->parent()->path());
      stack.push_back(child->children().begin());
    }
  }
  return out;
}

// Whether the directory of `path` (normalised) holds a config.json, as a
// Hugging Face or Keras model's directory does.
bool beside_model_config(const Analysis& analysis, std::string_view path) {
  if (!analysis.tree) return false;
  const auto slash = path.rfind('/');
  const std::string config =
      (slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash + 1))) +
      "config.json";
  const FileNode* node = analysis.tree->find(config);
  return node != nullptr && !node->has_children();
}

// Files classified in one go: enough for every core to share, few enough
// that a tree of millions never has them all in memory.
constexpr std::size_t kChunkFiles = 1 << 16;

// Attributes every file of the tree, a chunk at a time: each file goes to
// `each` once its category is final, then the arenas holding the chunk's
// paths go to `chunk_done`, to keep or to drop.
template <class Each, class ChunkDone>
Attribution attribute_files(const Analysis& analysis, const RuleSet& base_rules, Each&& each,
                            ChunkDone&& chunk_done) {
  Attribution result;
  Landmarks marks;
  if (analysis.tree) marks = landmarks(analysis.tree->root(), analysis.tree->inodes().size());
  const RuleSet rules = with_image_rules(base_rules, analysis, marks.gem_homes);
  Ownership ownership(analysis.metadata);
  ownership.add_binaries(analysis.file_heads);
  if (analysis.tree) ownership.add_gem_homes(*analysis.tree, marks.gem_homes);
  const Ownership& owners = ownership;
  // The packages, one per installer, name and version (a Debian package
  // that carries two Python distributions is two owners and one package),
  // in that order.
  std::vector<std::int32_t> package_of(owners.owners().size(), -1);
  result.packages_listed = true;
  {
    // Views of the owners' strings, which outlive the map.
    using Key = std::tuple<std::string_view, std::string_view, std::string_view>;
    const auto key_of = [](const Owner& o) { return Key(o.installer, o.package, o.version); };
    std::map<Key, std::int32_t> ids;
    for (const Owner& o : owners.owners())
      if (!o.package.empty()) ids.emplace(key_of(o), 0);
    for (auto& [key, id] : ids) {
      id = static_cast<std::int32_t>(result.packages.size());
      const auto& [installer, name, version] = key;
      result.packages.push_back(InstalledPackage{std::string(installer), std::string(name),
                                                 std::string(version), 0, 0, ""});
    }
    for (std::size_t i = 0; i < package_of.size(); ++i) {
      const Owner& o = owners.owners()[i];
      if (const auto it = ids.find(key_of(o)); it != ids.end()) {
        package_of[i] = it->second;
        auto& architecture = result.packages[static_cast<std::size_t>(it->second)].architecture;
        if (architecture.empty()) architecture = o.architecture;
      }
    }
  }
  std::unordered_map<std::string_view, std::string_view> content_formats;
  for (const auto& head : analysis.file_heads) {
    const ModelFormat format = sniff_model_format(head.content);
    if (format == ModelFormat::None) continue;
    // A numpy array is a feature matrix or embeddings as often as weights:
    // a model only where a model's config.json sits beside it.
    if (format == ModelFormat::Numpy && !beside_model_config(analysis, head.path)) continue;
    content_formats.emplace(head.path, model_format_name(format));
  }
  std::vector<std::uint16_t> category_index;
  for (const auto& r : rules.rules) category_index.push_back(index_of(rules, r.category));
  const std::uint16_t other = index_of(rules, "other");
  const std::uint16_t app = index_of(rules, "app");
  for (const auto& name : rules.categories)
    result.categories.push_back(CategoryNode{name, 0, 0, {}, {}});
  std::vector<std::map<std::string, CategoryNode>> children(rules.categories.size());

  // Provenance, where the history tells the base image's layers from the
  // user's: what no package owns is the user's when the user's layers
  // added it, and the generic app paths (/root, /home, /opt...) are not
  // the user's app when the base image filled them.
  const bool provenance = analysis.base_layers > 0;
  // An image with no database that lists system files (FROM scratch, a
  // distroless-style image whose dpkg status.d lists no files): nothing in
  // /usr or /etc is the system's by evidence, so what the user's COPY put
  // there is the app, as it is in /app.
  const bool lists_system_files =
      std::any_of(owners.owners().begin(), owners.owners().end(),
                  [](const Owner& o) { return is_system_installer(o.installer); }) ||
      (analysis.tree && analysis.tree->find("lib/apk/db/installed") != nullptr);
  const LayerSteps steps(analysis);
  const auto is_base = [&](std::uint32_t layer) {
    return layer < analysis.layers.size() && analysis.layers[layer].base;
  };
  const auto settle_provenance = [&](AttributedFile& f) {
    if (provenance && is_base(f.layer)) {
      if (f.category == app && f.child == "app") {
        f.category = other;
        f.child = "base-image";
      }
      return;
    }
    if (f.category != other) return;
    const bool system_unowned = f.child == "system-unowned";
    if (f.child != "other" && !((provenance || !lists_system_files) && system_unowned)) return;
    if (steps.copied_by(f.layer)) {
      f.category = app;
      f.child = "copied";  // COPY --from=builder /out/app /usr/local/bin/
    } else if (provenance && steps.ran_by(f.layer) &&
               (f.path.starts_with("/usr/local/") || f.path.starts_with("/opt/"))) {
      f.category = app;
      f.child = "built";  // make install, a RUN that downloads a binary
    }
  };
  const auto count = [&](const AttributedFile& f) {
    if (f.package >= 0) {
      InstalledPackage& p = result.packages[static_cast<std::size_t>(f.package)];
      p.files += 1;
      p.bytes += f.bytes;
    }
    CategoryNode& top = result.categories[f.category];
    top.bytes += f.bytes;
    top.files += 1;
    CategoryNode& child = children[f.category][f.child];
    child.name = f.child;
    child.bytes += f.bytes;
    child.files += 1;
    if (!f.origin.empty()) {
      child.origins[f.origin] += f.bytes;
      top.origins[f.origin] += f.bytes;
    }
    result.total_bytes += f.bytes;
  };

  if (analysis.tree) {
    const CompiledRules compiled(rules);
    const auto& inodes = analysis.tree->inodes();
    Walker walker(compiled, analysis.tree->root(), inodes.size());
    const Classifier classifier{rules,
                                compiled,
                                owners,
                                content_formats,
                                inodes,
                                walker.directories(),
                                category_index,
                                other,
                                index_of(rules, "cuda"),
                                index_of(rules, "framework"),
                                index_of(rules, "python"),
                                index_of(rules, "node"),
                                index_of(rules, "ruby"),
                                index_of(rules, "go"),
                                index_of(rules, "rust"),
                                std::move(marks.venvs),
                                &package_of};
    std::vector<FileToClassify> chunk;
    std::vector<AttributedFile> classified;
    while (walker.next(chunk, kChunkFiles)) {
      std::vector<TextArena> text;
      classifier.classify_all(chunk, classified, text);
      for (AttributedFile& f : classified) {
        settle_provenance(f);
        count(f);
        each(f, result.categories[f.category].name);
      }
      chunk_done(text);
    }
  }
  for (std::size_t i = 0; i < children.size(); ++i) {
    for (auto& [name, node] : children[i]) result.categories[i].children.push_back(std::move(node));
    std::sort(result.categories[i].children.begin(), result.categories[i].children.end(),
              [](const CategoryNode& a, const CategoryNode& b) {
                return a.bytes != b.bytes ? a.bytes > b.bytes : a.name < b.name;
              });
  }
  return result;
}

}  // namespace

Attribution attribute(const Analysis& analysis, const RuleSet& rules) {
  std::pmr::vector<AttributedFile> files(bulk_memory());
  files.reserve(analysis.tree ? analysis.tree->inodes().size() : 0);  // at most one per content
  auto text = std::make_shared<std::vector<TextArena>>();
  Attribution result = attribute_files(
      analysis, rules,
      [&](AttributedFile& f, const std::string&) { files.push_back(std::move(f)); },
      [&](std::vector<TextArena>& chunk_text) {
        for (auto& arena : chunk_text) text->push_back(std::move(arena));
      });
  result.files = std::move(files);
  result.path_text = std::move(text);
  return result;
}

Attribution attribute(const Analysis& analysis, const RuleSet& rules,
                      const AttributedFileSink& each) {
  return attribute_files(analysis, rules, each, [](std::vector<TextArena>&) {});
}

}  // namespace imgsmith
