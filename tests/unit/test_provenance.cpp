// Who added what: the base image's layers told from the user's by the
// history, files the user's layers put in system paths, findings the base
// image caused, and same-size re-adds (chmod/chown churn) grouped as one
// change to a directory.
#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

#include "analysed_image.hpp"
#include "image_builder.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/diff/diff.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/text.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

namespace {

// debian:bookworm as its history reads (a rootfs, then CMD), then a
// multi-stage Dockerfile's final stage.
Image base_then_user() {
  Image image;
  image.layers = {
      Layer{{file("usr/bin/bash", 800), file("root/.profile", 161),
             file("var/lib/apt/lists/deb_Packages", 9000),
             file_with("var/lib/dpkg/info/bash.list", "/usr/bin/bash\n")},
            Encoding::None,
            true,
            "/bin/sh -c #(nop) ADD file:0123 in / "},
      Layer{{file("usr/local/bin/server", 5000)},
            Encoding::None,
            true,
            "COPY /out/server /usr/local/bin/server # buildkit"},
      Layer{{file("usr/local/lib/libtool.so", 700), file("etc/ld.so.cache", 90)},
            Encoding::None,
            true,
            "RUN /bin/sh -c make install # buildkit"},
  };
  image.empty_history = {{1, "/bin/sh -c #(nop)  CMD [\"bash\"]"},
                         {3, "CMD [\"/usr/local/bin/server\"]"}};
  return image;
}

}  // namespace

TEST_CASE("provenance: the base image's layers end with its CMD, and the user's files are app") {
  const Analysed a(base_then_user());
  CHECK(a.analysis.base_layers == 1);
  CHECK(a.analysis.base_evidence == "history");
  CHECK(a.analysis.layers[0].base);
  CHECK_FALSE(a.analysis.layers[1].base);
  // The user's binary copied from a builder stage, and what its make install put in /usr/local.
  CHECK(a.category_of("/usr/local/bin/server") == "app/copied");
  CHECK(a.category_of("/usr/local/lib/libtool.so") == "app/built");
  // A system file a user's RUN rewrote is still the system's.
  CHECK(a.category_of("/etc/ld.so.cache") == "other/system-unowned");
  // The base image's own files in an app-looking path are not the app.
  CHECK(a.category_of("/root/.profile") == "other/base-image");
  // Waste the base image brought: only another base removes it.
  const Finding* lists = a.finding("apt-lists");
  REQUIRE(lists != nullptr);
  CHECK(lists->base_bytes == 9000);
  CHECK_THAT(lists->message, Catch::StartsWith("from the base image"));
  CHECK_THAT(lists->fix, Catch::Contains("base"));
  CHECK_THAT(lists->fix, !Catch::Contains("same RUN"));
}

TEST_CASE(
    "provenance: --base-layers overrides the history, and without either no layer is the base") {
  const Analysed told(base_then_user(), 2);
  CHECK(told.analysis.base_layers == 2);
  CHECK(told.analysis.base_evidence == "--base-layers");
  CHECK(told.category_of("/usr/local/bin/server") != "app/copied");
  Image no_history = base_then_user();
  no_history.empty_history.clear();
  const Analysed none(no_history);
  CHECK(none.analysis.base_layers == 0);
  CHECK(none.category_of("/root/.profile") == "app/app");
}

TEST_CASE("provenance: what the user's RUN leaves unowned under /opt is the user's build") {
  // /opt/conda outside conda's own records is the system's, unless the
  // user's RUN put it there (a downloaded tool, a compiled extension).
  Image image;
  image.layers = {
      Layer{{file("opt/conda/etc/profile.d/conda.sh", 6000)},
            Encoding::None,
            true,
            "/bin/sh -c #(nop) ADD file:0123 in / "},
      Layer{{file("opt/conda/bin/tool", 3000), file("etc/tool.conf", 20)},
            Encoding::None,
            true,
            "RUN /bin/sh -c curl -o /opt/conda/bin/tool https://example.com/tool # buildkit"},
  };
  image.empty_history = {{1, "/bin/sh -c #(nop)  CMD [\"bash\"]"}};
  const Analysed a(image);
  REQUIRE(a.analysis.base_layers == 1);
  CHECK(a.category_of("/opt/conda/bin/tool") == "app/built");
  CHECK(a.category_of("/opt/conda/etc/profile.d/conda.sh") == "other/system-unowned");
  CHECK(a.category_of("/etc/tool.conf") == "other/system-unowned");
}

TEST_CASE("waste: same-size re-adds are one metadata-only change per directory and layer pair") {
  Layer data, churn;
  for (int i = 0; i < 250; ++i) {
    const std::string path = "data/d" + std::to_string(i % 5) + "/f" + std::to_string(i);
    data.entries.push_back(file(path, 1000));
    churn.entries.push_back(file(path, 1000, 'x'));  // chmod -R: the same bytes again
  }
  data.created_by = "COPY data /data";
  churn.created_by = "RUN /bin/sh -c chmod -R g+w /data # buildkit";
  churn.entries.push_back(file("etc/app.conf", 10));
  Layer edit{
      {file("etc/app.conf", 12)}, Encoding::None, true, "RUN /bin/sh -c echo >> /etc/app.conf"};
  Image image;
  image.layers = {data, churn, edit};
  const Analysed a(image);
  std::vector<const WasteGroup*> readded, overwritten;
  for (const auto& w : a.analysis.waste) {
    if (w.how == HiddenBy::Readded) readded.push_back(&w);
    if (w.how == HiddenBy::Overwritten) overwritten.push_back(&w);
  }
  REQUIRE(readded.size() == 1);
  CHECK(readded[0]->path == "/data");
  CHECK(readded[0]->files == 250);
  CHECK(readded[0]->bytes == 250000);
  CHECK(readded[0]->added_layer == 0);
  CHECK(readded[0]->hidden_layer == 1);
  REQUIRE(overwritten.size() == 1);  // a real edit changes the size
  CHECK(overwritten[0]->path == "/etc/app.conf");
  const Finding* churn_finding = a.finding("metadata-only-readd");
  REQUIRE(churn_finding != nullptr);
  CHECK(churn_finding->bytes == 250000);
  CHECK_THAT(churn_finding->message, Catch::Contains("re-added /data (250 files"));
  CHECK_THAT(churn_finding->message, Catch::Contains("RUN chmod -R g+w /data"));
  CHECK_THAT(churn_finding->fix, Catch::Contains("--chown"));
  const Finding* edits = a.finding("overwritten-in-later-layer");
  REQUIRE(edits != nullptr);
  CHECK(edits->bytes == 10);
}

TEST_CASE("created_by reads as the Dockerfile step") {
  CHECK(dockerfile_step("/bin/sh -c #(nop)  CMD [\"bash\"]") == "CMD [\"bash\"]");
  CHECK(dockerfile_step("/bin/sh -c apt-get update") == "RUN apt-get update");
  CHECK(dockerfile_step("RUN /bin/sh -c apt-get install -y x # buildkit") ==
        "RUN apt-get install -y x");
  CHECK(dockerfile_step("RUN |2 A=1 B=2 /bin/sh -c make\n install # buildkit") ==
        "RUN make  install");
  CHECK(dockerfile_step("COPY . /app # buildkit") == "COPY . /app");
}

TEST_CASE(
    "duplicates (--hash): content a later ln copied up is a duplicate of its old hard link's") {
  // Layer 0: /a with a hard link /b. Layer 1 runs `ln /a /c`: the overlay
  // copies /a up, so the layer holds a new /a (same bytes) and /c linked to
  // it, while /b keeps the old content. Two inodes, the same bytes.
  Image image;
  image.layers = {Layer{{file("srv/a", 20000, 'q'), hardlink("srv/b", "srv/a")},
                        Encoding::None,
                        true,
                        "COPY a /srv/"},
                  Layer{{file("srv/a", 20000, 'q'), hardlink("srv/c", "srv/a")},
                        Encoding::Gzip,
                        true,
                        "RUN /bin/sh -c ln /srv/a /srv/c"}};
  for (const bool seekable : {true, false}) {
    TempDir tmp;
    const std::string blob = docker_legacy_save(image);
    const std::string name = seekable ? "img.tar" : "img.tar.zst";  // zstd whole: read once
    write_file(tmp / name, seekable ? blob : encode(blob, Encoding::Zstd));
    AnalyzeOptions options;
    options.hash_duplicates = true;
    const Analysis a = analyze_image(tmp / name, options);
    INFO((seekable ? "seekable" : "streamed"));
    REQUIRE(a.duplicates.size() == 1);
    REQUIRE(a.duplicates[0].files.size() == 2);
    std::vector<std::string> paths{a.duplicates[0].files[0].path, a.duplicates[0].files[1].path};
    std::sort(paths.begin(), paths.end());
    CHECK(paths == std::vector<std::string>{"/srv/a", "/srv/b"});
  }
}

TEST_CASE("diff: the origin of framework bytes on each side (torch from pip, then from apt)") {
  const std::string site = "usr/local/lib/python3.11/site-packages";
  Image pip_image, apt_image;
  pip_image.layers = {Layer{
      {file(site + "/torch/lib/libtorch_cpu.so", 9000),
       file_with(site + "/torch-2.3.0.dist-info/RECORD", "torch/lib/libtorch_cpu.so,,9000\n")},
      Encoding::None,
      true,
      "RUN pip install torch"}};
  apt_image.layers = {Layer{{file("usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13", 9500),
                             file_with("var/lib/dpkg/info/libtorch1.13:amd64.list",
                                       "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13\n")},
                            Encoding::None,
                            true,
                            "RUN apt-get install python3-torch"}};
  const auto report_of = [](const Image& image) {
    TempDir tmp;
    write_file(tmp / "img.tar", docker_legacy_save(image));
    AnalyzeOptions options;
    options.capture = attribution_capture;
    const Analysis a = analyze_image(tmp / "img.tar", options);
    const Attribution attr = attribute(a, builtin_rules());
    const auto findings = find_waste(a, attr, {});
    return report_from_json(
        nlohmann::json::parse(report_to_json(Report{a, &attr, &findings, GateResult{}}).dump()));
  };
  const DiffReport typed =
      diff_reports(report_of(pip_image).view(), report_of(apt_image).view(), DiffGate{});
  const auto d = diff_to_json(typed);
  const nlohmann::json* torch = nullptr;
  for (const auto& c : d["categories"])
    if (c["name"] == "framework")
      for (const auto& k : c["children"])
        if (k["name"] == "torch") torch = &k;
  REQUIRE(torch != nullptr);
  CHECK((*torch)["origins"]["old"]["pip"] ==
        9000 + std::string("torch/lib/libtorch_cpu.so,,9000\n").size());
  CHECK((*torch)["origins"]["new"]["apt"] == 9500);
  std::ostringstream text;
  render_diff_text(typed, text);
  CHECK_THAT(text.str(), Catch::Contains("from pip ") && Catch::Contains("-> apt "));
}

TEST_CASE("text: findings' messages and fixes are folded to 100 columns") {
  Layer first{{file("srv/data/" + std::string(30, 'a') + "/blob.bin", 5000)},
              Encoding::None,
              true,
              "RUN /bin/sh -c cp /somewhere/with/a/long/path/blob.bin /srv/data && echo " +
                  std::string(40, 'x')};
  Layer second{
      {whiteout("srv/data")},
      Encoding::None,
      true,
      "RUN /bin/sh -c rm -rf /srv/data && echo and some more words to make it long enough"};
  Image image;
  image.layers = {first, second};
  const Analysed a(image);
  std::ostringstream text;
  render_text(Report{a.analysis, &a.attribution, &a.findings, GateResult{}}, text);
  const std::string out = text.str();
  const auto findings = out.find("FINDINGS");
  REQUIRE(findings != std::string::npos);
  std::istringstream lines(out.substr(findings));
  std::string line;
  std::size_t longest = 0, count = 0;
  while (std::getline(lines, line)) {
    longest = std::max(longest, line.size());
    ++count;
  }
  CHECK(count > 4);  // the message did need folding
  CHECK(longest <= 100);
}
