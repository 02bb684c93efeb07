#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace imgsmith {

// Text that lives as long as its owner, stored in large blocks. A layer
// holds hundreds of thousands of paths: one allocation each cost more than
// reading the tar headers they came from.
class TextArena {
 public:
  TextArena() = default;
  TextArena(TextArena&& other) noexcept;
  TextArena& operator=(TextArena&& other) noexcept;
  TextArena(const TextArena&) = delete;  // views into it would still point at the original
  TextArena& operator=(const TextArena&) = delete;

  // A copy of `text` that stays put until the arena goes, or is reset.
  std::string_view store(std::string_view text);
  // Forgets every text stored, keeping the last block for what comes next:
  // for text needed a batch at a time.
  void reset();
  ~TextArena();

 private:
  struct Block {
    char* data;
    std::size_t size;
  };
  std::vector<Block> blocks_;
  char* next_ = nullptr;
  std::size_t left_ = 0;
};

}  // namespace imgsmith
