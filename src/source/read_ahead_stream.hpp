// A stream read a few blocks ahead on a thread of its own (internal to
// src/source). A large compressed layer is otherwise decoded and parsed
// on one core: with the decoding on a second core, the tar reading and
// the merge overlap it, and the layer takes about as long as its
// decompression alone.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "imgsmith/source/byte_stream.hpp"

namespace imgsmith::detail {

class ReadAheadStream final : public ByteStream {
 public:
  // Reads `inner` in blocks of `block_bytes`, at most `blocks` of them
  // ahead of the reader. `inner` must outlive this stream and must not be
  // read by anyone else meanwhile.
  explicit ReadAheadStream(ByteStream& inner, std::size_t block_bytes = std::size_t{1} << 20,
                           std::size_t blocks = 4);
  // Stops the reading thread (after the block it is reading) and joins it.
  ~ReadAheadStream() override;
  ReadAheadStream(const ReadAheadStream&) = delete;
  ReadAheadStream& operator=(const ReadAheadStream&) = delete;

  // The inner stream's bytes, in order. An error the inner stream threw
  // is rethrown here once the bytes read before it have been delivered,
  // where a direct reader would have met it.
  std::size_t read(void* buf, std::size_t size) override;

 private:
  struct Block {
    std::vector<char> bytes;
    std::size_t size = 0;  // bytes filled
  };
  void produce();

  ByteStream& inner_;
  std::vector<Block> ring_;
  std::mutex mutex_;
  std::condition_variable filled_, emptied_;
  std::size_t first_ = 0;     // the block the reader takes from
  std::size_t queued_ = 0;    // filled blocks waiting, from first_ on
  std::size_t taken_ = 0;     // bytes of the first block already delivered
  bool ended_ = false;        // the inner stream is at its end, or threw
  bool stopping_ = false;     // the reader has gone
  std::exception_ptr error_;  // what the inner stream threw
  std::thread thread_;
};

}  // namespace imgsmith::detail
