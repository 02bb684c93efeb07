// Reading local files by descriptor: what the sources that read files from
// disk share (src/source's stores and streams, src/registry's reader of the
// Docker daemon's storage).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>

namespace imgsmith {

// Reads up to `size` bytes of `fd` from `offset`, retrying interrupted
// reads. Returns how many were read, fewer than `size` only at the end of
// the file, or -1 with errno set on an I/O error.
ssize_t pread_full(int fd, void* buf, std::size_t size, std::uint64_t offset);

// A small regular file (a JSON document, a record), read whole once fstat
// says it is no larger than `limit` (and read no further than that, for
// files such as /proc's that fstat says are empty). Symbolic links are
// followed. On failure
// returns "" and sets `error`: errno of the open or the read,
// std::errc::file_too_large over the limit, std::errc::invalid_argument for
// something other than a regular file (opened without blocking: a FIFO
// never stalls it).
std::string read_small_file(const std::string& path, std::uint64_t limit, std::error_code& error);

// Opens `path` (relative, '/'-separated) beneath the directory `dir_fd`
// with `flags` (O_CLOEXEC added), following no symbolic link on the way,
// not even in its parent directories, and never leaving the directory.
// openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has it
// (Linux 5.6); else, or with `by_components`, one component at a time with
// O_NOFOLLOW. Returns the descriptor, or -1 with errno set: ELOOP where a
// symbolic link is on the way, EXDEV for a ".." component or an absolute
// path.
int open_beneath(int dir_fd, const std::string& path, int flags, bool by_components = false);

}  // namespace imgsmith
