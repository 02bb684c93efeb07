// The analysis of an image: its layers merged in order, what each adds and
// hides, the final image's size, its largest files, its wasted bytes and,
// with --hash, its duplicates.
#include <algorithm>
#include <chrono>
#include <map>
#include <span>
#include <tuple>

#include "analyze_internal.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {

std::string config_string(const nlohmann::json& config, const char* key) {
  const auto it = config.find(key);
  return it != config.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// created_by for each layer: history entries without empty_layer map one to
// one onto the layers, in order (docs/image-formats.md).
std::vector<std::string> created_by_per_layer(const nlohmann::json& config, std::size_t layers,
                                              std::vector<std::string>& warnings) {
  std::vector<std::string> out;
  const auto history = config.find("history");
  if (history == config.end() || !history->is_array()) return out;
  for (const auto& h : *history) {
    if (!h.is_object()) continue;
    const auto empty = h.find("empty_layer");
    if (empty != h.end() && empty->is_boolean() && empty->get<bool>()) continue;
    std::string text = config_string(h, "created_by");
    if (text.empty()) text = config_string(h, "comment");
    out.push_back(std::move(text));
  }
  if (out.size() != layers)
    warnings.push_back("the config history describes " + std::to_string(out.size()) +
                       " layers but the image has " + std::to_string(layers) +
                       "; created_by may not line up");
  return out;
}

namespace {

// Same-size re-adds come file by file from the merge (a chmod -R of 250
// files is 250 of them); users think of them as one change to a directory.
// Per layer pair, they become one group at the deepest directory holding
// them all, or one per top-level directory when that would be the root.
// A package manager's state files group apart from the rest: /etc/passwd
// rewritten by an install is not the chmod of /etc/app.
std::vector<WasteGroup> group_readded(std::vector<WasteGroup> waste) {
  std::map<std::tuple<std::uint32_t, std::uint32_t, bool, std::string>, WasteGroup> groups;
  std::vector<WasteGroup> out;
  const auto common_dir = [](std::string_view a, std::string_view b) {
    std::size_t n = 0, last_slash = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) {
      if (a[n] == '/') last_slash = n;
      ++n;
    }
    // A whole path that is a directory of the other counts in full.
    if ((n == a.size() && n < b.size() && b[n] == '/') ||
        (n == b.size() && n < a.size() && a[n] == '/'))
      last_slash = n;
    return std::string(a.substr(0, last_slash));
  };
  for (auto& w : waste) {
    w.package_state = is_package_manager_state(w.path);
    if (w.how != HiddenBy::Readded) {
      out.push_back(std::move(w));
      continue;
    }
    const std::string_view path = w.path;
    const auto second = path.find('/', 1);
    const std::string top(path.substr(0, second));  // "/opt" of "/opt/s/d0/f"
    auto [it, inserted] =
        groups.try_emplace({w.added_layer, w.hidden_layer, w.package_state, top}, w);
    if (inserted) {
      // A lone file keeps its own path; the directory comes with a second one.
      continue;
    }
    WasteGroup& g = it->second;
    g.path = common_dir(g.path, w.path);
    if (g.path.empty()) g.path = top;
    g.bytes += w.bytes;
    g.files += w.files;
  }
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  return out;
}

// How many layers the base image (the first FROM) has, from the history:
// a base image's history ends with its CMD or ENTRYPOINT (ubuntu, debian,
// python, nvidia/cuda all do), so the layers before the last CMD or
// ENTRYPOINT that more layers follow are the base's. 0 when the history
// says nothing (FROM scratch, no history).
std::size_t base_layers_from_history(const nlohmann::json& config) {
  const auto history = config.find("history");
  if (history == config.end() || !history->is_array()) return 0;
  std::size_t layers = 0, base = 0;
  bool pending = false;  // a CMD/ENTRYPOINT seen, no layer after it yet
  std::size_t candidate = 0;
  for (const auto& h : *history) {
    if (!h.is_object()) continue;
    const auto empty = h.find("empty_layer");
    const bool is_empty = empty != h.end() && empty->is_boolean() && empty->get<bool>();
    const std::string step = dockerfile_step(config_string(h, "created_by"));
    if (is_empty && (step.starts_with("CMD ") || step.starts_with("ENTRYPOINT "))) {
      pending = true;
      candidate = layers;
    }
    if (!is_empty) {
      ++layers;
      if (pending) base = candidate;
      pending = false;
    }
  }
  return base;
}

}  // namespace

Analysis analyze_layers(const ResolvedImage& image,
                        const std::vector<std::shared_ptr<const LayerScan>>& scans, std::size_t top,
                        PartialMerge started) {
  // Letting go of a copy's references frees nothing the caller holds.
  return analyze_layers(image, std::vector<std::shared_ptr<const LayerScan>>(scans), top,
                        std::move(started));
}

Analysis analyze_layers(const ResolvedImage& image,
                        std::vector<std::shared_ptr<const LayerScan>>&& scans, std::size_t top,
                        PartialMerge started) {
  Analysis a;
  a.format = image.format;
  a.tags = image.tags;
  a.config_digest = image.config_digest;
  a.os = config_string(image.config, "os");
  a.architecture = config_string(image.config, "architecture");
  a.variant = config_string(image.config, "variant");
  a.warnings = image.warnings;
  const auto created_by = created_by_per_layer(image.config, scans.size(), a.warnings);

  // Where the first layer was merged in part as it was read, the rest of it
  // goes in the same way.
  const bool first_started = started.tree != nullptr && started.first_layer_entries > 0;
  auto tree_owner = started.tree ? std::move(started.tree) : std::make_shared<MergedTree>();
  MergedTree& tree = *tree_owner;
  const MergedTree nothing_below;
  DiveEfficiency dive;
  bool all_compressed = !scans.empty();
  std::uint64_t compressed_total = 0;
  // Package databases: the copy in the highest layer (kept as each scan goes).
  std::map<std::string, CapturedFile> newest;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    const LayerScan& scan = *scans[i];
    const auto index = static_cast<std::uint32_t>(i);
    if (i == 0 && first_started) {
      // The rest of the first layer, read after the feed's last batch. A
      // scan that did not let the feed take its entries holds those it
      // handed over too: they are passed over.
      const std::size_t handed_over = started.first_layer_entries;
      const std::size_t kept_handed_over =
          handed_over > scan.entries_taken
              ? static_cast<std::size_t>(handed_over - scan.entries_taken)
              : 0;
      const auto rest = std::span<const TarEntry>(scan.entries)
                            .subspan(std::min(kept_handed_over, scan.entries.size()));
      tree.add_first_layer(rest);
      if (started.first_layer) {
        started.first_layer->add(rest);
        dive.add_first_layer(*started.first_layer, scan.content_bytes);
        started.first_layer.reset();
      } else {
        dive.add_layer(scan, nothing_below);
      }
    } else {
      dive.add_layer(scan, tree);  // before the layer goes in: dive reads what it hides
      tree.apply(scan, index);
    }

    LayerReport layer;
    layer.index = index;
    if (i < image.layers.size()) {
      layer.digest = image.layers[i].digest;
      layer.diff_id = image.layers[i].diff_id;
    }
    layer.listing = scan.listing.digest();
    layer.size_bytes = scan.content_bytes;
    layer.blob_bytes = scan.blob_bytes;
    layer.compression = compression_name(scan.compression);
    if (scan.compression != Compression::None) {
      layer.compressed_bytes = scan.blob_bytes;
      compressed_total += scan.blob_bytes;
    } else {
      all_compressed = false;
    }
    layer.entries = scan.entry_count();
    if (i < created_by.size()) layer.created_by = created_by[i];
    a.layers_bytes += scan.content_bytes;
    a.layer_entries += scan.entry_count();
    for (const auto& w : scan.warnings) a.warnings.push_back(w);
    a.layers.push_back(std::move(layer));
    for (const auto& f : scan.captured) newest.insert_or_assign(f.path, f);
    scans[i].reset();  // the tree and dive's lists hold what is needed of it
  }
  if (all_compressed) a.compressed_bytes = compressed_total;
  if (const std::size_t base = base_layers_from_history(image.config); base > 0)
    set_base_layers(a, base, "history");
  for (const auto& w : tree.warnings()) a.warnings.push_back(w);

  a.final_bytes = tree.visible_bytes();
  a.wasted_bytes = a.layers_bytes - a.final_bytes;
  a.final_entries = tree.node_count();
  a.dive = dive.finish(top);

  std::vector<bool> seen(tree.inodes().size(), false);
  for (const EntryType pass : {EntryType::File, EntryType::Hardlink})
    collect_largest(tree.root(), tree.inodes(), pass, seen, a.largest_files, top);
  std::sort(a.largest_files.begin(), a.largest_files.end(), [](const auto& x, const auto& y) {
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.path < y.path;
  });

  a.waste = group_readded(tree.waste());
  std::sort(a.waste.begin(), a.waste.end(), [](const auto& x, const auto& y) {
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.path < y.path;
  });
  a.top = top;

  // Package databases: the copy in the highest layer, if it is still visible.
  for (auto& [path, file] : newest) {
    const FileNode* node = tree.find(path);
    if (node == nullptr) continue;
    if (file.symlink && node->type == EntryType::Symlink)
      a.links.push_back(std::move(file));
    else if (!file.symlink && node->type == EntryType::File)
      (file.whole ? a.metadata : a.file_heads).push_back(std::move(file));
  }
  if (const auto cfg = image.config.find("config"); cfg != image.config.end() && cfg->is_object()) {
    a.working_dir = config_string(*cfg, "WorkingDir");
    if (const auto env = cfg->find("Env"); env != cfg->end() && env->is_array())
      for (const auto& item : *env)
        if (item.is_string()) a.env.push_back(item.get<std::string>());
  }
  a.tree = std::move(tree_owner);
  return a;
}

Analysis analyze_store(const BlobStore& store, const AnalyzeOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ResolvedImage image = resolve_image(store, options.selector);
  PartialMerge started;
  auto scans = scan_all(store, image, options, started);
  // --hash reads the scans again; otherwise each goes once measured.
  Analysis a = options.hash_duplicates
                   ? analyze_layers(image, scans, options.top, std::move(started))
                   : analyze_layers(image, std::move(scans), options.top, std::move(started));
  if (options.base_layers) set_base_layers(a, *options.base_layers, "--base-layers");
  if (options.hash_duplicates)
    a.duplicates = find_duplicates(store, image, scans, *a.tree, options);
  auto store_warnings = store.warnings();
  a.warnings.insert(a.warnings.begin(), store_warnings.begin(), store_warnings.end());
  a.bytes_read = store.bytes_read();
  a.read_via = store.kind();
  a.verified = store.verified();
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

void set_base_layers(Analysis& analysis, std::size_t count, std::string evidence) {
  count = std::min(count, analysis.layers.size());
  for (std::size_t i = 0; i < analysis.layers.size(); ++i) analysis.layers[i].base = i < count;
  analysis.base_layers = count;
  analysis.base_evidence = count > 0 ? std::move(evidence) : std::string();
}

}  // namespace imgsmith
