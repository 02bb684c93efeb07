// A blob's bytes checked as they stream by: their sha256 and their count
// against what the manifest says.
#include "client.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::registry {

std::size_t DigestingStream::read(void* buf, std::size_t size) {
  const std::size_t n = in_.read(buf, size);
  sha_.update(buf, n);
  seen_ += n;
  if (size_ != 0 && seen_ > size_)
    throw InputError(what_ + ": more than the " + std::to_string(size_) +
                     " bytes its manifest gives; the registry's copy does not match the manifest");
  return n;
}

bool DigestingStream::matches() {
  char chunk[64 * 1024];
  while (read(chunk, sizeof chunk) != 0) {
  }
  if (actual_.empty()) actual_ = sha_.digest();
  return actual_ == expected_ && (size_ == 0 || seen_ == size_);
}

void DigestingStream::verify() {
  if (matches()) return;
  throw InputError(what_ + ": digest mismatch: the manifest says " + expected_ + " (" +
                   std::to_string(size_) + " bytes), the registry sent " + actual_ + " (" +
                   std::to_string(seen_) +
                   " bytes); the registry's copy is corrupt or was tampered with");
}

}  // namespace imgsmith::registry
