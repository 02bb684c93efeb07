#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "format.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"
#include "kernel_sections.hpp"
#include "model_sections.hpp"

namespace imgsmith {
namespace {

using render_detail::fmt;

constexpr std::size_t kCreatedByWidth = 58;

// "/bin/sh -c #(nop)  CMD [...]" reads as "CMD [...]", "/bin/sh -c apt..."
// as "RUN apt...": what the user wrote in the Dockerfile.
std::string readable_created_by(const std::string& s) {
  return shorten(visible(dockerfile_step(s)), kCreatedByWidth);
}

void render_categories(const Attribution& attr, std::ostream& out) {
  out << "\nWHERE THE BYTES ARE (final filesystem)\n";
  for (const auto& c : attr.categories) {
    if (c.bytes == 0) continue;
    out << fmt("  %-14s %10s  %6s\n", visible(c.name).c_str(), format_size(c.bytes).c_str(),
               render_detail::percent(c.bytes, attr.total_bytes).c_str());
    // Children are largest first: empty files' children (0 B) say nothing
    // in a table of bytes, and end the list (JSON keeps them).
    std::size_t shown = 0, nonempty = 0;
    for (const auto& child : c.children) nonempty += child.bytes > 0 ? 1 : 0;
    for (const auto& child : c.children) {
      if (child.bytes == 0) break;
      if (++shown > 6) {
        out << fmt("    %-24s (%zu more)\n", "...", nonempty - 6);
        break;
      }
      std::string origins;
      for (const auto& [origin, bytes] : child.origins)
        origins += (origins.empty() ? "  [" : ", ") + visible(origin) + " " + format_size(bytes);
      if (!origins.empty()) origins += "]";
      out << fmt("    %-24s %10s  %6s", visible(child.name).c_str(),
                 format_size(child.bytes).c_str(),
                 render_detail::percent(child.bytes, attr.total_bytes).c_str())
          << origins << "\n";
    }
  }
}

// Prose (a finding's message and fix) folded at spaces to kReportWidth
// columns, continuation lines indented by `indent`; `used` columns of the
// first line are taken already. A word longer than a line (a path) stays
// whole.
constexpr std::size_t kReportWidth = 100;

std::string folded(const std::string& text, std::size_t used, std::size_t indent) {
  std::string out, line;
  std::size_t room = kReportWidth > used ? kReportWidth - used : 20;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > room) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
      room = kReportWidth - indent;
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line;
}

void render_findings(const std::vector<Finding>& findings, std::ostream& out) {
  out << "\nFINDINGS (largest saving first)\n";
  if (findings.empty()) out << "  none\n";
  bool info_heading = false;
  for (const auto& f : findings) {
    // Below the significance floor: listed apart, after the ones that count.
    if (f.info && !info_heading) {
      out << "  below the floor (--finding-floor), for information:\n";
      info_heading = true;
    }
    // A defect saves nothing: it says so where a saving would be.
    const std::string head =
        fmt("  %10s  %s: ", f.defect ? "defect" : format_size(f.bytes).c_str(), f.id.c_str());
    out << head << folded(visible(f.message), head.size(), 14) << "\n";
    out << "              fix: " << folded(visible(f.fix), 19, 19) << "\n";
    // As many as --top left (the largest first), as in every format.
    for (const auto& p : f.paths)
      out << (f.defect ? std::string(14, ' ')
                       : fmt("              %10s  ", format_size(p.bytes).c_str()))
          << visible(p.path) << "\n";
  }
}

// One line of a diff list: "  + 1.23 MB  what", the label shown safely.
void change_line(std::ostream& out, const char* sign, std::uint64_t bytes, const std::string& label,
                 const std::string& note = "") {
  out << "  " << sign << " " << format_size(bytes) << "  " << shorten(visible(label), 70) << note
      << "\n";
}

// A list of files that changed, then how many more there were.
void file_list(std::ostream& out, const char* sign, const FileChanges::List& list,
               const std::string& note = "") {
  for (const auto& c : list.top)
    change_line(out, sign, c.bytes(), c.path, (c.hard_link ? " (hard link)" : "") + note);
  if (list.count > list.top.size())
    out << "    ... " << format_count(list.count - list.top.size()) << " more\n";
}

// The files that changed, saying what the comparison could know.
void render_file_changes(const FileChanges& files, std::ostream& out) {
  out << "\nFILES  "
      << (files.old_complete && files.new_complete
              ? "every file compared"
              : "largest files compared (a saved report lists only those)")
      << ": " << files.added.count << " added";
  if (files.added.count > 0) out << " (" << format_size(files.added_bytes) << ")";
  out << ", " << files.removed.count << " removed";
  if (files.removed.count > 0) out << " (" << format_size(files.removed_bytes) << ")";
  out << ", " << files.resized.count << " resized\n";
  file_list(out, "+", files.added);
  file_list(out, "-", files.removed);
  for (const auto& c : files.resized.top)
    out << "  ~ " << render_detail::signed_size(c.delta()) << "  " << shorten(visible(c.path), 70)
        << " (" << format_size(c.old_bytes) << " -> " << format_size(c.new_bytes) << ")\n";
  if (files.resized.count > files.resized.top.size())
    out << "    ... " << format_count(files.resized.count - files.resized.top.size()) << " more\n";
  if (files.entered_largest.count > 0)
    file_list(out, ">", files.entered_largest,
              "  entered the old report's largest-" + std::to_string(files.old_listed) +
                  " list (new, or grown)");
  if (files.left_largest.count > 0)
    file_list(out, "<", files.left_largest,
              "  left the new report's largest-" + std::to_string(files.new_listed) +
                  " list (removed, or shrunk)");
}

// "pip 1.2 MB, apt 3.4 MB", or "-" for none.
std::string origins_text(const std::optional<std::map<std::string, std::uint64_t>>& origins) {
  if (!origins || origins->empty()) return "-";
  std::string text;
  for (const auto& [origin, bytes] : *origins)
    text += (text.empty() ? "" : ", ") + visible(origin) + " " + format_size(bytes);
  return text;
}

}  // namespace

void render_text(const Report& report, std::ostream& out) {
  const Analysis& a = report.analysis;
  const GateResult& gate = report.gate;
  std::string tags;
  for (const auto& t : a.tags) tags += (tags.empty() ? "" : ", ") + visible(t);
  out << "IMAGE   " << (tags.empty() ? "(untagged)" : tags) << "\n";
  out << "SOURCE  " << visible(a.source) << "  (" << visible(a.format) << ", " << visible(a.os)
      << "/" << visible(a.architecture) << (a.variant.empty() ? "" : "/" + visible(a.variant))
      << ", " << a.layers.size() << " layers"
      << (a.source.starts_with("docker://") && !a.read_via.empty() ? ", read via " + a.read_via
                                                                   : "")
      << ")\n";
  out << "CONFIG  " << visible(a.config_digest) << "\n\n";

  out << fmt("%5s  %10s  %6s  %7s  %10s  %s\n", "LAYER", "SIZE", "%", "ENTRIES", "COMPRESSED",
             "CREATED BY");
  // The base image's layers are marked '*': what they hold, no later RUN removes.
  for (const auto& l : a.layers)
    out << fmt("%4u%c  %10s  %6s  %7s  %10s  ", l.index, l.base ? '*' : ' ',
               format_size(l.size_bytes).c_str(),
               render_detail::percent(l.size_bytes, a.layers_bytes).c_str(),
               format_count(l.entries).c_str(),
               l.compressed_bytes ? format_size(*l.compressed_bytes).c_str() : "-")
        << readable_created_by(l.created_by) << "\n";
  out << fmt("%5s  %10s  %6s  %7s  %10s\n", "TOTAL", format_size(a.layers_bytes).c_str(), "100.0%",
             format_count(a.layer_entries).c_str(),
             a.compressed_bytes ? format_size(*a.compressed_bytes).c_str() : "-");
  if (a.base_layers > 0)
    out << fmt("  * the base image's layers (%zu, from the %s)\n", a.base_layers,
               a.base_evidence == "history" ? "history: they end with the base's CMD/ENTRYPOINT"
                                            : "--base-layers flag");
  out << "\n";

  out << "SIZE\n";
  out << fmt("  %-11s %16s B  %10s  sum of the layers' file bytes\n", "layers",
             format_count(a.layers_bytes).c_str(), format_size(a.layers_bytes).c_str());
  out << fmt("  %-11s %16s B  %10s  visible in the merged filesystem (%s paths)\n", "final",
             format_count(a.final_bytes).c_str(), format_size(a.final_bytes).c_str(),
             format_count(a.final_entries).c_str());
  out << fmt("  %-11s %16s B  %10s  %s of layer bytes, added and then hidden by a later layer\n",
             "wasted", format_count(a.wasted_bytes).c_str(), format_size(a.wasted_bytes).c_str(),
             render_detail::percent(a.wasted_bytes, a.layers_bytes).c_str());
  if (a.compressed_bytes)
    out << fmt("  %-11s %16s B  %10s  as stored\n", "compressed",
               format_count(*a.compressed_bytes).c_str(), format_size(*a.compressed_bytes).c_str());
  else
    out << fmt("  %-11s %16s    %10s  (some layers are stored uncompressed)\n", "compressed", "-",
               "");

  out << "\nDIVE-COMPATIBLE\n";
  out << fmt("  %-20s %.4f%%\n", "efficiency", 100.0 * a.dive.efficiency);
  out << fmt("  %-20s %s B  (every copy of a path seen in 2+ layers)\n", "wasted bytes",
             format_count(a.dive.wasted_bytes).c_str());
  out << fmt("  %-20s %.2f%%  of the %s B added after the first layer\n", "user wasted",
             100.0 * a.dive.user_wasted_percent, format_count(a.dive.user_size_bytes).c_str());

  if (!a.largest_files.empty()) {
    out << "\nLARGEST FILES\n";
    for (std::size_t i = 0; i < a.largest_files.size() && i < a.top; ++i) {
      const FileReport& f = a.largest_files[i];
      out << fmt("  %10s  layer %-3u  ", format_size(f.bytes).c_str(), f.layer) << visible(f.path)
          << (f.hard_links > 0 ? fmt(" (+%u hard links)", f.hard_links) : "") << "\n";
    }
  }
  if (!a.waste.empty()) {
    out << "\nTOP WASTE (bytes added by one layer and hidden by another)\n";
    for (std::size_t i = 0; i < a.waste.size() && i < a.top; ++i) {
      const WasteGroup& w = a.waste[i];
      out << fmt("  %10s  %-11s layer %u -> %-3u ", format_size(w.bytes).c_str(),
                 hidden_by_name(w.how), w.added_layer, w.hidden_layer)
          << visible(w.path)
          << (w.files > 1 ? fmt(" (%s files)", format_count(w.files).c_str()) : "")
          // Why no finding names it: each install rewrites it.
          << (w.package_state && w.how != HiddenBy::Deleted && w.how != HiddenBy::Opaque
                  ? "  [package-manager state]"
                  : "")
          << "\n";
    }
  }

  if (report.attribution != nullptr) render_categories(*report.attribution, out);
  if (report.findings != nullptr) render_findings(*report.findings, out);
  if (report.models != nullptr) render_detail::render_models_text(*report.models, out);
  if (report.kernels != nullptr) render_detail::render_kernels_text(*report.kernels, a.top, out);

  if (!gate.checks.empty()) {
    std::size_t failed = 0;
    for (const auto& c : gate.checks) failed += c.passed ? 0 : 1;
    out << "\nGATE  " << (gate.passed ? "passed" : "FAILED") << " (" << gate.checks.size()
        << " rules, " << failed << " failed)\n";
    for (const auto& c : gate.checks)
      out << "  " << (c.passed ? "pass  " : "FAIL  ") << visible(c.rule) << " (limit "
          << render_detail::gate_value(c.limit) << ")"
          << (c.passed ? "" : ": " + visible(c.message)) << "\n";
  }
}

void render_diff_text(const DiffReport& d, std::ostream& out) {
  const auto line = [&](const std::string& label, const SizeChange& c) {
    out << fmt("  %-12s %12s -> %12s  %10s  %s\n", label.c_str(), format_size(c.old_bytes).c_str(),
               format_size(c.new_bytes).c_str(), render_detail::signed_size(c.delta()).c_str(),
               render_detail::growth_percent(c.old_bytes, c.new_bytes).c_str());
  };
  out << "OLD  " << visible(d.old_side.source) << "\nNEW  " << visible(d.new_side.source)
      << "\n\nSIZE\n";
  line("final", d.final_bytes);
  line("layers", d.layers_bytes);
  line("wasted", d.wasted_bytes);
  out << "\nCATEGORIES\n";
  for (const auto& c : d.categories) {
    if (c.bytes.delta() == 0 && c.children.empty()) continue;
    line(visible(c.name), c.bytes);
    for (std::size_t i = 0; i < c.children.size() && i < 5; ++i) {
      const ChildChange& k = c.children[i];
      line("  " + visible(k.name), k.bytes);
      if (k.old_origins || k.new_origins)
        out << "                 from " << origins_text(k.old_origins) << " -> "
            << origins_text(k.new_origins) << "\n";
    }
  }
  out << "\nLAYERS  " << d.layers.shared << " shared, ";
  if (!d.layers.rebuilt.empty())
    out << d.layers.rebuilt.size() << " rebuilt (the same files by name and size, other bytes), ";
  out << d.layers.added.size() << " added, " << d.layers.removed.size() << " removed\n";
  for (const auto& l : d.layers.rebuilt) change_line(out, "=", l.size_bytes, l.created_by);
  for (const auto& l : d.layers.added) change_line(out, "+", l.size_bytes, l.created_by);
  for (const auto& l : d.layers.removed) change_line(out, "-", l.size_bytes, l.created_by);
  render_file_changes(d.files, out);
  if (d.packages.known) {
    const PackageChanges& p = d.packages;
    out << "\nPACKAGES  " << p.added.size() << " added, " << p.removed.size() << " removed, "
        << p.changed.size() << " changed version\n";
    // Each kind cut to 20 lines: a base image upgrade changes hundreds.
    constexpr std::size_t kShown = 20;
    const auto list = [&](const std::vector<PackageChange>& changes, const char* sign) {
      for (std::size_t i = 0; i < changes.size() && i < kShown; ++i) {
        const PackageChange& c = changes[i];
        out << "  " << sign << " " << visible(c.installer) << "  " << visible(c.name) << " ";
        if (c.old_versions.empty())
          out << visible(c.new_versions);
        else if (c.new_versions.empty())
          out << visible(c.old_versions);
        else
          out << visible(c.old_versions) << " -> " << visible(c.new_versions);
        out << "\n";
      }
      if (changes.size() > kShown) out << "    ... and " << changes.size() - kShown << " more\n";
    };
    list(p.changed, "~");
    list(p.added, "+");
    list(p.removed, "-");
  }
  out << "\nFINDINGS\n";
  for (const auto& f : d.findings.appeared)
    out << "  appeared  " << visible(f.id) << " (" << format_size(f.bytes.new_bytes) << ")\n";
  for (const auto& f : d.findings.gone)
    out << "  gone      " << visible(f.id) << " (" << format_size(f.bytes.old_bytes) << ")\n";
  for (const auto& f : d.findings.changed)
    out << "  changed   " << visible(f.id) << " " << render_detail::signed_size(f.bytes.delta())
        << "\n";
  if (d.findings.appeared.empty() && d.findings.gone.empty() && d.findings.changed.empty())
    out << "  unchanged\n";
  if (!d.checks.empty()) out << "\nGATE  " << (d.passed ? "passed" : "FAILED") << "\n";
  for (const auto& c : d.checks)
    out << "  " << (c.passed ? "pass  " : "FAIL  ") << c.rule << " (limit "
        << render_detail::json_number(c.limit).dump() << ", actual "
        << render_detail::json_number(c.actual).dump() << ")\n";
}

}  // namespace imgsmith
