#include "rpmdb.hpp"

#include <sqlite3.h>

#include <cstdint>
#include <cstring>
#include <memory>

namespace imgsmith::attribution_detail {
namespace {

// Header tags and types (rpm's lib/rpmtag.h).
constexpr std::uint32_t kTagName = 1000, kTagVersion = 1001, kTagRelease = 1002;
constexpr std::uint32_t kTagDirIndexes = 1116, kTagBaseNames = 1117, kTagDirNames = 1118;
constexpr std::uint32_t kTypeInt32 = 4, kTypeString = 6, kTypeStringArray = 8, kTypeI18nString = 9;
// No real package lists more; a larger count is a damaged header.
constexpr std::uint32_t kMaxEntries = 1u << 20;

std::uint32_t be32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) |
         u[3];
}

struct IndexEntry {
  std::uint32_t type = 0, offset = 0, count = 0;
  bool present = false;
};

// `count` NUL-terminated strings from `offset` in `data`; false if they run past its end.
bool strings_at(std::string_view data, const IndexEntry& e, std::vector<std::string_view>& out) {
  if (!e.present ||
      (e.type != kTypeString && e.type != kTypeStringArray && e.type != kTypeI18nString))
    return false;
  if (e.count > kMaxEntries || e.offset > data.size()) return false;
  std::size_t at = e.offset;
  out.clear();
  for (std::uint32_t i = 0; i < e.count; ++i) {
    const auto end = data.find('\0', at);
    if (end == std::string_view::npos) return false;
    out.push_back(data.substr(at, end - at));
    at = end + 1;
  }
  return true;
}

bool int32s_at(std::string_view data, const IndexEntry& e, std::vector<std::uint32_t>& out) {
  if (!e.present || e.type != kTypeInt32 || e.count > kMaxEntries) return false;
  if (e.offset > data.size() || (data.size() - e.offset) / 4 < e.count) return false;
  out.resize(e.count);
  for (std::uint32_t i = 0; i < e.count; ++i)
    out[i] = be32(data.data() + e.offset + 4 * std::size_t{i});
  return true;
}

}  // namespace

bool parse_rpm_header(std::string_view blob, RpmPackage& out) {
  if (blob.size() < 8) return false;
  const std::uint32_t entries = be32(blob.data()), data_length = be32(blob.data() + 4);
  if (entries > kMaxEntries || (blob.size() - 8) / 16 < entries) return false;
  const std::size_t data_start = 8 + 16 * std::size_t{entries};
  if (blob.size() - data_start < data_length) return false;
  const std::string_view data = blob.substr(data_start, data_length);
  IndexEntry name, version, release, dir_indexes, base_names, dir_names;
  for (std::uint32_t i = 0; i < entries; ++i) {
    const char* e = blob.data() + 8 + 16 * std::size_t{i};
    IndexEntry entry{be32(e + 4), be32(e + 8), be32(e + 12), true};
    switch (be32(e)) {
      case kTagName:
        name = entry;
        break;
      case kTagVersion:
        version = entry;
        break;
      case kTagRelease:
        release = entry;
        break;
      case kTagDirIndexes:
        dir_indexes = entry;
        break;
      case kTagBaseNames:
        base_names = entry;
        break;
      case kTagDirNames:
        dir_names = entry;
        break;
      default:
        break;
    }
  }
  std::vector<std::string_view> text;
  if (!strings_at(data, name, text) || text.empty() || text[0].empty()) return false;
  out.name = std::string(text[0]);
  out.version.clear();
  if (strings_at(data, version, text) && !text.empty()) out.version = std::string(text[0]);
  if (strings_at(data, release, text) && !text.empty()) out.version += "-" + std::string(text[0]);
  out.files.clear();
  if (!base_names.present) return true;  // a package with no files (a meta-package)
  std::vector<std::string_view> bases, dirs;
  std::vector<std::uint32_t> index;
  if (!strings_at(data, base_names, bases) || !strings_at(data, dir_names, dirs) ||
      !int32s_at(data, dir_indexes, index) || index.size() != bases.size())
    return false;
  out.files.reserve(bases.size());
  for (std::size_t i = 0; i < bases.size(); ++i) {
    if (index[i] >= dirs.size()) return false;
    out.files.push_back(std::string(dirs[index[i]]) + std::string(bases[i]));
  }
  return true;
}

std::vector<RpmPackage> read_rpmdb(std::string_view sqlite_bytes) {
  std::vector<RpmPackage> packages;
  // "SQLite format 3\0", and a page size to read with.
  if (sqlite_bytes.size() < 100 || std::memcmp(sqlite_bytes.data(), "SQLite format 3", 16) != 0)
    return packages;
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(raw);
    return packages;
  }
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  sqlite3_db_config(db.get(), SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  // SQLite frees the copy when the connection closes. rpm keeps the file in
  // WAL mode (header bytes 18-19 = 2), which an in-memory copy cannot be
  // opened in: the copy is marked rollback-journal (1) instead. A WAL file
  // beside it is not read: rpm checkpoints it when a transaction ends.
  const auto size = static_cast<sqlite3_int64>(sqlite_bytes.size());
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(static_cast<sqlite3_uint64>(size)));
  if (copy == nullptr) return packages;
  std::memcpy(copy, sqlite_bytes.data(), sqlite_bytes.size());
  if (copy[18] == 2) copy[18] = 1;
  if (copy[19] == 2) copy[19] = 1;
  if (sqlite3_deserialize(db.get(), "main", copy, size, size,
                          SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) !=
      SQLITE_OK)
    return packages;
  sqlite3_stmt* raw_stmt = nullptr;
  if (sqlite3_prepare_v2(db.get(), "SELECT blob FROM Packages", -1, &raw_stmt, nullptr) !=
      SQLITE_OK) {
    sqlite3_finalize(raw_stmt);
    return packages;
  }
  const std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw_stmt, sqlite3_finalize);
  while (sqlite3_step(stmt.get()) == SQLITE_ROW) {
    const void* blob = sqlite3_column_blob(stmt.get(), 0);
    const int length = sqlite3_column_bytes(stmt.get(), 0);
    if (blob == nullptr || length <= 0) continue;
    RpmPackage p;
    if (parse_rpm_header(
            std::string_view(static_cast<const char*>(blob), static_cast<std::size_t>(length)), p))
      packages.push_back(std::move(p));
  }
  return packages;
}

}  // namespace imgsmith::attribution_detail
