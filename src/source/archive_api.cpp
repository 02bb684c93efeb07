#include "archive_api.hpp"

#include "imgsmith/util/shared_library.hpp"

namespace imgsmith {

const ArchiveApi& libarchive() {
  // libarchive's soname has been libarchive.so.13 since 3.0 (2011).
  static const ArchiveApi api = [] {
    static const SharedLibrary library("libarchive.so.13", "to read compressed layers and saves",
                                       "libarchive13");
    ArchiveApi a;
#define IMGSMITH_ARCHIVE_BIND(name) library.bind(a.name, "archive_" #name);
    IMGSMITH_ARCHIVE_FUNCTIONS(IMGSMITH_ARCHIVE_BIND)
#undef IMGSMITH_ARCHIVE_BIND
    return a;
  }();
  return api;
}

}  // namespace imgsmith
