#include "imgsmith/util/text_arena.hpp"

#include <algorithm>
#include <cstring>

#include "imgsmith/util/bulk_memory.hpp"

namespace imgsmith {

TextArena::TextArena(TextArena&& other) noexcept
    : blocks_(std::move(other.blocks_)), next_(other.next_), left_(other.left_) {
  other.blocks_.clear();
  other.next_ = nullptr;
  other.left_ = 0;
}

TextArena& TextArena::operator=(TextArena&& other) noexcept {
  if (this != &other) {
    TextArena gone(std::move(*this));
    blocks_ = std::move(other.blocks_);
    next_ = other.next_;
    left_ = other.left_;
    other.blocks_.clear();
    other.next_ = nullptr;
    other.left_ = 0;
  }
  return *this;
}

TextArena::~TextArena() {
  for (const Block& b : blocks_) bulk_memory()->deallocate(b.data, b.size, 1);
}

void TextArena::reset() {
  if (blocks_.empty()) return;
  for (std::size_t i = 0; i + 1 < blocks_.size(); ++i)
    bulk_memory()->deallocate(blocks_[i].data, blocks_[i].size, 1);
  blocks_.erase(blocks_.begin(), blocks_.end() - 1);
  next_ = blocks_.back().data;
  left_ = blocks_.back().size;
}

std::string_view TextArena::store(std::string_view text) {
  if (text.empty()) return {};
  if (text.size() > left_) {
    // Blocks double from 64 KiB to 4 MiB, so a small layer stays small and
    // a large one takes few; a longer text (a pax path can be) gets its own.
    const std::size_t block = (std::size_t{64} << 10) << std::min<std::size_t>(blocks_.size(), 6);
    const std::size_t size = std::max(block, text.size());
    blocks_.push_back(Block{static_cast<char*>(bulk_memory()->allocate(size, 1)), size});
    next_ = blocks_.back().data;
    left_ = size;
  }
  char* out = next_;
  std::memcpy(out, text.data(), text.size());
  next_ += text.size();
  left_ -= text.size();
  return {out, text.size()};
}

}  // namespace imgsmith
