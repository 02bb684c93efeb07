// Attribution on installs that pip's RECORD files do not describe: Debian's
// apt-installed Python and PyTorch, conda prefixes, files no RECORD lists in
// site-packages and dist-packages; rule order; the findings' floor; and the
// glob matcher that every rule goes through, against a reference.
#include <catch2/catch.hpp>
#include <random>
#include <regex>

#include "image_builder.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/gate/gate.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/models/model_format.hpp"
#include "rpmdb.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

namespace {

struct Attributed {
  TempDir tmp;
  Analysis analysis;
  Attribution attribution;
  std::vector<Finding> findings;

  explicit Attributed(const Image& image, const RuleSet& rules = builtin_rules()) {
    write_file(tmp / "img.tar", docker_legacy_save(image));
    AnalyzeOptions options;
    options.capture = is_package_database;
    analysis = analyze_image(tmp / "img.tar", options);
    attribution = attribute(analysis, rules);
    findings = find_waste(analysis, attribution, {});
  }
  std::uint64_t bytes(const std::string& category, const std::string& child = "") const {
    const CategoryNode* n = attribution.find(category, child);
    return n != nullptr ? n->bytes : 0;
  }
  std::uint64_t origin(const std::string& category, const std::string& child,
                       const std::string& origin) const {
    const CategoryNode* n = attribution.find(category, child);
    if (n == nullptr) return 0;
    const auto it = n->origins.find(origin);
    return it == n->origins.end() ? 0 : it->second;
  }
  const Finding* finding(const std::string& id) const {
    for (const auto& f : findings)
      if (f.id == id) return &f;
    return nullptr;
  }
};

// A dpkg .list: the package's paths, its directories included, as dpkg writes them.
std::string dpkg_list(const std::vector<std::string>& paths) {
  std::string out = "/.\n";
  for (const auto& p : paths) out += "/" + p + "\n";
  return out;
}

const std::string kDist = "usr/lib/python3/dist-packages";

// Debian bookworm with `apt-get install python3-torch python3-numpy`, in
// miniature: the interpreter's packages, numpy and torch as Debian ships
// them (egg-info directories, no RECORD), torch's native library package.
Image apt_torch_image() {
  Image image;
  image.layers = {Layer{
      {
          file("usr/bin/python3.11", 6000),
          file("usr/lib/python3.11/os.py", 400),
          file("usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", 7000),
          file("usr/share/doc/python3.11/copyright", 50),
          file_with("var/lib/dpkg/info/python3.11-minimal.list",
                    dpkg_list({"usr", "usr/bin", "usr/bin/python3.11",
                               "usr/share/doc/python3.11/copyright"})),
          file_with("var/lib/dpkg/info/libpython3.11-stdlib:amd64.list",
                    dpkg_list({"usr/lib/python3.11", "usr/lib/python3.11/os.py"})),
          file_with("var/lib/dpkg/info/libpython3.11:amd64.list",
                    dpkg_list({"usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"})),
          file(kDist + "/numpy/__init__.py", 900),
          file(kDist + "/numpy/core/_multiarray_umath.so", 20000),
          file(kDist + "/numpy/core/lib/libnpymath.a", 4480),
          file(kDist + "/numpy-1.24.2.egg-info/PKG-INFO", 30),
          file("usr/bin/f2py3", 20),
          file_with(
              "var/lib/dpkg/info/python3-numpy.list",
              dpkg_list({kDist, kDist + "/numpy", kDist + "/numpy/__init__.py",
                         kDist + "/numpy/core/_multiarray_umath.so",
                         kDist + "/numpy/core/lib/libnpymath.a", kDist + "/numpy-1.24.2.egg-info",
                         kDist + "/numpy-1.24.2.egg-info/PKG-INFO", "usr/bin/f2py3"})),
          file(kDist + "/torch/__init__.py", 1000),
          file(kDist + "/torch/_C.cpython-311-x86_64-linux-gnu.so", 3000),
          file(kDist + "/torch-1.13.1.egg-info/PKG-INFO", 40),
          file_with("var/lib/dpkg/info/python3-torch.list",
                    dpkg_list({kDist + "/torch", kDist + "/torch/__init__.py",
                               kDist + "/torch/_C.cpython-311-x86_64-linux-gnu.so",
                               kDist + "/torch-1.13.1.egg-info",
                               kDist + "/torch-1.13.1.egg-info/PKG-INFO"})),
          file("usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13", 90000),
          file("usr/lib/x86_64-linux-gnu/libc10.so.1.13", 5000),
          file_with("var/lib/dpkg/info/libtorch1.13:amd64.list",
                    dpkg_list({"usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13",
                               "usr/lib/x86_64-linux-gnu/libc10.so.1.13"})),
          file("usr/lib/x86_64-linux-gnu/libcublas.so.12", 8000),
          file_with("var/lib/dpkg/info/libcublas12:amd64.list",
                    dpkg_list({"usr/lib/x86_64-linux-gnu/libcublas.so.12"})),
          file_with(
              "var/lib/dpkg/status",
              "Package: python3-torch\nStatus: install ok installed\nVersion: 1.13.1+dfsg-4\n\n"
              "Package: python3-numpy\nVersion: 1:1.24.2-1\n\n"),
          // A run-time package that ships a static archive (Debian's libsocket++1).
          file("usr/lib/x86_64-linux-gnu/libsocket++.a", 3300),
          file_with("var/lib/dpkg/info/libsocket++1:amd64.list",
                    dpkg_list({"usr/lib/x86_64-linux-gnu/libsocket++.a"})),
          // manpages-dev: documentation, not a build tool, for all its -dev.
          file("usr/share/man/man2/open.2.gz", 900),
          file_with("var/lib/dpkg/info/manpages-dev.list",
                    dpkg_list({"usr/share/man/man2/open.2.gz"})),
          // Byte code py3compile wrote after install: in no list, it follows its source.
          file("usr/lib/python3.11/__pycache__/os.cpython-311.pyc", 333),
          file(kDist + "/numpy/__pycache__/__init__.cpython-311.pyc", 444),
          // Files in a site directory that no database lists.
          file(kDist + "/vendored/blob.so", 700),
          file("usr/local/lib/python3.11/dist-packages/extra.so", 60),
      },
      Encoding::None,
      true,
      "RUN apt-get install -y python3-torch python3-numpy"}};
  return image;
}

}  // namespace

TEST_CASE(
    "owners: apt-installed torch is the framework, numpy is python/numpy, interpreter is the "
    "interpreter") {
  const Attributed f(apt_torch_image());
  // python3-torch's Python side and libtorch1.13's native libraries.
  CHECK(f.bytes("framework", "torch") == 1000 + 3000 + 40 + 90000 + 5000);
  CHECK(f.origin("framework", "torch", "apt") == 1000 + 3000 + 40 + 90000 + 5000);
  // Named as pip names it, with apt as its origin; its own static archive included.
  CHECK(f.bytes("python", "numpy") == 900 + 20000 + 4480 + 30 + 20 + 444);
  CHECK(f.origin("python", "numpy", "apt") == f.bytes("python", "numpy"));
  CHECK(f.attribution.find("python", "python3-numpy") == nullptr);
  // The interpreter: the python3.11 packages' bytes and nothing under dist-packages.
  CHECK(f.bytes("python", "interpreter") == 6000 + 400 + 7000 + 50 + 333);
  // Nobody's files in site directories are Python, not interpreter.
  CHECK(f.bytes("python", "site-packages") == 700 + 60);
  CHECK(f.origin("python", "site-packages", "unowned") == 760);
  // Debian's CUDA libraries are CUDA, from apt.
  CHECK(f.bytes("cuda", "cublas") == 8000);
  CHECK(f.origin("cuda", "cublas", "apt") == 8000);
  // numpy's own archive is not a build tool the user left behind.
  CHECK(f.finding("static-libs") == nullptr);
  CHECK(f.finding("devel-in-final") == nullptr);
}

TEST_CASE("owners: every package of a conda prefix by its name, conda as origin") {
  const std::string site = "opt/conda/lib/python3.11/site-packages";
  const auto meta = [](const std::string& name, const std::string& version,
                       const std::vector<std::string>& files) {
    nlohmann::json doc{{"name", name}, {"version", version}, {"build", "h0"}, {"files", files}};
    return file_with("opt/conda/conda-meta/" + name + "-" + version + "-h0.json", doc.dump());
  };
  Image image;
  image.layers = {
      Layer{{
                file("opt/conda/bin/python3.11", 5000),
                file("opt/conda/lib/python3.11/os.py", 300),
                meta("python", "3.11.9", {"bin/python3.11", "lib/python3.11/os.py"}),
                file(site + "/numpy/__init__.py", 800),
                file(site + "/numpy-1.26.4.dist-info/METADATA", 20),
                meta("numpy", "1.26.4",
                     {"lib/python3.11/site-packages/numpy/__init__.py",
                      "lib/python3.11/site-packages/numpy-1.26.4.dist-info/METADATA"}),
                file(site + "/torch/__init__.py", 1200),
                file(site + "/torch-2.3.0.dist-info/METADATA", 30),
                meta("pytorch", "2.3.0",
                     {"lib/python3.11/site-packages/torch/__init__.py",
                      "lib/python3.11/site-packages/torch-2.3.0.dist-info/METADATA"}),
                file(site + "/yaml/__init__.py", 100),
                meta("pyyaml", "6.0.1", {"lib/python3.11/site-packages/yaml/__init__.py"}),
                file("opt/conda/lib/libcublas.so.12", 9000),
                meta("libcublas", "12.4.5", {"lib/libcublas.so.12"}),
                file("opt/conda/lib/libssl.so.3", 600),
                meta("openssl", "3.3.1", {"lib/libssl.so.3"}),
                file("opt/conda/lib/libtorch_cpu.so", 70000),
                meta("libtorch", "2.3.0", {"lib/libtorch_cpu.so"}),
            },
            Encoding::None,
            true,
            "RUN conda install pytorch numpy pyyaml"}};
  const Attributed f(image);
  CHECK(f.bytes("framework", "torch") == 1200 + 30 + 70000);
  CHECK(f.origin("framework", "torch", "conda") == 1200 + 30 + 70000);
  CHECK(f.bytes("python", "numpy") == 820);
  CHECK(f.origin("python", "numpy", "conda") == 820);
  CHECK(f.bytes("python", "pyyaml") == 100);  // no dist-info: the conda package's name
  CHECK(f.bytes("python", "interpreter") == 5300);
  CHECK(f.bytes("cuda", "cublas") == 9000);
  CHECK(f.origin("cuda", "cublas", "conda") == 9000);
  CHECK(f.bytes("os", "openssl") == 600);
  CHECK(f.bytes("other") == f.bytes("other", "system-unowned"));  // only conda-meta itself
}

TEST_CASE("owners: pip distributions own what their RECORD misses in their top-level directories") {
  const std::string site = "usr/local/lib/python3.11/site-packages";
  Image image;
  image.layers = {Layer{
      {
          file(site + "/requests/api.py", 300),
          file_with(site + "/requests-2.32.3.dist-info/RECORD", "requests/api.py,sha256=z,300\n"),
          file(site + "/requests/_speedups.so", 500),  // added after install, not in RECORD
          file(site + "/loose/thing.so", 70),          // nobody's
          file(site + "/egg/mod.py", 40),
          file_with(site + "/egg-0.1-py3.11.egg-info/installed-files.txt",
                    "../egg/mod.py\nPKG-INFO\n"),
          file(site + "/egg-0.1-py3.11.egg-info/PKG-INFO", 10),
          file("usr/local/lib/python3.11/os.py", 400),
      },
      Encoding::None,
      true,
      "RUN pip install requests"}};
  const Attributed f(image);
  const std::uint64_t record = std::string("requests/api.py,sha256=z,300\n").size();
  CHECK(f.bytes("python", "requests") == 300 + 500 + record);
  CHECK(f.origin("python", "requests", "pip") == 800 + record);
  CHECK(f.bytes("python", "egg") == 40 + 10 + std::string("../egg/mod.py\nPKG-INFO\n").size());
  CHECK(f.bytes("python", "site-packages") == 70);
  CHECK(f.bytes("python", "interpreter") == 400);
}

TEST_CASE("owners: what pip put in a venv is told apart from what it put in the system") {
  const std::string system = "usr/local/lib/python3.11/site-packages";
  const std::string venv = "opt/venv/lib/python3.11/site-packages";
  const std::string record = "requests/api.py,sha256=z,300\n";
  Image image;
  image.layers = {Layer{
      {
          file(system + "/requests/api.py", 300),
          file_with(system + "/requests-2.32.3.dist-info/RECORD", record),
          file_with("opt/venv/pyvenv.cfg", "home = /usr/local/bin\n"),
          file(venv + "/requests/api.py", 5000),
          file_with(venv + "/requests-2.31.0.dist-info/RECORD", "requests/api.py,sha256=y,5000\n"),
          file("opt/tool/lib/python3.11/site-packages/requests/api.py",
               70),  // a prefix, not a venv
          file_with("opt/tool/lib/python3.11/site-packages/requests-2.0.dist-info/RECORD", record),
      },
      Encoding::None,
      true,
      "RUN pip install requests"}};
  const Attributed f(image);
  CHECK(f.origin("python", "requests", "pip") == (300 + record.size()) + (70 + record.size()));
  CHECK(f.origin("python", "requests", "pip, venv /opt/venv") ==
        5000 + std::string("requests/api.py,sha256=y,5000\n").size());
}

TEST_CASE("rules: of two overlapping rules the first in file order wins") {
  const std::string site = "usr/local/lib/python3.11/site-packages";
  Image image;
  image.layers = {Layer{{file(site + "/pkg/x.so", 100), file(site + "/pkg/y.py", 10)},
                        Encoding::None,
                        true,
                        "COPY x"}};
  const std::string a = R"({"category":"app","child":"first","paths":["**/site-packages/pkg/**"]})";
  const std::string b = R"({"category":"other","child":"second","paths":["**/*.so"]})";
  const Attributed ab(
      image, with_user_rules_text(builtin_rules(), "{\"rules\":[" + a + "," + b + "]}", "ab"));
  CHECK(ab.bytes("app", "first") == 110);
  CHECK(ab.bytes("other", "second") == 0);
  const Attributed ba(
      image, with_user_rules_text(builtin_rules(), "{\"rules\":[" + b + "," + a + "]}", "ba"));
  CHECK(ba.bytes("other", "second") == 100);
  CHECK(ba.bytes("app", "first") == 10);
}

TEST_CASE("findings: below the significance floor a finding is info, and --deny ignores it",
          "[slow]") {
  Image image;
  image.layers = {Layer{{file("usr/lib/libbig.so", 50'000'000), file("usr/lib/libsmall.a", 4000),
                         file("root/.cache/pip/x", 2'000'000)},
                        Encoding::None,
                        true,
                        "RUN make"}};
  const Attributed f(image);
  const Finding* statics = f.finding("static-libs");
  REQUIRE(statics != nullptr);
  CHECK(statics->info);  // 4 kB of a 52 MB image
  const Finding* pip = f.finding("pip-cache");
  REQUIRE(pip != nullptr);
  CHECK_FALSE(pip->info);
  CHECK_FALSE(f.findings.front().info);
  CHECK(f.findings.back().info);  // significant ones come first
  GateConfig g;
  g.deny = {"static-libs", "pip-cache"};
  const GateResult r = evaluate_gate(f.analysis, g, &f.attribution, &f.findings);
  REQUIRE(r.checks.size() == 2);
  CHECK(r.checks[0].passed);
  CHECK_FALSE(r.checks[1].passed);
  // A lower floor makes it significant again.
  const auto strict = find_waste(f.analysis, f.attribution, {}, FindingFloor{1000, 0.0});
  for (const auto& x : strict) CHECK_FALSE(x.info);
}

namespace {

// The reference: the glob translated to a regular expression, as the
// header documents it.
std::regex reference(const std::string& glob) {
  std::string re;
  for (std::size_t i = 0; i < glob.size(); ++i) {
    const char c = glob[i];
    if (c == '*' && i + 1 < glob.size() && glob[i + 1] == '*') {
      if (i + 2 < glob.size() && glob[i + 2] == '/') {
        re += "(.*/)?";
        i += 2;
      } else {
        re += ".*";
        i += 1;
      }
    } else if (c == '*') {
      re += "[^/]*";
    } else if (c == '?') {
      re += "[^/]";
    } else if (c == '[') {
      const auto close = glob.find(']', i + 2);
      std::string body = glob.substr(i + 1, close - i - 1);
      if (body[0] == '!') body[0] = '^';
      re += body[0] == '^' ? "[" + body + "/]" : "(?!/)[" + body + "]";
      i = close;
    } else {
      if (std::string("\\^$.|+(){}").find(c) != std::string::npos) re += '\\';
      re += c;
    }
  }
  return std::regex(re, std::regex::ECMAScript);
}

}  // namespace

TEST_CASE("glob: every form matches as its reference does") {
  // The forms that were silently dead.
  CHECK(Glob("**/site-packages/**").matches("/usr/lib/python3/site-packages/x/y.py"));
  CHECK(Glob("**/dist-packages/**").matches("/usr/lib/python3/dist-packages/numpy/__init__.py"));
  CHECK(Glob("**/micromamba/**").matches("/root/micromamba/pkgs/x"));
  CHECK(Glob("**/core.py").matches("/a/b/core.py"));
  CHECK(Glob("**/core.py").matches("core.py"));
  CHECK_FALSE(Glob("**/core.py").matches("/a/b/xcore.py"));
  CHECK(Glob("**/lib[0-9].so").matches("/usr/lib/lib7.so"));
  CHECK_FALSE(Glob("**/lib[!0-9].so").matches("/usr/lib/lib7.so"));
  CHECK(Glob("/opt/[ab]*/x").matches("/opt/beta/x"));

  const std::vector<std::string> tokens = {
      "a", "b", "ab", "/", "*", "**", "?", "[ab]", "[!a]", "**/", "/**", "site-packages", "."};
  const std::vector<std::string> segments = {"a",   "b",  "ab", "ba", "site-packages",
                                             "x.a", "aa", ""};
  std::mt19937 rng(20261201);
  int compared = 0;
  for (int p = 0; p < 400; ++p) {
    std::string pattern;
    const int n = 1 + static_cast<int>(rng() % 5);
    for (int k = 0; k < n; ++k) pattern += tokens[rng() % tokens.size()];
    const Glob glob(pattern);
    const std::regex re = reference(pattern);
    for (int t = 0; t < 40; ++t) {
      std::string path = rng() % 2 ? "/" : "";
      const int depth = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < depth; ++k) path += (k ? "/" : "") + segments[rng() % segments.size()];
      INFO("glob " << pattern << " path " << path);
      CHECK(glob.matches(path) == std::regex_match(path, re));
      ++compared;
    }
  }
  CHECK(compared == 16000);
}

namespace {

// An rpm header blob: index entries (tag, type, offset, count), then data.
struct RpmHeaderWriter {
  std::string index, data;
  int entries = 0;
  static void be32(std::string& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
  void strings(std::uint32_t tag, std::uint32_t type, const std::vector<std::string>& values) {
    be32(index, tag), be32(index, type), be32(index, static_cast<std::uint32_t>(data.size()));
    be32(index, static_cast<std::uint32_t>(values.size()));
    for (const auto& v : values) data += v + '\0';
    ++entries;
  }
  void int32s(std::uint32_t tag, const std::vector<std::uint32_t>& values) {
    while (data.size() % 4) data.push_back('\0');
    be32(index, tag), be32(index, 4), be32(index, static_cast<std::uint32_t>(data.size()));
    be32(index, static_cast<std::uint32_t>(values.size()));
    for (const auto v : values) be32(data, v);
    ++entries;
  }
  std::string blob() const {
    std::string out;
    be32(out, static_cast<std::uint32_t>(entries));
    be32(out, static_cast<std::uint32_t>(data.size()));
    return out + index + data;
  }
};

}  // namespace

TEST_CASE(
    "rpm headers: files from dirnames and basenames, damaged headers refused and never read "
    "past") {
  using attribution_detail::parse_rpm_header;
  using attribution_detail::RpmPackage;
  RpmHeaderWriter w;
  w.strings(1000, 6, {"libcublas-12-4"});
  w.strings(1001, 6, {"12.4.5.8"});
  w.strings(1002, 6, {"1"});
  w.strings(1117, 8, {"libcublas.so.12", "libcublasLt.so.12", "README"});
  w.strings(1118, 8, {"/usr/local/cuda-12.4/lib64/", "/usr/share/doc/cublas/"});
  w.int32s(1116, {0, 0, 1});
  const std::string blob = w.blob();
  RpmPackage p;
  REQUIRE(parse_rpm_header(blob, p));
  CHECK(p.name == "libcublas-12-4");
  CHECK(p.version == "12.4.5.8-1");
  CHECK(p.files == std::vector<std::string>{"/usr/local/cuda-12.4/lib64/libcublas.so.12",
                                            "/usr/local/cuda-12.4/lib64/libcublasLt.so.12",
                                            "/usr/share/doc/cublas/README"});
  // Every truncation is refused (ASan would see a read past the end).
  for (std::size_t n = 0; n < blob.size(); ++n) CHECK_FALSE(parse_rpm_header(blob.substr(0, n), p));
  // Counts and offsets that point outside the data.
  RpmHeaderWriter bad = w;
  bad.index[4 * 4 * 3 + 12 + 3] = static_cast<char>(0x7f);  // the basenames' count
  CHECK_FALSE(parse_rpm_header(bad.blob(), p));
  RpmHeaderWriter bad_index;
  bad_index.strings(1000, 6, {"x"});
  bad_index.strings(1117, 8, {"a"});
  bad_index.strings(1118, 8, {"/d/"});
  bad_index.int32s(1116, {5});  // no fifth directory
  CHECK_FALSE(parse_rpm_header(bad_index.blob(), p));
  // Random bytes never crash it.
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string noise = blob;
    for (int k = 0; k < 4; ++k) noise[rng() % noise.size()] = static_cast<char>(rng());
    parse_rpm_header(noise, p);
  }
  CHECK(attribution_detail::read_rpmdb("not a database").empty());
  CHECK(attribution_detail::read_rpmdb(std::string(4096, '\0')).empty());
}

namespace {

// A zip's local file header for a stored entry, then its data: what
// torch.save and Keras 3 write first.
std::string zip_entry(const std::string& name, const std::string& data) {
  std::string h = "PK\x03\x04";
  const auto le = [&](std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) h.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  le(20, 2), le(0, 2), le(0, 2), le(0, 2), le(0, 2), le(0, 4);
  le(data.size(), 4), le(data.size(), 4), le(name.size(), 2), le(0, 2);
  return h + name + data;
}

std::string padded(std::string head, std::size_t size) {
  head.resize(size, '\x01');
  return head;
}

}  // namespace

TEST_CASE("models: judged by their first bytes, never by their name") {
  std::string st_header = R"({"__metadata__":{"format":"pt"}})";
  std::string safetensors(8, '\0');
  safetensors[0] = static_cast<char>(st_header.size());
  safetensors += st_header;
  const std::string torch_zip =
      zip_entry("archive/data.pkl", "\x80\x02}q\x00.") + zip_entry("archive/data/0", "");
  const std::string keras_zip = zip_entry("metadata.json", "{}") + zip_entry("config.json", "{}");
  const std::string onnx = std::string("\x08\x08\x12\x07pytorch", 10);
  Image image;
  image.layers = {Layer{
      {
          file_with("srv/pytorch_model.bin",
                    padded(torch_zip, 2'000'000)),  // a .bin that is torch's zip
          file_with("srv/weights.dat",
                    padded(safetensors, 1'500'000)),  // safetensors with any name
          file_with("srv/llama.q4", padded("GGUF\x03\x00\x00\x00", 3'000'000)),  // GGUF
          file_with("srv/net.model", padded(onnx, 1'200'000)),                   // ONNX
          file_with("srv/model.keras", padded(keras_zip, 1'100'000)),            // Keras 3
          file_with(
              "srv/legacy.pt",
              padded(std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 14),
                     1'300'000)),                                // torch.save legacy
          file("usr/lib/firmware/blob.bin", 2'500'000, '\x7f'),  // a .bin that is no model
          file_with("srv/data.zip",
                    padded(zip_entry("readme.txt", "hi"), 1'400'000)),    // a zip that is no model
          file_with("srv/small.safetensors", padded(safetensors, 5000)),  // below the floor
      },
      Encoding::Gzip,
      true,
      "COPY models /srv"}};
  TempDir tmp;
  write_file(tmp / "img.tar", docker_legacy_save(image));
  AnalyzeOptions options;
  options.capture = attribution_capture;
  const Analysis analysis = analyze_image(tmp / "img.tar", options);
  const Attribution attr = attribute(analysis, builtin_rules());
  const auto child = [&](const std::string& name) {
    const CategoryNode* n = attr.find("model-weights", name);
    return n != nullptr ? n->bytes : 0;
  };
  CHECK(child("pytorch") == 2'000'000 + 1'300'000);
  CHECK(child("safetensors") == 1'500'000);
  CHECK(child("gguf") == 3'000'000);
  CHECK(child("onnx") == 1'200'000);
  CHECK(child("keras") == 1'100'000);
  CHECK(attr.find("model-weights")->bytes ==
        2'000'000 + 1'300'000 + 1'500'000 + 3'000'000 + 1'200'000 + 1'100'000);
  for (const auto& f : attr.files)
    if (f.path == "/usr/lib/firmware/blob.bin" || f.path == "/srv/data.zip" ||
        f.path == "/srv/small.safetensors")
      CHECK(attr.categories[f.category].name != "model-weights");
  // The heads cost a few kB, not the files.
  std::uint64_t kept = 0;
  for (const auto& h : analysis.file_heads) kept += h.content.size();
  CHECK(kept <= 8 * kModelHeadBytes);
}
