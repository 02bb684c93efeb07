// Ruby gems in their gem homes, and Go and Rust programs by the module
// information they embed: which files each gem owns (two homes, a
// platform gem, a default gem's specification), the gem-cache finding, Go's
// build info read at offsets and front to back, cargo auditable's section,
// and what damaged module information gives (the file stays where it was).
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "analysed_image.hpp"
#include "gems.hpp"
#include "imgsmith/attribution/binary_modules.hpp"
#include "owners.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;
using attribution_detail::gem_of;
using attribution_detail::is_gem_cache;
using attribution_detail::Ownership;
using attribution_detail::split_gem_name;

namespace {

const CategoryNode* child_of(const Analysed& a, const std::string& category,
                             const std::string& child) {
  for (const auto& c : a.attribution.categories)
    if (c.name == category)
      for (const auto& k : c.children)
        if (k.name == child) return &k;
  return nullptr;
}

std::uint64_t bytes_of(const Analysed& a, const std::string& category, const std::string& child) {
  const CategoryNode* node = child_of(a, category, child);
  return node == nullptr ? 0 : node->bytes;
}

// Files of the sizes given, under `prefix`.
std::vector<Entry> files(const std::string& prefix,
                         const std::vector<std::pair<std::string, std::size_t>>& sized) {
  std::vector<Entry> out;
  for (const auto& [path, bytes] : sized) out.push_back(file(prefix + path, bytes));
  return out;
}

// The module the file's inspection found: installer, package, version.
void check_module(const Analysed& a, const std::string& path, const std::string& installer,
                  const std::string& package, const std::string& version) {
  CAPTURE(path);
  const BinaryModule* m = nullptr;
  for (const auto& head : a.analysis.file_heads)
    if (head.path == path) m = std::any_cast<BinaryModule>(&head.inspected);
  REQUIRE(m != nullptr);
  CHECK(m->installer == installer);
  CHECK(m->package == package);
  CHECK(m->version == version);
}

// ----- a small ELF writer: what the readers see of a linked program -------

void put(std::string& out, std::size_t at, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i)
    out[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

void align(std::string& out, std::size_t to) {
  while (out.size() % to != 0) out.push_back('\0');
}

struct Section {
  std::string name, bytes;
  bool writable = false;
};

struct ElfOptions {
  bool go_note = false;          // Go's build ID note after the program headers
  bool section_table = true;     // false: e_shoff 0, as a damaged or odd file
  std::size_t filler = 1 << 20;  // read-only bytes before the sections (a program's code)
};

// A 64-bit little-endian ELF executable: the ELF header, its program
// headers (a note, a read-only and a writable PT_LOAD), the filler, the
// read-only sections, the writable ones at the writable segment's start,
// then the section names and the section header table.
std::string elf_file(const std::vector<Section>& sections, const ElfOptions& o = {}) {
  const std::size_t phnum = o.go_note ? 3 : 2;
  std::string out(64 + phnum * 56, '\0');
  std::size_t note_at = 0, note_bytes = 0;
  if (o.go_note) {
    note_at = out.size();
    std::string note(12, '\0');
    put(note, 0, 4, 4);  // "Go\0\0"
    put(note, 4, 8, 4);
    put(note, 8, 4, 4);  // the Go build ID's type
    note += std::string("Go\0\0", 4) + "buildid!";
    out += note;
    note_bytes = note.size();
  }
  out += std::string(o.filler, '\x90');
  std::vector<std::pair<std::size_t, std::size_t>> placed(sections.size());
  for (const bool writable : {false, true}) {
    align(out, 4096);
    for (std::size_t i = 0; i < sections.size(); ++i)
      if (sections[i].writable == writable) {
        align(out, 16);
        placed[i] = {out.size(), sections[i].bytes.size()};
        out += sections[i].bytes;
      }
    if (!writable) out += std::string(16, '\x90');
  }
  std::size_t rw_at = 0;
  for (std::size_t i = 0; i < sections.size(); ++i)
    if (sections[i].writable && (rw_at == 0 || placed[i].first < rw_at)) rw_at = placed[i].first;
  if (rw_at == 0) rw_at = out.size();
  const std::size_t rw_end = out.size();
  std::string names(1, '\0');
  std::vector<std::size_t> name_at;
  for (const auto& s : sections) {
    name_at.push_back(names.size());
    names += s.name + '\0';
  }
  const std::size_t shstrtab_name = names.size();
  names += std::string(".shstrtab") + '\0';
  const std::size_t names_at = out.size();
  out += names;
  align(out, 8);
  const std::size_t shoff = out.size();
  const std::size_t shnum = sections.size() + 2;
  out += std::string(shnum * 64, '\0');
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const std::size_t h = shoff + (i + 1) * 64;
    put(out, h, name_at[i], 4);
    put(out, h + 4, 1, 4);                             // SHT_PROGBITS
    put(out, h + 8, sections[i].writable ? 3 : 2, 8);  // SHF_ALLOC (| SHF_WRITE)
    put(out, h + 24, placed[i].first, 8);
    put(out, h + 32, placed[i].second, 8);
  }
  const std::size_t last = shoff + (shnum - 1) * 64;
  put(out, last, shstrtab_name, 4);
  put(out, last + 4, 3, 4);  // SHT_STRTAB
  put(out, last + 24, names_at, 8);
  put(out, last + 32, names.size(), 8);
  // The ELF header.
  // Eight bytes: the last is a NUL, which a C string would drop.
  out.replace(0, 8,
              std::string("\x7f"
                          "ELF\x02\x01\x01\x00",
                          8));
  put(out, 16, 2, 2);   // ET_EXEC
  put(out, 18, 62, 2);  // x86-64
  put(out, 20, 1, 4);
  put(out, 32, 64, 8);  // e_phoff
  put(out, 40, o.section_table ? shoff : 0, 8);
  put(out, 52, 64, 2);
  put(out, 54, 56, 2);
  put(out, 56, phnum, 2);
  put(out, 58, 64, 2);
  put(out, 60, o.section_table ? shnum : 0, 2);
  put(out, 62, o.section_table ? shnum - 1 : 0, 2);
  std::size_t ph = 64;
  const auto segment = [&](std::uint32_t type, std::uint32_t flags, std::size_t at, std::size_t n) {
    put(out, ph, type, 4);
    put(out, ph + 4, flags, 4);
    put(out, ph + 8, at, 8);
    put(out, ph + 32, n, 8);
    put(out, ph + 40, n, 8);
    ph += 56;
  };
  if (o.go_note) segment(4, 4, note_at, note_bytes);  // PT_NOTE
  segment(1, 5, 0, rw_at);                            // PT_LOAD R+X
  segment(1, 6, rw_at, rw_end - rw_at);               // PT_LOAD R+W
  return out;
}

std::string varint(std::size_t n) {
  std::string out;
  for (; n >= 0x80; n >>= 7) out.push_back(static_cast<char>((n & 0x7f) | 0x80));
  out.push_back(static_cast<char>(n));
  return out;
}

// Go 1.18+'s build info: the 32-byte header (inline strings), the version
// and the modinfo, wrapped in the linker's 16-byte markers.
std::string go_buildinfo(const std::string& version, const std::string& modinfo,
                         unsigned char flags = 0x2) {
  std::string out("\xff Go buildinf:", 14);
  out.push_back('\x08');
  out.push_back(static_cast<char>(flags));
  out += std::string(16, '\0');
  const std::string wrapped = std::string(16, '\x01') + modinfo + std::string(16, '\x02');
  return out + varint(version.size()) + version + varint(wrapped.size()) + wrapped;
}

const std::string kModinfo =
    "path\tgithub.com/acme/server/cmd/server\n"
    "mod\tgithub.com/acme/server\tv1.2.3\th1:abc=\n"
    "dep\tgolang.org/x/sys\tv0.15.0\th1:def=\n"
    "build\t-compiler=gc\n";

std::string zlib_of(const std::string& text) {
  uLongf n = compressBound(static_cast<uLong>(text.size()));
  std::string out(n, '\0');
  REQUIRE(compress2(reinterpret_cast<Bytef*>(out.data()), &n,
                    reinterpret_cast<const Bytef*>(text.data()), static_cast<uLong>(text.size()),
                    7) == Z_OK);
  out.resize(n);
  return out;
}

const std::string kAuditable =
    R"({"packages":[{"name":"memchr","version":"2.7.1","source":"crates.io"},)"
    R"({"name":"ripgrep","version":"14.1.0","source":"local","dependencies":[0],"root":true}]})";

}  // namespace

// ----- Ruby gems ------------------------------------------------------------

TEST_CASE("gems: a full name splits at the first segment that starts with a digit") {
  const auto check = [](std::string_view full, std::string_view name, std::string_view version,
                        std::string_view platform) {
    CAPTURE(full);
    const auto n = split_gem_name(full);
    CHECK(n.name == name);
    CHECK(n.version == version);
    CHECK(n.platform == platform);
  };
  check("rack-3.0.8", "rack", "3.0.8", "");
  check("nokogiri-1.15.4-x86_64-linux", "nokogiri", "1.15.4", "x86_64-linux");
  check("google-protobuf-3.25.1-x86_64-linux-gnu", "google-protobuf", "3.25.1", "x86_64-linux-gnu");
  check("net-http-0.4.1", "net-http", "0.4.1", "");
  check("x25519-1.0.10", "x25519", "1.0.10", "");
  check("rails-7.1.0.rc1", "rails", "7.1.0.rc1", "");
  check("no_version", "no_version", "", "");
  check("-1.0", "-1.0", "", "");
}

TEST_CASE("gems: which gem a place in a gem home names") {
  CHECK(gem_of("gems/rack-3.0.8/lib/rack.rb") == "rack-3.0.8");
  CHECK(gem_of("gems/rack-3.0.8") == "");  // the directory itself is no file of it
  CHECK(gem_of("extensions/x86_64-linux/3.2.0/nio4r-2.7.0/nio4r_ext.so") == "nio4r-2.7.0");
  CHECK(gem_of("extensions/x86_64-linux/nio4r-2.7.0") == "");
  CHECK(gem_of("specifications/rack-3.0.8.gemspec") == "rack-3.0.8");
  CHECK(gem_of("specifications/default/json-2.6.3.gemspec") == "json-2.6.3");
  CHECK(gem_of("specifications/.gemspec") == "");
  CHECK(gem_of("doc/rack-3.0.8/ri/cache.ri") == "rack-3.0.8");
  CHECK(gem_of("build_info/rack-3.0.8.info") == "rack-3.0.8");
  CHECK(gem_of("cache/rack-3.0.8.gem") == "");
  CHECK(gem_of("bin/rackup") == "");
  CHECK(is_gem_cache("cache/rack-3.0.8.gem"));
  CHECK_FALSE(is_gem_cache("cache/sub/rack-3.0.8.gem"));
  CHECK_FALSE(is_gem_cache("gems/rack-3.0.8/cache/x.gem"));
}

namespace {

// The official ruby image's gem homes (its own /usr/local/lib/ruby/gems and
// bundler's /usr/local/bundle), a deployment bundle in the app, and a
// "specifications" directory that is no gem home.
struct RubyApp {
  const std::string bundle = "usr/local/bundle/";
  const std::string ruby = "usr/local/lib/ruby/gems/3.2.0/";
  const std::string vendor = "app/vendor/bundle/ruby/3.2.0/";
  const std::uint64_t rack = 300 + 4000 + 1200 + 50;         // gemspec, lib, doc, build_info
  const std::uint64_t nokogiri = 400 + 9000 + 70000 + 5000;  // gemspec, lib, its .so twice
  const std::uint64_t minitest = 200 + 3000;
  const std::uint64_t json_default = 150;
  const std::uint64_t puma = 250 + 6000 + 800;
  const std::uint64_t cached = 20000 + 300000;

  Image image() const {
    const std::string nok = "nokogiri-1.15.4-x86_64-linux";
    const std::string nok_ext = "extensions/x86_64-linux/3.2.0/" + nok + "/nokogiri/nokogiri.so";
    Image out;
    out.layers = {
        Layer{files(ruby, {{"specifications/minitest-5.18.0.gemspec", 200},
                           {"gems/minitest-5.18.0/lib/minitest.rb", 3000},
                           {"specifications/default/json-2.6.3.gemspec", 150}}),
              Encoding::None, true, "RUN make install"},
        Layer{files(bundle, {{"specifications/rack-3.0.8.gemspec", 300},
                             {"gems/rack-3.0.8/lib/rack.rb", 4000},
                             {"doc/rack-3.0.8/ri/cache.ri", 1200},
                             {"build_info/rack-3.0.8.info", 50},
                             {"specifications/" + nok + ".gemspec", 400},
                             {"gems/" + nok + "/lib/nokogiri.rb", 9000},
                             {"gems/" + nok + "/lib/nokogiri/3.2/nokogiri.so", 35000},
                             {nok_ext, 35000},
                             {"gems/" + nok + "/ext/nokogiri/include/x.h", 5000},
                             {"cache/rack-3.0.8.gem", 20000},
                             {"cache/" + nok + ".gem", 300000},
                             {"bin/rackup", 90}}),
              Encoding::Gzip, true, "RUN bundle install"},
        Layer{files(vendor, {{"specifications/puma-6.4.0.gemspec", 250},
                             {"gems/puma-6.4.0/lib/puma.rb", 6000},
                             {"extensions/x86_64-linux/3.2.0/puma-6.4.0/puma_http11.so", 800}}),
              Encoding::None, true, "COPY . /app"},
    };
    // Beside the homes: Ruby's library, the app, and a "specifications"
    // directory with no "gems" beside it.
    for (Entry e : {dir(ruby + "extensions"), file("usr/local/lib/ruby/3.2.0/json.rb", 900),
                    file("usr/local/bin/ruby", 700)})
      out.layers[0].entries.push_back(std::move(e));
    for (Entry e : {file("app/Gemfile.lock", 500), file("app/config.ru", 60),
                    file("opt/docs/specifications/fake-1.0.gemspec", 77)})
      out.layers[2].entries.push_back(std::move(e));
    return out;
  }
};

}  // namespace

TEST_CASE("gems: every gem of every gem home is ruby/<name>, its cache cache/gem") {
  const RubyApp app;
  const Analysed a(app.image());
  CHECK(bytes_of(a, "ruby", "rack") == app.rack);
  CHECK(bytes_of(a, "ruby", "nokogiri") == app.nokogiri);
  CHECK(bytes_of(a, "ruby", "minitest") == app.minitest);
  CHECK(bytes_of(a, "ruby", "json") == app.json_default);
  // A deployment bundle in the app is gems, not the app's code.
  CHECK(bytes_of(a, "ruby", "puma") == app.puma);
  const CategoryNode* rack = child_of(a, "ruby", "rack");
  REQUIRE(rack != nullptr);
  CHECK(rack->origins == std::map<std::string, std::uint64_t>{{"gem", app.rack}});
  std::uint64_t ruby_total = 0;
  for (const auto& c : a.attribution.categories)
    if (c.name == "ruby") ruby_total = c.bytes;
  CHECK(ruby_total == app.rack + app.nokogiri + app.minitest + app.json_default + app.puma);
  CHECK(bytes_of(a, "cache", "gem") == app.cached);
  CHECK(a.category_of("/usr/local/bundle/bin/rackup") != "ruby/rack");
  CHECK(a.category_of("/usr/local/lib/ruby/3.2.0/json.rb") != "ruby/json");
  CHECK(a.category_of("/app/config.ru") == "app/app");
  CHECK(a.category_of("/opt/docs/specifications/fake-1.0.gemspec") == "app/app");

  // Versions, and the platform left out of the name.
  Ownership owners(a.analysis.metadata);
  owners.add_gem_homes(*a.analysis.tree, {"/usr/local/bundle", "/app/vendor/bundle/ruby/3.2.0"});
  const auto* nok =
      owners.of("usr/local/bundle/gems/nokogiri-1.15.4-x86_64-linux/lib/nokogiri.rb").module;
  REQUIRE(nok != nullptr);
  CHECK(nok->package == "nokogiri");
  CHECK(nok->version == "1.15.4");
  CHECK(nok->installer == "gem");
  const auto* puma = owners.of("app/vendor/bundle/ruby/3.2.0/gems/puma-6.4.0/lib/puma.rb").module;
  REQUIRE(puma != nullptr);
  CHECK(puma->version == "6.4.0");
  CHECK(owners.of("usr/local/bundle/cache/rack-3.0.8.gem").module == nullptr);
}

TEST_CASE("findings: gem-cache counts the gem homes' cached archives") {
  const RubyApp app;
  const Analysed a(app.image());
  const Finding* gem = a.finding("gem-cache");
  REQUIRE(gem != nullptr);
  CHECK(gem->bytes == app.cached);
  REQUIRE(gem->paths.size() == 2);
  CHECK(gem->paths[0].path == "/usr/local/bundle/cache/nokogiri-1.15.4-x86_64-linux.gem");
  CHECK(gem->paths[0].bytes == 300000);
  CHECK(gem->layers == std::vector<std::uint32_t>{1});
  CHECK_THAT(gem->fix, Catch::Contains("bundle install && rm -rf") &&
                           Catch::Contains("gem cleanup") &&
                           Catch::Contains("layer 1 (RUN bundle install)"));
  CHECK(a.finding("package-cache") == nullptr);
}

// ----- Go and Rust programs --------------------------------------------------

TEST_CASE("binaries: Go build info and cargo auditable's section, parsed") {
  const auto go = parse_go_buildinfo(std::string(48, '\0') + go_buildinfo("go1.21.5", kModinfo));
  REQUIRE(go);
  CHECK(go->installer == "go");
  CHECK(go->package == "github.com/acme/server");
  CHECK(go->version == "v1.2.3");
  CHECK(go->toolchain == "go1.21.5");
  // Outside a module (go build main.go): the package path, no version.
  const auto bare =
      parse_go_buildinfo(go_buildinfo("go1.22.0", "path\tcommand-line-arguments\nbuild\tx=y\n"));
  REQUIRE(bare);
  CHECK(bare->package == "command-line-arguments");
  CHECK(bare->version.empty());

  const auto rust = parse_cargo_auditable(zlib_of(kAuditable));
  REQUIRE(rust);
  CHECK(rust->installer == "cargo");
  CHECK(rust->package == "ripgrep");
  CHECK(rust->version == "14.1.0");
}

TEST_CASE("binaries: damaged module information is none, never a crash") {
  const std::string good = go_buildinfo("go1.21.5", kModinfo);
  // Not 16-aligned, cut short anywhere, the pre-1.18 form, a varint past the end.
  CHECK_FALSE(parse_go_buildinfo(std::string(8, '\0') + good));
  for (std::size_t n = 0; n < good.size(); n += 7) {
    CAPTURE(n);
    CHECK_FALSE(parse_go_buildinfo(good.substr(0, n)));
  }
  CHECK_FALSE(parse_go_buildinfo(go_buildinfo("go1.16", kModinfo, 0x0)));
  std::string huge = good.substr(0, 32) + "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f";
  CHECK_FALSE(parse_go_buildinfo(huge));
  CHECK_FALSE(parse_go_buildinfo(go_buildinfo("go1.21.5", "")));
  CHECK_FALSE(parse_go_buildinfo(go_buildinfo("go1.21.5", "build\tx=y\n")));

  const std::string z = zlib_of(kAuditable);
  CHECK_FALSE(parse_cargo_auditable(z.substr(0, z.size() / 2)));
  std::string flipped = z;
  flipped[flipped.size() / 2] ^= 0x55;
  CHECK_FALSE(parse_cargo_auditable(flipped));
  CHECK_FALSE(parse_cargo_auditable("not zlib at all"));
  CHECK_FALSE(parse_cargo_auditable(""));
  CHECK_FALSE(parse_cargo_auditable(zlib_of("{\"packages\": [{\"name\": \"x\"}]}")));  // no root
  CHECK_FALSE(parse_cargo_auditable(zlib_of("[1, 2")));
  CHECK_FALSE(parse_cargo_auditable(zlib_of(kAuditable), 100));  // past the limit

  // ELF files whose headers point past their end.
  std::string elf = elf_file({{".go.buildinfo", good, true}}, {true, true, 4096});
  for (const std::size_t at : {32u, 40u, 56u, 60u, 62u}) {
    std::string bad = elf;
    bad.replace(at, 2, "\xff\x7f");
    StringReader rest(std::string_view(bad).substr(4096));
    CHECK_NOTHROW(inspect_binary_module(std::string_view(bad).substr(0, 4096), rest, bad.size()));
  }
}

namespace {

// The same programs in a layer read at offsets (uncompressed) and in one
// streamed through gzip, with a plain ELF beside them for comparison.
struct Programs {
  const std::string go = elf_file({{".go.buildinfo", go_buildinfo("go1.21.5", kModinfo), true},
                                   {".rodata", std::string(5000, 'r')}},
                                  {true, true});
  const std::string go_no_sections =
      elf_file({{".go.buildinfo", go_buildinfo("go1.21.5", kModinfo), true}}, {true, false});
  const std::string rust =
      elf_file({{".dep-v0", zlib_of(kAuditable)}, {".data", std::string(300, 'd'), true}});
  const std::string plain = elf_file({{".data", std::string(300, 'd'), true}});
  // Damaged: a Go header cut short, a .dep-v0 that does not inflate.
  const std::string bad_go = elf_file(
      {{".go.buildinfo", go_buildinfo("go1.21.5", kModinfo).substr(0, 40), true}}, {true, true});
  const std::string bad_rust =
      elf_file({{".dep-v0", zlib_of(kAuditable).substr(0, 30)}, {".data", "d", true}});

  Image image() const {
    Image out;
    for (const Encoding e : {Encoding::None, Encoding::Gzip}) {
      const std::string d = e == Encoding::None ? "usr/local/bin/" : "opt/streamed/";
      out.layers.push_back(
          Layer{{file_with(d + "server", go), file_with(d + "server-stripped", go_no_sections),
                 file_with(d + "rg", rust), file_with(d + "plain", plain),
                 file_with(d + "bad-go", bad_go), file_with(d + "bad-rust", bad_rust)},
                e,
                true,
                "COPY --from=build /out/ /" + d});
    }
    return out;
  }
};

}  // namespace

TEST_CASE("binaries: Go programs are go/<main module>, Rust ones rust/<root package>") {
  const Programs p;
  const Analysed a(p.image());
  const std::string plain = a.category_of("/usr/local/bin/plain");
  CHECK(plain == "app/copied");
  CHECK(a.category_of("/usr/local/bin/server") == "go/github.com/acme/server");
  CHECK(a.category_of("/usr/local/bin/server-stripped") == "go/github.com/acme/server");
  CHECK(a.category_of("/usr/local/bin/rg") == "rust/ripgrep");
  const CategoryNode* go = child_of(a, "go", "github.com/acme/server");
  REQUIRE(go != nullptr);
  // Read at offsets (2) and front to back by Go's note (2).
  CHECK(go->bytes == 2 * (p.go.size() + p.go_no_sections.size()));
  CHECK(go->origins == std::map<std::string, std::uint64_t>{{"go", go->bytes}});
  CHECK(bytes_of(a, "rust", "ripgrep") == p.rust.size());
  CHECK(child_of(a, "rust", "ripgrep")->origins.begin()->first == "cargo");
  check_module(a, "usr/local/bin/server", "go", "github.com/acme/server", "v1.2.3");
  check_module(a, "opt/streamed/server", "go", "github.com/acme/server", "v1.2.3");
  check_module(a, "usr/local/bin/rg", "cargo", "ripgrep", "14.1.0");

  // Streamed: Go's is found by its note and first writable segment.
  CHECK(a.category_of("/opt/streamed/server") == "go/github.com/acme/server");
  CHECK(a.category_of("/opt/streamed/server-stripped") == "go/github.com/acme/server");
  // cargo auditable's section needs the section table, which a stream
  // reaches only after the section: the program stays where it was.
  CHECK(a.category_of("/opt/streamed/rg") == a.category_of("/opt/streamed/plain"));

  // Damaged module information: each file where the plain one is.
  for (const std::string d : {"/usr/local/bin/", "/opt/streamed/"}) {
    CAPTURE(d);
    CHECK(a.category_of(d + "bad-go") == a.category_of(d + "plain"));
    CHECK(a.category_of(d + "bad-rust") == a.category_of(d + "plain"));
  }
}

TEST_CASE("binaries: a program a system package owns stays the package's") {
  const Programs p;
  Image image;
  image.layers = {Layer{{file_with("var/lib/dpkg/status",
                                   "Package: acme-server\nStatus: install ok installed\n"
                                   "Version: 1.2.3-1\n\n"),
                         file_with("var/lib/dpkg/info/acme-server.list", "/usr/bin/acme-server\n"),
                         file_with("usr/bin/acme-server", p.go)},
                        Encoding::None,
                        true,
                        "RUN apt-get install -y acme-server"}};
  const Analysed a(image);
  CHECK(a.category_of("/usr/bin/acme-server") == "os/acme-server");
}

TEST_CASE("binaries: a real Go program linked with cgo is found, at offsets and streamed") {
  // Debian builds these with cgo: the system linker puts .go.buildinfo 90 to
  // 150 KiB into the first writable segment, past the 64 KiB Go's own
  // reader searches without sections. Their modinfo names a path and no
  // module (GOPATH mode). setup.sh installs both (skopeo, and docker.io's runc).
  const std::vector<std::pair<std::string, std::string>> programs = {
      {"/usr/sbin/runc", "github.com/opencontainers/runc"},
      {"/usr/bin/skopeo", "github.com/containers/skopeo/cmd/skopeo"}};
  std::string path, module;
  for (const auto& [p, m] : programs)
    if (std::filesystem::is_regular_file(p)) {
      path = p;
      module = m;
      break;
    }
  INFO("needs runc or skopeo from Debian (setup.sh installs them)");
  REQUIRE_FALSE(path.empty());
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > (1u << 20));
  Image image;
  image.layers = {Layer{{file_with("usr/local/bin/prog", bytes)},
                        Encoding::None,
                        true,
                        "COPY --from=build /out/prog /usr/local/bin/"},
                  Layer{{file_with("opt/streamed/prog", bytes)},
                        Encoding::Gzip,
                        true,
                        "COPY --from=build /out/prog /opt/streamed/"}};
  const Analysed a(image);
  CHECK(a.category_of("/usr/local/bin/prog") == "go/" + module);
  CHECK(a.category_of("/opt/streamed/prog") == "go/" + module);
  check_module(a, "usr/local/bin/prog", "go", module, "");
  check_module(a, "opt/streamed/prog", "go", module, "");
}

TEST_CASE("findings: build-cache counts Go's and Cargo's caches, not the programs built") {
  const std::string go =
      elf_file({{".go.buildinfo", go_buildinfo("go1.21.5", kModinfo), true}}, {true, true});
  Image image;
  image.layers = {Layer{{file("etc/os-release", 100)}, Encoding::None, true, "FROM golang"},
                  Layer{{file("root/.cache/go-build/ab/abcdef-d", 7000),
                         file("go/pkg/mod/github.com/acme/lib@v1.0.0/lib.go", 3000),
                         file("go/pkg/mod/cache/download/github.com/acme/lib/@v/v1.0.0.zip", 2000),
                         file("usr/local/cargo/registry/cache/index.crates.io-6f17d22bba15001f/"
                              "memchr-2.7.1.crate",
                              900),
                         file("root/.cargo/git/checkouts/dep-1a2b/src/lib.rs", 400),
                         file_with("usr/local/bin/server", go)},
                        Encoding::Gzip,
                        true,
                        "RUN go build -o /usr/local/bin/server ./cmd/server"}};
  const Analysed a(image);
  CHECK(bytes_of(a, "cache", "go-build") == 7000);
  CHECK(bytes_of(a, "cache", "go-mod") == 5000);
  CHECK(bytes_of(a, "cache", "cargo") == 1300);
  CHECK(a.category_of("/usr/local/bin/server") == "go/github.com/acme/server");
  const Finding* cache = a.finding("build-cache");
  REQUIRE(cache != nullptr);
  CHECK(cache->bytes == 7000 + 5000 + 1300);
  CHECK(cache->paths.size() == 5);
  CHECK_THAT(cache->fix, Catch::Contains("--mount=type=cache,target=/root/.cache/go-build") &&
                             Catch::Contains("layer 1 (RUN go build"));
  CHECK(a.finding("package-cache") == nullptr);
}
