// Reading a CUDA binary's fatbin entries. From a stream (a compressed
// layer goes by once), the reader cannot seek back to the section headers
// at the end of an ELF file. It reads the program headers at the front
// instead, steps to each loadable segment, and finds the fatbin containers
// in them by their magic at 8-byte aligned offsets (.nv_fatbin is
// 8-aligned, and every container's size is a multiple of 8), each checked
// whole before it counts. Every loadable segment, not only the read-only
// ones: a library built with the medium or large code model keeps its
// fatbins in .ldata, a writable segment (cuFFT 12: 24,000 containers,
// 266 MB, beside a 656-byte .nv_fatbin in its code segment).
// Where the file can be read at offsets (an uncompressed layer), the
// section headers say where the data sections are, and only those are
// searched: the host code and the compiler's tables are never read.
#include "imgsmith/kernels/cuda_binary.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "imgsmith/kernels/fatbin_format.hpp"

namespace imgsmith {
namespace {

using fatbin::u16;
using fatbin::u32;
using fatbin::u64;

constexpr std::size_t kChunk = 1 << 20;
constexpr std::size_t kFirstSearchChunk = 4096;
// Read with an entry's header: small payloads come with it, large ones are
// stepped over.
constexpr std::size_t kHeaderAhead = 4096;
constexpr std::size_t kMaxWarnings = 8;
constexpr std::uint64_t kMaxProgramHeaderBytes = 1 << 16;

// The file's bytes through a window. Read front to back (a layer streaming
// past): bytes [at, at + n) are available while no later call asks for
// bytes past them; bytes behind the window are gone. Read at offsets (an
// uncompressed layer, a file on disk: ForwardReader::reads_at): any bytes,
// in any order, each fetched only when asked for.
class Window {
 public:
  Window(std::string_view head, ForwardReader& rest, std::uint64_t size)
      : head_(head), in_(head, rest), rest_(rest), size_(size), random_(rest.reads_at()) {}

  std::uint64_t size() const { return size_; }
  bool random() const { return random_; }

  // How many bytes from `at` on the window holds now (0 when none).
  std::size_t held(std::uint64_t at) const {
    return at >= start_ && at < start_ + len_ ? static_cast<std::size_t>(start_ + len_ - at) : 0;
  }

  // A pointer to bytes [at, at + n), `ahead` bytes at least when it has to
  // read; null when they are past the end (or, front to back, behind the
  // window). The magic scan reads a chunk of its range at a time; headers
  // ask for a little more than they need (the small payloads that follow),
  // so that the large payloads between them are stepped over (seeked, or
  // never read at offsets).
  const char* bytes(std::uint64_t at, std::size_t n, std::size_t ahead = 0) {
    if (n > size_ || at > size_ - n) return nullptr;
    if (at >= start_ && at + n <= start_ + len_) return buf_.data() + (at - start_);
    const std::size_t want =
        std::max(n, static_cast<std::size_t>(std::min<std::uint64_t>(ahead, size_ - at)));
    if (random_) {
      if (at + n <= head_.size()) return head_.data() + at;
      if (buf_.size() < want) buf_.resize(want);
      start_ = at;
      len_ = rest_.read_at(at, buf_.data(), want);
      return len_ >= n ? buf_.data() : nullptr;
    }
    if (at < start_) return nullptr;
    std::size_t kept = 0;
    if (at < start_ + len_) {
      // What the window holds from `at` on moves to its front (fewer bytes
      // than were asked for): nothing is read twice.
      kept = static_cast<std::size_t>(start_ + len_ - at);
      std::memmove(buf_.data(), buf_.data() + (at - start_), kept);
    } else {
      const std::uint64_t here = in_.position();
      if (at > here && in_.skip(at - here) != at - here) return nullptr;
    }
    start_ = at;
    len_ = kept;
    if (buf_.size() < want) buf_.resize(want);
    len_ += in_.read(buf_.data() + len_, want - len_);
    return len_ >= n ? buf_.data() : nullptr;
  }

 private:
  std::string_view head_;
  PrefixedReader in_;
  ForwardReader& rest_;
  std::uint64_t size_;
  bool random_;
  std::vector<char> buf_;
  std::uint64_t start_ = 0;  // the file offset of buf_[0]
  std::size_t len_ = 0;      // bytes of buf_ that hold the file's
};

struct Range {
  std::uint64_t begin = 0, end = 0;
};

using CodeKey = std::tuple<KernelKind, unsigned, char>;

class Reader {
 public:
  explicit Reader(CudaBinary& out) : out_(out) {}

  void warn(std::string text) {
    if (out_.warnings.size() < kMaxWarnings) out_.warnings.push_back(std::move(text));
  }

  void add(KernelKind kind, unsigned arch, char variant, unsigned version, std::uint64_t bytes,
           bool compressed, bool kernels) {
    KernelCode& c = code_[{kind, arch, variant}];
    c.kind = kind;
    c.arch = arch;
    c.variant = variant;
    c.version = std::max(c.version, version);
    ++c.entries;
    c.bytes += bytes;
    if (compressed) ++c.compressed_entries;
    if (!kernels) ++c.empty_entries;
  }

  // The container whose header is at `at`, within `limit`. Returns its end,
  // or `at` when the bytes there are no container.
  std::uint64_t container(Window& w, std::uint64_t at, std::uint64_t limit) {
    const char* h = w.bytes(at, fatbin::kContainerHeadBytes, kHeaderAhead);
    fatbin::ContainerHead c;
    if (h == nullptr || !fatbin::read_container_head(h, c) || c.entries > limit - at ||
        c.head > limit - at - c.entries)
      return at;
    const std::uint64_t end = at + c.head + c.entries;
    ++out_.containers;
    out_.fatbin_bytes += end - at;
    std::uint64_t e = at + c.head;
    while (e < end) {
      const char* p = end - e >= fatbin::kEntryHeadBytes
                          ? w.bytes(e, fatbin::kEntryHeadBytes, kHeaderAhead)
                          : nullptr;
      if (p == nullptr) {
        warn("fatbin container at offset " + std::to_string(at) + ": an entry is cut short");
        return end;
      }
      const fatbin::EntryHead entry = fatbin::read_entry_head(p);
      if (!entry.valid || entry.head > end - e || entry.payload > end - e - entry.head) {
        warn("fatbin container at offset " + std::to_string(at) + ": an entry at offset " +
             std::to_string(e) + " claims more bytes than the container holds; the rest of it " +
             "is not counted");
        return end;
      }
      // Whether a SASS module holds a kernel: read when it is small and
      // plain; a compressed or large one is taken to.
      bool kernels = true;
      if (entry.kind == KernelKind::Sass && !entry.compressed &&
          entry.payload <= fatbin::kModuleLookBytes && entry.payload >= 64)
        if (const char* cubin =
                w.bytes(e + entry.head, static_cast<std::size_t>(entry.payload), kHeaderAhead))
          kernels = fatbin::cubin_has_kernel(
              std::string_view(cubin, static_cast<std::size_t>(entry.payload)));
      add(entry.kind, entry.arch, entry.variant, entry.version, entry.payload, entry.compressed,
          kernels);
      e += entry.head + entry.payload;
    }
    return end;
  }

  // Every container in [begin, end), and the shared CUDA runtime named
  // before `names_end` (.dynstr lies in the first loadable segment, with
  // the ELF header: code and data need no looking at for it).
  void scan(Window& w, std::uint64_t begin, std::uint64_t end, std::uint64_t names_end = 0) {
    std::uint64_t at = (begin + 7) & ~std::uint64_t{7};
    bool chained = false;  // a container just ended at `at`
    // The search reads a little at first and more while it finds nothing:
    // where containers lie among other data (cuFFT's .ldata: 24,000 of
    // them, a few bytes apart), a whole chunk read for each would be read
    // again and again.
    std::size_t chunk = kFirstSearchChunk;
    while (at < end && end - at >= 16) {
      // Containers follow one another in .nv_fatbin: the next is read from
      // its header, without reading the payloads between them.
      if (chained) {
        const std::uint64_t after = container(w, at, end);
        if (after != at) {
          at = (after + 7) & ~std::uint64_t{7};
          continue;
        }
        chained = false;
        chunk = kFirstSearchChunk;
      }
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, end - at));
      chunk = std::min(chunk * 2, kChunk);
      // The bytes the window holds already are scanned before it reads on.
      if (const std::size_t held = w.held(at); held >= 16) n = std::min(n, held);
      const char* p = w.bytes(at, n, n);  // nothing past the range: it may be code
      if (p == nullptr) {
        warn("the file ends inside a segment (or section) its headers name");
        return;
      }
      if (at < names_end)
        note_cudart(std::string_view(
            p, static_cast<std::size_t>(std::min<std::uint64_t>(n, names_end - at))));
      std::uint64_t next = at + n - 15;  // the next chunk overlaps a header's worth
      for (const char* hit = fatbin::find_aligned_magic(p, n); hit != nullptr && hit + 16 <= p + n;
           hit = fatbin::find_aligned_magic(hit + 8, static_cast<std::size_t>(p + n - hit - 8))) {
        const std::uint64_t after = container(w, at + static_cast<std::uint64_t>(hit - p), end);
        if (after != at + static_cast<std::uint64_t>(hit - p)) {  // the window has moved on
          next = (after + 7) & ~std::uint64_t{7};
          chained = true;
          break;
        }
      }
      at = chained ? next : std::max((next + 7) & ~std::uint64_t{7}, at + 8);
    }
  }

  void note_cudart(std::string_view text) {
    if (!out_.cudart.empty()) return;
    constexpr std::string_view name = "libcudart.so.";
    for (std::size_t at = text.find(name); at != std::string_view::npos;
         at = text.find(name, at + 1)) {
      std::size_t end = at + name.size();
      while (end < text.size() && end - at < name.size() + 4 && text[end] >= '0' &&
             text[end] <= '9')
        ++end;
      if (end > at + name.size() && end < text.size() && text[end] == '\0') {
        out_.cudart = std::string(text.substr(at, end - at));
        return;
      }
    }
  }

  void finish() {
    for (auto& [key, code] : code_) out_.code.push_back(code);
  }

 private:
  CudaBinary& out_;
  std::map<CodeKey, KernelCode> code_;
};

// `ranges` sorted by their start, those that overlap or touch made one.
std::vector<Range> sorted_merged(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  std::vector<Range> merged;
  for (const Range& r : ranges) {
    if (!merged.empty() && r.begin <= merged.back().end)
      merged.back().end = std::max(merged.back().end, r.end);
    else
      merged.push_back(r);
  }
  return merged;
}

// The file bytes of the loadable segments of a 64-bit little-endian ELF
// file: sorted, merged, within the file. `first_end`: where the segment at
// the lowest offset ends (the one that holds .dynstr).
std::optional<std::vector<Range>> loadable_segments(Window& w, CudaBinary& out,
                                                    std::uint64_t& first_end) {
  // A chunk, not only the header: read front to back, the program headers
  // and the first segment (from offset 0 on) are read next, from the window.
  const char* eh = w.bytes(0, 64, kChunk);
  if (eh == nullptr) return std::nullopt;
  const std::uint64_t phoff = u64(eh + 32);
  const std::uint16_t phentsize = u16(eh + 54);
  const std::uint16_t phnum = u16(eh + 56);
  if (phnum == 0) return std::vector<Range>{};
  // Real files have a few dozen program headers; a table of more than
  // kMaxProgramHeaderBytes is a lie, not something to read.
  if (phentsize < 56 || phoff < 64 || phoff > w.size() ||
      std::uint64_t{phentsize} * phnum > std::min(w.size() - phoff, kMaxProgramHeaderBytes)) {
    out.warnings.push_back("its ELF program headers lie outside the file");
    return std::vector<Range>{};
  }
  const char* ph = w.bytes(phoff, std::size_t{phentsize} * phnum);
  if (ph == nullptr) return std::vector<Range>{};
  std::vector<Range> ranges;
  for (std::uint16_t i = 0; i < phnum; ++i) {
    const char* s = ph + std::size_t{i} * phentsize;
    if (u32(s) != 1) continue;  // PT_LOAD
    const std::uint64_t offset = u64(s + 8);
    const std::uint64_t filesz = u64(s + 32);
    if (offset >= w.size() || filesz == 0) continue;
    ranges.push_back(Range{offset, offset + std::min(filesz, w.size() - offset)});
  }
  // Before merging: the end of the segment at the lowest offset itself.
  first_end =
      ranges.empty()
          ? 0
          : std::min_element(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
              return a.begin < b.begin;
            })->end;
  return sorted_merged(std::move(ranges));
}

// The file bytes of an ELF file's sections that may hold fatbin
// containers (fatbin::section_may_hold_containers), found through its
// section headers where the file can be read at offsets: the host code and
// tables that make up half of a library's bytes are left out. `names`:
// the string tables (.dynstr) in the first loadable segment, where the
// shared CUDA runtime is named; the data sections scanned there are
// searched for its name too (.rodata, where a library names a runtime it
// dlopens and the linker puts it in that segment: -z noseparate-code). So
// both readings search the same text, and a plain layer and a gzip one
// name the same runtime for a file. None when there are no section headers
// (a stripped table) or they do not fit the file: then the loadable
// segments are read, as from a stream.
struct SectionPlan {
  std::vector<Range> data;
  std::vector<Range> names;
};

constexpr std::uint64_t kMaxSectionTableBytes = 1 << 22;  // 65,535 headers of 64 bytes
constexpr std::uint64_t kMaxNamesBytes = 1 << 24;

std::optional<SectionPlan> data_sections(Window& w, std::uint64_t names_end) {
  const char* eh = w.bytes(0, 64);
  fatbin::SectionTable st;
  if (eh == nullptr || !fatbin::read_section_table(eh, w.size(), kMaxSectionTableBytes, st))
    return std::nullopt;
  const char* t = w.bytes(st.offset, static_cast<std::size_t>(st.bytes()), 0);
  if (t == nullptr) return std::nullopt;
  const std::string table(t, static_cast<std::size_t>(st.bytes()));  // the window moves on
  const auto header = [&](std::uint64_t i) {
    return fatbin::read_section_header(table.data() + i * st.entry_size);
  };
  const fatbin::SectionHeader names_header = header(st.names_index);
  if (names_header.offset > w.size() ||
      names_header.size > std::min(w.size() - names_header.offset, kMaxNamesBytes))
    return std::nullopt;
  const char* n = names_header.size == 0 ? ""
                                         : w.bytes(names_header.offset,
                                                   static_cast<std::size_t>(names_header.size), 0);
  if (n == nullptr) return std::nullopt;
  const std::string names(n, static_cast<std::size_t>(names_header.size));
  constexpr std::uint32_t kStrtab = 3;
  constexpr std::uint64_t kAlloc = 2;
  SectionPlan plan;
  for (std::uint64_t i = 0; i < st.count; ++i) {
    const fatbin::SectionHeader h = header(i);
    if ((h.flags & kAlloc) == 0 || h.offset >= w.size() || h.size == 0) continue;
    const Range r{h.offset, h.offset + std::min(h.size, w.size() - h.offset)};
    const std::string_view name =
        h.name < names.size() ? std::string_view(names.c_str() + h.name) : std::string_view();
    if (h.type == kStrtab && r.begin < names_end)
      plan.names.push_back(Range{r.begin, std::min(r.end, names_end)});
    if (fatbin::section_may_hold_containers(h.type, h.flags, name)) plan.data.push_back(r);
  }
  plan.names = sorted_merged(std::move(plan.names));
  plan.data = sorted_merged(std::move(plan.data));
  return plan;
}

// ".version 9.0" and ".target sm_90a" of a PTX text's first lines.
std::optional<CudaBinary> read_ptx_text(std::string_view head, std::uint64_t size) {
  const std::size_t version = head.find(".version ");
  const std::size_t target = head.find(".target sm_");
  if (version == std::string_view::npos || target == std::string_view::npos) return std::nullopt;
  unsigned major = 0, minor = 0, arch = 0;
  std::size_t i = version + 9;
  while (i < head.size() && head[i] >= '0' && head[i] <= '9' && major < 100)
    major = major * 10 + static_cast<unsigned>(head[i++] - '0');
  if (i < head.size() && head[i] == '.' && i + 1 < head.size() && head[i + 1] >= '0' &&
      head[i + 1] <= '9')
    minor = static_cast<unsigned>(head[i + 1] - '0');
  i = target + 11;
  while (i < head.size() && head[i] >= '0' && head[i] <= '9' && arch < 10000)
    arch = arch * 10 + static_cast<unsigned>(head[i++] - '0');
  if (major == 0 || arch == 0) return std::nullopt;
  const char variant = i < head.size() && (head[i] == 'a' || head[i] == 'f') ? head[i] : ' ';
  CudaBinary out;
  out.form = CudaBinary::Form::Ptx;
  out.code.push_back(KernelCode{KernelKind::Ptx, arch, variant, major * 10 + minor, 1, size, 0});
  return out;
}

}  // namespace

std::string KernelCode::name() const {
  const char* prefix = kind == KernelKind::Sass  ? "sm_"
                       : kind == KernelKind::Ptx ? "compute_"
                       : kind == KernelKind::Ir  ? "ir_"
                                                 : "other_";
  std::string text = prefix + std::to_string(arch);
  if (variant != ' ') text += variant;
  return text;
}

std::uint64_t CudaBinary::sass_bytes() const {
  std::uint64_t n = 0;
  for (const auto& c : code)
    if (c.kind == KernelKind::Sass) n += c.bytes;
  return n;
}

std::uint64_t CudaBinary::ptx_bytes() const {
  std::uint64_t n = 0;
  for (const auto& c : code)
    if (c.kind == KernelKind::Ptx) n += c.bytes;
  return n;
}

unsigned CudaBinary::newest_ptx_isa() const {
  unsigned isa = 0;
  for (const auto& c : code)
    if (c.kind == KernelKind::Ptx) isa = std::max(isa, c.version);
  return isa;
}

std::uint64_t kernel_capture(std::string_view path, std::uint64_t size) {
  if (size < 64) return 0;
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const bool library = name.ends_with(".so") || name.find(".so.") != std::string_view::npos;
  if (library || name.ends_with(".cubin") || name.ends_with(".fatbin") || name.ends_with(".ptx"))
    return kKernelHeadBytes;
  return 0;
}

std::optional<CudaBinary> inspect_cuda_binary(std::string_view head, ForwardReader& rest,
                                              std::uint64_t size) {
  if (head.size() >= 16 && u32(head.data()) == fatbin::kMagic) {
    CudaBinary out;
    out.form = CudaBinary::Form::Fatbin;
    Window w(head, rest, size);
    Reader reader(out);
    reader.scan(w, 0, size);
    reader.finish();
    if (out.containers == 0) return std::nullopt;
    return out;
  }
  if (head.starts_with("//") || head.starts_with(".version") || head.starts_with("\n//")) {
    // The .version and .target lines follow a few lines of comments.
    Window w(head, rest, size);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, 4096));
    const char* text = w.bytes(0, n);
    if (text == nullptr) return std::nullopt;
    return read_ptx_text(std::string_view(text, n), size);
  }
  // 64-bit (class 2), little-endian (data 1) ELF.
  if (head.size() < 64 ||
      !head.starts_with("\x7f"
                        "ELF") ||
      head[4] != 2 || head[5] != 1)
    return std::nullopt;
  if (u16(head.data() + 18) == fatbin::kElfMachineCuda) {
    // A cubin: one architecture's SASS.
    const unsigned abi = static_cast<unsigned char>(head[8]);
    const unsigned arch = fatbin::cubin_arch(head.data());
    CudaBinary out;
    out.form = CudaBinary::Form::Cubin;
    out.code.push_back(KernelCode{KernelKind::Sass, arch, ' ', abi, 1, size, 0});
    return out;
  }
  CudaBinary out;
  Window w(head, rest, size);
  std::uint64_t names_end = 0;
  const auto segments = loadable_segments(w, out, names_end);
  if (!segments) return std::nullopt;
  Reader reader(out);
  if (const auto plan = w.random() ? data_sections(w, names_end) : std::nullopt) {
    for (const Range& r : plan->names)
      for (std::uint64_t at = r.begin; at < r.end && out.cudart.empty();) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, r.end - at));
        const char* text = w.bytes(at, n, 0);
        if (text == nullptr || n == r.end - at) {
          if (text != nullptr) reader.note_cudart(std::string_view(text, n));
          break;
        }
        reader.note_cudart(std::string_view(text, n));
        at += n - 16;  // a name across two chunks is whole in the next
      }
    for (const Range& r : plan->data) reader.scan(w, r.begin, r.end, names_end);
  } else {
    for (const Range& r : *segments) reader.scan(w, r.begin, r.end, names_end);
  }
  reader.finish();
  if (out.containers == 0) return std::nullopt;
  return out;
}

}  // namespace imgsmith
