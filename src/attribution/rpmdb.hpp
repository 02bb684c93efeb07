// rpm's package database as RHEL 9, UBI 9, Rocky 9 and Fedora keep it
// (/var/lib/rpm/rpmdb.sqlite): each package's name, version and files,
// read from the header blobs in its Packages table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace imgsmith::attribution_detail {

struct RpmPackage {
  std::string name;
  std::string version;             // "VERSION-RELEASE"
  std::vector<std::string> files;  // absolute paths, as the header lists them
};

// Reads the database from its bytes (it is never written to disk). A file
// that is no SQLite database, or holds no Packages table, gives no
// packages; a damaged header skips that package. The image is untrusted:
// every offset and count in a header is checked before it is used.
std::vector<RpmPackage> read_rpmdb(std::string_view sqlite_bytes);

// One rpm header blob (index count, data length, index entries, data),
// exposed for tests; false when it is malformed.
bool parse_rpm_header(std::string_view blob, RpmPackage& out);

}  // namespace imgsmith::attribution_detail
