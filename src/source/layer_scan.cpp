#include "imgsmith/layer_scan.hpp"

#include <algorithm>
#include <vector>

#include "archive_reader.hpp"
#include "imgsmith/error.hpp"

namespace imgsmith {

std::string normalise_path(std::string_view raw) {
  std::vector<std::string_view> parts;
  while (!raw.empty()) {
    const std::size_t slash = raw.find('/');
    const std::string_view part = raw.substr(0, slash);
    raw = slash == std::string_view::npos ? std::string_view() : raw.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out.push_back('/');
    out.append(p);
  }
  return out;
}

namespace {

EntryType entry_type(archive_entry* e) {
  if (archive_entry_hardlink(e) != nullptr) return EntryType::Hardlink;
  switch (archive_entry_filetype(e)) {
    case AE_IFREG: return EntryType::File;
    case AE_IFDIR: return EntryType::Dir;
    case AE_IFLNK: return EntryType::Symlink;
    default: return EntryType::Other;
  }
}

const char* entry_name(archive_entry* e) {
  const char* name = archive_entry_pathname_utf8(e);
  return name != nullptr ? name : archive_entry_pathname(e);
}

}  // namespace

LayerScan scan_layer(ByteStream& in, std::uint64_t blob_bytes, const std::string& label) {
  LayerScan scan;
  scan.blob_bytes = blob_bytes;
  detail::ArchiveReader reader(in, label, /*allow_filters=*/true);
  while (archive_entry* e = reader.next(/*tolerate_truncation=*/true)) {
    const char* name = entry_name(e);
    TarEntry entry;
    entry.path = normalise_path(name != nullptr ? name : "");
    entry.type = entry_type(e);
    if (entry.type == EntryType::File) entry.size = static_cast<std::uint64_t>(archive_entry_size(e));
    if (entry.type == EntryType::Hardlink) {
      const char* target = archive_entry_hardlink_utf8(e);
      entry.link = normalise_path(target != nullptr ? target : archive_entry_hardlink(e));
    } else if (entry.type == EntryType::Symlink) {
      const char* target = archive_entry_symlink_utf8(e);
      if (target == nullptr) target = archive_entry_symlink(e);
      entry.link = target != nullptr ? target : "";
    }
    // Skipping here, not inside the next header call, is what tells a layer
    // cut inside an entry (an error) from one cut between entries (a warning).
    const auto stored = static_cast<std::uint64_t>(std::max<la_int64_t>(0, archive_entry_size(e)));
    const bool more = stored == 0 || reader.skip_data(entry.path, stored);
    if (!entry.path.empty()) {  // an empty path is the root directory itself
      scan.content_bytes += entry.size;
      scan.entries.push_back(std::move(entry));
    }
    if (!more) break;
  }
  scan.compression = reader.compression();
  if (reader.truncated())
    scan.warnings.push_back(label + ": layer ends without tar end-of-archive blocks after its " +
                            std::to_string(scan.entries.size()) +
                            " entries; reading it as complete");
  return scan;
}

}  // namespace imgsmith
