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

}  // namespace imgsmith::testing
