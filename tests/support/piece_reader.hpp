// A file's content in memory, handed to a ForwardReader's user in pieces of
// at most `step` bytes: a layer's stream never lines up with the structures
// a reader walks (fatbin containers, model headers).
#pragma once

#include <algorithm>
#include <cstring>
#include <string_view>

#include "imgsmith/util/forward_reader.hpp"

namespace imgsmith::testing {

class PieceReader final : public ForwardReader {
 public:
  // `bytes` must outlive the reader; a `step` of 0 counts as 1.
  PieceReader(std::string_view bytes, std::size_t step)
      : bytes_(bytes), step_(std::max<std::size_t>(step, 1)) {}

 protected:
  std::size_t read_some(char* out, std::size_t n) override {
    const std::size_t k = std::min({n, step_, bytes_.size() - at_});
    std::memcpy(out, bytes_.data() + at_, k);
    at_ += k;
    return k;
  }
  std::uint64_t skip_some(std::uint64_t n) override {
    const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, bytes_.size() - at_));
    at_ += k;
    return k;
  }

 private:
  std::string_view bytes_;
  std::size_t step_;
  std::size_t at_ = 0;
};

// A whole file in memory as an uncompressed layer's entry is: read front to
// back after its first `head` bytes (in pieces of at most `step`), and at
// any offset of the file. Counts what is read at offsets.
class AtReader final : public ForwardReader {
 public:
  AtReader(std::string_view file, std::size_t head, std::size_t step)
      : forward_(file.substr(std::min(head, file.size())), step), file_(file) {}

  bool reads_at() const override { return true; }
  std::size_t read_at(std::uint64_t offset, char* out, std::size_t n) override {
    if (offset >= file_.size()) return 0;
    const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, file_.size() - offset));
    std::memcpy(out, file_.data() + offset, k);
    bytes_read_at_ += k;
    return k;
  }
  std::uint64_t bytes_read_at() const { return bytes_read_at_; }

 protected:
  std::size_t read_some(char* out, std::size_t n) override { return forward_.read(out, n); }
  std::uint64_t skip_some(std::uint64_t n) override { return forward_.skip(n); }

 private:
  PieceReader forward_;
  std::string_view file_;
  std::uint64_t bytes_read_at_ = 0;
};

}  // namespace imgsmith::testing
