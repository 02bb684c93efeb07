// What a registry reference and a registry's answers bring in: image
// references as users type them, and WWW-Authenticate challenges as
// registries (or anything posing as one) send them.
#include <fuzzer/FuzzedDataProvider.h>

#include "client.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string reference = in.ConsumeRandomLengthString(512);
  const std::string challenge = in.ConsumeRemainingBytesAsString();
  try {
    if (const auto ref = imgsmith::RegistryRef::parse(reference)) {
      (void)ref->api_host();
      (void)ref->reference();
      (void)ref->str();
    }
    (void)imgsmith::registry::parse_challenge(challenge);
  } catch (const imgsmith::InputError&) {
  }
  return 0;
}
