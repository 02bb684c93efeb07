#include "imgsmith/source/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>  // struct open_how, RESOLVE_*
#endif

#include <algorithm>
#include <cerrno>
#include <string_view>

namespace imgsmith {

ssize_t pread_full(int fd, void* buf, std::size_t size, std::uint64_t offset) {
  std::size_t done = 0;
  auto* out = static_cast<char*>(buf);
  while (done < size) {
    const ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

std::string read_small_file(const std::string& path, std::uint64_t limit, std::error_code& error) {
  error.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error.assign(errno, std::generic_category());
    return {};
  }
  std::string text;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error.assign(errno, std::generic_category());
  } else if (!S_ISREG(st.st_mode)) {
    error = std::make_error_code(std::errc::invalid_argument);
  } else if (static_cast<std::uint64_t>(st.st_size) > limit) {
    error = std::make_error_code(std::errc::file_too_large);
  } else {
    // To the end, which st_size need not be (it is 0 for /proc's files),
    // and never past the limit.
    std::size_t done = 0;
    for (std::size_t chunk = std::max<std::size_t>(static_cast<std::size_t>(st.st_size), 4096);;
         chunk = 1 << 16) {
      text.resize(done + chunk);
      const ssize_t n = pread_full(fd, text.data() + done, chunk, done);
      if (n < 0) {
        error.assign(errno, std::generic_category());
        break;
      }
      done += static_cast<std::size_t>(n);
      if (done > limit) {
        error = std::make_error_code(std::errc::file_too_large);
        break;
      }
      if (static_cast<std::size_t>(n) < chunk) break;
    }
    text.resize(error ? 0 : done);
  }
  ::close(fd);
  return text;
}

namespace {

// open_beneath without openat2: each directory on the way opened with
// O_PATH | O_NOFOLLOW and checked to be a directory, not a link.
int open_by_components(int dir_fd, std::string_view path, int flags) {
  if (path.starts_with('/')) {
    errno = EXDEV;
    return -1;
  }
  int at = dir_fd;
  auto close_at = [&] {
    if (at != dir_fd) ::close(at);
  };
  for (;;) {
    const std::size_t slash = path.find('/');
    const std::string part(path.substr(0, slash));
    const bool last =
        path.find_first_not_of('/', slash == std::string_view::npos ? path.size() : slash) ==
        std::string_view::npos;
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    if (part == "..") {
      close_at();
      errno = EXDEV;
      return -1;
    }
    if (!last && (part.empty() || part == ".")) continue;
    const char* name = part.empty() ? "." : part.c_str();
    if (last) {
      const int fd = ::openat(at, name, flags | O_NOFOLLOW | O_CLOEXEC);
      const int err = errno;
      close_at();
      errno = err;
      return fd;
    }
    const int next = ::openat(at, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    int err = next < 0 ? errno : 0;
    struct stat st {};
    if (err == 0 && ::fstat(next, &st) != 0) err = errno;
    if (err == 0 && S_ISLNK(st.st_mode)) err = ELOOP;  // O_PATH | O_NOFOLLOW opens the link itself
    if (err == 0 && !S_ISDIR(st.st_mode)) err = ENOTDIR;
    close_at();
    if (err != 0) {
      if (next >= 0) ::close(next);
      errno = err;
      return -1;
    }
    at = next;
  }
}

}  // namespace

int open_beneath(int dir_fd, const std::string& path, int flags, bool by_components) {
#if defined(SYS_openat2) && defined(RESOLVE_BENEATH)
  if (!by_components) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
    const long fd = ::syscall(SYS_openat2, dir_fd, path.c_str(), &how, sizeof how);
    // ENOSYS before Linux 5.6; EPERM where a seccomp filter that predates
    // openat2 refuses every call it does not know.
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);
  }
#endif
  return open_by_components(dir_fd, path, flags);
}

}  // namespace imgsmith
