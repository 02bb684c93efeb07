#include "archive_reader.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

#include "imgsmith/util/error.hpp"

namespace imgsmith::detail {
namespace {

// Small enough that seeking past a large file costs one short read, large
// enough that runs of small files are read sequentially from the buffer.
constexpr std::size_t kReadBlock = 32 * 1024;

}  // namespace

ArchiveReader::ArchiveReader(ByteStream& in, std::string label, bool allow_filters)
    : in_(in), label_(std::move(label)), buffer_(kReadBlock) {
  a_ = libarchive().read_new();
  if (a_ == nullptr) throw InputError(label_ + ": out of memory");
  if (allow_filters) {
    libarchive().read_support_filter_gzip(a_);
    libarchive().read_support_filter_zstd(a_);
    libarchive().read_support_filter_xz(a_);
    libarchive().read_support_filter_bzip2(a_);
  }
  libarchive().read_support_format_tar(a_);
  libarchive().read_support_format_gnutar(a_);
  // A zero-byte layer is a valid empty layer.
  libarchive().read_support_format_empty(a_);
  open();
}

ArchiveReader::ArchiveReader(ByteStream& in, std::string label, RawTag)
    : in_(in), label_(std::move(label)), buffer_(kReadBlock) {
  a_ = libarchive().read_new();
  if (a_ == nullptr) throw InputError(label_ + ": out of memory");
  libarchive().read_support_filter_gzip(a_);
  libarchive().read_support_filter_zstd(a_);
  libarchive().read_support_filter_xz(a_);
  libarchive().read_support_filter_bzip2(a_);
  libarchive().read_support_format_raw(a_);
  open();
}

void ArchiveReader::open() {
  libarchive().read_set_read_callback(a_, &ArchiveReader::on_read);
  libarchive().read_set_skip_callback(a_, &ArchiveReader::on_skip);
  libarchive().read_set_callback_data(a_, this);
  if (libarchive().read_open1(a_) != ARCHIVE_OK) {
    const std::string why =
        libarchive().error_string(a_) ? libarchive().error_string(a_) : "unreadable";
    libarchive().read_free(a_);
    a_ = nullptr;
    throw InputError(label_ + ": " + why);
  }
}

ArchiveReader::~ArchiveReader() {
  if (a_ != nullptr) libarchive().read_free(a_);
}

la_ssize_t ArchiveReader::on_read(archive* a, void* self, const void** buf) {
  auto* r = static_cast<ArchiveReader*>(self);
  try {
    *buf = r->buffer_.data();
    return static_cast<la_ssize_t>(r->in_.read(r->buffer_.data(), r->buffer_.size()));
  } catch (const std::exception& e) {
    libarchive().set_error(a, EIO, "%s", e.what());
    return -1;
  }
}

la_int64_t ArchiveReader::on_skip(archive* a, void* self, la_int64_t request) {
  auto* r = static_cast<ArchiveReader*>(self);
  try {
    return static_cast<la_int64_t>(r->in_.skip(static_cast<std::uint64_t>(request)));
  } catch (const std::exception& e) {
    libarchive().set_error(a, EIO, "%s", e.what());
    return -1;
  }
}

void ArchiveReader::fail(const std::string& what) const {
  const char* why = libarchive().error_string(a_);
  throw InputError(label_ + ": " + what + (why ? std::string(": ") + why : std::string()));
}

archive_entry* ArchiveReader::next(bool tolerate_truncation) {
  archive_entry* entry = nullptr;
  const int rc = libarchive().read_next_header(a_, &entry);
  if (rc == ARCHIVE_EOF) return nullptr;
  if (rc == ARCHIVE_OK || rc == ARCHIVE_WARN) return entry;
  const char* why = libarchive().error_string(a_);
  const bool truncation = why != nullptr && (std::strstr(why, "runcated") != nullptr ||
                                             std::strstr(why, "premature end") != nullptr);
  if (truncation && tolerate_truncation) {
    truncated_ = true;
    return nullptr;
  }
  if (truncation) fail("truncated: the archive ends before its last entry is complete");
  fail("corrupt or not a tar archive");
}

bool ArchiveReader::skip_data(const std::string& entry_name, std::uint64_t entry_size) {
  if (libarchive().read_data_skip(a_) == ARCHIVE_OK) return true;
  // libarchive skips data and padding in one request and reports
  // "needed N bytes, only M available" when the input ends first.
  const char* why = libarchive().error_string(a_);
  long long needed = 0, available = 0;
  const char* numbers = why != nullptr ? std::strstr(why, "needed ") : nullptr;
  if (numbers != nullptr &&
      std::sscanf(numbers, "needed %lld bytes, only %lld available", &needed, &available) == 2) {
    const std::uint64_t padding = (512 - entry_size % 512) % 512;
    if (needed >= available && static_cast<std::uint64_t>(needed - available) <= padding) {
      truncated_ = true;
      return false;
    }
  }
  fail("cannot read the data of '" + entry_name + "' (truncated or corrupt)");
}

std::size_t ArchiveReader::read_some(void* buf, std::size_t size, const std::string& entry_name) {
  const la_ssize_t n = libarchive().read_data(a_, buf, size);
  if (n < 0) fail("cannot read the data of '" + entry_name + "' (truncated or corrupt)");
  return static_cast<std::size_t>(n);
}

std::string ArchiveReader::read_data(const std::string& entry_name, std::size_t limit) {
  std::string out;
  char chunk[16384];
  for (;;) {
    const std::size_t n = read_some(chunk, sizeof chunk, entry_name);
    if (n == 0) break;
    if (out.size() + n > limit)
      throw InputError(label_ + ": '" + entry_name + "' is larger than expected (" +
                       std::to_string(limit) + " bytes at most)");
    out.append(chunk, n);
  }
  return out;
}

std::uint64_t ArchiveReader::raw_position() const {
  return static_cast<std::uint64_t>(libarchive().filter_bytes(a_, 0));
}

Compression ArchiveReader::compression() const {
  // Filter 0 is the decoder next to the tar format; with one compression
  // layer (the only kind images use) it names how the blob is stored.
  switch (libarchive().filter_code(a_, 0)) {
    case ARCHIVE_FILTER_NONE:
      return Compression::None;
    case ARCHIVE_FILTER_GZIP:
      return Compression::Gzip;
    case ARCHIVE_FILTER_ZSTD:
      return Compression::Zstd;
    default:
      return Compression::Other;
  }
}

}  // namespace imgsmith::detail

namespace imgsmith {

struct DecompressingStream::Impl {
  Impl(ByteStream& in, const std::string& label)
      : reader(in, label, detail::ArchiveReader::RawTag{}), name(label) {
    if (reader.next(/*tolerate_truncation=*/false) == nullptr)
      throw InputError(label + ": empty compressed stream");
  }
  detail::ArchiveReader reader;
  std::string name;
};

DecompressingStream::DecompressingStream(ByteStream& in, const std::string& label)
    : impl_(std::make_unique<Impl>(in, label)) {}
DecompressingStream::~DecompressingStream() = default;

std::size_t DecompressingStream::read(void* buf, std::size_t size) {
  return impl_->reader.read_some(buf, size, "compressed data");
}

Compression DecompressingStream::compression() const { return impl_->reader.compression(); }

}  // namespace imgsmith
