// libcurl's functions, loaded with dlopen on first use (util's
// SharedLibrary): only registries and the Docker daemon need libcurl, and
// linking it would make every start of imgsmith map it and its ~30
// dependencies (about 2 ms of a 6 ms `--version`). Its types and constants
// come from its header as usual.
#pragma once

// The header's type-checking macros would rewrite calls through this table.
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

namespace imgsmith::registry {

// X(name) for each function called, as curl_<name>.
#define IMGSMITH_CURL_FUNCTIONS(X) \
  X(easy_cleanup)                  \
  X(easy_getinfo)                  \
  X(easy_init)                     \
  X(easy_pause)                    \
  X(easy_setopt)                   \
  X(easy_strerror)                 \
  X(global_init)                   \
  X(multi_add_handle)              \
  X(multi_cleanup)                 \
  X(multi_info_read)               \
  X(multi_init)                    \
  X(multi_perform)                 \
  X(multi_poll)                    \
  X(multi_remove_handle)           \
  X(share_cleanup)                 \
  X(share_init)                    \
  X(share_setopt)                  \
  X(slist_append)                  \
  X(slist_free_all)

struct CurlApi {
#define IMGSMITH_CURL_MEMBER(name) decltype(&::curl_##name) name = nullptr;
  IMGSMITH_CURL_FUNCTIONS(IMGSMITH_CURL_MEMBER)
#undef IMGSMITH_CURL_MEMBER
};

// libcurl.so.4, loaded and bound the first time; throws std::runtime_error
// when it cannot be (the message names the library and the package).
const CurlApi& curl();

}  // namespace imgsmith::registry
