// The probe's reader of CUDA binaries on disk: each ELF file's section
// headers, then its fatbin containers' headers, read at offsets (the
// layout and rules are fatbin_format.hpp's, which analyze's reader shares);
// and the inventory file's text. Apart from the check (kernel_check.cpp) so
// that a fuzz target can link it alone (tests/fuzz/fuzz_probe_kernels.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "kernel_check.hpp"

namespace probe {
namespace {

using imgsmith::KernelKind;
namespace fatbin = imgsmith::fatbin;

constexpr const char* kInventoryHeader = "# imgsmith-probe kernel inventory v1";
constexpr std::uint64_t kChunk = 1 << 20;
// Read with a container's or an entry's header: the small entries that
// follow come with it, the large payloads between are never read.
constexpr std::uint64_t kHeaderAhead = 4096;
// Real libraries have a few dozen sections; a table larger than this is a
// lie, not something to read.
constexpr std::uint64_t kMaxSectionTableBytes = 1 << 20;

std::uint64_t align8(std::uint64_t at) { return (at + 7) & ~std::uint64_t{7}; }

// A file read at offsets (pread: no mapping, so a file cut short while it is
// read is an error here, not a SIGBUS in the process that becomes the app).
class File {
 public:
  explicit File(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int fd() const { return fd_; }

  // The `n` bytes at `at`: a pointer valid until the next call, or null
  // when the file has fewer. Served from a window read `ahead` bytes at
  // least, so that the headers of a container's small entries, and the
  // next container a few bytes on, cost no system call each (cuBLASLt and
  // cuDNN hold tens of thousands of them).
  const char* bytes(std::uint64_t at, std::uint64_t n, std::uint64_t ahead = kHeaderAhead) {
    if (at >= start_ && n <= len_ && at - start_ <= len_ - n) return window_.data() + (at - start_);
    const std::uint64_t want = std::max(n, ahead);
    if (want > window_.size()) window_.resize(static_cast<std::size_t>(want));
    start_ = at;
    len_ = 0;
    while (len_ < want) {
      const ssize_t got = ::pread(fd_, window_.data() + len_, static_cast<std::size_t>(want - len_),
                                  static_cast<off_t>(at + len_));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      len_ += static_cast<std::uint64_t>(got);
    }
    return len_ >= n ? window_.data() : nullptr;
  }

  // What the window holds from `at` on: nothing when it does not hold `at`.
  std::string_view held(std::uint64_t at) const {
    if (at < start_ || at - start_ >= len_) return {};
    return std::string_view(window_.data() + (at - start_),
                            static_cast<std::size_t>(len_ - (at - start_)));
  }

  // The `n` bytes at `at`, copied into `buf`; false when the file has fewer.
  bool read(std::uint64_t at, std::uint64_t n, std::string& buf) {
    const char* p = bytes(at, n, 0);
    if (p == nullptr) return false;
    buf.assign(p, static_cast<std::size_t>(n));
    return true;
  }

 private:
  int fd_;
  std::vector<char> window_;
  std::uint64_t start_ = 0;  // the file offset of window_[0]
  std::uint64_t len_ = 0;    // bytes of window_ that hold the file's
};

using CodeMap = std::map<std::tuple<KernelKind, unsigned, char>, KernelCode>;

// The container at `at`, its entries added to `code`: its end, or `at`
// when there is no container there. A malformed entry ends the container.
std::uint64_t read_container(File& f, std::uint64_t at, std::uint64_t limit, CodeMap& code) {
  fatbin::ContainerHead c;
  const char* head =
      limit - at < fatbin::kContainerHeadBytes ? nullptr : f.bytes(at, fatbin::kContainerHeadBytes);
  if (head == nullptr || !fatbin::read_container_head(head, c) || c.entries > limit - at ||
      c.head > limit - at - c.entries)
    return at;
  const std::uint64_t end = at + c.head + c.entries;
  for (std::uint64_t e = at + c.head; e < end;) {
    const char* h =
        end - e < fatbin::kEntryHeadBytes ? nullptr : f.bytes(e, fatbin::kEntryHeadBytes);
    if (h == nullptr) break;
    const fatbin::EntryHead entry = fatbin::read_entry_head(h);
    if (!entry.valid || entry.head > end - e || entry.payload > end - e - entry.head) break;
    bool kernels = true;
    if (entry.kind == KernelKind::Sass && !entry.compressed && entry.payload >= 64 &&
        entry.payload <= fatbin::kModuleLookBytes)
      if (const char* cubin = f.bytes(e + entry.head, entry.payload))
        kernels = fatbin::cubin_has_kernel(
            std::string_view(cubin, static_cast<std::size_t>(entry.payload)));
    KernelCode& k = code[{entry.kind, entry.arch, entry.variant}];
    k.kind = entry.kind;
    k.arch = entry.arch;
    k.variant = entry.variant;
    k.version = std::max(k.version, entry.version);
    ++k.entries;
    k.bytes += entry.payload;
    if (!kernels) ++k.empty_entries;
    e += entry.head + entry.payload;
  }
  return end;
}

// The next 8-aligned fatbin magic in [from, end), or `end`. The search
// reads a little at first and more while it finds nothing: in cuFFT's
// .ldata the next of 24,000 containers is most often a few bytes on, and
// reading a whole chunk for each cost 1.7 s where this costs 0.1 s. Chunks
// are multiples of 8 long from an 8-aligned start, so an aligned magic
// never straddles two of them. What the window holds is searched before it
// reads on: a section whose failed candidates lie 8 bytes apart (hostile
// bytes) is read once, not once per candidate.
std::uint64_t next_magic(File& f, std::uint64_t from, std::uint64_t end) {
  std::uint64_t chunk = 4096;
  for (std::uint64_t at = align8(from); at < end;
       chunk = std::min<std::uint64_t>(chunk * 2, kChunk)) {
    std::uint64_t n = std::min(chunk, end - at);
    const std::string_view held = f.held(at);
    if (held.size() >= fatbin::kContainerHeadBytes)
      n = std::min<std::uint64_t>(end - at, held.size() & ~std::size_t{7});
    const char* p = f.bytes(at, n, n);
    if (p == nullptr) return end;
    if (const char* hit = fatbin::find_aligned_magic(p, static_cast<std::size_t>(n)))
      return at + static_cast<std::uint64_t>(hit - p);
    at += n;
  }
  return end;
}

// Every container in a section: in .nv_fatbin they follow one another and
// are read header to header; in .ldata (the medium code model's, as cuFFT
// has) other data lies between them, and the next is found by its magic.
void read_section(File& f, std::uint64_t begin, std::uint64_t end, CodeMap& code) {
  for (std::uint64_t at = align8(begin); at < end && end - at >= fatbin::kContainerHeadBytes;) {
    const std::uint64_t after = read_container(f, at, end, code);
    at = after != at ? align8(after) : next_magic(f, at + 8, end);
  }
}

std::string kind_letter(KernelKind k) {
  return k == KernelKind::Sass ? "s" : k == KernelKind::Ptx ? "p" : k == KernelKind::Ir ? "i" : "o";
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, char by) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(by, at), text.size());
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

std::optional<BinaryKernels> read_binary_kernels(const std::string& path) {
  File f(path);
  struct stat st;
  if (f.fd() < 0 || ::fstat(f.fd(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  std::string eh;
  // A 64-bit little-endian ELF file that is not itself a cubin.
  if (!f.read(0, 64, eh) ||
      eh.compare(0, 4,
                 "\x7f"
                 "ELF") != 0 ||
      eh[4] != 2 || eh[5] != 1 || fatbin::u16(eh.data() + 18) == fatbin::kElfMachineCuda)
    return std::nullopt;
  fatbin::SectionTable sections;
  if (!fatbin::read_section_table(eh.data(), size, kMaxSectionTableBytes, sections))
    return std::nullopt;
  std::string table, names;
  if (!f.read(sections.offset, sections.bytes(), table)) return std::nullopt;
  const fatbin::SectionHeader names_header =
      fatbin::read_section_header(table.data() + sections.names_index * sections.entry_size);
  if (names_header.offset > size ||
      names_header.size > std::min(size - names_header.offset, kMaxSectionTableBytes) ||
      !f.read(names_header.offset, names_header.size, names))
    return std::nullopt;
  CodeMap code;
  for (std::uint64_t i = 0; i < sections.count; ++i) {
    const fatbin::SectionHeader h =
        fatbin::read_section_header(table.data() + i * sections.entry_size);
    if (h.name >= names.size() || !fatbin::section_may_hold_containers(
                                      h.type, h.flags, std::string_view(names.c_str() + h.name)))
      continue;
    if (h.offset >= size || h.size == 0) continue;
    read_section(f, h.offset, h.offset + std::min(h.size, size - h.offset), code);
  }
  if (code.empty()) return std::nullopt;
  BinaryKernels b;
  b.path = path;
  b.size = size;
  b.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  for (auto& [key, c] : code) b.code.push_back(c);
  return b;
}

std::string inventory_text(const std::vector<BinaryKernels>& binaries) {
  std::string out = std::string(kInventoryHeader) + "\n";
  out +=
      "# path, size, mtime (ns), then each code as "
      "kind(s/p/i/o):arch:variant(-/a/f):version:entries:empty_entries:bytes\n";
  for (const auto& b : binaries) {
    if (b.path.find_first_of("\t\n") != std::string::npos) continue;
    out += b.path + "\t" + std::to_string(b.size) + "\t" + std::to_string(b.mtime_ns) + "\t";
    for (std::size_t i = 0; i < b.code.size(); ++i) {
      const KernelCode& c = b.code[i];
      out += (i ? "," : "") + kind_letter(c.kind) + ":" + std::to_string(c.arch) + ":" +
             (c.variant == ' ' ? '-' : c.variant) + ":" + std::to_string(c.version) + ":" +
             std::to_string(c.entries) + ":" + std::to_string(c.empty_entries) + ":" +
             std::to_string(c.bytes);
    }
    out += "\n";
  }
  return out;
}

bool parse_inventory(const std::string& text, std::vector<BinaryKernels>& out) {
  out.clear();
  const std::vector<std::string> lines = split_list(text, '\n');
  if (lines.empty() || lines[0] != kInventoryHeader) return false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i][0] == '#') continue;
    const std::vector<std::string> fields = split_list(lines[i], '\t');
    if (fields.size() != 4 || fields[0][0] != '/') return false;
    BinaryKernels b;
    b.path = fields[0];
    char* end = nullptr;
    b.size = std::strtoull(fields[1].c_str(), &end, 10);
    if (*end != '\0') return false;
    b.mtime_ns = std::strtoll(fields[2].c_str(), &end, 10);
    if (*end != '\0') return false;
    for (const auto& token : split_list(fields[3], ',')) {
      char kind = 0, variant = 0;
      unsigned arch = 0, version = 0;
      unsigned long long entries = 0, empty = 0, bytes = 0;
      int used = 0;
      if (std::sscanf(token.c_str(), "%c:%u:%c:%u:%llu:%llu:%llu%n", &kind, &arch, &variant,
                      &version, &entries, &empty, &bytes, &used) != 7 ||
          static_cast<std::size_t>(used) != token.size() || empty > entries ||
          std::strchr("spio", kind) == nullptr || std::strchr("-af", variant) == nullptr)
        return false;
      KernelCode c;
      c.kind = kind == 's'   ? KernelKind::Sass
               : kind == 'p' ? KernelKind::Ptx
               : kind == 'i' ? KernelKind::Ir
                             : KernelKind::Other;
      c.arch = arch;
      c.variant = variant == '-' ? ' ' : variant;
      c.version = version;
      c.entries = entries;
      c.empty_entries = empty;
      c.bytes = bytes;
      b.code.push_back(c);
    }
    out.push_back(std::move(b));
  }
  return true;
}

}  // namespace probe
