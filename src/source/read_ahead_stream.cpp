#include "read_ahead_stream.hpp"

#include <algorithm>
#include <cstring>

namespace imgsmith::detail {

ReadAheadStream::ReadAheadStream(ByteStream& inner, std::size_t block_bytes, std::size_t blocks)
    : inner_(inner), ring_(std::max<std::size_t>(blocks, 2)) {
  for (Block& b : ring_) b.bytes.resize(std::max<std::size_t>(block_bytes, 1));
  thread_ = std::thread([this] { produce(); });
}

ReadAheadStream::~ReadAheadStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  emptied_.notify_one();
  thread_.join();
}

void ReadAheadStream::produce() {
  std::size_t next = 0;  // the block this thread fills next
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      emptied_.wait(lock, [&] { return queued_ < ring_.size() || stopping_; });
      if (stopping_) return;
    }
    // The block is the producer's alone until it is queued: the reader
    // only touches queued blocks.
    Block& block = ring_[next];
    block.size = 0;
    std::exception_ptr error;
    bool at_end = false;
    try {
      while (block.size < block.bytes.size()) {
        const std::size_t got =
            inner_.read(block.bytes.data() + block.size, block.bytes.size() - block.size);
        if (got == 0) {
          at_end = true;
          break;
        }
        block.size += got;
      }
    } catch (...) {
      error = std::current_exception();
      at_end = true;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (block.size > 0) {
        ++queued_;
        next = (next + 1) % ring_.size();
      }
      if (at_end) {
        ended_ = true;
        error_ = error;
      }
    }
    filled_.notify_one();
    if (at_end) return;
  }
}

std::size_t ReadAheadStream::read(void* buf, std::size_t size) {
  if (size == 0) return 0;
  std::unique_lock<std::mutex> lock(mutex_);
  filled_.wait(lock, [&] { return queued_ > 0 || ended_; });
  if (queued_ == 0) {
    if (error_) std::rethrow_exception(error_);
    return 0;
  }
  Block& block = ring_[first_];
  lock.unlock();  // a queued block is the reader's until it is released
  const std::size_t n = std::min(size, block.size - taken_);
  std::memcpy(buf, block.bytes.data() + taken_, n);
  taken_ += n;
  if (taken_ == block.size) {
    taken_ = 0;
    lock.lock();
    first_ = (first_ + 1) % ring_.size();
    --queued_;
    lock.unlock();
    emptied_.notify_one();
  }
  return n;
}

}  // namespace imgsmith::detail
