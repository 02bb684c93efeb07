#include <cstdio>
#include <string>

#include "imgsmith/render.hpp"
#include "format.hpp"
#include "imgsmith/size.hpp"
#include "imgsmith/text.hpp"

namespace imgsmith {
namespace {

constexpr std::size_t kCreatedByWidth = 58;

// "/bin/sh -c #(nop)  CMD [...]" reads as "CMD [...]", "/bin/sh -c apt..."
// as "RUN apt...": what the user wrote in the Dockerfile.
std::string readable_created_by(const std::string& s) {
  return shorten(visible(dockerfile_step(s)), kCreatedByWidth);
}


std::string fmt(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
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
      out << fmt("    %-24s %10s  %6s", visible(child.name).c_str(), format_size(child.bytes).c_str(),
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
    const std::string head = fmt("  %10s  %s: ", format_size(f.bytes).c_str(), f.id.c_str());
    out << head << folded(visible(f.message), head.size(), 14) << "\n";
    out << "              fix: " << folded(visible(f.fix), 19, 19) << "\n";
    for (std::size_t i = 0; i < f.paths.size() && i < 3; ++i)
      out << fmt("              %10s  ", format_size(f.paths[i].bytes).c_str())
          << visible(f.paths[i].path) << "\n";
  }
}

}  // namespace

void render_text(const Report& report, std::ostream& out) {
  const Analysis& a = report.analysis;
  const GateResult& gate = report.gate;
  std::string tags;
  for (const auto& t : a.tags) tags += (tags.empty() ? "" : ", ") + visible(t);
  out << "IMAGE   " << (tags.empty() ? "(untagged)" : tags) << "\n";
  out << "SOURCE  " << visible(a.source) << "  (" << visible(a.format) << ", " << visible(a.os) << "/"
      << visible(a.architecture) << (a.variant.empty() ? "" : "/" + visible(a.variant)) << ", "
      << a.layers.size() << " layers"
      << (a.source.starts_with("docker://") && !a.read_via.empty() ? ", read via " + a.read_via : "") << ")\n";
  out << "CONFIG  " << visible(a.config_digest) << "\n\n";

  out << fmt("%5s  %10s  %6s  %7s  %10s  %s\n", "LAYER", "SIZE", "%", "ENTRIES", "COMPRESSED",
             "CREATED BY");
  // The base image's layers are marked '*': what they hold, no later RUN removes.
  for (const auto& l : a.layers)
    out << fmt("%4u%c  %10s  %6s  %7s  %10s  ", l.index, l.base ? '*' : ' ', format_size(l.size_bytes).c_str(),
               render_detail::percent(l.size_bytes, a.layers_bytes).c_str(), format_count(l.entries).c_str(),
               l.compressed_bytes ? format_size(*l.compressed_bytes).c_str() : "-")
        << readable_created_by(l.created_by) << "\n";
  out << fmt("%5s  %10s  %6s  %7s  %10s\n", "TOTAL", format_size(a.layers_bytes).c_str(),
             "100.0%", format_count(a.layer_entries).c_str(),
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
          << (w.files > 1 ? fmt(" (%s files)", format_count(w.files).c_str()) : "") << "\n";
    }
  }

  if (report.attribution != nullptr) render_categories(*report.attribution, out);
  if (report.findings != nullptr) render_findings(*report.findings, out);

  if (!gate.checks.empty()) {
    std::size_t failed = 0;
    for (const auto& c : gate.checks) failed += c.passed ? 0 : 1;
    out << "\nGATE  " << (gate.passed ? "passed" : "FAILED") << " (" << gate.checks.size()
        << " rules, " << failed << " failed)\n";
    for (const auto& c : gate.checks)
      out << "  " << (c.passed ? "pass  " : "FAIL  ") << visible(c.rule) << " (limit "
          << render_detail::gate_value(c.limit) << ")" << (c.passed ? "" : ": " + visible(c.message))
          << "\n";
  }
}

}  // namespace imgsmith
