#include "imgsmith/util/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace imgsmith {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  if (state_->ctx == nullptr || EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("cannot initialise SHA-256");
}

Sha256::~Sha256() { EVP_MD_CTX_free(state_->ctx); }

void Sha256::update(const void* data, std::size_t size) {
  EVP_DigestUpdate(state_->ctx, data, size);
}

std::string Sha256::digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(state_->ctx, md, &len);
  static const char* hex = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned int i = 0; i < len; ++i) {
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
