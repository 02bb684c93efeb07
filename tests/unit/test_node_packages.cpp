// Node.js packages in node_modules, as npm, pnpm and Yarn lay them out:
// which files each package owns (hoisted, nested, scoped, pnpm's store),
// who installed it, what a damaged package.json gives, the caches Node's
// tools leave, and, where npm is installed, the same packages as `npm ls`.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "analysed_image.hpp"
#include "node_modules.hpp"
#include "owners.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;
using attribution_detail::is_node_manifest;
using attribution_detail::is_node_marker;
using attribution_detail::node_package_dir;
using attribution_detail::Owner;
using attribution_detail::Ownership;

namespace {

std::string manifest(const std::string& name, const std::string& version) {
  return R"({"name": ")" + name + R"(", "version": ")" + version + R"(", "main": "index.js"})";
}

// A Next.js app as `npm ci` leaves it in /app, on a node image whose npm is
// a global package with its own dependencies nested inside it.
struct NpmApp {
  const std::string react = manifest("react", "18.3.1");
  const std::string react_dist = R"({"type": "module"})";  // a package.json no package has
  const std::string loose = manifest("loose-envify", "1.4.0");
  const std::string next_env = manifest("@next/env", "14.2.3");
  const std::string npm = manifest("npm", "10.8.2");
  const std::string semver = manifest("semver", "7.6.3");
  const std::string ui = manifest("ui", "0.0.0");
  // Each package's bytes: its files, without its nested node_modules.
  const std::uint64_t react_bytes = react.size() + 1000 + 5000 + react_dist.size();
  const std::uint64_t loose_bytes = loose.size() + 700;
  const std::uint64_t next_env_bytes = next_env.size() + 2000 + 30;
  const std::uint64_t npm_bytes = npm.size() + 9000;
  const std::uint64_t semver_bytes = semver.size() + 800;

  Image image() const {
    const std::string nm = "app/node_modules/";
    const std::string global = "usr/local/lib/node_modules/npm/";
    Image out;
    out.layers = {
        Layer{{file_with(global + "package.json", npm), file(global + "lib/npm.js", 9000),
               file_with(global + "node_modules/semver/package.json", semver),
               file(global + "node_modules/semver/index.js", 800)},
              Encoding::None,
              true,
              "ADD file:node in /"},
        Layer{
            {file_with(nm + "react/package.json", react), file(nm + "react/index.js", 1000),
             file(nm + "react/cjs/react.development.js", 5000),
             file_with(nm + "react/dist/package.json", react_dist),
             file_with(nm + "react/node_modules/loose-envify/package.json", loose),
             file(nm + "react/node_modules/loose-envify/index.js", 700),
             file_with(nm + "@next/env/package.json", next_env),
             file(nm + "@next/env/dist/index.js", 2000),
             file(nm + "@next/env/node_modules/.bin/x", 30),  // no package: @next/env's
             file(nm + ".package-lock.json", 300),
             soft_link(nm + ".bin/next", "../next/dist/bin/next"),
             // A workspace, linked into node_modules: the app's own code.
             soft_link(nm + "ui", "../packages/ui"), file_with("app/packages/ui/package.json", ui),
             file("app/packages/ui/index.js", 400)},
            Encoding::None,
            true,
            "RUN npm ci"},
        Layer{{file("app/package.json", 60), file("app/server.js", 90)},
              Encoding::None,
              true,
              "COPY . /app"},
    };
    return out;
  }
};

// An image of one layer that `step` made.
Image node_layer(std::vector<Entry> entries, const std::string& step) {
  Image image;
  image.layers = {Layer{std::move(entries), Encoding::None, true, step}};
  return image;
}

std::uint64_t node_bytes(const Attribution& attr, const std::string& package,
                         const std::string& installer = "npm") {
  const CategoryNode* n = attr.find("node", package);
  if (n == nullptr) return 0;
  const auto origin = n->origins.find(installer);
  // Every byte of it carries its installer.
  return origin != n->origins.end() && origin->second == n->bytes ? n->bytes : 0;
}

// Each path's category/child.
void check_categories(const Analysed& a,
                      const std::vector<std::pair<std::string, std::string>>& expected) {
  for (const auto& [path, category] : expected) {
    CAPTURE(path);
    CHECK(a.category_of(path) == category);
  }
}

const Owner* owner_named(const Ownership& owners, const std::string& package) {
  for (const Owner& o : owners.owners())
    if (o.package == package) return &o;
  return nullptr;
}

}  // namespace

TEST_CASE("node packages: hoisted, nested and scoped packages own their files, byte for byte") {
  const NpmApp app;
  const Analysed a(app.image());
  const Attribution& attr = a.attribution;
  CHECK(node_bytes(attr, "react") == app.react_bytes);
  CHECK(node_bytes(attr, "loose-envify") == app.loose_bytes);
  CHECK(node_bytes(attr, "@next/env") == app.next_env_bytes);
  CHECK(node_bytes(attr, "npm") == app.npm_bytes);
  CHECK(node_bytes(attr, "semver") == app.semver_bytes);
  REQUIRE(attr.find("node") != nullptr);
  CHECK(attr.find("node")->bytes ==
        app.react_bytes + app.loose_bytes + app.next_env_bytes + app.npm_bytes + app.semver_bytes);
  CHECK(attr.find("node")->children.size() == 5);
  // What no package.json names stays where it was: the app's code, npm's
  // hidden lockfile, the workspace the link points to.
  check_categories(
      a, {{"/app/node_modules/react/dist/package.json", "node/react"},
          {"/app/node_modules/react/node_modules/loose-envify/index.js", "node/loose-envify"},
          {"/app/server.js", "app/app"},
          {"/app/node_modules/.package-lock.json", "app/app"},
          {"/app/packages/ui/index.js", "app/app"}});

  const Ownership owners(a.analysis.metadata);
  CHECK(owner_named(owners, "ui") == nullptr);  // a workspace, linked, is no copy
  const Owner* react = owner_named(owners, "react");
  REQUIRE(react != nullptr);
  CHECK(react->version == "18.3.1");
  CHECK(react->installer == "npm");
  const Owner* env = owner_named(owners, "@next/env");
  REQUIRE(env != nullptr);
  CHECK(env->version == "14.2.3");
  const auto own = owners.of("app/node_modules/react/node_modules/loose-envify/index.js");
  REQUIRE(own.node != nullptr);
  CHECK(own.node->package == "loose-envify");
  CHECK(own.node->version == "1.4.0");
  CHECK(own.installer() == "npm");
}

TEST_CASE("node packages: a nested package's bytes are not counted in its parent") {
  const NpmApp app;
  const Analysed a(app.image());
  // react's directory holds loose-envify's: the two share it, each once.
  std::uint64_t under_react = 0;
  for (const auto& f : a.attribution.files)
    if (f.path.starts_with("/app/node_modules/react/")) under_react += f.bytes;
  CHECK(under_react == app.react_bytes + app.loose_bytes);
  CHECK(node_bytes(a.attribution, "react") == under_react - app.loose_bytes);
  // And the global npm's nested semver is semver's, not npm's.
  CHECK(node_bytes(a.attribution, "npm") == app.npm_bytes);
}

TEST_CASE("node packages: under the WORKDIR they stay packages, not the app") {
  const NpmApp app;
  Analysed a(app.image());
  a.analysis.working_dir = "/app";
  const Attribution attr = attribute(a.analysis, builtin_rules());
  CHECK(node_bytes(attr, "react") == app.react_bytes);
  CHECK(node_bytes(attr, "@next/env") == app.next_env_bytes);
  REQUIRE(attr.find("app", "workdir") != nullptr);
  CHECK(attr.find("app", "workdir")->bytes == 60 + 90 + 300 + app.ui.size() + 400);
}

TEST_CASE("node packages: pnpm's store layout is pnpm's, its links no copies") {
  const std::string nm = "app/node_modules/";
  const std::string foo = manifest("foo", "1.0.0"), bar = manifest("@s/bar", "2.0.0");
  const Analysed a(node_layer(
      {file_with(nm + ".pnpm/foo@1.0.0/node_modules/foo/package.json", foo),
       file(nm + ".pnpm/foo@1.0.0/node_modules/foo/index.js", 1200),
       soft_link(nm + ".pnpm/foo@1.0.0/node_modules/@s/bar",
                 "../../../@s+bar@2.0.0/node_modules/@s/bar"),
       file_with(nm + ".pnpm/@s+bar@2.0.0/node_modules/@s/bar/package.json", bar),
       file(nm + ".pnpm/@s+bar@2.0.0/node_modules/@s/bar/lib/bar.js", 3400),
       file(nm + ".pnpm/lock.yaml", 200), soft_link(nm + "foo", ".pnpm/foo@1.0.0/node_modules/foo"),
       file(nm + ".modules.yaml", 150)},
      "RUN pnpm install --frozen-lockfile"));
  CHECK(node_bytes(a.attribution, "foo", "pnpm") == foo.size() + 1200);
  CHECK(node_bytes(a.attribution, "@s/bar", "pnpm") == bar.size() + 3400);
  const Ownership owners(a.analysis.metadata);
  const Owner* owner = owner_named(owners, "@s/bar");
  REQUIRE(owner != nullptr);
  CHECK(owner->installer == "pnpm");
  CHECK(owner->version == "2.0.0");
  // pnpm's own files in node_modules are no package's.
  CHECK(a.category_of("/app/node_modules/.pnpm/lock.yaml") == "app/app");
}

TEST_CASE("node packages: Yarn's marker in the top node_modules makes its packages Yarn's") {
  const std::string left = manifest("left-pad", "1.3.0"), chalk = manifest("chalk", "5.3.0");
  for (const char* marker : {".yarn-integrity", ".yarn-state.yml"}) {
    CAPTURE(marker);
    const Analysed a(node_layer({file_with("app/node_modules/left-pad/package.json", left),
                                 file("app/node_modules/left-pad/index.js", 500),
                                 file_with("app/node_modules/" + std::string(marker), "{}"),
                                 // Another project beside it, without the marker: npm's.
                                 file_with("srv/web/node_modules/chalk/package.json", chalk),
                                 file("srv/web/node_modules/chalk/index.js", 600)},
                                "RUN yarn install --frozen-lockfile"));
    CHECK(node_bytes(a.attribution, "left-pad", "yarn") == left.size() + 500);
    CHECK(node_bytes(a.attribution, "chalk", "npm") == chalk.size() + 600);
  }
}

TEST_CASE("node packages: a package.json that is not JSON or has no name is named by its dir") {
  const std::vector<std::pair<std::string, std::string>> damaged = {
      {"app/node_modules/broken/package.json", "{not json"},
      {"app/node_modules/empty/package.json", ""},
      {"app/node_modules/noname/package.json", R"({"version": "1.0.0"})"},
      {"app/node_modules/numbered/package.json", R"({"name": 5, "version": 6})"},
      {"app/node_modules/listed/package.json", "[1, 2]"},
      {"app/node_modules/@scope/odd/package.json", R"({"name": ""})"},
  };
  std::vector<CapturedFile> files;
  for (const auto& [path, content] : damaged) {
    CapturedFile f;
    f.path = path;
    f.content = content;
    files.push_back(std::move(f));
  }
  const Ownership owners(files);
  const std::map<std::string, std::string> expected = {{"broken", ""},      {"empty", ""},
                                                       {"noname", "1.0.0"}, {"numbered", ""},
                                                       {"listed", ""},      {"@scope/odd", ""}};
  std::map<std::string, std::string> got;
  for (const Owner& o : owners.owners()) got[o.package] = o.version;
  CHECK(got == expected);
  const auto own = owners.of("app/node_modules/broken/lib/index.js");
  REQUIRE(own.node != nullptr);
  CHECK(own.node->package == "broken");
  CHECK(own.installer() == "npm");

  // Attributed in an image too, with its bytes.
  const Analysed a(node_layer({file_with("app/node_modules/broken/package.json", "{not json"),
                               file("app/node_modules/broken/lib.js", 400)},
                              "RUN npm ci"));
  CHECK(node_bytes(a.attribution, "broken") == 9 + 400);
}

TEST_CASE("node packages: which paths are packages, and which files the read captures") {
  CHECK(node_package_dir("app/node_modules/a/b/c.js").dir == "app/node_modules/a");
  CHECK(node_package_dir("node_modules/@s/b/c.js").dir == "node_modules/@s/b");
  const std::string nested = "node_modules/a/node_modules/@s/b/c.js";
  const auto inner = node_package_dir(nested);
  CHECK(inner.dir == "node_modules/a/node_modules/@s/b");
  CHECK(node_package_dir(nested, inner.modules_at).dir == "node_modules/a");
  CHECK(node_package_dir(nested, 0).dir.empty());
  CHECK(node_package_dir("app/node_modules/.bin/next").dir.empty());
  CHECK(node_package_dir("app/node_modules/a").dir.empty());  // the directory itself
  CHECK(node_package_dir("app/xnode_modules/a/b.js").dir.empty());

  CHECK(is_node_manifest("app/node_modules/a/package.json"));
  CHECK(is_node_manifest("node_modules/@s/b/package.json"));
  CHECK(is_node_manifest("x/node_modules/.pnpm/a@1.0.0/node_modules/a/package.json"));
  CHECK(is_node_manifest("node_modules/a/node_modules/b/package.json"));
  CHECK_FALSE(is_node_manifest("app/package.json"));
  CHECK_FALSE(is_node_manifest("app/node_modules/a/dist/esm/package.json"));
  CHECK_FALSE(is_node_manifest("app/node_modules/@s/package.json"));
  CHECK_FALSE(is_node_manifest("app/node_modules/package.json"));
  CHECK(is_node_marker("app/node_modules/.yarn-integrity"));
  CHECK(is_node_marker("node_modules/.modules.yaml"));
  CHECK_FALSE(is_node_marker("app/.yarn-integrity"));
  CHECK_FALSE(is_node_marker("app/node_modules/a/.yarn-integrity"));

  // What the read keeps: whole, and only these small files.
  CHECK(is_package_database("app/node_modules/a/package.json", 900) == kCaptureAll);
  CHECK(is_package_database("app/node_modules/.yarn-state.yml", 90000) == kCaptureAll);
  CHECK(is_package_database("app/node_modules/a/package.json", 5u << 20) == 0);
  CHECK(is_package_database("app/node_modules/a/index.js", 900) == 0);
  CHECK(is_package_database("app/node_modules/a/lib/package.json", 900) == 0);
  CHECK(is_package_database("app/package.json", 900) == 0);
}

TEST_CASE("findings: node-cache collects the caches npm, Yarn, pnpm and Next.js leave") {
  Image image;
  image.layers = {
      Layer{{file("root/.npm/_cacache/content-v2/sha512/ab/cd", 4000),
             file("root/.npm/_logs/2024-debug-0.log", 100),
             file("usr/local/share/.cache/yarn/v6/npm-react-18.3.1/package.json", 250),
             file("root/.local/share/pnpm/store/v3/files/00/abc", 1700),
             file("app/node_modules/.cache/babel-loader/x.json", 60),
             file_with("app/node_modules/a/package.json", manifest("a", "1.0.0"))},
            Encoding::None,
            true,
            "RUN npm ci && yarn && pnpm i"},
      Layer{{file("app/.next/cache/webpack/client/0.pack", 3000),
             file("app/.next/server/app/page.js", 500)},
            Encoding::None,
            true,
            "RUN npm run build"},
  };
  const Analysed a(image);
  const Finding* node = a.finding("node-cache");
  REQUIRE(node != nullptr);
  CHECK(node->bytes == 4000 + 100 + 250 + 1700 + 60 + 3000);
  CHECK_THAT(node->fix, Catch::Contains("npm cache clean --force") &&
                            Catch::Contains("--mount=type=cache,target=/root/.npm") &&
                            Catch::Contains(".next/cache") &&
                            Catch::Contains("layer 0 (RUN npm ci && yarn && pnpm i)"));
  CHECK(a.finding("package-cache") == nullptr);
  // The build's output is the app's, not a cache.
  check_categories(a,
                   {{"/root/.npm/_cacache/content-v2/sha512/ab/cd", "cache/npm"},
                    {"/usr/local/share/.cache/yarn/v6/npm-react-18.3.1/package.json", "cache/yarn"},
                    {"/root/.local/share/pnpm/store/v3/files/00/abc", "cache/pnpm-store"},
                    {"/app/node_modules/.cache/babel-loader/x.json", "cache/node_modules-cache"},
                    {"/app/.next/cache/webpack/client/0.pack", "cache/next"},
                    {"/app/.next/server/app/page.js", "app/app"}});
}

namespace {

std::string run_and_read(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  pclose(pipe);
  return out;
}

// Every dependency `npm ls --json --long --all` lists: path -> name@version.
void collect_npm_ls(const nlohmann::json& node, const std::string& root,
                    std::map<std::string, std::string>& out) {
  const auto deps = node.find("dependencies");
  if (deps == node.end() || !deps->is_object()) return;
  for (const auto& [key, dep] : deps->items()) {
    const std::string path = dep.value("path", "");
    if (path.starts_with(root + "/"))
      out[path.substr(root.size() + 1)] = dep.value("name", key) + "@" + dep.value("version", "");
    collect_npm_ls(dep, root, out);
  }
}

}  // namespace

TEST_CASE("node packages: the packages and versions npm ls lists, where npm is installed") {
  if (std::system("npm --version >/dev/null 2>&1") != 0) {
    WARN("npm is not installed: the comparison with npm ls is skipped");
    return;
  }
  const NpmApp app;
  Image image = app.image();
  image.layers.erase(image.layers.begin());  // the global npm is no dependency of the app
  // The app's tree on disk, as the image holds it, with the app's package.json.
  TempDir tmp;
  const std::filesystem::path root = std::filesystem::path(tmp / "app").lexically_normal();
  for (const auto& layer : image.layers)
    for (const auto& e : layer.entries) {
      if (!e.path.starts_with("app/node_modules/") || !e.path.ends_with("package.json")) continue;
      const std::filesystem::path p = root / e.path.substr(4);
      std::filesystem::create_directories(p.parent_path());
      write_file(p.string(), e.content);
    }
  write_file((root / "package.json").string(),
             R"({"name": "app", "version": "1.0.0", "dependencies": {"react": "18.3.1", )"
             R"("@next/env": "14.2.3"}})");
  write_file(
      (root / "node_modules/react/package.json").string(),
      R"({"name": "react", "version": "18.3.1", "dependencies": {"loose-envify": "1.4.0"}})");
  const std::string out =
      run_and_read("cd '" + root.string() + "' && npm_config_cache='" + (tmp / "npm-cache") +
                   "' npm ls --json --long --all --offline --logs-max=0 2>/dev/null");
  nlohmann::json doc;
  REQUIRE_NOTHROW(doc = nlohmann::json::parse(out));
  std::map<std::string, std::string> listed;
  collect_npm_ls(doc, root.string(), listed);

  const Analysed a(image);
  const Ownership owners(a.analysis.metadata);
  std::map<std::string, std::string> ours;
  for (const auto& f : a.analysis.metadata)
    if (is_node_manifest(f.path)) {
      const auto own = owners.of(f.path);
      REQUIRE(own.node != nullptr);
      ours[f.path.substr(4, f.path.size() - 4 - 13)] = own.node->package + "@" + own.node->version;
    }
  CHECK(listed.size() == 3);
  CHECK(ours == listed);
}
