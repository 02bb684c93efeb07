#include "curl_api.hpp"

#include "imgsmith/util/shared_library.hpp"

namespace imgsmith::registry {

const CurlApi& curl() {
  // libcurl's soname has been libcurl.so.4 since 7.16 (2006).
  static const CurlApi api = [] {
    static const SharedLibrary library("libcurl.so.4", "to read registries and the Docker daemon",
                                       "libcurl4");
    CurlApi a;
#define IMGSMITH_CURL_BIND(name) library.bind(a.name, "curl_" #name);
    IMGSMITH_CURL_FUNCTIONS(IMGSMITH_CURL_BIND)
#undef IMGSMITH_CURL_BIND
    return a;
  }();
  return api;
}

}  // namespace imgsmith::registry
