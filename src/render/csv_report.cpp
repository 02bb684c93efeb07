// CSV for spreadsheets and scripts: analyze's visible files (a saved
// report's largest), diff's changed files, one row each (RFC 4180). A name
// is shown as the text report shows it, escaped (visible()), and no text
// field starts a formula; when a name had to change, path_bytes holds its
// exact bytes in hex, as in JSON.
#include <string>
#include <string_view>

#include "imgsmith/render/render.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

// Text from the image as a spreadsheet shows it: visible(), and a leading
// '=', '+', '-', '@', tab or carriage return (a formula start, OWASP's
// "CSV injection") made inert by a leading apostrophe, as spreadsheets
// themselves mark text.
std::string shown(std::string_view s) {
  std::string out = visible(s);
  if (!out.empty() && std::string_view("=+-@\t\r").find(out.front()) != std::string_view::npos)
    out.insert(out.begin(), '\'');
  return out;
}

// A field, quoted when it holds a comma or a quote (visible() leaves no line break).
std::string field(std::string_view s) {
  if (s.find_first_of(",\"") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A text field from the image.
std::string text_field(std::string_view s) { return field(shown(s)); }

// path,path_bytes: the bytes in hex whenever the shown path is not them.
std::string path_fields(std::string_view path) {
  const std::string as_shown = shown(path);
  return field(as_shown) + "," + (as_shown != path ? to_hex(path) : "");
}

}  // namespace

void render_csv(const Report& report, std::ostream& out) {
  out << "path,path_bytes,bytes,layer,category,child,origin\n";
  if (report.files != nullptr) {
    // Every visible file once (hard links once): the bytes sum to final_bytes.
    for (const ReportFile& f : *report.files)
      out << path_fields(f.path) << "," << f.bytes << "," << f.layer << ","
          << text_field(f.category) << "," << text_field(f.child) << "," << text_field(f.origin)
          << "\n";
    return;
  }
  // A saved report keeps only the largest files, without their categories.
  const Analysis& a = report.analysis;
  for (std::size_t i = 0; i < a.largest_files.size() && i < a.top; ++i) {
    const FileReport& f = a.largest_files[i];
    out << path_fields(f.path) << "," << f.bytes << "," << f.layer << ",,,\n";
  }
}

void render_diff_csv(const DiffReport& diff, std::ostream& out) {
  // Each kind of change, and which sides hold the file: a side without it
  // (or, for entered_largest and left_largest, whose list did not show it)
  // has no bytes.
  struct Kind {
    const char* name;
    const FileChanges::List& list;
    bool old_side, new_side;
  };
  const FileChanges& f = diff.files;
  out << "change,path,path_bytes,old_bytes,new_bytes,hard_link\n";
  for (const Kind& kind :
       {Kind{"added", f.added, false, true}, Kind{"removed", f.removed, true, false},
        Kind{"resized", f.resized, true, true},
        Kind{"entered_largest", f.entered_largest, false, true},
        Kind{"left_largest", f.left_largest, true, false}})
    for (const FileChange& c : kind.list.top)
      out << kind.name << "," << path_fields(c.path) << ","
          << (kind.old_side ? std::to_string(c.old_bytes) : "") << ","
          << (kind.new_side ? std::to_string(c.new_bytes) : "") << ","
          << (c.hard_link ? "true" : "false") << "\n";
}

}  // namespace imgsmith
