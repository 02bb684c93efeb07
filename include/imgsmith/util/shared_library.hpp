// A shared library loaded on first use (dlopen) rather than at start: the
// libraries only some inputs need (libcurl and its ~30 dependencies for
// registries and the daemon, libarchive for compressed layers) cost every
// run of imgsmith milliseconds to map and relocate, `--version` included.
#pragma once

#include <string>

namespace imgsmith {

class SharedLibrary {
 public:
  // Loads `soname` (e.g. "libcurl.so.4"). Throws EnvironmentError naming
  // it, what needs it (`needed_for`) and the Debian package that has it.
  SharedLibrary(const char* soname, const char* needed_for, const char* package);
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  // Kept loaded for the life of the process: its functions are called to
  // the end, and unloading a TLS library at exit is asking for trouble.
  ~SharedLibrary() = default;

  // Points `fn` at the library's `symbol`; throws when it has none.
  template <typename Fn>
  void bind(Fn& fn, const char* symbol) const {
    fn = reinterpret_cast<Fn>(find(symbol));
  }

 private:
  void* find(const char* symbol) const;
  void* handle_ = nullptr;
  std::string soname_, package_;
};

}  // namespace imgsmith
