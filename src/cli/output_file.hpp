// Writing a report so that a reader never sees half of it.
#pragma once

#include <string>

namespace imgsmith {

// Writes `content` to `path` ("-" is standard output). A regular file is
// written beside its target and renamed over it, so an error leaves the old
// file (or none) in place; a device or pipe (/dev/null, /dev/stdout) is
// written directly. Throws InputError naming the path.
void write_output(const std::string& path, const std::string& content);

}  // namespace imgsmith
