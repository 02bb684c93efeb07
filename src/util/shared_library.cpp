#include "imgsmith/util/shared_library.hpp"

#include <dlfcn.h>

#include "imgsmith/util/error.hpp"

namespace imgsmith {

SharedLibrary::SharedLibrary(const char* soname, const char* needed_for, const char* package)
    : soname_(soname), package_(package) {
  handle_ = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = ::dlerror();
    // The machine's, not imgsmith's: exit 2 with what to install.
    throw EnvironmentError(std::string("cannot load ") + soname + ", which imgsmith needs " +
                           needed_for + ": " + (why ? why : "unknown error") +
                           "; install Debian's " + package + " (or your system's equivalent)");
  }
}

void* SharedLibrary::find(const char* symbol) const {
  void* address = ::dlsym(handle_, symbol);
  if (address == nullptr)
    throw EnvironmentError(soname_ + " has no " + symbol + ": it is older than imgsmith needs; " +
                           "upgrade " + package_);
  return address;
}

}  // namespace imgsmith
