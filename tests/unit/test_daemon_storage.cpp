// The Docker daemon's overlay2 storage read in place (open_daemon_storage):
// layers made here by hand as the daemon keeps them, a tar-split record
// (tar headers and padding as segments, each file's data by name and size)
// beside a diff directory holding the files.
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "image_builder.hpp"
#include "imgsmith/source/blob_store.hpp"
#include "imgsmith/source/file_io.hpp"
#include "imgsmith/util/crc64.hpp"
#include "imgsmith/util/text.hpp"

namespace {

namespace fs = std::filesystem;
using namespace imgsmith;
using Catch::Contains;
using imgsmith::testing::Encoding;
using imgsmith::testing::TempDir;
using imgsmith::testing::write_file;

// One 512-byte ustar header.
std::string ustar(const std::string& name, std::uint64_t size, char type,
                  const std::string& link = "") {
  std::string h(512, '\0');
  auto put = [&](std::size_t at, std::size_t width, const std::string& value) {
    std::copy_n(value.begin(), std::min(width, value.size()),
                h.begin() + static_cast<std::ptrdiff_t>(at));
  };
  auto octal = [&](std::size_t at, std::size_t width, std::uint64_t value) {
    char text[32];
    std::snprintf(text, sizeof text, "%0*llo", static_cast<int>(width - 1),
                  static_cast<unsigned long long>(value));
    put(at, width - 1, text);
  };
  put(0, 100, name);
  octal(100, 8, type == '5' ? 0755 : 0644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, 1700000000);
  h[156] = type;
  put(157, 100, link);
  put(257, 6, std::string("ustar\0", 6));
  put(263, 2, "00");
  put(148, 8, std::string(8, ' '));
  unsigned sum = 0;
  for (const unsigned char c : h) sum += c;
  octal(148, 7, sum);
  return h;
}

// A layer's tar-split record, written as tar-split writes it.
class Record {
 public:
  void dir(const std::string& name) { pending_ += ustar(name + "/", 0, '5'); }
  void symlink(const std::string& name, const std::string& target) {
    pending_ += ustar(name, 0, '2', target);
  }
  // A regular file of `size` bytes; `raw` gives its name as name_raw, as
  // tar-split does for a name that is not UTF-8.
  void file(const std::string& name, std::uint64_t size, bool raw = false) {
    pending_ += ustar(name, size, '0');
    flush();
    nlohmann::json entry = {{"type", 1}, {"size", size}, {"position", position_++}};
    entry[raw ? "name_raw" : "name"] = raw ? base64_encode(name) : name;
    lines_ += entry.dump() + "\n";
    pending_ += std::string((512 - size % 512) % 512, '\0');
  }
  // A regular file with the CRC-64 tar-split keeps of `content`.
  void file_with_crc(const std::string& name, const std::string& content) {
    pending_ += ustar(name, content.size(), '0');
    flush();
    std::string sum(8, '\0');
    const std::uint64_t crc = crc64_iso(content);
    for (int i = 0; i < 8; ++i) sum[i] = static_cast<char>(crc >> (56 - 8 * i));
    lines_ += nlohmann::json{{"type", 1},
                             {"name", name},
                             {"size", content.size()},
                             {"payload", base64_encode(sum)},
                             {"position", position_++}}
                  .dump() +
              "\n";
    pending_ += std::string((512 - content.size() % 512) % 512, '\0');
  }
  void line(const std::string& text) {
    flush();
    lines_ += text + "\n";
  }
  std::string finish() {
    pending_ += std::string(1024, '\0');
    flush();
    return lines_;
  }

 private:
  void flush() {
    if (pending_.empty()) return;
    lines_ +=
        nlohmann::json{{"type", 2}, {"payload", base64_encode(pending_)}, {"position", position_++}}
            .dump() +
        "\n";
    pending_.clear();
  }
  std::string pending_;
  std::string lines_;
  int position_ = 0;
};

// A daemon's layer: the diff directory and, once written, its record.
struct DaemonLayer {
  TempDir tmp;
  std::string diff = tmp / "diff";
  std::string record_path = tmp / "tar-split.json.gz";
  DaemonLayer() { fs::create_directories(diff); }
  void put(const std::string& name, const std::string& content) const {
    write_file(diff + "/" + name, content);
  }
  void write_record(Record& record) const {
    write_file(record_path, imgsmith::testing::encode(record.finish(), Encoding::Gzip));
  }
  DaemonStorageImage image(bool walk = false, bool rootless = false) const {
    DaemonStorageImage image;
    image.label = "docker://test/app:1";
    image.config = R"({"rootfs":{"type":"layers","diff_ids":[]}})";
    image.layers.push_back({diff, walk ? std::string() : record_path});
    image.rootless = rootless;
    return image;
  }
};

const CaptureFn capture_all = [](std::string_view, std::uint64_t) { return kCaptureAll; };

std::shared_ptr<const LayerScan> scan(const DaemonStorageImage& image, bool check_first = false) {
  return open_daemon_storage(image, capture_all, check_first)->scan_layer("layers/0");
}

std::vector<std::string> scan_paths(const LayerScan& scan) {
  std::vector<std::string> out;
  for (const auto& e : scan.entries) out.emplace_back(e.path);
  return out;
}

std::string captured(const LayerScan& scan, const std::string& path) {
  for (const auto& c : scan.captured)
    if (c.path == path) return c.content;
  return "<not captured>";
}

template <typename F>
std::string storage_error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no error>";
}

bool root() { return ::geteuid() == 0; }

}  // namespace

TEST_CASE("daemon storage: a layer is its tar-split record with the data from the diff directory") {
  DaemonLayer layer;
  fs::create_directories(layer.diff + "/usr/share/doc");
  layer.put("usr/share/doc/readme", "hello\n");
  layer.put("usr/share/doc/a..b", "dots\n");  // ".." inside a name is no parent directory
  layer.put("./top", "top\n");
  layer.put("caf\xe9", "latin\n");
  Record record;
  record.dir("usr");
  record.dir("usr/share");
  record.dir("usr/share/doc");
  record.file("usr/share/doc/readme", 6);
  record.file("usr/share/doc/a..b", 5);
  record.file("./top", 4);  // as tar -C DIR -c . names it
  record.file("caf\xe9", 6, true);
  layer.write_record(record);

  for (const bool check_first : {false, true}) {
    const auto s = scan(layer.image(), check_first);
    CHECK(scan_paths(*s) == std::vector<std::string>{"usr", "usr/share", "usr/share/doc",
                                                     "usr/share/doc/readme", "usr/share/doc/a..b",
                                                     "top", "caf\xe9"});
    CHECK(captured(*s, "usr/share/doc/readme") == "hello\n");
    CHECK(captured(*s, "usr/share/doc/a..b") == "dots\n");
    CHECK(captured(*s, "top") == "top\n");
    CHECK(captured(*s, "caf\xe9") == "latin\n");
    CHECK(s->content_bytes == 21);
  }
  const auto store = open_daemon_storage(layer.image(), capture_all);
  CHECK(store->kind() == "docker storage (overlay2, tar-split)");
  // Its size is not known until it is rebuilt: unset, not 0, so that the
  // analysis does not take it for a small layer.
  CHECK(store->contains("layers/0"));
  CHECK_FALSE(store->size_of("layers/0").has_value());
  CHECK_FALSE(store->contains("layers/1"));
}

TEST_CASE("daemon storage: a record's file beyond a symbolic link in the layer is never read") {
  // The layer holds lnk -> OUTSIDE and names lnk/hostname: reading
  // DIFF/lnk/hostname by path would read OUTSIDE/hostname.
  DaemonLayer layer;
  TempDir outside;
  write_file(outside / "hostname", "SECRET");
  fs::create_directory_symlink(outside.path(), layer.diff + "/lnk");
  Record record;
  record.symlink("lnk", outside.path());
  record.file("lnk/hostname", 6);
  layer.write_record(record);

  const std::string read = storage_error_of([&] { scan(layer.image()); });
  CHECK_THAT(read, Catch::Contains("docker://test/app:1: layer 0 (" + layer.diff + ")") &&
                       Catch::Contains("'lnk/hostname'") && Catch::Contains("symbolic link") &&
                       Catch::Contains("--docker-read save"));
  CHECK_THROWS_AS(scan(layer.image()), StorageUnreadable);
  // Checked first (--docker-read auto), the store is refused before any
  // layer is read, so that the image can be streamed instead.
  CHECK_THROWS_AS(open_daemon_storage(layer.image(), capture_all, true), StorageUnreadable);
  CHECK_THAT(storage_error_of([&] { open_daemon_storage(layer.image(), capture_all, true); }),
             Catch::Contains("'lnk' in " + layer.diff + " lies beyond a symbolic link"));
}

TEST_CASE(
    "daemon storage: files are opened beneath the layer directory, with openat2 or component by "
    "component") {
  TempDir tmp;
  TempDir outside;
  write_file(outside / "secret", "SECRET");
  fs::create_directories(tmp / "d/sub");
  write_file(tmp / "d/sub/f", "in");
  fs::create_directory_symlink(outside.path(), tmp / "d/lnk");
  fs::create_symlink("sub/f", tmp / "d/flink");
  const int dir = ::open((tmp / "d").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(dir >= 0);
  for (const bool by_components : {false, true}) {
    INFO("by components: " << by_components);
    for (const char* ok : {"sub/f", "./sub/f", "sub//f"}) {
      const int fd = open_beneath(dir, ok, O_RDONLY, by_components);
      CHECK(fd >= 0);
      if (fd >= 0) ::close(fd);
    }
    for (const char* name : {"lnk/secret", "flink"}) {
      errno = 0;
      CHECK(open_beneath(dir, name, O_RDONLY, by_components) == -1);
      CHECK(errno == ELOOP);
    }
    for (const std::string& name :
         {std::string("../d/sub/f"), std::string("sub/../../secret"), outside / "secret"}) {
      errno = 0;
      CHECK(open_beneath(dir, name, O_RDONLY, by_components) == -1);
      CHECK(errno == EXDEV);
    }
    errno = 0;
    CHECK(open_beneath(dir, "sub/missing", O_RDONLY, by_components) == -1);
    CHECK(errno == ENOENT);
  }
  ::close(dir);
}

TEST_CASE(
    "daemon storage: a record naming a parent directory, an absolute path or a damaged line is "
    "refused") {
  for (const char* name : {"../etc/hostname", "usr/../../x", "/etc/hostname"}) {
    DaemonLayer layer;
    Record record;
    record.file(name, 6);
    layer.write_record(record);
    CHECK_THAT(storage_error_of([&] { scan(layer.image()); }),
               Catch::Contains("tar-split record " + layer.record_path +
                               " is damaged (a file entry names '" + name + "')"));
  }
  DaemonLayer layer;
  layer.put("f", "abc");
  Record record;
  record.file("f", 3);
  record.line(R"({"type":1,"name":"g","si)");
  layer.write_record(record);
  CHECK_THAT(storage_error_of([&] { scan(layer.image()); }),
             Catch::Contains("tar-split record " + layer.record_path +
                             " is damaged (a line is not JSON)") &&
                 Catch::Contains("--docker-read save"));
}

TEST_CASE("daemon storage: a file shorter than its record says is an error, not a short layer") {
  DaemonLayer layer;
  layer.put("model.bin", "abcd");
  Record record;
  record.file("model.bin", 10);
  layer.write_record(record);
  CHECK_THAT(storage_error_of([&] { scan(layer.image()); }),
             Catch::Contains("'model.bin'") &&
                 Catch::Contains("it is 4 bytes and its record says 10") &&
                 Catch::Contains("the image changed while it was read"));
}

TEST_CASE(
    "daemon storage: a walked layer: names in byte order, hard links, whiteouts and opaque "
    "directories") {
  DaemonLayer layer;
  fs::create_directories(layer.diff + "/b/opaque");
  fs::create_directories(layer.diff + "/a");
  layer.put("b/file", "12345");
  fs::create_hard_link(layer.diff + "/b/file", layer.diff + "/c-link");
  layer.put("b/opaque/kept", "k");
  fs::create_symlink("b/file", layer.diff + "/d-sym");
  // A rootless daemon marks opaque directories with user.overlay.opaque; for
  // a rootful one that attribute is the image's own, and means nothing.
  if (::setxattr((layer.diff + "/b/opaque").c_str(), "user.overlay.opaque", "y", 1, 0) != 0) {
    REQUIRE(errno == ENOTSUP);
    WARN(
        "the temporary directory's file system keeps no user.* attributes: the walk is not tested");
    return;
  }
  const bool whiteouts = root();
  if (whiteouts)
    REQUIRE(::mknod((layer.diff + "/gone").c_str(), S_IFCHR | 0600, makedev(0, 0)) == 0);

  const auto rootless = scan(layer.image(true, true));
  std::vector<std::string> expected = {
      "a", "b", "b/file", "b/opaque", "b/opaque/.wh..wh..opq", "b/opaque/kept", "c-link", "d-sym"};
  if (whiteouts) expected.push_back(".wh.gone");
  CHECK(scan_paths(*rootless) == expected);
  CHECK(captured(*rootless, "b/file") == "12345");
  const auto link = std::find_if(rootless->entries.begin(), rootless->entries.end(),
                                 [](const TarEntry& e) { return e.path == "c-link"; });
  REQUIRE(link != rootless->entries.end());
  CHECK((link->type == EntryType::Hardlink && link->link == "b/file"));
  CHECK(open_daemon_storage(layer.image(true, true), capture_all)->kind() ==
        "docker storage (overlay2, walked)");

  if (!root()) {
    WARN("not root: the rootful daemon's trusted.overlay.opaque and 0/0 whiteouts are not tested");
    return;
  }
  const auto rootful = scan(layer.image(true, false));
  expected.erase(std::find(expected.begin(), expected.end(), "b/opaque/.wh..wh..opq"));
  CHECK(scan_paths(*rootful) == expected);
  REQUIRE(::setxattr((layer.diff + "/a").c_str(), "trusted.overlay.opaque", "y", 1, 0) == 0);
  const auto marked = scan(layer.image(true, false));
  CHECK(scan_paths(*marked)[1] == "a/.wh..wh..opq");
  CHECK(scan_paths(*scan(layer.image(true, true)))[1] != "a/.wh..wh..opq");
}

namespace {

// In a forked child: `prepare` (its non-zero result is the child's exit
// status), then an attempt to open the rootful layer for a walk, then
// `after`. The status is 0 when the walk was refused for want of
// CAP_SYS_ADMIN, 1 when it went ahead, 2 or 3 for another error.
int rootful_walk_in_child(
    const DaemonLayer& layer, const std::function<int()>& prepare,
    const std::function<int()>& after = [] { return 0; }) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (const int prepared = prepare(); prepared != 0) ::_exit(prepared);
    int status = 0;
    try {
      open_daemon_storage(layer.image(true, false), capture_all);
      status = 1;  // walked regardless
    } catch (const StorageUnreadable& e) {
      status = std::string(e.what()).find("CAP_SYS_ADMIN") != std::string::npos ? 0 : 2;
    } catch (...) {
      status = 3;
    }
    if (const int later = after(); later != 0) status = later;
    ::_exit(status);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("daemon storage: without CAP_SYS_ADMIN a rootful daemon's layers are not walked") {
  DaemonLayer layer;
  layer.put("f", "x");
  // In a child that drops CAP_SYS_ADMIN from its effective set: trusted.*
  // attributes then read as absent, and a walk would miss opaque directories.
  const auto drop_cap_sys_admin = [] {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (::syscall(SYS_capget, &header, data) != 0) return 10;
    data[CAP_SYS_ADMIN / 32].effective &= ~(1U << (CAP_SYS_ADMIN % 32));
    return ::syscall(SYS_capset, &header, data) != 0 ? 11 : 0;
  };
  // A rootless daemon's marks are user.* attributes, readable all the same.
  const auto rootless_walks = [&] {
    try {
      open_daemon_storage(layer.image(true, true), capture_all)->scan_layer("layers/0");
      return 0;
    } catch (...) {
      return 4;
    }
  };
  CHECK(rootful_walk_in_child(layer, drop_cap_sys_admin, rootless_walks) == 0);
}

TEST_CASE("daemon storage: in a user namespace, CAP_SYS_ADMIN there does not let a walk start") {
  DaemonLayer layer;
  layer.put("f", "x");
  // A child in a new user namespace holds every capability there (CapEff
  // all ones), as in rootless Docker or `podman unshare`; the kernel still
  // hides trusted.* attributes from it, so a rootful layer must not be walked.
  const int status =
      rootful_walk_in_child(layer, [] { return ::unshare(CLONE_NEWUSER) != 0 ? 77 : 0; });
  if (status == 77) {
    WARN("user namespaces are not allowed here: not tested");
    return;
  }
  CHECK(status == 0);
}

TEST_CASE("daemon storage: a walk hands a taking sink its entries in batches and keeps none",
          "[slow]") {
  // More files than one batch, and a hard link whose first name went with
  // an earlier batch: the link must still name it.
  DaemonLayer layer;
  fs::create_directories(layer.diff + "/m");
  layer.put("a-first", "linked");
  for (int i = 0; i < 5000; ++i) layer.put("m/f" + std::to_string(i), "x");
  fs::create_hard_link(layer.diff + "/a-first", layer.diff + "/z-link");
  std::vector<std::pair<std::string, std::string>> got;  // path, link
  std::size_t batches = 0;
  const EntrySink take(
      [&](std::span<const TarEntry> batch) {
        ++batches;
        for (const auto& e : batch) got.emplace_back(e.path, e.link);
      },
      true);
  const auto walked =
      open_daemon_storage(layer.image(true, true), capture_all)->scan_layer("layers/0", {}, take);
  CHECK(batches >= 2);
  CHECK(walked->entries.empty());
  CHECK(walked->entries_taken == got.size());
  CHECK(got.size() == 5003);  // a-first, m, 5000 files, z-link
  REQUIRE(!got.empty());
  CHECK(got.back() == std::make_pair(std::string("z-link"), std::string("a-first")));
}

TEST_CASE("daemon storage: CRC-64 as Go's crc64.ISO computes it") {
  CHECK(crc64_iso("123456789") == 0xb90956c775a41001ULL);  // the catalogue's check value
  CHECK(crc64_iso("hello world") == 0xb9cf3f572ad9ac3eULL);
  std::string pattern;
  for (int i = 0; i < 1003; ++i) pattern += static_cast<char>(i * 7 % 251);
  CHECK(crc64_iso(pattern) == 0x9833d7d9ef7ede54ULL);
  // In pieces of any length, the same.
  Crc64Iso pieces;
  for (std::size_t at = 0, step = 1; at < pattern.size(); at += step, step = step * 2 + 1)
    pieces.update(pattern.data() + at, std::min(step, pattern.size() - at));
  CHECK(pieces.value() == 0x9833d7d9ef7ede54ULL);
}

TEST_CASE("daemon storage: a file that is not as its record says is an error, named") {
  const std::string content = "the weights, as the layer was made\n";
  for (const char* change : {"none", "same size", "other size"}) {
    INFO(change);
    DaemonLayer layer;
    Record record;
    record.dir("srv");
    record.file_with_crc("srv/model.bin", content);
    layer.write_record(record);
    fs::create_directories(layer.diff + "/srv");
    std::string on_disk = content;
    if (std::string(change) == "same size") on_disk[4] = 'W';  // a bit flipped, or a rewrite
    if (std::string(change) == "other size") on_disk += "appended";
    layer.put("srv/model.bin", on_disk);
    if (std::string(change) == "none") {
      const auto s = scan(layer.image());
      CHECK(scan_paths(*s) == std::vector<std::string>{"srv", "srv/model.bin"});
    } else {
      CHECK_THROWS_AS(scan(layer.image()), InputError);
      CHECK_THROWS_WITH(scan(layer.image()),
                        Contains("srv/model.bin") && Contains("--docker-read save") &&
                            (std::string(change) == "same size"
                                 ? Contains("CRC-64")
                                 : Contains("it is 43 bytes and its record says 35")));
    }
  }
}

TEST_CASE("daemon storage: a layer removed during the walk is said to be, never read as empty") {
  for (const bool whole_layer : {false, true}) {
    INFO((whole_layer ? "the layer directory" : "a directory in it"));
    DaemonLayer layer;
    layer.put("a/first", "1");
    layer.put("b/c/second", "22");
    layer.put("b/third", "333");
    DaemonStorageImage image = layer.image(true);
    // The daemon removes the image while the walk is in "a" (the capture
    // function runs as each file is met).
    const CaptureFn remove_then = [&](std::string_view path, std::uint64_t) {
      if (path == "a/first") fs::remove_all(whole_layer ? layer.diff : layer.diff + "/b");
      return kCaptureAll;
    };
    const auto walk = [&] {
      return open_daemon_storage(image, remove_then, false)->scan_layer("layers/0");
    };
    CHECK_THROWS_AS(walk(), InputError);
    layer.put("a/first", "1");
    layer.put("b/c/second", "22");
    CHECK_THROWS_WITH(walk(), Contains("removed while") && Contains("--docker-read save") &&
                                  (whole_layer ? Contains("was removed while it was read")
                                               : Contains("b: No such file or directory")));
  }
}
