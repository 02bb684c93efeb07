// A file's content read front to back, with steps over what the reader does
// not need: how the model readers walk a checkpoint's structure while the
// layer streams past, reading headers and stepping over the weights (which
// a source skips by seeking where it can).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace imgsmith {

class ForwardReader {
 public:
  virtual ~ForwardReader() = default;

  // Up to `n` bytes into `out`; fewer only at the end of the content.
  std::size_t read(char* out, std::size_t n);
  // Steps over `n` bytes; returns how many there were before the end.
  std::uint64_t skip(std::uint64_t n);
  // Exactly `n` bytes appended to `out`, or false when the content ends first
  // (what there was is appended).
  bool read_exact(std::string& out, std::size_t n);
  // Bytes read or stepped over so far: the offset of the next byte.
  std::uint64_t position() const { return position_; }

  // Whether read_at() works: the content lies in a file (an uncompressed
  // layer, a file on disk), not in a stream that goes by once.
  virtual bool reads_at() const { return false; }
  // Up to `n` bytes at `offset` from the content's first byte, wherever the
  // front-to-back reading stands (which it leaves where it is); fewer only
  // at the end; 0 where reads_at() is false.
  virtual std::size_t read_at(std::uint64_t /*offset*/, char* /*out*/, std::size_t /*n*/) {
    return 0;
  }

 protected:
  virtual std::size_t read_some(char* out, std::size_t n) = 0;
  virtual std::uint64_t skip_some(std::uint64_t n) = 0;

 private:
  std::uint64_t position_ = 0;
};

// Content held in memory (tests, and bytes already read).
class StringReader final : public ForwardReader {
 public:
  explicit StringReader(std::string_view bytes) : bytes_(bytes) {}

 protected:
  std::size_t read_some(char* out, std::size_t n) override;
  std::uint64_t skip_some(std::uint64_t n) override;

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

// Bytes already read from the front of a content (`head`), then the rest.
class PrefixedReader final : public ForwardReader {
 public:
  PrefixedReader(std::string_view head, ForwardReader& rest) : head_(head), rest_(rest) {}

 protected:
  std::size_t read_some(char* out, std::size_t n) override;
  std::uint64_t skip_some(std::uint64_t n) override;

 private:
  std::string_view head_;
  std::size_t at_ = 0;
  ForwardReader& rest_;
};

// A file on disk, read with pread, stepped over by moving the offset.
class FileReader final : public ForwardReader {
 public:
  // Throws InputError naming `path` when it cannot be opened.
  explicit FileReader(const std::string& path);
  ~FileReader() override;
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;
  std::uint64_t size() const { return size_; }
  bool reads_at() const override { return true; }
  std::size_t read_at(std::uint64_t offset, char* out, std::size_t n) override;

 protected:
  std::size_t read_some(char* out, std::size_t n) override;
  std::uint64_t skip_some(std::uint64_t n) override;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t offset_ = 0;
};

}  // namespace imgsmith
