// SHA-256 over bytes, through OpenSSL's libcrypto (already linked by libcurl).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace imgsmith {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, std::size_t size);
  // "sha256:<64 hex digits>"; the object cannot be updated afterwards.
  std::string digest();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

std::string sha256_digest(std::string_view bytes);

}  // namespace imgsmith
