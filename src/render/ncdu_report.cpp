// ncdu's JSON export (https://dev.yorhel.nl/ncdu/jsonfmt) of the merged
// filesystem, so an image is browsed as a disk is: `ncdu -f export.json`,
// `gdu -f export.json`. Every visible file once (a hard link's other names
// are not listed, as attribution counts its content once), apparent and
// disk size both the file's bytes: a layer stores no blocks.
//
// Names are shown as every report shows them (visible()): a right-to-left
// override or a control character is an escape, not an effect on ncdu's
// screen. The file is pure ASCII (every other character a \u escape):
// ncdu 1.x refuses a raw DEL and 2.x reads the escapes alike. Two names
// that show the same (a raw control byte and its written-out escape) are
// one entry with both sizes, so the total stays the image's.
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "imgsmith/render/render.hpp"
#include "imgsmith/util/text.hpp"
#include "imgsmith/version.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;

struct Dir {
  std::map<std::string, std::unique_ptr<Dir>> dirs;
  std::map<std::string, std::uint64_t> files;
};

json dir_to_json(const std::string& name, const Dir& dir) {
  json out = json::array();
  out.push_back({{"name", name}});
  for (const auto& [file, bytes] : dir.files)
    out.push_back({{"name", file}, {"asize", bytes}, {"dsize", bytes}});
  for (const auto& [sub, d] : dir.dirs) out.push_back(dir_to_json(sub, *d));
  return out;
}

}  // namespace

void render_ncdu(const Report& report, std::ostream& out) {
  Dir root;
  if (report.files != nullptr)
    for (const ReportFile& f : *report.files) {
      Dir* at = &root;
      std::string_view rest = f.path;
      while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
      for (std::size_t slash = rest.find('/'); slash != std::string_view::npos;
           slash = rest.find('/')) {
        auto& sub = at->dirs[visible(rest.substr(0, slash))];
        if (!sub) sub = std::make_unique<Dir>();
        at = sub.get();
        rest.remove_prefix(slash + 1);
      }
      if (!rest.empty()) at->files[visible(rest)] += f.bytes;
    }
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const json doc =
      json::array({1,
                   2,
                   {{"progname", "imgsmith"}, {"progver", kVersion}, {"timestamp", now}},
                   dir_to_json("/", root)});
  out << doc.dump(-1, ' ', true, json::error_handler_t::replace) << "\n";
}

}  // namespace imgsmith
