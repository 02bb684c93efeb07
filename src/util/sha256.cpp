#include "imgsmith/util/sha256.hpp"

// OpenSSL's SHA-256 function itself, not through EVP: EVP_sha256() with the
// default library context reads openssl.cnf and loads the default provider
// on first use, about 0.8 ms of every run, for the same hashing (the same
// SHA-NI/AVX2 code, chosen when libcrypto loads). The function is marked
// deprecated in OpenSSL 3 in favour of EVP; it is still built and kept.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace imgsmith {

struct Sha256::State {
  SHA256_CTX ctx;
};

Sha256::Sha256() : state_(std::make_unique<State>()) { SHA256_Init(&state_->ctx); }

Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) { SHA256_Update(&state_->ctx, data, size); }

std::string Sha256::digest() {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256_Final(md, &state_->ctx);
  static const char* hex = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned int i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
    out.push_back(hex[md[i] >> 4]);
    out.push_back(hex[md[i] & 0xf]);
  }
  return out;
}

std::string sha256_digest(std::string_view bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.digest();
}

}  // namespace imgsmith
