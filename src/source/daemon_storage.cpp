// An image read in place from the Docker daemon's overlay2 storage: each
// layer is a directory of files (overlay2's <id>/diff), and most layers also
// have the exact tar stream they were made from recorded as tar-split
// metadata (headers and padding, without file data). src/registry finds both
// through the Engine API; this file reads them.
//
// With tar-split the layer is the very tar `docker save` would send: its
// headers come from the record, each file's data from the diff directory
// (read only where the analysis wants content). Figures are therefore the
// same as through `docker save`, entry for entry. A layer without tar-split
// is walked the way the daemon turns a diff directory into a tar: names in
// byte order, depth first, 0/0 character devices as `.wh.NAME` whiteouts, a
// directory with the overlay "opaque" attribute followed by its
// `.wh..wh..opq` marker, the first name of a hard-linked inode as the file
// and later names as links to it. docs/docker-engine.md ("What the in-place
// reader relies on") lists the daemon's conventions this depends on.
//
// A record's names are the layer tar's, which whoever made the image chose:
// each file is opened beneath its layer directory through no symbolic link
// (open_beneath), so that a layer holding `lnk -> /etc` and a file
// `lnk/hostname` cannot make imgsmith read the host's /etc/hostname.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_set>

#include "archive_reader.hpp"
#include "imgsmith/source/blob_store.hpp"
#include "imgsmith/source/file_io.hpp"
#include "imgsmith/util/crc64.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

constexpr const char* kManifest = "manifest.json";
constexpr const char* kConfig = "config.json";
constexpr const char* kLayerPrefix = "layers/";

// A file descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads all of `size` bytes of an open file from `offset`, or throws:
// a layer whose files changed size under the reader is not what the
// daemon recorded.
void read_exact(int fd, char* buf, std::size_t size, std::uint64_t offset,
                const std::string& what) {
  const ssize_t n = pread_full(fd, buf, size, offset);
  if (n < 0 || static_cast<std::size_t>(n) < size)
    throw InputError(what + ": " +
                     (n < 0 ? std::strerror(errno) : "shorter than the layer records") +
                     "; the image changed while it was read, or the daemon's storage is damaged");
}

// Whether a record may name this file: a relative path without a ".."
// component. "./" and doubled slashes are harmless (tars made with
// `tar -C DIR -c .` start every name with "./"); "a..b" is a name like any.
bool plain_name(std::string_view name) {
  if (name.empty() || name.front() == '/') return false;
  for (std::size_t start = 0; start <= name.size();) {
    const std::size_t end = std::min(name.find('/', start), name.size());
    if (name.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

// Whether this process may read trusted.* extended attributes, which takes
// CAP_SYS_ADMIN (bit 21 of the effective set); without it they read as
// absent, silently.
//
// The capability must be held in the initial user namespace: inside
// another (rootless Docker, `podman unshare`, a user-namespaced container)
// CapEff shows CAP_SYS_ADMIN, yet the kernel still hides trusted.* from
// the process. The initial namespace maps every uid to itself:
// /proc/self/uid_map is the one line "0 0 4294967295".
bool in_initial_user_namespace() {
  std::error_code error;
  const std::string map = read_small_file("/proc/self/uid_map", 1 << 16, error);
  if (error) return false;
  unsigned long long inside = 1, outside = 1, count = 0;
  char rest = 0;
  return std::sscanf(map.c_str(), " %llu %llu %llu %c", &inside, &outside, &count, &rest) == 3 &&
         inside == 0 && outside == 0 && count == 4294967295ULL;
}

bool may_read_trusted_xattrs() {
  std::error_code error;
  const std::string status = read_small_file("/proc/self/status", 1 << 20, error);
  const auto at = status.find("\nCapEff:");
  if (error || at == std::string::npos) return false;
  const std::uint64_t effective = std::strtoull(status.c_str() + at + 8, nullptr, 16);
  return ((effective >> 21) & 1U) != 0 && in_initial_user_namespace();
}

// ----- tar-split: the layer's tar, rebuilt ------------------------------------

// The tar stream a tar-split record describes: its segments (headers,
// padding) in order, with each file's data read from the diff directory
// when the reader asks for it, and skipped without opening the file when not.
class TarSplitStream final : public ByteStream {
 public:
  TarSplitStream(const std::string& record, std::string diff_dir, std::string label)
      : file_(std::make_shared<SharedFile>(record)),
        raw_(file_, 0, file_->size()),
        json_(raw_, record),
        record_(record),
        diff_dir_(std::move(diff_dir)),
        diff_fd_(::open(diff_dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)),
        label_(std::move(label)) {
    if (diff_fd_.get() < 0)
      throw InputError(label_ + ": cannot open the layer directory " + diff_dir_ + ": " +
                       std::strerror(errno));
  }

  std::size_t read(void* buf, std::size_t size) override {
    auto* out = static_cast<char*>(buf);
    while (segment_pos_ == segment_.size() && file_left_ == 0)
      if (!next_record()) return 0;
    if (segment_pos_ < segment_.size()) {
      const std::size_t n = std::min(size, segment_.size() - segment_pos_);
      std::memcpy(out, segment_.data() + segment_pos_, n);
      segment_pos_ += n;
      produced_ += n;
      return n;
    }
    if (file_fd_.get() < 0) open_file_data();
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, file_left_));
    read_exact(file_fd_.get(), out, n, file_offset_, label_ + ": '" + visible(file_name_) + "'");
    // The checksum covers the file only when it is read whole, in order.
    if (crc_from_ == file_offset_) {
      crc_.update(out, n);
      crc_from_ += n;
    }
    file_offset_ += n;
    file_left_ -= n;
    produced_ += n;
    content_read_ += n;
    if (file_left_ == 0 && crc_expected_ && crc_from_ == file_offset_ &&
        crc_.value() != *crc_expected_)
      throw changed("its content does not match the CRC-64 its record keeps");
    return n;
  }

  // File data is skipped without being read; headers never are.
  std::uint64_t skip(std::uint64_t size) override {
    if (segment_pos_ < segment_.size() || file_left_ == 0) return 0;
    const std::uint64_t n = std::min(size, file_left_);
    file_offset_ += n;
    file_left_ -= n;
    produced_ += n;
    return n;  // the skipped bytes leave the checksum unchecked (crc_from_ falls behind)
  }

  std::uint64_t produced() const { return produced_; }
  std::uint64_t bytes_read() const { return file_->bytes_read() + content_read_; }

  // Reads the whole record without file data, and checks that the directory
  // of each file it would read can be reached: throws StorageUnreadable
  // where a symbolic link is on the way, before anything is analysed.
  void check() {
    std::unordered_set<std::string> reached;
    while (next_record(false)) {
      const std::size_t slash = file_name_.rfind('/');
      if (file_left_ == 0 || slash == std::string::npos) continue;
      const std::string dir = file_name_.substr(0, slash);
      if (reached.insert(dir).second) open_entry(dir, O_PATH | O_DIRECTORY);
    }
  }

 private:
  // The file (or directory) a record names, opened beneath the layer
  // directory through no symbolic link.
  Fd open_entry(const std::string& name, int flags) const {
    Fd fd(open_beneath(diff_fd_.get(), name, flags));
    if (fd.get() >= 0) return fd;
    const int err = errno;
    if (err == ELOOP || err == EXDEV)
      throw StorageUnreadable(
          label_ + ": '" + visible(name) + "' in " + diff_dir_ +
          " lies beyond a symbolic link (or is one), which imgsmith never follows in a layer "
          "directory: the layer's files do not match its record; read the image with "
          "--docker-read save");
    throw InputError(label_ + ": '" + visible(name) + "' in " + diff_dir_ + ": " +
                     std::strerror(err) +
                     "; the image changed while it was read, or the daemon's storage is damaged");
  }

  // A file's data is about to be read: the file in the layer directory
  // must be the one the record describes, as big as its tar header says.
  // A file of another size means the layer changed since the record was
  // written (or while it is read); reading it would shift every later
  // entry of the rebuilt tar.
  void open_file_data() {
    file_fd_ = open_entry(file_name_, O_RDONLY);
    struct stat st {};
    if (::fstat(file_fd_.get(), &st) != 0)
      throw InputError(label_ + ": '" + visible(file_name_) + "': " + std::strerror(errno));
    if (static_cast<std::uint64_t>(st.st_size) != file_offset_ + file_left_)
      throw changed("it is " + std::to_string(st.st_size) + " bytes and its record says " +
                    std::to_string(file_offset_ + file_left_));
  }

  InputError changed(const std::string& why) const {
    return InputError(label_ + ": '" + visible(file_name_) + "' in " + diff_dir_ + ": " + why +
                      "; the image changed while it was read, or the daemon's storage is "
                      "damaged: read it with --docker-read save");
  }

  // Takes the next record line; false at the end of the record. Without
  // `segments`, a segment's bytes are not decoded: tar-split writes its
  // lines as {"type":2,"payload":...}, so those are passed over unparsed.
  bool next_record(bool segments = true) {
    std::string line;
    if (!next_line(line)) return false;
    if (!segments && line.starts_with("{\"type\":2,")) {
      file_left_ = 0;
      return true;
    }
    nlohmann::json entry;
    try {
      entry = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      throw damaged("a line is not JSON");
    }
    if (!entry.is_object() || !entry.contains("type") || !entry["type"].is_number_integer())
      throw damaged("a line has no type");
    const int type = entry["type"].get<int>();
    try {
      if (type == 2) {  // a segment: raw tar bytes
        const auto p = entry.find("payload");
        segment_ = p != entry.end() && p->is_string() ? base64_decode(p->get<std::string>())
                                                      : std::string();
        segment_pos_ = 0;
      } else if (type == 1) {                     // a file's data, by name and size
        const auto raw = entry.find("name_raw");  // names that are not UTF-8
        if (raw != entry.end() && raw->is_string())
          file_name_ = base64_decode(raw->get<std::string>());
        else if (const auto n = entry.find("name"); n != entry.end() && n->is_string())
          file_name_ = n->get<std::string>();
        else
          throw damaged("a file entry has no name");
        const auto s = entry.find("size");
        file_left_ = s != entry.end() && s->is_number_unsigned() ? s->get<std::uint64_t>() : 0;
        file_offset_ = 0;
        file_fd_ = Fd();
        // tar-split keeps the file's CRC-64 (Go's crc64.ISO) as 8 bytes,
        // big-endian, base64 in the JSON: checked when the file is read whole.
        crc_ = Crc64Iso();
        crc_from_ = 0;
        crc_expected_.reset();
        if (const auto p = entry.find("payload"); segments && p != entry.end() && p->is_string()) {
          const std::string sum = base64_decode(p->get<std::string>());
          if (sum.size() != 8) throw damaged("a file's checksum is not 8 bytes");
          std::uint64_t value = 0;
          for (const char c : sum) value = (value << 8) | static_cast<unsigned char>(c);
          crc_expected_ = value;
        }
        if (file_left_ > 0 && !plain_name(file_name_))
          throw damaged("a file entry names '" + visible(file_name_) + "'");
      } else {
        throw damaged("unknown entry type " + std::to_string(type));
      }
    } catch (const std::invalid_argument&) {
      throw damaged("a payload is not base64");
    }
    return true;
  }

  bool next_line(std::string& line) {
    for (;;) {
      const auto nl = std::find(buffer_.begin() + static_cast<std::ptrdiff_t>(buffer_pos_),
                                buffer_.end(), '\n');
      if (nl != buffer_.end()) {
        line.assign(buffer_.begin() + static_cast<std::ptrdiff_t>(buffer_pos_), nl);
        buffer_pos_ = static_cast<std::size_t>(nl - buffer_.begin()) + 1;
        if (line.empty()) continue;
        return true;
      }
      buffer_.erase(0, buffer_pos_);
      buffer_pos_ = 0;
      char chunk[1 << 16];
      const std::size_t n = json_.read(chunk, sizeof chunk);
      if (n == 0) {
        if (buffer_.empty()) return false;
        line.swap(buffer_);
        buffer_.clear();
        return true;
      }
      buffer_.append(chunk, n);
    }
  }

  InputError damaged(const std::string& why) const {
    return InputError(label_ + ": the daemon's tar-split record " + record_ + " is damaged (" +
                      why + "); read the image with --docker-read save");
  }

  std::shared_ptr<SharedFile> file_;
  FileRangeStream raw_;
  DecompressingStream json_;
  std::string record_;
  std::string diff_dir_;
  Fd diff_fd_;
  std::string label_;
  std::string buffer_;
  std::size_t buffer_pos_ = 0;
  std::string segment_;
  std::size_t segment_pos_ = 0;
  std::string file_name_;
  std::uint64_t file_left_ = 0;
  std::uint64_t file_offset_ = 0;
  Fd file_fd_;
  Crc64Iso crc_;
  std::uint64_t crc_from_ = 0;  // the checksum covers [0, crc_from_) of the file
  std::optional<std::uint64_t> crc_expected_;
  std::uint64_t produced_ = 0;
  std::uint64_t content_read_ = 0;
};

// ----- walking a diff directory ------------------------------------------------

// A regular file in a diff directory, read only if the analysis asks.
class DiskFileContent final : public EntryContent {
 public:
  DiskFileContent(int dir_fd, const std::string& name, std::uint64_t size, std::string what,
                  std::uint64_t& bytes_read)
      : dir_fd_(dir_fd),
        name_(name),
        size_(size),
        what_(std::move(what)),
        bytes_read_(bytes_read) {}
  std::string read_all() override { return read_head(size_); }
  std::string read_head(std::uint64_t bytes) override {
    std::string out(static_cast<std::size_t>(std::min(bytes, size_)), '\0');
    read_exact(open(), out.data(), out.size(), 0, what_);
    bytes_read_ += out.size();
    return out;
  }
  void stream(const std::function<void(const char*, std::size_t)>& chunk) override {
    std::vector<char> buf(1 << 20);
    for (std::uint64_t offset = 0; offset < size_;) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size_ - offset));
      read_exact(open(), buf.data(), n, offset, what_);
      chunk(buf.data(), n);
      offset += n;
      bytes_read_ += n;
    }
  }
  std::size_t read_some(char* out, std::size_t n) override {
    n = static_cast<std::size_t>(std::min<std::uint64_t>(n, size_ - position_));
    if (n == 0) return 0;
    read_exact(open(), out, n, position_, what_);
    position_ += n;
    bytes_read_ += n;
    return n;
  }
  std::uint64_t skip_some(std::uint64_t n) override {
    n = std::min(n, size_ - position_);
    position_ += n;
    return n;
  }
  bool reads_at() const override { return true; }
  std::size_t read_at(std::uint64_t offset, char* out, std::size_t n) override {
    if (offset >= size_) return 0;
    n = static_cast<std::size_t>(std::min<std::uint64_t>(n, size_ - offset));
    read_exact(open(), out, n, offset, what_);
    bytes_read_ += n;
    return n;
  }

 private:
  int open() {
    if (fd_.get() < 0) {
      fd_ = Fd(::openat(dir_fd_, name_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      if (fd_.get() < 0) {
        const int err = errno;
        struct stat dir {};
        // Gone with its directory: the layer was removed during the read.
        if (err == ENOENT && ::fstat(dir_fd_, &dir) == 0 && dir.st_nlink == 0)
          throw InputError(what_ +
                           ": the layer was removed while it was read (the image was "
                           "deleted or pruned meanwhile); analyze the image again, or "
                           "read it with --docker-read save");
        throw InputError(what_ + ": " + std::strerror(err) +
                         (err == ENOENT ? "; it was removed while the layer was read: analyze "
                                          "the image again, or read it with --docker-read save"
                                        : ""));
      }
    }
    return fd_.get();
  }
  int dir_fd_;
  const std::string& name_;
  std::uint64_t size_;
  std::string what_;
  std::uint64_t& bytes_read_;
  std::uint64_t position_ = 0;  // where read_some and skip_some have got to
  Fd fd_;
};

class DiffWalk {
 public:
  DiffWalk(std::string dir, std::string label, const char* opaque_xattr, const CaptureFn& capture,
           const CaptureFn& hash, const EntrySink& sink, LayerScan& scan)
      : dir_(std::move(dir)),
        label_(std::move(label)),
        opaque_xattr_(opaque_xattr),
        capture_(capture),
        hash_(hash),
        sink_(sink),
        scan_(scan) {}

  void run() {
    Fd root(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (root.get() < 0)
      throw InputError(label_ + ": cannot open the layer directory " + dir_ + ": " +
                       std::strerror(errno));
    walk(root.get(), "", 0);
    check_still_there(root.get(), "");
    deliver();
  }
  std::uint64_t bytes_read() const { return bytes_read_; }

 private:
  static constexpr std::size_t kSinkBatch = 4096;
  static constexpr int kMaxDepth = 1000;

  void walk(int dir_fd, const std::string& prefix, int depth) {
    if (depth > kMaxDepth)
      throw InputError(label_ + ": '" + visible(prefix.substr(0, 80)) + "...' nests deeper than " +
                       std::to_string(kMaxDepth) + " directories");
    std::vector<std::string> names;
    {
      const int copy = ::dup(dir_fd);
      DIR* d = copy >= 0 ? ::fdopendir(copy) : nullptr;
      if (d == nullptr) {
        if (copy >= 0) ::close(copy);
        throw InputError(label_ + ": cannot list " + dir_ + "/" + visible(prefix) + ": " +
                         std::strerror(errno));
      }
      // readdir says an error only through errno, beside the end's null.
      errno = 0;
      while (const dirent* e = ::readdir(d)) {
        const std::string_view n = e->d_name;
        if (n != "." && n != "..") names.emplace_back(n);
        errno = 0;
      }
      const int listing_error = errno;
      ::closedir(d);
      if (listing_error != 0)
        throw InputError(label_ + ": cannot list " + dir_ + "/" + visible(prefix) + ": " +
                         std::strerror(listing_error));
      check_still_there(dir_fd, prefix);
    }
    std::sort(names.begin(), names.end());  // bytewise, as the daemon's walk
    for (const std::string& name : names) {
      const std::string path = prefix + name;
      struct stat st {};
      if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        entry_error(dir_fd, prefix, path, errno);
      TarEntry entry;
      if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 0 && minor(st.st_rdev) == 0) {
        entry.path = scan_.text.store(prefix + ".wh." + name);  // overlay's whiteout
        entry.type = EntryType::File;
        add(entry);
      } else if (S_ISDIR(st.st_mode)) {
        Fd sub(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (sub.get() < 0) entry_error(dir_fd, prefix, path, errno);
        entry.path = scan_.text.store(path);
        entry.type = EntryType::Dir;
        add(entry);
        if (opaque(sub.get())) {
          TarEntry marker;
          marker.path = scan_.text.store(path + "/.wh..wh..opq");
          marker.type = EntryType::File;
          add(marker);
        }
        walk(sub.get(), path + "/", depth + 1);
      } else if (S_ISREG(st.st_mode)) {
        entry.path = scan_.text.store(path);
        if (st.st_nlink > 1) {
          const auto [it, first] = inodes_.emplace(std::make_pair(st.st_dev, st.st_ino), path);
          if (!first) {
            entry.type = EntryType::Hardlink;
            entry.link = scan_.text.store(it->second);
            add(entry);
            continue;
          }
        }
        entry.type = EntryType::File;
        entry.size = static_cast<std::uint64_t>(st.st_size);
        DiskFileContent content(dir_fd, name, entry.size,
                                label_ + ": " + dir_ + "/" + visible(path), bytes_read_);
        keep_content(scan_, entry.path, entry.size, capture_, hash_, content);
        add(entry);
      } else if (S_ISLNK(st.st_mode)) {
        std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096), '\0');
        const ssize_t n = ::readlinkat(dir_fd, name.c_str(), target.data(), target.size());
        if (n < 0)
          throw InputError(label_ + ": " + dir_ + "/" + visible(path) + ": " +
                           std::strerror(errno));
        target.resize(static_cast<std::size_t>(n));
        entry.path = scan_.text.store(path);
        entry.link = scan_.text.store(target);
        entry.type = EntryType::Symlink;
        keep_link(scan_, entry.path, entry.link, capture_);
        add(entry);
      } else if (!S_ISSOCK(st.st_mode)) {  // sockets never go into a layer tar
        entry.path = scan_.text.store(path);
        entry.type = EntryType::Other;
        add(entry);
      }
    }
  }

  // An entry listed a moment ago that cannot be reached now: its directory
  // was removed (said so), or the entry alone was.
  [[noreturn]] void entry_error(int dir_fd, const std::string& prefix, const std::string& path,
                                int err) const {
    check_still_there(dir_fd, prefix);
    throw InputError(label_ + ": " + dir_ + "/" + visible(path) + ": " + std::strerror(err) +
                     (err == ENOENT ? "; it was removed while the layer was read: analyze the "
                                      "image again, or read it with --docker-read save"
                                    : ""));
  }

  // A directory removed while it is open lists as empty, without an error:
  // its link count, 0 once it is gone, is what tells (the daemon deleted
  // or pruned the image during the walk).
  void check_still_there(int dir_fd, const std::string& prefix) const {
    struct stat st {};
    if (::fstat(dir_fd, &st) != 0)
      throw InputError(label_ + ": " + dir_ + "/" + visible(prefix) + ": " + std::strerror(errno));
    if (st.st_nlink == 0)
      throw InputError(label_ + ": " + dir_ + "/" + visible(prefix) +
                       " was removed while it was read (the image was deleted or pruned "
                       "meanwhile); analyze the image again, or read it with --docker-read save");
  }

  // overlay2 marks a directory that hides everything below it with one
  // attribute (opaque_xattr_); the other may be the image's own.
  bool opaque(int fd) const {
    char value[4] = {};
    return ::fgetxattr(fd, opaque_xattr_, value, sizeof value) == 1 && value[0] == 'y';
  }

  void add(const TarEntry& entry) {
    scan_.content_bytes += entry.size;
    scan_.add(entry);
    if (sink_ && scan_.entries.size() - delivered_ >= kSinkBatch) deliver();
  }
  void deliver() {
    if (!sink_ || scan_.entries.size() == delivered_) return;
    sink_(std::span<const TarEntry>(scan_.entries).subspan(delivered_));
    delivered_ = scan_.entries.size();
    if (sink_.takes_entries()) {
      // The sink has copied what it needs: the batch and its text go, as
      // scan_layer() lets them (a first layer of millions is never held).
      scan_.entries_taken += scan_.entries.size();
      scan_.entries.clear();
      scan_.text.reset();
      delivered_ = 0;
    }
  }

  std::string dir_;
  std::string label_;
  const char* opaque_xattr_;
  const CaptureFn& capture_;
  const CaptureFn& hash_;
  const EntrySink& sink_;
  LayerScan& scan_;
  std::size_t delivered_ = 0;
  // The first path of each file with several links: its own copy, as the
  // scan's text may go with a batch.
  std::map<std::pair<dev_t, ino_t>, std::string> inodes_;
  std::uint64_t bytes_read_ = 0;
};

// ----- the store -------------------------------------------------------------

class DaemonStorageStore final : public BlobStore {
 public:
  DaemonStorageStore(DaemonStorageImage image, CaptureFn capture, bool check_first)
      : image_(std::move(image)), capture_(std::move(capture)) {
    const bool walked = std::any_of(image_.layers.begin(), image_.layers.end(),
                                    [](const auto& l) { return l.tar_split.empty(); });
    // A rootful daemon's opaque marks are trusted.* attributes, which read
    // as absent without CAP_SYS_ADMIN: a walk would miss every opaque
    // directory and give wrong figures without a word.
    if (walked && !image_.rootless && !may_read_trusted_xattrs())
      throw StorageUnreadable(
          "walking the layer directories needs CAP_SYS_ADMIN, without which overlay2's "
          "opaque-directory marks (trusted.overlay.opaque) read as absent (run as root)");
    if (check_first)
      for (std::size_t i = 0; i < image_.layers.size(); ++i)
        if (!image_.layers[i].tar_split.empty())
          TarSplitStream(image_.layers[i].tar_split, image_.layers[i].diff_dir, layer_label(i))
              .check();
    nlohmann::json layers = nlohmann::json::array();
    for (std::size_t i = 0; i < image_.layers.size(); ++i)
      layers.push_back(kLayerPrefix + std::to_string(i));
    manifest_ = nlohmann::json::array(
                    {{{"Config", kConfig}, {"RepoTags", image_.tags}, {"Layers", layers}}})
                    .dump();
  }

  const std::string& name() const override { return image_.label; }
  std::string kind() const override {
    const bool all_split = std::all_of(image_.layers.begin(), image_.layers.end(),
                                       [](const auto& l) { return !l.tar_split.empty(); });
    return all_split ? "docker storage (overlay2, tar-split)" : "docker storage (overlay2, walked)";
  }
  std::string verified() const override {
    return "each file read against its size and CRC-64 in the daemon's tar-split record; each "
           "walked directory still there once listed";
  }
  bool contains(const std::string& path) const override {
    return path == kManifest || path == kConfig || layer_index(path).has_value();
  }
  std::optional<std::uint64_t> size_of(const std::string& path) const override {
    if (path == kManifest) return manifest_.size();
    if (path == kConfig) return image_.config.size();
    return std::nullopt;  // a layer's too: it is rebuilt as it is read, not stored
  }
  std::string read_text(const std::string& path, std::uint64_t limit) const override {
    const std::string* text = path == kManifest ? &manifest_
                              : path == kConfig ? &image_.config
                                                : nullptr;
    if (text == nullptr)
      throw InputError(image_.label + ": no document '" + path + "' in the daemon's storage");
    if (text->size() > limit)
      throw InputError(image_.label + ": '" + path + "' is too large for a JSON document");
    return *text;
  }
  std::shared_ptr<const LayerScan> scan_layer(const std::string& path, const CaptureFn& hash,
                                              const EntrySink& sink) const override {
    const auto index = layer_index(path);
    if (!index)
      throw InputError(image_.label + ": no layer '" + path + "' in the daemon's storage");
    const DaemonStorageLayer& layer = image_.layers[*index];
    const std::string label = layer_label(*index);
    if (!layer.tar_split.empty()) {
      TarSplitStream tar(layer.tar_split, layer.diff_dir, label);
      auto scan =
          std::make_shared<LayerScan>(imgsmith::scan_layer(tar, 0, label, capture_, hash, sink));
      scan->blob_bytes = tar.produced();
      bytes_read_ += tar.bytes_read();
      return scan;
    }
    auto scan = std::make_shared<LayerScan>();
    DiffWalk walk(layer.diff_dir, label,
                  image_.rootless ? "user.overlay.opaque" : "trusted.overlay.opaque", capture_,
                  hash, sink, *scan);
    walk.run();
    bytes_read_ += walk.bytes_read();
    return scan;
  }
  bool parallel_scans() const override { return true; }
  std::uint64_t bytes_read() const override { return bytes_read_.load(); }

 private:
  std::string layer_label(std::size_t i) const {
    return image_.label + ": layer " + std::to_string(i) + " (" + image_.layers[i].diff_dir + ")";
  }
  std::optional<std::size_t> layer_index(const std::string& path) const {
    if (path.rfind(kLayerPrefix, 0) != 0) return std::nullopt;
    const std::string digits = path.substr(std::strlen(kLayerPrefix));
    if (digits.empty() || digits.size() > 6 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    const std::size_t i = std::stoul(digits);
    if (i >= image_.layers.size()) return std::nullopt;
    return i;
  }

  DaemonStorageImage image_;
  CaptureFn capture_;
  std::string manifest_;
  mutable std::atomic<std::uint64_t> bytes_read_{0};
};

}  // namespace

std::unique_ptr<BlobStore> open_daemon_storage(DaemonStorageImage image, const CaptureFn& capture,
                                               bool check_first) {
  return std::make_unique<DaemonStorageStore>(std::move(image), capture, check_first);
}

}  // namespace imgsmith
