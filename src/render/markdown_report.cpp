// Markdown for pull-request comments: a report or a diff as tables.
#include <cstdio>
#include <sstream>
#include <variant>

#include "format.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"
#include "kernel_sections.hpp"
#include "model_sections.hpp"

namespace imgsmith {
namespace {

using render_detail::cell;

// `s` as inline code, with a longer fence when it holds a backtick.
std::string code(const std::string& s) {
  const std::string v = visible(s);
  return v.find('`') == std::string::npos ? "`" + v + "`" : "`` " + v + " ``";
}

}  // namespace

void render_markdown(const Report& report, std::ostream& out) {
  const Analysis& a = report.analysis;
  std::string tags;
  for (const auto& t : a.tags) tags += (tags.empty() ? "" : ", ") + t;
  out << "### imgsmith: " << code(tags.empty() ? a.source : tags) << "\n\n";
  if (!report.gate.checks.empty())
    out << (report.gate.passed ? "**Gate passed.**" : "**Gate failed.**") << "\n\n";
  out << "| | bytes | |\n| --- | ---: | --- |\n";
  out << "| final size | " << format_count(a.final_bytes) << " | " << format_size(a.final_bytes)
      << " |\n";
  out << "| wasted | " << format_count(a.wasted_bytes) << " | "
      << render_detail::percent(a.wasted_bytes, a.layers_bytes) << " of layer bytes |\n";
  if (a.compressed_bytes)
    out << "| compressed | " << format_count(*a.compressed_bytes) << " | "
        << format_size(*a.compressed_bytes) << " |\n";
  char eff[64];
  std::snprintf(eff, sizeof eff, "%.4f%%", 100.0 * a.dive.efficiency);
  out << "| dive efficiency | | " << eff << " |\n\n";

  if (report.attribution != nullptr) {
    out << "| category | bytes | share | largest children |\n| --- | ---: | ---: | --- |\n";
    for (const auto& c : report.attribution->categories) {
      if (c.bytes == 0) continue;
      std::string children;
      for (std::size_t i = 0; i < c.children.size() && i < 3; ++i) {
        children +=
            (i == 0 ? "" : ", ") + c.children[i].name + " " + format_size(c.children[i].bytes);
        // Where they came from: the installer for frameworks, Python, Node.js, Ruby, Go
        // and Rust, the copy for CUDA.
        std::string origins;
        for (const auto& [origin, bytes] : c.children[i].origins)
          origins += (origins.empty() ? "" : ", ") + origin + " " + format_size(bytes);
        if (!origins.empty()) children += " (" + origins + ")";
      }
      out << "| " << cell(c.name) << " | " << format_size(c.bytes) << " | "
          << render_detail::percent(c.bytes, report.attribution->total_bytes) << " | "
          << cell(children) << " |\n";
    }
    out << "\n";
  }
  if (report.findings != nullptr && !report.findings->empty()) {
    out << "| finding | saves | fix |\n| --- | ---: | --- |\n";
    for (const auto& f : *report.findings)
      out << "| `" << f.id << "`" << (f.info ? " (info)" : "") << " " << cell(f.message) << " | "
          << (f.defect ? std::string("defect") : format_size(f.bytes)) << " | " << cell(f.fix)
          << " |\n";
    out << "\n";
  }
  if (report.models != nullptr) render_detail::render_models_markdown(*report.models, out);
  if (report.kernels != nullptr) render_detail::render_kernels_markdown(*report.kernels, out);
  if (!report.gate.checks.empty()) {
    out << "| rule | limit | actual | |\n| --- | ---: | ---: | --- |\n";
    for (const auto& c : report.gate.checks)
      out << "| " << cell(c.rule) << " | " << render_detail::gate_value(c.limit) << " | "
          << render_detail::gate_value(c.actual) << " | " << (c.passed ? "pass" : "**FAIL**")
          << " |\n";
  }
}

void render_diff_markdown(const DiffReport& d, std::ostream& out) {
  const SizeChange& s = d.final_bytes;
  out << "### imgsmith diff\n\n";
  if (!d.checks.empty()) out << (d.passed ? "**Gate passed.**\n\n" : "**Gate failed.**\n\n");
  out << "Final size " << format_size(s.old_bytes) << " → " << format_size(s.new_bytes) << " ("
      << render_detail::signed_size(s.delta()) << ", "
      << render_detail::growth_percent(s.old_bytes, s.new_bytes) << ")\n\n";
  out << "| category | old | new | change |\n| --- | ---: | ---: | ---: |\n";
  for (const auto& c : d.categories) {
    if (c.bytes.old_bytes == 0 && c.bytes.new_bytes == 0) continue;
    out << "| " << visible(c.name) << " | " << format_size(c.bytes.old_bytes) << " | "
        << format_size(c.bytes.new_bytes) << " | " << render_detail::signed_size(c.bytes.delta())
        << " |\n";
  }
  const FindingChanges& f = d.findings;
  if (!f.appeared.empty() || !f.gone.empty()) {
    out << "\n";
    for (const auto& x : f.appeared)
      out << "- new finding `" << x.id << "` (" << format_size(x.bytes.new_bytes) << ")\n";
    for (const auto& x : f.gone)
      out << "- fixed `" << x.id << "` (" << format_size(x.bytes.old_bytes) << ")\n";
  }
  const PackageChanges& p = d.packages;
  if (p.known && (!p.added.empty() || !p.removed.empty() || !p.changed.empty())) {
    out << "\nPackages: " << p.added.size() << " added, " << p.removed.size() << " removed, "
        << p.changed.size() << " changed version\n\n";
    constexpr std::size_t kShown = 10;
    for (std::size_t i = 0; i < p.changed.size() && i < kShown; ++i)
      out << "- `" << visible(p.changed[i].name) << "` " << visible(p.changed[i].old_versions)
          << " → " << visible(p.changed[i].new_versions) << " (" << visible(p.changed[i].installer)
          << ")\n";
    if (p.changed.size() > kShown) out << "- ... and " << p.changed.size() - kShown << " more\n";
  }
}

}  // namespace imgsmith
