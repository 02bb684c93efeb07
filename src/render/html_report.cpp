// The HTML report: one file that opens offline. The report's JSON (the same
// imgsmith.analysis/v1 or imgsmith.diff/v1 document --format json writes)
// and, for an analysis, a size tree of the final filesystem are embedded as
// data blocks; the page's script (src/render/html/*.js) draws the header,
// a zoomable treemap, the layers, findings and models from them. The
// Content-Security-Policy allows exactly the page's own script and style
// (by their SHA-256) and nothing else: no request of any kind can leave the
// page, and no markup from the image can run, since every string from the
// image reaches the page as JSON and the script writes it as text. Every
// string is made visible() first, as the text report shows it.
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format.hpp"
#include "html_assets.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/sha256.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;

// How many rectangles the tree keeps: enough for every directory and file
// a screen can show, few enough that a 100,000-file image's page stays a
// few MB and draws at once. What falls below joins its siblings' "more"
// node, with its bytes and count.
constexpr std::size_t kMaxNodes = 20000;
// Children drawn in one directory at most; a directory of 50,000 files
// shows its largest and one rectangle for the rest.
constexpr std::size_t kMaxChildren = 400;

struct TreeNode {
  std::string name;
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
  // A file: its layer and owner (attribution's child and origin).
  bool is_file = false;
  std::uint32_t layer = 0;
  std::string child, origin;
  std::vector<std::unique_ptr<TreeNode>> kids;
  std::unordered_map<std::string, TreeNode*> index;  // kids by name, while building

  TreeNode* kid(const std::string& kid_name) {
    if (auto it = index.find(kid_name); it != index.end()) return it->second;
    kids.push_back(std::make_unique<TreeNode>());
    kids.back()->name = kid_name;
    index.emplace(kid_name, kids.back().get());
    return kids.back().get();
  }
};

// category -> directories -> file, each file's bytes added on the way down.
std::unique_ptr<TreeNode> build_tree(const Report& report) {
  auto root = std::make_unique<TreeNode>();
  root->name = "/";
  if (report.attribution != nullptr)
    for (const CategoryNode& c : report.attribution->categories)
      if (c.bytes > 0) root->kid(c.name);  // the categories' order, before any file
  if (report.files == nullptr) return root;
  for (const ReportFile& f : *report.files) {
    TreeNode* at = root->kid(f.category);
    at->bytes += f.bytes;
    ++at->files;
    std::string_view rest = f.path;
    while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
    while (true) {
      const std::size_t slash = rest.find('/');
      at = at->kid(std::string(rest.substr(0, slash)));
      at->bytes += f.bytes;
      ++at->files;
      if (slash == std::string_view::npos) break;
      rest.remove_prefix(slash + 1);
    }
    at->is_file = true;
    at->layer = f.layer;
    at->child = f.child;
    at->origin = f.origin;
  }
  for (const auto& k : root->kids) {
    root->bytes += k->bytes;
    root->files += k->files;
  }
  return root;
}

// A directory with one directory in it is drawn as one rectangle:
// "usr/local/cuda/lib64", not four nested frames. The categories (the
// top's kids) keep their names.
void join_chains(TreeNode& node, bool top) {
  for (auto& k : node.kids) {
    while (!top && !k->is_file && k->kids.size() == 1 && !k->kids.front()->is_file) {
      std::unique_ptr<TreeNode> only = std::move(k->kids.front());
      only->name = k->name + "/" + only->name;
      k = std::move(only);
    }
    join_chains(*k, false);
  }
  node.index.clear();
}

void collect_sizes(const TreeNode& node, std::vector<std::uint64_t>& sizes) {
  for (const auto& k : node.kids) {
    sizes.push_back(k->bytes);
    collect_sizes(*k, sizes);
  }
}

// The tree as the page reads it: {"n": name, "b": bytes, "f": files,
// "k": [kids]} for a directory, "l" (layer), "c" (owner), "o" (origin) on
// a file, "m": count on the node standing for the smaller siblings.
json tree_to_json(const TreeNode& node, std::uint64_t min_bytes, bool top) {
  json out = {{"n", node.name}, {"b", node.bytes}, {"f", node.files}};
  if (node.is_file) {
    out["l"] = node.layer;
    if (!node.child.empty()) out["c"] = node.child;
    if (!node.origin.empty()) out["o"] = node.origin;
    return out;
  }
  std::vector<const TreeNode*> kids;
  for (const auto& k : node.kids) kids.push_back(k.get());
  std::stable_sort(kids.begin(), kids.end(),
                   [](const TreeNode* a, const TreeNode* b) { return a->bytes > b->bytes; });
  json list = json::array();
  std::uint64_t more_bytes = 0, more_files = 0, more_count = 0;
  for (std::size_t i = 0; i < kids.size(); ++i) {
    // The categories are always kept: the top level must add up.
    if (top || (i < kMaxChildren && kids[i]->bytes >= min_bytes && kids[i]->bytes > 0)) {
      list.push_back(tree_to_json(*kids[i], min_bytes, false));
    } else {
      more_bytes += kids[i]->bytes;
      more_files += kids[i]->files;
      ++more_count;
    }
  }
  if (more_count > 0)
    list.push_back({{"n", ""}, {"b", more_bytes}, {"f", more_files}, {"m", more_count}});
  out["k"] = std::move(list);
  return out;
}

json size_tree(const Report& report) {
  const auto root = build_tree(report);
  join_chains(*root, true);
  std::vector<std::uint64_t> sizes;
  collect_sizes(*root, sizes);
  // The kMaxNodes-th largest size is the floor: a child is never larger
  // than its directory, so the kept nodes always reach the top.
  std::uint64_t min_bytes = 0;
  if (sizes.size() > kMaxNodes) {
    std::nth_element(sizes.begin(), sizes.begin() + (kMaxNodes - 1), sizes.end(), std::greater<>());
    min_bytes = std::max<std::uint64_t>(sizes[kMaxNodes - 1], 1);
  }
  return tree_to_json(*root, min_bytes, true);
}

// Every string of `doc` as the text report shows it (visible()): a name
// with a right-to-left override or a zero-width space is drawn with the
// mark as \u{202e}, never reordered or hidden, and a byte that is not UTF-8
// as \xNN. A string beside its exact bytes ("path" and "path_bytes", as
// the JSON report writes a name that is not UTF-8) is shown from the bytes.
// Object keys are names too (the tree's, a map's) and are shown the same way.
json shown(const json& doc) {
  if (doc.is_string()) return visible(doc.get_ref<const std::string&>());
  if (doc.is_array()) {
    json out = json::array();
    for (const json& item : doc) out.push_back(shown(item));
    return out;
  }
  if (!doc.is_object()) return doc;
  json out = json::object();
  for (const auto& [key, value] : doc.items()) {
    const auto exact = doc.find(key + "_bytes");
    if (value.is_string() && exact != doc.end() && exact->is_string())
      if (const auto bytes = from_hex(exact->get_ref<const std::string&>())) {
        out[visible(key)] = visible(*bytes);
        continue;
      }
    out[visible(key)] = shown(value);
  }
  return out;
}

// JSON inside a <script type="application/json"> block: '<', '>' and '&'
// only occur inside strings, where \u escapes mean the same, so the
// document cannot close the block or open a comment.
std::string embeddable(const json& doc) {
  const std::string text = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (const char c : text) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

// 'sha256-<base64>' of an inline script's or style's exact text, for the CSP.
std::string csp_hash(std::string_view text) {
  return "'sha256-" + base64_encode(from_hex(sha256_digest(text).substr(7)).value()) + "'";
}

void write_page(std::ostream& out, const std::string& title, const std::string& kind,
                const std::vector<std::pair<std::string, std::string>>& data_blocks) {
  const std::string& style = html_asset("report.css");
  const std::string script = html_asset("report.js");
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src "
      << csp_hash(script) << "; style-src " << csp_hash(style)
      << "; img-src 'none'; connect-src 'none'; font-src 'none'; base-uri 'none'; form-action "
         "'none'\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<meta name=\"generator\" content=\"imgsmith\">\n"
      << "<title>" << render_detail::escape_markup(title) << "</title>\n<style>" << style
      << "</style>\n</head>\n"
      << "<body data-kind=\"" << kind << "\">\n"
      << "<noscript>This report draws itself with JavaScript; the same figures are in "
         "imgsmith analyze --format json or text.</noscript>\n"
      << "<div id=\"errors\" hidden></div>\n<main id=\"app\"></main>\n";
  for (const auto& [id, text] : data_blocks)
    out << "<script type=\"application/json\" id=\"" << id << "\">" << text << "</script>\n";
  out << "<script>" << script << "</script>\n</body>\n</html>\n";
}

}  // namespace

void render_html(const Report& report, std::ostream& out) {
  write_page(out, "imgsmith: " + visible(report.analysis.source), "analysis",
             {{"imgsmith-report", embeddable(shown(report_to_json(report)))},
              {"imgsmith-tree", embeddable(shown(size_tree(report)))}});
}

void render_diff_html(const DiffReport& diff, std::ostream& out) {
  write_page(
      out,
      "imgsmith diff: " + visible(diff.old_side.source) + " → " + visible(diff.new_side.source),
      "diff", {{"imgsmith-diff", embeddable(shown(diff_to_json(diff)))}});
}

}  // namespace imgsmith
