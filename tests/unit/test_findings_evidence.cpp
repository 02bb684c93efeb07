// Findings true for the image at hand: a package manager's own state
// rewritten by each install is no finding, a file a package database lists
// keeps its owner wherever it sits, an image with no package database counts
// what the user copied as the app, and numpy or HDF5 data is not a model.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "analysed_image.hpp"
#include "image_builder.hpp"
#include "imgsmith/analysis/waste.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

namespace {

std::string list_of(const std::vector<std::string>& paths) {
  std::string out = "/.\n";
  for (const auto& p : paths) out += "/" + p + "\n";
  return out;
}

// A base with Debian's state files, then two RUNs of apt-get install that
// rewrite them (some at the same size, some larger), then a real edit of a
// config file the first RUN wrote and a chmod -R of its data.
Image repeated_apt_steps() {
  Image image;
  image.layers = {
      Layer{{file("usr/bin/bash", 800), file("var/lib/dpkg/status", 1000),
             file("var/cache/debconf/templates.dat", 2000), file("etc/passwd", 300),
             file("etc/ld.so.cache", 400),
             file_with("var/lib/dpkg/info/bash.list", list_of({"usr/bin/bash"}))},
            Encoding::None,
            true,
            "/bin/sh -c #(nop) ADD file:0123 in / "},
      Layer{{file("usr/bin/curl", 700), file("var/lib/dpkg/status", 1000, 'y'),
             file("var/cache/debconf/templates.dat", 2100), file("etc/passwd", 300, 'z'),
             file("etc/ld.so.cache", 450), file("var/log/apt/history.log", 90),
             file("etc/app.conf", 10), file("data/a/x", 5000),
             file("var/cache/apt/pkgcache.bin", 3000),
             file_with("var/lib/dpkg/info/curl.list", list_of({"usr/bin/curl"}))},
            Encoding::None,
            true,
            "RUN /bin/sh -c apt-get install -y curl # buildkit"},
      Layer{{file("usr/bin/jq", 600), file("var/lib/dpkg/status", 1200),
             file("var/cache/debconf/templates.dat", 2100, 'q'),
             file("var/log/apt/history.log", 180), file("var/cache/apt/pkgcache.bin", 3000, 'p'),
             file_with("var/lib/dpkg/info/jq.list", list_of({"usr/bin/jq"}))},
            Encoding::None,
            true,
            "RUN /bin/sh -c apt-get install -y jq # buildkit"},
      Layer{{file("etc/app.conf", 12), file("data/a/x", 5000, 'w')},
            Encoding::None,
            true,
            "RUN /bin/sh -c echo >> /etc/app.conf && chmod -R g+w /data # buildkit"},
  };
  image.empty_history = {{1, "/bin/sh -c #(nop)  CMD [\"bash\"]"}};
  return image;
}

}  // namespace

TEST_CASE("findings: the state apt and dpkg rewrite on every install is counted but no finding") {
  const Analysed a(repeated_apt_steps());
  REQUIRE(a.analysis.base_layers == 1);
  // dive's figures count every hidden byte, the state files' included.
  std::uint64_t state_bytes = 0, other_bytes = 0;
  std::multiset<std::string> state_paths, other_paths;
  for (const auto& w : a.analysis.waste) {
    (w.package_state ? state_paths : other_paths).insert(w.path);
    (w.package_state ? state_bytes : other_bytes) += w.bytes;
  }
  // Which waste is marked, by hand: each state file once per layer pair
  // that rewrote it, grouped apart from the app's re-adds.
  CHECK(state_paths == std::multiset<std::string>{"/var/lib/dpkg/status", "/var/lib/dpkg/status",
                                                  "/var/cache/debconf/templates.dat",
                                                  "/var/cache/debconf/templates.dat", "/etc/passwd",
                                                  "/etc/ld.so.cache", "/var/log/apt/history.log"});
  CHECK(other_paths ==
        std::multiset<std::string>{"/etc/app.conf", "/data/a/x", "/var/cache/apt/pkgcache.bin"});
  // status 1000+1000, templates 2000+2100, passwd 300, ld.so.cache 400, history.log 90.
  CHECK(state_bytes == 1000 + 1000 + 2000 + 2100 + 300 + 400 + 90);
  CHECK(other_bytes == 10 + 5000 + 3000);
  CHECK(a.analysis.wasted_bytes >= state_bytes + other_bytes);
  // The real edit and the chmod are findings; the state is in neither.
  const Finding* overwritten = a.finding("overwritten-in-later-layer");
  REQUIRE(overwritten != nullptr);
  CHECK(overwritten->bytes == 10);
  CHECK_THAT(overwritten->message, Catch::Contains("/etc/app.conf"));
  const Finding* readded = a.finding("metadata-only-readd");
  REQUIRE(readded != nullptr);
  CHECK(readded->bytes == 5000);
  // apt's binary cache, rewritten at one size by the next apt-get: the
  // package cache's waste (the hidden copy and the visible one), not a chmod.
  const Finding* caches = a.finding("package-cache");
  REQUIRE(caches != nullptr);
  CHECK(caches->bytes == 3000 + 3000);
  for (const Finding& f : a.findings)
    for (const auto& p : f.paths) {
      INFO(f.id << ": " << p.path);
      CHECK_FALSE(is_package_manager_state(p.path));
    }
  // Nothing tells the user to change the base for its dpkg status: the
  // base's bytes hidden here are all state.
  for (const Finding& f : a.findings) CHECK_THAT(f.message, !Catch::StartsWith("from the base"));
}

TEST_CASE("findings: package-manager state is matched by the table, its neighbours are not") {
  for (const char* state :
       {"/var/lib/dpkg/status", "/var/lib/dpkg/triggers/File", "/var/cache/debconf/config.dat-old",
        "/etc/gshadow-", "/etc/ld.so.cache", "/var/log/apt/eipp.log.xz",
        "/usr/lib/sysimage/rpm/rpmdb.sqlite", "/lib/apk/db/installed",
        "/opt/conda/conda-meta/history", "/var/cache/fontconfig/abc-le64.cache-8"}) {
    INFO(state);
    CHECK(is_package_manager_state(state));
  }
  for (const char* not_state :
       {"/var/lib/dpkg/info/bash.list.d/x", "/etc/app.conf", "/var/log/app.log",
        "/opt/conda/conda-meta/numpy-1.26.json", "/usr/share/mime/packages/freedesktop.org.xml",
        "/etc/passwd.d/x"}) {
    INFO(not_state);
    CHECK_FALSE(is_package_manager_state(not_state));
  }
}

TEST_CASE("attribution: byte code pip's RECORD lists stays its distribution's in a WORKDIR venv") {
  const std::string site = "app/venv/lib/python3.11/site-packages";
  Image image;
  image.layers = {
      Layer{{file("app/venv/pyvenv.cfg", 40), file(site + "/fastjson/__init__.py", 3000),
             file(site + "/fastjson/__pycache__/__init__.cpython-311.pyc", 2500),
             file_with(site + "/fastjson-1.0.dist-info/RECORD",
                       "fastjson/__init__.py,sha256=a,3000\n"
                       "fastjson/__pycache__/__init__.cpython-311.pyc,,\n"
                       "fastjson-1.0.dist-info/RECORD,,\n"),
             // The app's own byte code, which no installer lists: a cache.
             file("app/__pycache__/main.cpython-311.pyc", 700), file("app/main.py", 90)},
            Encoding::None,
            true,
            "RUN /bin/sh -c python -m venv /app/venv && pip install fastjson # buildkit"}};
  const Analysed a(image);
  CHECK(a.category_of("/" + site + "/fastjson/__pycache__/__init__.cpython-311.pyc") ==
        "python/fastjson");
  CHECK(a.category_of("/app/__pycache__/main.cpython-311.pyc") == "cache/pycache");
  const CategoryNode* pycache = a.attribution.find("cache", "pycache");
  REQUIRE(pycache != nullptr);
  CHECK(pycache->bytes == 700);
}

TEST_CASE("attribution: a model file a package lists is its package's, not baked weights") {
  const std::string site = "usr/local/lib/python3.11/site-packages";
  // An ONNX ModelProto's first bytes: ir_version 8, then the producer's name.
  std::string onnx = std::string("\x08\x08\x12\x07pytorch", 11);
  onnx.resize(2'000'000, '\0');
  Image image;
  image.layers = {Layer{{file_with(site + "/vad/data/vad.onnx", onnx),
                         file_with(site + "/vad-5.1.dist-info/RECORD",
                                   "vad/data/vad.onnx,,\nvad-5.1.dist-info/RECORD,,\n"),
                         file_with("models/detector.onnx", onnx)},
                        Encoding::None,
                        true,
                        "RUN /bin/sh -c pip install vad # buildkit"}};
  const Analysed a(image);
  CHECK(a.category_of("/" + site + "/vad/data/vad.onnx") == "python/vad");
  CHECK(a.category_of("/models/detector.onnx") == "model-weights/onnx");
  const Finding* weights = a.finding("model-weights-baked");
  REQUIRE(weights != nullptr);
  CHECK(weights->bytes == onnx.size());
}

TEST_CASE("attribution: in an image with no package database what the user copied is the app") {
  // FROM scratch: COPY hello /bin/hello, COPY certs, COPY the app.
  Image scratch;
  scratch.layers = {
      Layer{{file("bin/hello", 5000)}, Encoding::None, true, "COPY hello /bin/hello # buildkit"},
      Layer{{file("etc/ssl/certs/ca-certificates.crt", 200)},
            Encoding::None,
            true,
            "COPY /etc/ssl/certs /etc/ssl/certs # buildkit"},
      Layer{{file("app/static/index.html", 40)}, Encoding::None, true, "COPY static /app/static"}};
  const Analysed a(scratch);
  CHECK(a.analysis.base_layers == 0);
  CHECK(a.category_of("/bin/hello") == "app/copied");
  CHECK(a.category_of("/etc/ssl/certs/ca-certificates.crt") == "app/copied");
  CHECK(a.category_of("/app/static/index.html") == "app/app");
  CHECK(a.attribution.find("other", "system-unowned") == nullptr);

  // With a dpkg database and no history to tell the base, a system path
  // copied in stays unowned: the base's own COPY steps look the same.
  Image debian = scratch;
  debian.layers.insert(debian.layers.begin(),
                       Layer{{file("usr/bin/bash", 800),
                              file_with("var/lib/dpkg/info/bash.list", list_of({"usr/bin/bash"}))},
                             Encoding::None,
                             true,
                             "/bin/sh -c #(nop) ADD file:0123 in / "});
  const Analysed d(debian);
  CHECK(d.analysis.base_layers == 0);
  CHECK(d.category_of("/bin/hello") == "other/system-unowned");
  CHECK(d.category_of("/usr/bin/bash") == "os/bash");
}

TEST_CASE("attribution: numpy arrays and HDF5 files are data unless they show a model") {
  std::string npy =
      "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (500000,), }";
  npy.resize(2'000'000, '\0');
  std::string hdf5_data = std::string("\x89HDF\r\n\x1a\n", 8) + "dataset features";
  hdf5_data.resize(2'000'000, '\0');
  std::string keras = std::string("\x89HDF\r\n\x1a\n", 8) + std::string(200, '\0') +
                      "keras_version" + std::string(8, '\0') + "2.15.0backend";
  keras.resize(2'000'000, '\0');
  Image image;
  image.layers = {
      Layer{{file_with("app/data/features.npy", npy), file_with("app/data/train.h5", hdf5_data),
             file_with("app/model/embeddings.npy", npy),
             file_with("app/model/config.json", "{\"model_type\": \"bert\"}"),
             file_with("app/model/classifier.h5", keras)},
            Encoding::None,
            true,
            "COPY . /app # buildkit"}};
  const Analysed a(image);
  CHECK(a.category_of("/app/data/features.npy") == "app/app");
  CHECK(a.category_of("/app/data/train.h5") == "app/app");
  CHECK(a.category_of("/app/model/embeddings.npy") == "model-weights/numpy");
  CHECK(a.category_of("/app/model/classifier.h5") == "model-weights/keras");
  const Finding* weights = a.finding("model-weights-baked");
  REQUIRE(weights != nullptr);
  CHECK(weights->bytes == npy.size() + keras.size());
}

TEST_CASE("attribution: a CUDA library package's lintian overrides are no CUDA library") {
  Image image;
  image.layers = {Layer{{file("usr/lib/x86_64-linux-gnu/libcublas.so.11", 9000),
                         file("usr/share/lintian/overrides/libcublas11", 120),
                         file("usr/share/doc/libcublas11/copyright", 300),
                         file_with("var/lib/dpkg/info/libcublas11:amd64.list",
                                   list_of({"usr/lib/x86_64-linux-gnu/libcublas.so.11",
                                            "usr/share/lintian/overrides/libcublas11",
                                            "usr/share/doc/libcublas11/copyright"})),
                         file("usr/share/lintian/overrides/libcudnn8", 80)},
                        Encoding::None,
                        true,
                        "RUN /bin/sh -c apt-get install -y libcublas11 # buildkit"}};
  const Analysed a(image);
  CHECK(a.category_of("/usr/lib/x86_64-linux-gnu/libcublas.so.11") == "cuda/cublas");
  CHECK(a.category_of("/usr/share/lintian/overrides/libcublas11") == "os/libcublas11");
  CHECK(a.category_of("/usr/share/doc/libcublas11/copyright") == "os/libcublas11");
  CHECK(a.category_of("/usr/share/lintian/overrides/libcudnn8") == "other/system-unowned");
  const CategoryNode* cublas = a.attribution.find("cuda", "cublas");
  REQUIRE(cublas != nullptr);
  CHECK(cublas->bytes == 9000);
}

namespace {

// Debian's cuBLAS 11 from apt beside pip's nvidia-cublas-cu11 wheel, and a
// library a wheel bundles inside its own package beside another wheel's.
Image apt_and_pip_cublas() {
  const std::string site = "usr/local/lib/python3.10/dist-packages";
  Image image;
  image.layers = {
      Layer{{file("usr/bin/bash", 800),
             file_with("var/lib/dpkg/info/bash.list", list_of({"usr/bin/bash"}))},
            Encoding::None,
            true,
            "/bin/sh -c #(nop) ADD file:0123 in / "},
      Layer{{file("usr/lib/x86_64-linux-gnu/libcublas.so.11.10.3.66", 9000),
             file("usr/lib/x86_64-linux-gnu/libcublasLt.so.11.10.3.66", 12000),
             file("usr/share/lintian/overrides/libcublas11", 120),
             file_with("var/lib/dpkg/info/libcublas11:amd64.list",
                       list_of({"usr/lib/x86_64-linux-gnu/libcublas.so.11.10.3.66",
                                "usr/share/lintian/overrides/libcublas11"})),
             file_with("var/lib/dpkg/info/libcublaslt11:amd64.list",
                       list_of({"usr/lib/x86_64-linux-gnu/libcublasLt.so.11.10.3.66"}))},
            Encoding::None,
            true,
            "RUN /bin/sh -c apt-get install -y libcublas11 # buildkit"},
      Layer{
          {file(site + "/nvidia/cublas/lib/libcublas.so.11", 9500),
           file(site + "/nvidia/cublas/lib/libcublasLt.so.11", 12500),
           file_with(site + "/nvidia_cublas_cu11-11.10.3.66.dist-info/RECORD",
                     "nvidia/cublas/lib/libcublas.so.11,,\nnvidia/cublas/lib/libcublasLt.so.11,,\n"
                     "nvidia_cublas_cu11-11.10.3.66.dist-info/RECORD,,\n"),
           file(site + "/cupy_backends/lib/libcufft.so.10", 3000),
           file_with(
               site + "/cupy_cuda11x-12.0.0.dist-info/RECORD",
               "cupy_backends/lib/libcufft.so.10,,\ncupy_cuda11x-12.0.0.dist-info/RECORD,,\n"),
           file(site + "/nvidia/cufft/lib/libcufft.so.10", 3500),
           file_with(site + "/nvidia_cufft_cu11-10.9.0.58.dist-info/RECORD",
                     "nvidia/cufft/lib/libcufft.so.10,,\nnvidia_cufft_cu11-10.9.0.58.dist-info/"
                     "RECORD,,\n")},
          Encoding::None,
          true,
          "RUN /bin/sh -c pip install torch==1.13.1 cupy-cuda11x # buildkit"}};
  image.empty_history = {{1, "/bin/sh -c #(nop)  CMD [\"bash\"]"}};
  return image;
}

}  // namespace

TEST_CASE("findings: a duplicated CUDA library's fix names who installed the copy that can go") {
  const Analysed a(apt_and_pip_cublas());
  const Finding* dup = a.finding("cuda-duplicated");
  REQUIRE(dup != nullptr);
  // apt's cuBLAS can go (the wheel is what torch loads); of cuFFT, the
  // copy cupy bundles is the smaller, and nothing but cupy can drop it.
  CHECK(dup->bytes == 9000 + 12000 + 3000);
  CHECK_THAT(dup->fix, Catch::Contains("apt-get purge libcublas11 libcublaslt11"));
  CHECK_THAT(dup->fix, Catch::Contains("RUN apt-get install -y libcublas11"));
  CHECK_THAT(dup->fix,
             Catch::Contains("no safe fix is known for the bundled copy (in cupy_cuda11x)"));
  // Not the toolkit's fix: no nvidia/cuda image is involved.
  CHECK_THAT(dup->fix, !Catch::Contains("--flavor base"));
  for (const auto& p : dup->paths) CHECK_THAT(p.path, !Catch::Contains("lintian"));
}

TEST_CASE("findings: a conda CUDA library beside a pip wheel: the fix names the conda packages") {
  const std::string site = "opt/conda/lib/python3.11/site-packages";
  Image image;
  image.layers = {Layer{
      {file("opt/conda/lib/libcublas.so.12.1.3.1", 7000),
       file("opt/conda/lib/libcublasLt.so.12.1.3.1", 8000),
       file_with(
           "opt/conda/conda-meta/libcublas-12.1.3.1-0.json",
           R"({"name": "libcublas", "version": "12.1.3.1", "files": ["lib/libcublas.so.12.1.3.1",
                     "lib/libcublasLt.so.12.1.3.1"]})"),
       file(site + "/nvidia/cublas/lib/libcublas.so.12", 7500),
       file(site + "/nvidia/cublas/lib/libcublasLt.so.12", 8500),
       file_with(site + "/nvidia_cublas_cu12-12.1.3.1.dist-info/RECORD",
                 "nvidia/cublas/lib/libcublas.so.12,,\nnvidia/cublas/lib/libcublasLt.so.12,,\n"
                 "nvidia_cublas_cu12-12.1.3.1.dist-info/RECORD,,\n")},
      Encoding::None,
      true,
      "RUN /bin/sh -c conda install -y pytorch-cuda=12.1 && pip install torch # buildkit"}};
  const Analysed a(image);
  const Finding* dup = a.finding("cuda-duplicated");
  REQUIRE(dup != nullptr);
  CHECK(dup->bytes == 7000 + 8000);  // the smaller copy
  CHECK_THAT(dup->fix, Catch::Contains("the conda packages libcublas ("));
  CHECK_THAT(dup->fix, Catch::Contains("from conda or from pip, not both"));
}

TEST_CASE("findings: a cache's fix names the step that left it, not the base's") {
  Image image;
  image.layers = {Layer{{file("usr/bin/bash", 800), file("var/lib/apt/lists/base_Packages", 9000)},
                        Encoding::None,
                        true,
                        "/bin/sh -c #(nop) ADD file:0123 in / "},
                  Layer{{file("var/lib/apt/lists/deb_Packages", 40000), file("usr/bin/jq", 600)},
                        Encoding::None,
                        true,
                        "RUN /bin/sh -c apt-get update && apt-get install -y jq # buildkit"},
                  Layer{{file("root/.cache/pip/http-v2/a/b/c", 70000), file("app/main.py", 90)},
                        Encoding::None,
                        true,
                        "RUN /bin/sh -c pip install -r requirements.txt # buildkit"},
                  Layer{{file("root/.cache/pip/http-v2/d/e/f", 500)},
                        Encoding::None,
                        true,
                        "RUN /bin/sh -c pip install gunicorn # buildkit"}};
  image.empty_history = {{1, "/bin/sh -c #(nop)  CMD [\"bash\"]"}};
  const Analysed a(image);
  const Finding* pip = a.finding("pip-cache");
  REQUIRE(pip != nullptr);
  CHECK_THAT(pip->fix,
             Catch::Contains("layer 2 (RUN pip install -r requirements.txt) left most of it: "
                             "add --no-cache-dir"));
  const Finding* lists = a.finding("apt-lists");
  REQUIRE(lists != nullptr);
  CHECK(lists->base_bytes == 9000);
  CHECK_THAT(lists->fix,
             Catch::Contains("layer 1 (RUN apt-get update && apt-get install -y jq) left "
                             "most of them: end that RUN with rm -rf /var/lib/apt/lists/*"));
}

TEST_CASE("findings: a pip wheel's CUDA library beside a bundled copy: the fix names the wheel") {
  const std::string site = "usr/local/lib/python3.11/site-packages";
  Image image;
  image.layers = {Layer{
      {file(site + "/cupy_backends/lib/libcufft.so.11", 3500),
       file_with(site + "/cupy_cuda12x-13.0.0.dist-info/RECORD",
                 "cupy_backends/lib/libcufft.so.11,,\ncupy_cuda12x-13.0.0.dist-info/RECORD,,\n"),
       file(site + "/nvidia/cufft/lib/libcufft.so.11", 3000),
       file_with(
           site + "/nvidia_cufft_cu12-11.2.1.3.dist-info/RECORD",
           "nvidia/cufft/lib/libcufft.so.11,,\nnvidia_cufft_cu12-11.2.1.3.dist-info/RECORD,,\n")},
      Encoding::None,
      true,
      "RUN /bin/sh -c pip install cupy-cuda12x nvidia-cufft-cu12 # buildkit"}};
  const Analysed a(image);
  const Finding* dup = a.finding("cuda-duplicated");
  REQUIRE(dup != nullptr);
  CHECK(dup->bytes == 3000);  // the wheel's copy, the smaller
  CHECK_THAT(dup->fix, Catch::Contains("the pip distributions nvidia_cufft_cu12 (layer 0 (RUN pip "
                                       "install cupy-cuda12x nvidia-cufft-cu12))"));
  CHECK_THAT(dup->fix, Catch::Contains("pip show NAME lists Required-by"));
}
