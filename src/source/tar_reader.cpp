#include "tar_reader.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "imgsmith/util/error.hpp"

namespace imgsmith::detail {
namespace {

constexpr std::size_t kBlock = 512;
constexpr std::size_t kBuffer = 64 * 1024;
constexpr std::uint64_t kMetaLimit = 1 << 20;  // pax and GNU long-name data

std::string_view field(const char* p, std::size_t n) { return std::string_view(p, strnlen(p, n)); }

// Octal, space or NUL terminated; or GNU base-256 when the top bit is set.
bool parse_number(const char* p, std::size_t n, std::uint64_t& out) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  out = 0;
  if (u[0] & 0x80) {
    if (u[0] & 0x40) return false;  // negative
    out = u[0] & 0x3f;
    for (std::size_t i = 1; i < n; ++i) {
      if (out >> 55) return false;
      out = (out << 8) | u[i];
    }
    return true;
  }
  std::size_t i = 0;
  while (i < n && (p[i] == ' ' || p[i] == '\0')) ++i;
  bool any = false;
  for (; i < n && p[i] >= '0' && p[i] <= '7'; ++i) {
    if (out >> 60) return false;
    out = out * 8 + static_cast<std::uint64_t>(p[i] - '0');
    any = true;
  }
  for (; i < n; ++i)
    if (p[i] != ' ' && p[i] != '\0') return false;
  return any;
}

bool checksum_ok(const char* h) {
  std::uint64_t stored = 0;
  if (!parse_number(h + 148, 8, stored)) return false;
  // The sum over all bytes with the checksum field read as spaces; written
  // as straight sums so the compiler vectorises them (this runs per entry).
  const auto* u = reinterpret_cast<const unsigned char*>(h);
  std::uint32_t unsigned_sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) unsigned_sum += u[i];
  for (std::size_t i = 148; i < 156; ++i) unsigned_sum -= u[i];
  unsigned_sum += 8 * ' ';
  if (stored == unsigned_sum) return true;
  // Some old writers summed signed chars.
  std::int32_t signed_sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) signed_sum += static_cast<signed char>(h[i]);
  for (std::size_t i = 148; i < 156; ++i) signed_sum -= static_cast<signed char>(h[i]);
  signed_sum += 8 * ' ';
  return static_cast<std::int64_t>(stored) == signed_sum;
}

bool all_zero(const char* p, std::size_t n) {
  return std::all_of(p, p + n, [](char c) { return c == 0; });
}

// "LEN key=value\n" records; only the keys that change what we report.
void apply_pax(const std::string& data, std::string& path, std::string& link, std::uint64_t& size,
               bool& has_size) {
  std::size_t pos = 0;
  while (pos < data.size()) {
    const std::size_t space = data.find(' ', pos);
    if (space == std::string::npos) return;
    std::uint64_t len = 0;
    for (std::size_t i = pos; i < space; ++i) {
      if (data[i] < '0' || data[i] > '9') return;
      len = len * 10 + static_cast<std::uint64_t>(data[i] - '0');
    }
    if (len == 0 || pos + len > data.size()) return;
    const std::string record = data.substr(space + 1, pos + len - space - 2);
    const std::size_t eq = record.find('=');
    if (eq != std::string::npos) {
      const std::string key = record.substr(0, eq), value = record.substr(eq + 1);
      if (key == "path")
        path = value;
      else if (key == "linkpath")
        link = value;
      else if (key == "size") {
        std::uint64_t v = 0;
        bool ok = !value.empty();
        for (char c : value) {
          if (c < '0' || c > '9')
            ok = false;
          else
            v = v * 10 + static_cast<std::uint64_t>(c - '0');
        }
        if (ok) {
          size = v;
          has_size = true;
        }
      }
    }
    pos += len;
  }
}

}  // namespace

TarReader::TarReader(ByteStream& in, std::string label)
    : in_(in), label_(std::move(label)), buf_(kBuffer), data_(buf_.data()) {}

std::size_t TarReader::fill(std::size_t n) {
  if (end_ - pos_ >= n) return n;
  if (pos_ == end_) {
    // Nothing left over: a stream over memory lends its next bytes, read in
    // place (a header, usually; the data between is skipped).
    const std::string_view view = in_.lend(n);
    if (!view.empty()) {
      data_ = view.data();
      pos_ = 0;
      end_ = view.size();
      if (end_ >= n) return n;
    }
  }
  // Into the buffer: what is left over first, then reads until `n` bytes
  // are there (or the stream ends).
  const std::size_t left = end_ - pos_;
  if (buf_.size() < n) {
    std::vector<char> bigger(n);
    std::memcpy(bigger.data(), data_ + pos_, left);
    buf_.swap(bigger);
  } else if (data_ != buf_.data() || pos_ > 0) {
    std::memmove(buf_.data(), data_ + pos_, left);
  }
  data_ = buf_.data();
  pos_ = 0;
  end_ = left;
  while (end_ < n) {
    const std::string_view view = in_.lend(n - end_);
    if (!view.empty()) {
      std::memcpy(buf_.data() + end_, view.data(), view.size());
      end_ += view.size();
      continue;
    }
    const std::size_t got = in_.read(buf_.data() + end_, buf_.size() - end_);
    if (got == 0) break;
    end_ += got;
  }
  return std::min(n, end_);
}

std::uint64_t TarReader::skip(std::uint64_t n) {
  const std::uint64_t in_buffer = std::min<std::uint64_t>(n, end_ - pos_);
  pos_ += in_buffer;
  offset_ += in_buffer;
  std::uint64_t done = in_buffer;
  if (done < n) {
    // Past the buffer: seek when the stream can, read and drop otherwise.
    data_ = buf_.data();
    pos_ = end_ = 0;
    const std::uint64_t seeked = in_.skip(n - done);
    done += seeked;
    offset_ += seeked;
    while (done < n) {
      const std::size_t want =
          static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size(), n - done));
      const std::size_t got = in_.read(buf_.data(), want);
      if (got == 0) break;
      done += got;
      offset_ += got;
    }
  }
  return done;
}

std::string TarReader::read_data(std::uint64_t size, const char* what) {
  if (size > kMetaLimit)
    throw InputError(label_ + ": " + what + " header of " + std::to_string(size) +
                     " bytes is implausibly large (corrupt tar)");
  const std::size_t n = static_cast<std::size_t>(size);
  if (fill(n) < n)
    throw InputError(label_ + ": truncated inside a " + what + " header" + kDamagedAdvice);
  std::string data(data_ + pos_, n);
  pos_ += n;
  offset_ += n;
  const std::uint64_t padding = (kBlock - size % kBlock) % kBlock;
  if (skip(padding) < padding)
    throw InputError(label_ + ": truncated inside a " + what + " header" + kDamagedAdvice);
  return data;
}

std::size_t TarReader::next_data_chunk(std::size_t want) {
  const std::size_t got = fill(want);
  if (got == 0)
    throw InputError(label_ + ": truncated: the data of '" + pending_name_ + "' is cut short" +
                     kDamagedAdvice);
  return got;
}

std::size_t TarReader::read_entry_some(char* out, std::size_t n) {
  n = static_cast<std::size_t>(std::min<std::uint64_t>(n, pending_data_));
  if (n == 0) return 0;
  const std::size_t got = next_data_chunk(std::min(n, buf_.size()));
  std::memcpy(out, data_ + pos_, got);
  pos_ += got;
  offset_ += got;
  pending_data_ -= got;
  return got;
}

std::uint64_t TarReader::skip_entry_data(std::uint64_t n) {
  n = std::min(n, pending_data_);
  const std::uint64_t done = skip(n);
  pending_data_ -= done;
  if (done < n)
    throw InputError(label_ + ": truncated: the data of '" + pending_name_ + "' is cut short" +
                     kDamagedAdvice);
  return done;
}

std::size_t TarReader::read_entry_at(std::uint64_t offset, char* out, std::size_t n) {
  if (offset >= entry_size_) return 0;
  // A size no archive can hold (a hostile pax record) is data cut short,
  // not an offset that wraps to earlier bytes.
  if (entry_start_ > UINT64_MAX - entry_size_)
    throw InputError(label_ + ": truncated: the data of '" + pending_name_ + "' is cut short" +
                     kDamagedAdvice);
  n = static_cast<std::size_t>(std::min<std::uint64_t>(n, entry_size_ - offset));
  const std::size_t got = in_.read_at(entry_start_ + offset, out, n);
  if (got < n)
    throw InputError(label_ + ": truncated: the data of '" + pending_name_ + "' is cut short" +
                     kDamagedAdvice);
  return got;
}

std::string TarReader::read_entry_data() {
  std::string data;
  // The size is the header's claim: a hostile or truncated layer can claim
  // exabytes. Memory follows the bytes that actually arrive.
  data.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(pending_data_, 1u << 20)));
  stream_entry_data([&](const char* p, std::size_t n) { data.append(p, n); });
  return data;
}

std::string TarReader::read_entry_head(std::uint64_t n) {
  std::string data;
  n = std::min(n, pending_data_);
  data.reserve(static_cast<std::size_t>(n));
  while (data.size() < n) {
    const std::size_t got = next_data_chunk(
        static_cast<std::size_t>(std::min<std::uint64_t>(n - data.size(), buf_.size())));
    data.append(data_ + pos_, got);
    pos_ += got;
    offset_ += got;
    pending_data_ -= got;
  }
  return data;
}

bool TarReader::next(TarHeader& header) {
  if (pending_data_ + pending_padding_ > 0) {
    const std::uint64_t skipped = skip(pending_data_ + pending_padding_);
    if (skipped < pending_data_)
      throw InputError(label_ + ": truncated: the data of '" + pending_name_ + "' is cut short (" +
                       std::to_string(skipped) + " of " + std::to_string(pending_data_) +
                       " bytes)" + kDamagedAdvice);
    if (skipped < pending_data_ + pending_padding_) {
      ended_early_ = true;  // only the last entry's padding is missing
      pending_data_ = pending_padding_ = 0;
      return false;
    }
    pending_data_ = pending_padding_ = 0;
  }

  std::string long_path, long_link, pax_path, pax_link;
  std::uint64_t pax_size = 0;
  bool has_pax_size = false;
  for (;;) {
    const std::size_t have = fill(kBlock);
    if (have == 0) {
      ended_early_ = !first_;  // an empty blob is simply an empty layer
      return false;
    }
    if (have < kBlock) {
      if (first_) throw InputError(label_ + ": not a tar archive (too short)");
      // Zeros are what is left of the end-of-archive blocks; anything else
      // is a header cut in two, whose entry would be lost without a word.
      if (!all_zero(data_ + pos_, have))
        throw InputError(label_ + ": truncated inside a tar header at offset " +
                         std::to_string(offset_) + " (" + std::to_string(have) + " of 512 bytes)" +
                         kDamagedAdvice);
      ended_early_ = true;
      return false;
    }
    const char* h = data_ + pos_;
    if (all_zero(h, kBlock)) return false;  // end-of-archive marker
    if (!checksum_ok(h))
      throw InputError(label_ + (first_ ? ": not a tar archive (bad header checksum)"
                                        : ": corrupt tar header at offset " +
                                              std::to_string(offset_) + kDamagedAdvice));
    first_ = false;
    const char type = h[156] == '\0' ? '0' : h[156];
    std::uint64_t size = 0;
    if (!parse_number(h + 124, 12, size))
      throw InputError(label_ + ": corrupt size field at offset " + std::to_string(offset_) +
                       kDamagedAdvice);
    // Copied before the buffer moves on (reading pax data can refill it).
    const bool posix_ustar = std::memcmp(h + 257, "ustar\0", 6) == 0;
    if (posix_ustar && h[345] != '\0') {
      header.path.assign(field(h + 345, 155));
      header.path.push_back('/');
      header.path.append(field(h, 100));
    } else {
      header.path.assign(field(h, 100));
    }
    header.link.assign(field(h + 157, 100));
    pos_ += kBlock;
    offset_ += kBlock;

    switch (type) {
      case 'x':
        apply_pax(read_data(size, "pax"), pax_path, pax_link, pax_size, has_pax_size);
        continue;
      case 'g':
        (void)read_data(size, "pax global");
        continue;
      case 'L':
        long_path = read_data(size, "GNU long name");
        long_path.resize(strnlen(long_path.c_str(), long_path.size()));
        continue;
      case 'K':
        long_link = read_data(size, "GNU long link");
        long_link.resize(strnlen(long_link.c_str(), long_link.size()));
        continue;
      default:
        break;
    }
    if (!pax_path.empty())
      header.path = pax_path;
    else if (!long_path.empty())
      header.path = long_path;
    if (!pax_link.empty())
      header.link = pax_link;
    else if (!long_link.empty())
      header.link = long_link;
    header.type = type;
    if (has_pax_size) size = pax_size;
    // Links, directories and devices carry no data, whatever the size field
    // says; regular files (and old "contiguous" files) do.
    const bool has_data = type == '0' || type == '7' || type == 'S';
    header.size = has_data ? size : 0;
    pending_data_ = header.size;
    entry_start_ = offset_;
    entry_size_ = header.size;
    pending_padding_ = (kBlock - header.size % kBlock) % kBlock;
    pending_name_.assign(header.path);
    return true;
  }
}

}  // namespace imgsmith::detail
