// A list of bytes written once, from start to end, and read back the same
// way: what dive's figures keep of each layer (millions of paths for a large
// first layer) while the merged tree is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace imgsmith {

// Appended in blocks that never move: a string that grows by doubling holds
// its old copy and its new one at once. Past kSpillAt bytes, full blocks go
// to an unlinked temporary file (in $TMPDIR, else /tmp) and only the block
// being written stays in memory, so a list of any length costs a block; the
// page cache, not the process, holds the rest. Where no temporary file can
// be made, the list stays in memory.
class ByteList {
 public:
  ByteList() = default;
  ByteList(ByteList&& other) noexcept;
  ByteList& operator=(ByteList&& other) noexcept;
  ByteList(const ByteList&) = delete;
  ByteList& operator=(const ByteList&) = delete;
  ~ByteList();

  // Throws InputError when the temporary file cannot be written (a full disk).
  void append(const char* data, std::size_t n);
  void append(std::string_view text) { append(text.data(), text.size()); }
  std::size_t size() const { return size_; }
  // Bytes in the temporary file (0: none).
  std::size_t spilled() const { return spilled_; }

  static constexpr std::size_t kBlock = std::size_t{1} << 20;
  static constexpr std::size_t kSpillAt = 4 * kBlock;

  // Reads a list from its start. The list must not change meanwhile.
  class Reader {
   public:
    explicit Reader(const ByteList& list) : list_(&list) {}
    bool at_end() const { return pos_ >= list_->size_; }
    char byte() {
      if (pos_ < list_->spilled_) return spilled_byte();
      const std::size_t at = pos_ - list_->spilled_;
      ++pos_;
      return list_->blocks_[at / kBlock][at % kBlock];
    }
    std::uint64_t varint() {
      std::uint64_t v = 0;
      for (int shift = 0;; shift += 7) {
        const auto b = static_cast<unsigned char>(byte());
        v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
        if ((b & 0x80) == 0) return v;
      }
    }
    // The next `n` bytes, appended to `out`.
    void read(std::size_t n, std::string& out);

   private:
    char spilled_byte();
    void fill();  // the buffer from the file at pos_
    static constexpr std::size_t kBuffer = std::size_t{64} << 10;

    const ByteList* list_;
    std::size_t pos_ = 0;
    std::unique_ptr<char[]> buffer_;
    std::size_t buffer_start_ = 0, buffer_size_ = 0;  // what the buffer holds of the file
  };

 private:
  void spill();

  std::vector<std::unique_ptr<char[]>> blocks_;  // what is not in the file, from spilled_ on
  std::size_t size_ = 0;
  std::size_t spilled_ = 0;
  int fd_ = -1;
  bool no_file_ = false;  // making one failed: stay in memory
};

}  // namespace imgsmith
