// libarchive's functions, loaded with dlopen on first use (util's
// SharedLibrary): only compressed layers and saves in formats of its own
// need it, and linking it would make every start of imgsmith map it and its
// dependencies. Its types and constants come from its headers as usual.
#pragma once

#include <archive.h>
#include <archive_entry.h>

namespace imgsmith {

// X(name) for each function called, as archive_<name>.
#define IMGSMITH_ARCHIVE_FUNCTIONS(X) \
  X(entry_filetype)                   \
  X(entry_hardlink)                   \
  X(entry_pathname)                   \
  X(entry_size)                       \
  X(entry_symlink)                    \
  X(error_string)                     \
  X(filter_bytes)                     \
  X(filter_code)                      \
  X(read_data)                        \
  X(read_data_skip)                   \
  X(read_free)                        \
  X(read_new)                         \
  X(read_next_header)                 \
  X(read_open1)                       \
  X(read_set_callback_data)           \
  X(read_set_read_callback)           \
  X(read_set_skip_callback)           \
  X(read_support_filter_bzip2)        \
  X(read_support_filter_gzip)         \
  X(read_support_filter_xz)           \
  X(read_support_filter_zstd)         \
  X(read_support_format_empty)        \
  X(read_support_format_gnutar)       \
  X(read_support_format_raw)          \
  X(read_support_format_tar)          \
  X(set_error)

struct ArchiveApi {
#define IMGSMITH_ARCHIVE_MEMBER(name) decltype(&::archive_##name) name = nullptr;
  IMGSMITH_ARCHIVE_FUNCTIONS(IMGSMITH_ARCHIVE_MEMBER)
#undef IMGSMITH_ARCHIVE_MEMBER
};

// libarchive.so.13, loaded and bound the first time; throws
// std::runtime_error when it cannot be.
const ArchiveApi& libarchive();

}  // namespace imgsmith
