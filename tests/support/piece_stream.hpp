// A byte stream over bytes in memory that hands them out in pieces whose
// sizes a test (or a fuzzer) picks: archive bugs cluster at piece
// boundaries. With `in_memory` it also lends its bytes and skips by moving
// on, as a mapped file does, so the tar reader's in-place path is met at
// every boundary too. What it lends is a copy that the next call poisons and
// frees, so a reader that keeps a lent view past the next call (the
// ByteStream::lend contract) reads garbage, or trips ASan.
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>

#include "imgsmith/source/byte_stream.hpp"

namespace imgsmith::testing {

class PieceStream final : public ByteStream {
 public:
  // `next_piece` gives the size of each piece in turn (0 counts as 1).
  // `data` must outlive the stream.
  PieceStream(std::string_view data, std::function<std::size_t()> next_piece, bool in_memory)
      : data_(data), next_piece_(std::move(next_piece)), in_memory_(in_memory) {}
  std::size_t read(void* buf, std::size_t size) override {
    retire_lent();
    const std::size_t n = take(size);
    std::memcpy(buf, data_.data() + at_ - n, n);
    return n;
  }
  std::uint64_t skip(std::uint64_t size) override {
    retire_lent();
    if (!in_memory_) return 0;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(size, data_.size() - at_));
    at_ += n;
    return n;
  }
  std::string_view lend(std::size_t size) override {
    retire_lent();
    if (!in_memory_) return {};
    const std::size_t n = take(size);
    if (n == 0) return {};
    lent_ = std::make_unique<char[]>(n);
    lent_size_ = n;
    std::memcpy(lent_.get(), data_.data() + at_ - n, n);
    return {lent_.get(), n};
  }
  // Bytes handed out (read, lent or skipped) so far.
  std::size_t position() const { return at_; }

 private:
  // The next piece, at most `size` bytes: counted as read.
  std::size_t take(std::size_t size) {
    const std::size_t n =
        std::min({size, std::max<std::size_t>(1, next_piece_()), data_.size() - at_});
    at_ += n;
    return n;
  }
  void retire_lent() {
    if (lent_ == nullptr) return;
    std::memset(lent_.get(), 0xA5, lent_size_);
    lent_.reset();
  }
  std::string_view data_;
  std::unique_ptr<char[]> lent_;  // what was lent last, until the next call
  std::size_t lent_size_ = 0;
  std::function<std::size_t()> next_piece_;
  bool in_memory_;
  std::size_t at_ = 0;
};

}  // namespace imgsmith::testing
