// Attribution and findings on an image assembled like a real pip-torch
// image on a CUDA runtime base: toolkit libraries, nvidia-* wheels, a torch
// tree, a dpkg database, caches, weights, and layers that hide bytes.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "image_builder.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/gate/gate.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/util/error.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

namespace {

const std::string kSite = "usr/local/lib/python3.11/site-packages";

// A safetensors file of `size` bytes: its header, then the tensor's bytes.
std::string safetensors(std::size_t size) {
  const std::string header = R"({"w":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})";
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out += header;
  out.resize(size, 'x');
  return out;
}

Image torch_on_runtime_image() {
  Image image;
  image.layers = {
      Layer{{dir("usr"), dir("usr/bin"), file("usr/bin/bash", 800),
             file("usr/lib/x86_64-linux-gnu/libc.so.6", 1200),
             file("usr/share/doc/bash/copyright", 50),
             file_with("var/lib/dpkg/info/bash.list",
                       "/.\n/usr\n/usr/bin\n/usr/bin/bash\n"
                       "/usr/share/doc/bash/copyright\n"),
             // Debian's lists still say /lib; the image keeps it in /usr/lib.
             file_with("var/lib/dpkg/info/libc6:amd64.list", "/lib/x86_64-linux-gnu/libc.so.6\n"),
             file("etc/hostname", 10)},
            Encoding::None,
            true,
            "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04"},
      Layer{{file("usr/local/cuda-12.4/targets/x86_64-linux/lib/libcublas.so.12.4.5", 3000),
             file("usr/local/cuda-12.4/targets/x86_64-linux/lib/libcublasLt.so.12", 5000),
             file("usr/lib/x86_64-linux-gnu/libcudnn.so.9", 7000),
             file("usr/local/cuda-12.4/include/cuda.h", 100),
             file("usr/lib/gcc/x86_64-linux-gnu/12/cc1", 900)},
            Encoding::Gzip,
            true,
            "RUN apt-get install cuda-libraries-12-4 libcudnn9 gcc"},
      Layer{{file(kSite + "/nvidia/cublas/lib/libcublas.so.12", 2000),
             file(kSite + "/nvidia/cublas/lib/libcublasLt.so.12", 4000),
             file_with(kSite + "/nvidia_cublas_cu12-12.4.5.8.dist-info/RECORD",
                       "nvidia/cublas/lib/libcublas.so.12,sha256=x,2000\n"
                       "nvidia/cublas/lib/libcublasLt.so.12,sha256=y,4000\n"
                       "nvidia_cublas_cu12-12.4.5.8.dist-info/RECORD,,\n"),
             file(kSite + "/torch/lib/libtorch_cuda.so", 8000),
             file(kSite + "/torch/__init__.py", 10), file(kSite + "/requests/api.py", 300),
             file_with(kSite + "/requests-2.32.3.dist-info/RECORD",
                       "requests/api.py,sha256=z,300\n\"requests-2.32.3.dist-info/RECORD\",,\n"),
             file("root/.cache/pip/http/a/b/c", 600), file("var/lib/apt/lists/deb_bookworm", 400),
             file("tmp/build.log", 20)},
            Encoding::Gzip,
            true,
            "RUN pip install torch requests"},
      Layer{{file_with("app/model.safetensors", safetensors(2000000)), file("app/main.py", 30),
             file("app/libfoo.a", 700)},
            Encoding::None,
            true,
            "COPY . /app"},
      Layer{{whiteout("tmp/build.log"), file("app/main.py", 31)},
            Encoding::None,
            true,
            "RUN rm /tmp/build.log && echo >> /app/main.py"},
  };
  return image;
}

struct Fixture {
  TempDir tmp;
  Analysis analysis;
  Attribution attribution;
  std::vector<Finding> findings;

  explicit Fixture(const RuleSet& rules = builtin_rules())
      : Fixture(torch_on_runtime_image(), rules) {}
  explicit Fixture(const Image& image, const RuleSet& rules = builtin_rules()) {
    write_file(tmp / "img.tar", docker_legacy_save(image));
    AnalyzeOptions options;
    options.capture = attribution_capture;
    analysis = analyze_image(tmp / "img.tar", options);
    attribution = attribute(analysis, rules);
    // No floor: the image is small, and these tests are about each finding.
    findings = find_waste(analysis, attribution, {}, FindingFloor{0, 0.0});
  }
  std::uint64_t bytes(const std::string& category, const std::string& child = "") const {
    const CategoryNode* n = attribution.find(category, child);
    return n != nullptr ? n->bytes : 0;
  }
  const Finding* finding(const std::string& id) const {
    for (const auto& f : findings)
      if (f.id == id) return &f;
    return nullptr;
  }
};

std::uint64_t record_size(const std::string& name) {
  for (const auto& l : torch_on_runtime_image().layers)
    for (const auto& e : l.entries)
      if (e.path.ends_with(name)) return e.content.size();
  return 0;
}

}  // namespace

TEST_CASE("attribution: the categories sum to the final bytes, in the fixed order") {
  const Fixture f;
  std::uint64_t sum = 0;
  std::vector<std::string> names;
  for (const auto& c : f.attribution.categories) {
    sum += c.bytes;
    names.push_back(c.name);
    std::uint64_t children = 0;
    for (const auto& k : c.children) children += k.bytes;
    CHECK(children == c.bytes);
  }
  CHECK(sum == f.analysis.final_bytes);
  CHECK(names == std::vector<std::string>{"cuda", "framework", "python", "node", "ruby", "go",
                                          "rust", "os", "app", "cache", "build-tools",
                                          "model-weights", "other"});
}

TEST_CASE("attribution: CUDA libraries by family and origin") {
  const Fixture f;
  CHECK(f.bytes("cuda") == 3000 + 5000 + 7000 + 2000 + 4000);
  const CategoryNode* cublas = f.attribution.find("cuda", "cublas");
  REQUIRE(cublas != nullptr);
  CHECK(cublas->bytes == 5000);
  CHECK(cublas->origins.at("toolkit") == 3000);
  CHECK(cublas->origins.at("pip") == 2000);
  const CategoryNode* lt = f.attribution.find("cuda", "cublaslt");
  REQUIRE(lt != nullptr);
  CHECK(lt->origins.at("toolkit") == 5000);
  CHECK(lt->origins.at("pip") == 4000);
  CHECK(f.bytes("cuda", "cudnn") == 7000);
}

TEST_CASE("attribution: frameworks, Python distributions, OS packages, caches, build tools") {
  const Fixture f;
  CHECK(f.bytes("framework", "torch") == 8010);
  CHECK(f.bytes("python", "requests") == 300 + record_size("requests-2.32.3.dist-info/RECORD"));
  CHECK(f.bytes("python", "nvidia_cublas_cu12") ==
        record_size("nvidia_cublas_cu12-12.4.5.8.dist-info/RECORD"));
  CHECK(f.bytes("os", "bash") == 850);
  CHECK(f.bytes("os", "libc6") == 1200);  // through the merged-/usr alias
  CHECK(f.bytes("cache", "pip") == 600);
  CHECK(f.bytes("cache", "apt-lists") == 400);
  CHECK(f.bytes("cache", "tmp") == 0);  // deleted in the last layer
  CHECK(f.bytes("build-tools") == 100 + 900 + 700);
  CHECK(f.bytes("model-weights") == 2000000);
  CHECK(f.bytes("app") == 31);
}

TEST_CASE("attribution: weights from_pretrained left in the Hugging Face cache are weights") {
  const std::string hub = "root/.cache/huggingface/hub/models--org--tiny/";
  Image image;
  image.layers = {
      Layer{{file_with(hub + "blobs/4f3a9c", safetensors(3000000)),
             file(hub + "blobs/9e1b27", 700),  // config.json's blob
             file("root/.cache/huggingface/token", 40), file("root/.cache/pip/http/a/b/c", 2000000),
             file_with("tmp/scratch.safetensors", safetensors(1500000))},
            Encoding::None,
            true,
            "RUN python -c 'AutoModel.from_pretrained(\"org/tiny\")'"}};
  TempDir tmp;
  write_file(tmp / "img.tar", docker_legacy_save(image));
  AnalyzeOptions options;
  options.capture = attribution_capture;  // the first bytes, which name a model's format
  const Analysis a = analyze_image(tmp / "img.tar", options);
  const Attribution attr = attribute(a, builtin_rules());
  REQUIRE(attr.find("model-weights", "safetensors") != nullptr);
  CHECK(attr.find("model-weights", "safetensors")->bytes == 3000000);
  // The rest of the cache is cache, and pip's cache is no model.
  CHECK(attr.find("cache", "huggingface")->bytes == 700 + 40);
  CHECK(attr.find("cache", "pip")->bytes == 2000000);
  // What /tmp holds is still a cache to delete, a model or not.
  CHECK(attr.find("cache", "tmp")->bytes == 1500000);
  const auto found = find_waste(a, attr, {}, FindingFloor{0, 0.0});
  const auto baked = std::find_if(found.begin(), found.end(),
                                  [](const Finding& x) { return x.id == "model-weights-baked"; });
  REQUIRE(baked != found.end());
  CHECK(baked->bytes == 3000000);
}

TEST_CASE("findings: beside pip's cuDNN, the copy apt put in the base image is the one to go") {
  // NVIDIA's cudnn-runtime images install cuDNN with apt; torch loads the
  // nvidia-cudnn wheel pip brings.
  const std::string sp = "usr/local/lib/python3.10/dist-packages/";
  Image image;
  image.layers = {Layer{{file("usr/lib/x86_64-linux-gnu/libcudnn.so.9", 6000),
                         file_with("var/lib/dpkg/info/libcudnn9-cuda-12.list",
                                   "/usr/lib/x86_64-linux-gnu/libcudnn.so.9\n")},
                        Encoding::None,
                        true,
                        "ADD rootfs.tar /"},
                  Layer{{file(sp + "nvidia/cudnn/lib/libcudnn.so.9", 5700)},
                        Encoding::None,
                        true,
                        "RUN pip install torch"}};
  const Fixture f(image);
  const Finding* dup = f.finding("cuda-duplicated");
  REQUIRE(dup != nullptr);
  CHECK(dup->bytes == 6000);  // the larger, apt's: not the smaller pip copy
  CHECK_THAT(dup->message, Catch::Contains("the apt copy"));
  REQUIRE_FALSE(dup->paths.empty());
  CHECK(dup->paths.front().path == "/usr/lib/x86_64-linux-gnu/libcudnn.so.9");
}

TEST_CASE("attribution: gcc-N-base is an OS package, not a compiler") {
  // It holds only docs and is required by libgcc-s1 in every Debian and
  // Ubuntu image; calling it devel-in-final flagged every runtime image.
  Image image;
  image.layers = {
      Layer{{file("usr/share/doc/gcc-12-base/copyright", 68),
             file_with("var/lib/dpkg/info/gcc-12-base:amd64.list",
                       "/usr/share/doc/gcc-12-base/copyright\n"),
             file("usr/bin/x86_64-linux-gnu-gcc-12", 900),
             file_with("var/lib/dpkg/info/gcc-12.list", "/usr/bin/x86_64-linux-gnu-gcc-12\n")},
            Encoding::None,
            true,
            "debootstrap"}};
  const Fixture f(image);
  CHECK(f.bytes("os", "gcc-12-base") == 68);
  CHECK(f.bytes("build-tools", "gcc-12") == 900);
  const Finding* devel = f.finding("devel-in-final");
  REQUIRE(devel != nullptr);
  CHECK(devel->bytes == 900);
}

TEST_CASE("attribution: NVIDIA's versioned -dev and -static packages are build tools") {
  // A devel image's static CUDA libraries come from libcublas-dev-12-4,
  // cuda-nvrtc-dev-12-4, libcudnn9-static-cuda-12: gigabytes a final
  // stage never needs, not the CUDA run time.
  const std::string lib = "usr/local/cuda-12.4/targets/x86_64-linux/lib/";
  Image image;
  image.layers = {Layer{
      {file(lib + "libcublas_static.a", 5000), file(lib + "libcublas.so.12", 700),
       file_with("var/lib/dpkg/info/libcublas-dev-12-4.list", "/" + lib + "libcublas_static.a\n"),
       file_with("var/lib/dpkg/info/libcublas-12-4.list", "/" + lib + "libcublas.so.12\n"),
       file(lib + "libnvrtc_static.a", 3000),
       file_with("var/lib/dpkg/info/cuda-nvrtc-dev-12-4.list", "/" + lib + "libnvrtc_static.a\n"),
       file("usr/lib/x86_64-linux-gnu/libcudnn_adv_static_v9.a", 4000),
       file_with("var/lib/dpkg/info/libcudnn9-static-cuda-12.list",
                 "/usr/lib/x86_64-linux-gnu/libcudnn_adv_static_v9.a\n")},
      Encoding::None,
      true,
      "debootstrap"}};
  const Fixture f(image);
  CHECK(f.bytes("build-tools", "libcublas-dev-12-4") == 5000);
  CHECK(f.bytes("build-tools", "cuda-nvrtc-dev-12-4") == 3000);
  CHECK(f.bytes("build-tools", "libcudnn9-static-cuda-12") == 4000);
  CHECK(f.bytes("cuda", "cublas") == 700);  // the run-time library stays CUDA
  const Finding* devel = f.finding("devel-in-final");
  REQUIRE(devel != nullptr);
  CHECK(devel->bytes == 5000 + 3000 + 4000);
  const Finding* statics = f.finding("static-libs");
  REQUIRE(statics != nullptr);
  CHECK(statics->bytes == 5000 + 3000 + 4000);
}

TEST_CASE(
    "findings: with Triton in the image, its C toolchain is not devel-in-final, CUDA's devel files "
    "are") {
  // Triton compiles its launcher with gcc and Python.h when the app starts
  // (vLLM, SGLang, torch.compile): removing them, as devel-in-final's fix
  // says, would kill the server.
  const auto devel_bytes = [](bool with_triton) -> std::uint64_t {
    std::vector<Entry> files = {
        file("usr/bin/x86_64-linux-gnu-gcc-12", 900),
        file_with("var/lib/dpkg/info/gcc-12.list", "/usr/bin/x86_64-linux-gnu-gcc-12\n"),
        file("usr/include/python3.11/Python.h", 300), file("usr/local/cuda-12.4/bin/nvcc", 5000),
        file("usr/local/cuda-12.4/targets/x86_64-linux/include/cuda.h", 700),
        // A host -dev package whose name begins like CUDA's (libcu...): the host's.
        file("usr/include/x86_64-linux-gnu/curl/curl.h", 400),
        file_with("var/lib/dpkg/info/libcurl4-openssl-dev:amd64.list",
                  "/usr/include/x86_64-linux-gnu/curl/curl.h\n")};
    if (with_triton)
      files.push_back(file("opt/venv/lib/python3.11/site-packages/triton/__init__.py", 40));
    Image image;
    image.layers = {Layer{files, Encoding::None, true, "RUN build"}};
    const Fixture f(image);
    const Finding* devel = f.finding("devel-in-final");
    return devel != nullptr ? devel->bytes : 0;
  };
  CHECK(devel_bytes(false) == 900 + 300 + 400 + 5000 + 700);
  CHECK(devel_bytes(true) == 5000 + 700);
}

TEST_CASE("findings: files handed over one by one make the findings of the kept list") {
  const Fixture f;
  for (const std::vector<Glob>& ignore :
       {std::vector<Glob>{}, std::vector<Glob>{Glob("/app/**")}}) {
    WasteFinder finder(f.analysis, ignore);
    const Attribution streamed = attribute(
        f.analysis, builtin_rules(), [&](const AttributedFile& file, const std::string& category) {
          finder.add(file, category);
        });
    const FindingFloor no_floor{0, 0.0};
    const auto from_sink = finder.finish(streamed, no_floor);
    const auto from_list = find_waste(f.analysis, f.attribution, ignore, no_floor);
    REQUIRE(from_sink.size() == from_list.size());
    for (std::size_t i = 0; i < from_list.size(); ++i) {
      INFO(from_list[i].id);
      CHECK(from_sink[i].id == from_list[i].id);
      CHECK(from_sink[i].bytes == from_list[i].bytes);
      CHECK(from_sink[i].base_bytes == from_list[i].base_bytes);
      CHECK(from_sink[i].message == from_list[i].message);
      CHECK(from_sink[i].fix == from_list[i].fix);
      CHECK(from_sink[i].layers == from_list[i].layers);
      CHECK(from_sink[i].info == from_list[i].info);
      REQUIRE(from_sink[i].paths.size() == from_list[i].paths.size());
      for (std::size_t k = 0; k < from_list[i].paths.size(); ++k) {
        CHECK(from_sink[i].paths[k].path == from_list[i].paths[k].path);
        CHECK(from_sink[i].paths[k].bytes == from_list[i].paths[k].bytes);
      }
    }
  }
}

TEST_CASE("findings: each with the bytes its fix saves") {
  const Fixture f;
  const auto saves = [&](const std::string& id) {
    const Finding* x = f.finding(id);
    return x != nullptr ? x->bytes : 0;
  };
  // The toolkit copies of cublas and cublasLt go with a base image.
  CHECK(saves("cuda-duplicated") == 3000 + 5000);
  CHECK(saves("devel-in-final") == 1700);
  CHECK(saves("pip-cache") == 600);
  CHECK(saves("apt-lists") == 400);
  CHECK(saves("deleted-in-later-layer") == 20);
  CHECK(saves("overwritten-in-later-layer") == 30);
  CHECK(saves("model-weights-baked") == 2000000);
  CHECK(saves("static-libs") == 700);
  CHECK(saves("docs") == 50);
  CHECK(saves("package-cache") == 0);
  REQUIRE(f.finding("cuda-duplicated") != nullptr);
  CHECK_THAT(f.finding("cuda-duplicated")->fix, Catch::Contains("--flavor base"));
  CHECK(f.finding("cuda-duplicated")->layers == std::vector<std::uint32_t>{1});
  const Finding* deleted = f.finding("deleted-in-later-layer");
  REQUIRE(deleted != nullptr);
  CHECK_THAT(deleted->message, Catch::Contains("/tmp/build.log") &&
                                   Catch::Contains("pip install") &&
                                   Catch::Contains("rm /tmp/build.log"));
  CHECK(deleted->layers == std::vector<std::uint32_t>{2, 4});
  CHECK(f.findings.front().id == "model-weights-baked");  // largest saving first
}

TEST_CASE("findings: --ignore keeps paths out of findings") {
  Fixture f;
  const auto findings = find_waste(f.analysis, f.attribution, {Glob("/app/**")});
  for (const auto& x : findings) {
    CHECK(x.id != "model-weights-baked");
    CHECK(x.id != "static-libs");
    CHECK(x.id != "overwritten-in-later-layer");
  }
}

TEST_CASE("rules: a user rule is tried before the built-in ones") {
  const RuleSet rules = with_user_rules_text(
      builtin_rules(),
      R"({"rules":[{"category":"app","child":"vendored","paths":["/usr/local/lib/python3.11/site-packages/requests/**"]}]})",
      "user.json");
  const Fixture f(rules);
  CHECK(f.bytes("app", "vendored") == 300);
  CHECK(f.bytes("python", "requests") == record_size("requests-2.32.3.dist-info/RECORD"));
}

TEST_CASE("rules: a bad rules file is an error naming it and the rule") {
  CHECK_THROWS_WITH(
      with_user_rules_text(builtin_rules(), R"({"rules":[{"category":"gpu","paths":["**"]}]})",
                           "mine.json"),
      Catch::Contains("mine.json") && Catch::Contains("rule 1") && Catch::Contains("gpu"));
  CHECK_THROWS_AS(with_user_rules_text(builtin_rules(), R"({"rules":[{"category":"app"}]})", "m"),
                  InputError);
  CHECK_THROWS_AS(with_user_rules_text(builtin_rules(), "{", "m"), InputError);
  CHECK_THROWS_AS(with_user_rules(builtin_rules(), "/nonexistent/rules.json"), InputError);
}

TEST_CASE("gate: budgets on categories and children, and denied findings") {
  const Fixture f;
  GateConfig g;
  g.budgets = {parse_budget("cuda=21kB", builtin_rules().categories),
               parse_budget("cuda/cudnn=6999", builtin_rules().categories)};
  g.deny = {"devel-in-final", "package-cache"};
  const GateResult r = evaluate_gate(f.analysis, g, &f.attribution, &f.findings);
  CHECK_FALSE(r.passed);
  REQUIRE(r.checks.size() == 4);
  CHECK(r.checks[0].rule == "budget:cuda");
  CHECK(r.checks[0].passed);  // 21,000 bytes, limit 21 kB
  CHECK(r.checks[1].rule == "budget:cuda/cudnn");
  CHECK_FALSE(r.checks[1].passed);
  CHECK(r.checks[2].rule == "deny:devel-in-final");
  CHECK_FALSE(r.checks[2].passed);
  CHECK(r.checks[3].rule == "deny:package-cache");
  CHECK(r.checks[3].passed);
  CHECK_THROWS_WITH(parse_budget("gpu=1GB", builtin_rules().categories), Catch::Contains("gpu"));
  CHECK_THROWS_AS(parse_budget("cuda", builtin_rules().categories), InputError);
  CHECK_THROWS_AS(parse_budget("cuda=lots", builtin_rules().categories), InputError);
}

TEST_CASE("glob: single stars stay in a segment, double stars cross them") {
  CHECK(Glob("/usr/local/cuda*/**").matches("/usr/local/cuda-12.4/lib64/libcublas.so"));
  CHECK_FALSE(Glob("/usr/local/cuda*/**").matches("/usr/local/lib/x"));
  CHECK(Glob("**/libcublas*").matches("/a/b/libcublas.so.12"));
  CHECK_FALSE(Glob("**/libcublas*").matches("/a/b/libtorch_cublas.so"));
  CHECK(Glob("/app/**/__pycache__/**").matches("/app/__pycache__/x.pyc"));
  CHECK(Glob("*.a").matches("libx.a"));
  CHECK_FALSE(Glob("*.a").matches("dir/libx.a"));
  CHECK(Glob("gcc*").matches("gcc-12"));
  CHECK(Glob("?.txt").matches("a.txt"));
  CHECK_FALSE(Glob("?.txt").matches("/.txt"));
}

TEST_CASE("findings: --hash finds identical content at different paths, seekable or streamed") {
  Image image;
  image.layers = {Layer{{file("opt/a.bin", 4000, 'x'), file("opt/c.bin", 4000, 'y'),
                         hardlink("opt/a-link", "opt/a.bin"), file("opt/small", 10, 'x')},
                        Encoding::Gzip},
                  Layer{{file("app/b.bin", 4000, 'x'), file("app/d.bin", 10, 'z')}}};
  TempDir tmp;
  write_file(tmp / "img.tar", docker_legacy_save(image));
  write_file(tmp / "img.tar.zst", encode(docker_legacy_save(image), Encoding::Zstd));
  for (const std::string name : {"img.tar", "img.tar.zst"}) {
    INFO(name);
    AnalyzeOptions options;
    options.hash_duplicates = true;
    const Analysis a = analyze_image(tmp / name, options);
    REQUIRE(a.duplicates.size() == 1);
    CHECK(a.duplicates[0].size == 4000);
    REQUIRE(a.duplicates[0].files.size() == 2);
    CHECK(a.duplicates[0].files[0].path == "/opt/a.bin");
    CHECK(a.duplicates[0].files[1].path == "/app/b.bin");
    const Attribution attr = attribute(a, builtin_rules());
    const auto findings = find_waste(a, attr, {});
    const auto it = std::find_if(findings.begin(), findings.end(),
                                 [](const Finding& f) { return f.id == "duplicate-content"; });
    REQUIRE(it != findings.end());
    CHECK(it->bytes == 4000);
    CHECK(find_waste(a, attr, {Glob("/app/**")}).size() == findings.size() - 1);
  }
  AnalyzeOptions plain;
  CHECK(analyze_image(tmp / "img.tar", plain).duplicates.empty());
}

TEST_CASE("attribution: a venv inside the WORKDIR is CUDA, frameworks and Python, not the app") {
  // uv sync's layout: the project in /app, its venv in /app/.venv.
  const std::string sp = "app/.venv/lib/python3.11/site-packages/";
  Image image;
  image.layers = {
      Layer{{file("usr/local/cuda-12.4/targets/x86_64-linux/lib/libcublas.so.12", 70)},
            Encoding::None,
            true,
            "ADD rootfs.tar /"},
      Layer{{file("app/.venv/pyvenv.cfg", 3), file(sp + "torch/lib/libtorch_cuda.so", 600),
             file(sp + "nvidia/cudnn/lib/libcudnn.so.9", 300),
             file(sp + "nvidia/cublas/lib/libcublas.so.12", 80),
             file(sp + "numpy/core/_multiarray.so", 40)},
            Encoding::None,
            true,
            "RUN uv sync --frozen # buildkit"},
      Layer{{file("app/main.py", 9)}, Encoding::None, true, "COPY . /app # buildkit"}};
  TempDir tmp;
  write_file(tmp / "img.tar", docker_legacy_save(image));
  Analysis a = analyze_image(tmp / "img.tar", AnalyzeOptions{});
  for (const char* dir : {"/app", "/app/"}) {
    CAPTURE(dir);
    a.working_dir = dir;
    const Attribution attr = attribute(a, builtin_rules());
    REQUIRE(attr.find("framework", "torch") != nullptr);
    CHECK(attr.find("framework", "torch")->bytes == 600);
    REQUIRE(attr.find("cuda", "cudnn") != nullptr);
    CHECK(attr.find("cuda", "cudnn")->bytes == 300);
    CHECK(attr.find("cuda", "cublas")->bytes == 80 + 70);
    REQUIRE(attr.find("python", "site-packages") != nullptr);
    CHECK(attr.find("python", "site-packages")->bytes == 40);
    // The code, and the venv's own files no rule names, are the app.
    REQUIRE(attr.find("app", "workdir") != nullptr);
    CHECK(attr.find("app", "workdir")->bytes == 9 + 3);
  }
}

TEST_CASE("attribution: the image's WORKDIR and files its COPY layers add are app") {
  Image image;
  image.layers = {Layer{{file("usr/bin/tool", 100), file("data/seed.csv", 40)},
                        Encoding::None,
                        true,
                        "ADD rootfs.tar /"},
                  Layer{{file("srv2/svc/main.py", 50), file("srv2/svc/__pycache__/m.pyc", 5),
                         file("data/config.yaml", 30), file("etc/svc.conf", 20)},
                        Encoding::None,
                        true,
                        "COPY . /srv2/svc # buildkit"},
                  Layer{{file("data/cache.db", 70)}, Encoding::None, true, "RUN make-cache"}};
  TempDir tmp;
  write_file(tmp / "img.tar", docker_legacy_save(image));
  Analysis a = analyze_image(tmp / "img.tar", AnalyzeOptions{});
  a.working_dir = "/srv2/svc";
  const Attribution attr = attribute(a, builtin_rules());
  const CategoryNode* workdir = attr.find("app", "workdir");
  REQUIRE(workdir != nullptr);
  CHECK(workdir->bytes == 55);  // a .pyc under WORKDIR is still app: no cache rule names it
  const CategoryNode* copied = attr.find("app", "copied");
  REQUIRE(copied != nullptr);
  // /data/config.yaml, and /etc/svc.conf: with no package database in the
  // image, a system path copied in is the app's too. A root filesystem
  // ADDed at / is a base image, not the app.
  CHECK(copied->bytes == 30 + 20);
  CHECK(attr.find("other", "other")->bytes == 40 + 70);  // seed.csv (base), cache.db (RUN)
  CHECK(attr.find("other", "system-unowned")->bytes == 100);
}

TEST_CASE("findings: the ids, titles and fixes are data/findings.json's, in its order") {
  std::ifstream in(std::string(IMGSMITH_SOURCE_DIR) + "/data/findings.json");
  REQUIRE(in);
  const auto doc = nlohmann::json::parse(in);
  std::vector<std::string> ids;
  for (const auto& f : doc.at("findings")) ids.push_back(f.at("id").get<std::string>());
  CHECK(finding_ids() == ids);
  // Each finding the analysis reports carries its row's fix (the title may
  // be made more precise: which libraries, which layers), followed by the
  // step that added its bytes where the row says how (fix_in_step), unless
  // its bytes are all the base image's, whose fix is another base.
  const Fixture f;
  REQUIRE(!f.findings.empty());
  for (const auto& finding : f.findings) {
    const auto row = std::find(ids.begin(), ids.end(), finding.id);
    REQUIRE(row != ids.end());
    const auto& data = doc.at("findings")[static_cast<std::size_t>(row - ids.begin())];
    INFO(finding.id);
    const std::string fix = data.at("fix").get<std::string>();
    const bool in_step =
        data.contains("fix_in_step") && finding.fix.starts_with(fix + "; in this image layer ");
    CHECK((finding.fix == fix || in_step || finding.base_bytes == finding.bytes));
  }
}
