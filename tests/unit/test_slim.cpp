// imgsmith slim's plan: what the squash of the user's layers drops, which
// files the chosen findings remove and which stay in the base image's
// layers, and the size after, to the byte.
#include <catch2/catch.hpp>
#include <string>

#include "image_builder.hpp"
#include "imgsmith/api/slim.hpp"
#include "imgsmith/util/error.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

namespace {

// Layer 0 is the base image's (its CMD ends it in the history); layers 1-3
// are the user's: a file added then deleted, one written then rewritten, a
// base file deleted, caches, apt's lists and docs.
Image slim_subject() {
  Image image;
  image.layers = {
      Layer{{file("usr/bin/tool", 1000), file("root/.cache/pip/base-wheel", 300),
             file("etc/big-base", 500)},
            Encoding::None,
            true,
            "/bin/sh -c #(nop) ADD file:0123 in / "},
      Layer{{file("app/data.bin", 4000), file("root/.cache/pip/http/a", 2000),
             file("var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_Packages", 700),
             file("usr/share/doc/pkg/README", 50)},
            Encoding::None,
            true,
            "RUN /bin/sh -c apt-get update && pip install x # buildkit"},
      Layer{{whiteout("app/data.bin"), file("app/main.py", 100), whiteout("etc/big-base")},
            Encoding::None,
            true,
            "RUN /bin/sh -c rm /app/data.bin /etc/big-base # buildkit"},
      Layer{{file("app/main.py", 120)}, Encoding::None, true, "COPY main.py /app/ # buildkit"},
  };
  image.empty_history = {{1, "/bin/sh -c #(nop)  CMD [\"bash\"]"}};
  return image;
}

struct SlimSubject {
  TempDir tmp;
  SlimRequest request;
  SlimSubject() {
    write_file(tmp / "img.tar", docker_legacy_save(slim_subject()));
    request.analyze.image = tmp / "img.tar";
  }
};

const SlimPath* planned(const std::vector<SlimPath>& paths, const std::string& path) {
  for (const auto& p : paths)
    if (p.path == path) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("slim plan: the base's layers kept, the user's squashed, the caches removed") {
  SlimSubject s;
  const SlimPlan plan = plan_slim(s.request);
  CHECK(plan.keep_base == 1);
  CHECK(plan.keep_evidence == "history");
  // Squashed: what layers 1-3 added and hid (4,000 deleted, 100 rewritten),
  // not the base's file that layer 2 deleted: its layer stays as it is.
  CHECK(plan.squashed_bytes == 4100);
  REQUIRE(plan.squashed.size() == 2);
  CHECK(plan.squashed[0].path == "/app/data.bin");
  CHECK(plan.squashed[1].path == "/app/main.py");
  // Removed: the pip cache and apt's lists from layer 1, each file with its
  // finding; the docs stay (only when named).
  CHECK(plan.removed_bytes == 2700);
  REQUIRE(plan.removed.size() == 2);
  CHECK(plan.removed[0].path == "/root/.cache/pip/http/a");
  CHECK(plan.removed[0].finding == "pip-cache");
  CHECK(plan.removed[0].layer == 1);
  CHECK(plan.removed[1].finding == "apt-lists");
  CHECK(planned(plan.removed, "/usr/share/doc/pkg/README") == nullptr);
  // The base's pip cache stays, and the plan says so.
  REQUIRE(plan.kept.size() == 1);
  CHECK(plan.kept[0].path == "/root/.cache/pip/base-wheel");
  CHECK(plan.kept[0].layer == 0);
  CHECK(plan.kept[0].why == "layer 0 is kept");
  CHECK(plan.kept_bytes == 300);
  // 8,770 bytes of files in the layers; after: layer 0's 1,800 and the
  // squashed layer's visible 170.
  CHECK(plan.before_bytes() == 8770);
  CHECK(plan.after_bytes() == 1800 + 170);
}

TEST_CASE("slim plan: --no-squash keeps what the layers hide, --remove docs adds the docs") {
  SlimSubject s;
  s.request.squash = false;
  s.request.remove = parse_slim_removals("caches,docs");
  const SlimPlan plan = plan_slim(s.request);
  CHECK(plan.squashed.empty());
  CHECK(plan.squashed_bytes == 0);
  const SlimPath* doc = planned(plan.removed, "/usr/share/doc/pkg/README");
  REQUIRE(doc != nullptr);
  CHECK(doc->finding == "docs");
  CHECK(doc->bytes == 50);
  CHECK(plan.removed_bytes == 2750);
  CHECK(plan.after_bytes() == 8770 - 2750);
}

TEST_CASE("slim plan: --keep-base 0 rewrites every layer, the base's cache and deletions too") {
  SlimSubject s;
  s.request.keep_base = 0;
  const SlimPlan plan = plan_slim(s.request);
  CHECK(plan.keep_base == 0);
  CHECK(plan.keep_evidence == "--keep-base");
  CHECK(plan.squashed_bytes == 4600);  // the base's deleted 500 as well
  CHECK(plan.removed_bytes == 3000);
  CHECK(plan.kept.empty());
  CHECK(plan.after_bytes() == 8770 - 4600 - 3000);
}

TEST_CASE("slim plan: bad requests are input errors that say what is allowed") {
  SlimSubject s;
  s.request.keep_base = 9;
  CHECK_THROWS_WITH(plan_slim(s.request),
                    Catch::Contains("--keep-base 9") && Catch::Contains("has 4 layers"));
  CHECK_THROWS_AS(parse_slim_removals("caches,model-weights-baked"), InputError);
  CHECK_THROWS_WITH(parse_slim_removals("model-weights-baked"),
                    Catch::Contains("'model-weights-baked'") && Catch::Contains("static-libs"));
  CHECK(parse_slim_removals("none").empty());
  CHECK(parse_slim_removals("caches").size() == 6);
  CHECK(parse_slim_removals("pip-cache,caches,docs").size() == 7);
  SlimRequest wrong;
  wrong.analyze.image = s.tmp / "img.tar";
  wrong.remove = {"cuda-duplicated"};
  CHECK_THROWS_AS(plan_slim(wrong), InputError);
}

TEST_CASE("slim plan: a cache file hard-linked into a virtualenv frees nothing and stays") {
  // uv's default link mode: the virtualenv's files are hard links to the
  // cache's, and attribution names each content by the cache's path (met
  // first), so the pip-cache finding holds it.
  Image image;
  image.layers = {
      Layer{{file("usr/bin/tool", 1000)}, Encoding::None, true, "ADD file:0123 in / "},
      Layer{{file("root/.cache/uv/archive-v0/abc/pkg/core.so", 3000),
             hardlink("root/.venv/lib/python3.12/site-packages/pkg/core.so",
                      "root/.cache/uv/archive-v0/abc/pkg/core.so"),
             file("root/.cache/uv/wheels-v5/pkg-1.0.whl", 2000)},
            Encoding::None,
            true,
            "RUN /bin/sh -c uv sync # buildkit"},
  };
  image.empty_history = {{1, "/bin/sh -c #(nop)  CMD [\"bash\"]"}};
  TempDir tmp;
  write_file(tmp / "img.tar", docker_legacy_save(image));
  SlimRequest request;
  request.analyze.image = tmp / "img.tar";
  const SlimPlan plan = plan_slim(request);
  // The wheel, with one name, goes; the linked file stays, and says why.
  REQUIRE(plan.removed.size() == 1);
  CHECK(plan.removed[0].path == "/root/.cache/uv/wheels-v5/pkg-1.0.whl");
  CHECK(plan.removed_bytes == 2000);
  const SlimPath* linked = planned(plan.kept, "/root/.cache/uv/archive-v0/abc/pkg/core.so");
  REQUIRE(linked != nullptr);
  CHECK(linked->why == "a hard link: its content has 1 other name, which stays");
  CHECK(plan.after_bytes() == 1000 + 3000);
}
