// imgsmith gen --context: a monorepo's service built from the repository's
// root, so that what it names outside its own directory (a shared
// requirements file, a library beside it) can be copied.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "dockerfile_rules.hpp"
#include "image_builder.hpp"
#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/glob.hpp"
#include "imgsmith/util/text.hpp"
#include "project_tree.hpp"

using namespace imgsmith;
using namespace imgsmith::gen;
using imgsmith::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// A repository written from {path, content} pairs, relative to its root.
struct Repo : imgsmith::testing::ProjectTree {
  const fs::path& root = dir;
  explicit Repo(std::initializer_list<std::pair<std::string, std::string>> files)
      : ProjectTree(files, "mono") {}
};

// The working directory for one scope, restored after it.
struct InDirectory {
  fs::path before = fs::current_path();
  explicit InDirectory(const fs::path& dir) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(before); }
  InDirectory(const InDirectory&) = delete;
  InDirectory& operator=(const InDirectory&) = delete;
};

const std::string kContextFastApiMain = "from fastapi import FastAPI\napp = FastAPI()\n";

// A service whose requirements include a shared file and install a library
// of the repository by its relative path.
Repo monorepo() {
  return Repo(
      {{"shared/requirements.txt", "numpy==2.1.3\n"},
       {"libs/common/pyproject.toml", "[project]\nname='common'\nversion='1'\n"},
       {"libs/common/common/__init__.py", ""},
       {"services/api/requirements.txt",
        "-r ../../shared/requirements.txt\n-e ../../libs/common\ntorch==2.6.0\nfastapi==0.115.6\n"
        "uvicorn==0.34.0\n"},
       {"services/api/main.py", kContextFastApiMain},
       {"services/billing/requirements.txt", "stripe==11.4.1\n"},
       {"services/billing/main.py", ""},
       {"README.md", "the monorepo\n"}});
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// Whether Docker sends `path` (relative to the context) to the builder under
// these ignore rules, as its documentation gives them: a pattern matches
// from the context's root, against the path or a directory above it; the
// last pattern that matches decides, and '!' makes it an exception.
bool docker_sends(const std::string& ignore, const std::string& path) {
  bool sent = true;
  std::istringstream lines(ignore);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const bool exception = line[0] == '!';
    const Glob glob(exception ? line.substr(1) : line);
    std::string prefix;
    for (const auto& part : split(path, "/")) {
      prefix += (prefix.empty() ? "" : "/") + part;
      if (glob.matches(prefix)) {
        sent = exception;
        break;
      }
    }
  }
  return sent;
}

std::string context_broken_rules(const Plan& plan, const std::string& dockerfile) {
  imgsmith::test::RuleContext context;
  context.expect_probe = plan.probe;
  context.gpu = plan.gpu;
  context.source_before_deps = plan.source_before_deps;
  std::string s;
  for (const auto& b : imgsmith::test::check_rules(dockerfile, context)) s += b + "\n";
  return s;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("gen context: the project directory as the context changes nothing") {
  Repo repo({{"services/api/requirements.txt", "torch==2.6.0\nfastapi==0.115.6\nuvicorn==0.34.0\n"},
             {"services/api/main.py", kContextFastApiMain}});
  const fs::path api = repo.root / "services" / "api";
  Options o;
  o.compose = true;
  const Plan without = make_plan(detect_project(api), o);
  const Plan with = make_plan(detect_project(api, {}, api), o);
  const Plan dotted =
      make_plan(detect_project(api, {}, repo.root / "services" / ".." / "services" / "api"), o);
  for (const Plan* plan : {&with, &dotted}) {
    const Rendered a = render_plan(without);
    const Rendered b = render_plan(*plan);
    CHECK(a.dockerfile == b.dockerfile);
    CHECK(a.dockerignore == b.dockerignore);
    CHECK(a.compose == b.compose);
    CHECK(b.dockerignore_name == ".dockerignore");
    CHECK(summary(without) == summary(*plan));
    CHECK(plan->context_path.empty());
    CHECK(plan->app_dir == "/app");
  }
}

TEST_CASE(
    "gen context: a shared include and a library beside the service are copied from the context") {
  const Repo repo = monorepo();
  const fs::path api = repo.root / "services" / "api";
  const Project project = detect_project(api, {}, repo.root);
  CHECK(project.context_path == "services/api");
  CHECK(project.context == fs::canonical(repo.root));
  REQUIRE(project.outside_paths.size() == 2);
  CHECK(project.outside_paths[0].path == "libs/common");
  CHECK(project.outside_paths[0].directory);
  CHECK(project.outside_paths[0].source == "requirements.txt:2");
  CHECK(project.outside_paths[1].path == "shared/requirements.txt");
  CHECK_FALSE(project.outside_paths[1].directory);
  // The shared file's requirements are read as the project's own.
  REQUIRE(project.python);
  CHECK(project.python->requirements.front().source == "../../shared/requirements.txt:1");
  // A library outside the project does not need the project's code first.
  CHECK_FALSE(project.python->requirements_need_source);

  const Plan plan = make_plan(project, {});
  CHECK(plan.app_dir == "/app/services/api");
  CHECK(plan.outside_paths == std::vector<std::string>{"libs/common/", "shared/requirements.txt"});
  const Rendered r = render_plan(plan);
  const std::string& df = r.dockerfile;
  INFO(df);
  // The image keeps the context's layout under /app, so ../../shared from
  // the project's directory is where the include says.
  CHECK(has_line(df, "WORKDIR /app/services/api"));
  CHECK(has_line(df, "COPY libs/common/ /app/libs/common/"));
  CHECK(has_line(df, "COPY shared/requirements.txt /app/shared/requirements.txt"));
  CHECK(has_line(df, "COPY services/api/requirements.txt requirements.txt"));
  CHECK(has_line(df, "    pip install -r requirements.txt"));
  CHECK(has_line(df, "COPY services/api/. ."));
  CHECK(has_line(df, "RUN rm -rf /app/services/api/.imgsmith"));
  CHECK(has_line(df, "ARG TARGETARCH"));
  CHECK(has_line(df, "COPY services/api/.imgsmith/imgsmith-probe-${TARGETARCH} /imgsmith-probe"));
  CHECK(has_line(df, "COPY --from=probe /imgsmith-probe /usr/local/bin/imgsmith-probe"));
  CHECK(has_line(df, "COPY --from=builder /app /app"));
  CHECK(df.find("COPY ../") == std::string::npos);
  CHECK(df.find("COPY . .") == std::string::npos);  // never the whole context
  // Dependencies still come before the code.
  CHECK(df.find("pip install -r requirements.txt") < df.find("COPY services/api/. ."));
  CHECK(df.find("COPY shared/requirements.txt") < df.find("pip install -r requirements.txt"));
  CHECK(df.find("WORKDIR /app/services/api", df.find("# ---- final")) != std::string::npos);
  CHECK(context_broken_rules(plan, df) == "");
  // The header says how to build, from the context.
  CHECK(
      has_line(df, "# Build:  DOCKER_BUILDKIT=1 docker build -f services/api/Dockerfile -t api ."));
  CHECK(has_line(df, "#         in the build context, ../.. from this Dockerfile's directory"));

  // The ignore file goes beside the Dockerfile, so the context's own
  // .dockerignore stays as it is; its patterns are relative to the context.
  CHECK(r.dockerignore_name == "Dockerfile.dockerignore");
  const std::string& ignore = r.dockerignore;
  INFO(ignore);
  CHECK(ignore.find("BuildKit reads this file") != std::string::npos);
  for (const char* line :
       {"*", "!services/api", "!libs/common", "!shared/requirements.txt", "services/api/build",
        "services/api/dist", "services/api/env", "services/api/.git", "**/.env", "**/venv",
        "services/api/.imgsmith/*", "!services/api/.imgsmith/imgsmith-probe-*",
        "!services/api/requirements.txt", "services/api/Dockerfile",
        "services/api/Dockerfile.dockerignore"}) {
    INFO(line);
    CHECK(has_line(ignore, line));
  }
  for (const char* line :
       {"build", "dist", "env", ".git", "Dockerfile", ".imgsmith/*", "!requirements.txt"}) {
    INFO(line);
    CHECK_FALSE(has_line(ignore, line));
  }
  // The whole context is left out first; exceptions for the files COPY names
  // come after every exclusion; a directory is let in only at the top, so
  // that secrets stay out of it.
  const auto first_exclusion = ignore.find("\n**/");
  CHECK(ignore.find("\n!libs/common\n") < first_exclusion);
  CHECK(ignore.rfind("\n!shared/requirements.txt\n") > ignore.rfind("\n**/"));
  CHECK(ignore.rfind("\n!libs/common\n") < first_exclusion);

  // What Docker sends, by its own rules.
  for (const char* sent :
       {"services/api/main.py", "services/api/requirements.txt", "shared/requirements.txt",
        "libs/common/pyproject.toml", "libs/common/common/__init__.py",
        "services/api/.imgsmith/imgsmith-probe-amd64",
        "services/api/.imgsmith/imgsmith-probe-arm64"}) {
    INFO("sent: " << sent);
    CHECK(docker_sends(ignore, sent));
  }
  for (const char* kept_out :
       {"services/billing/requirements.txt", "README.md", "shared/other.txt", ".git/HEAD",
        "services/api/.env", "libs/common/.env", "libs/common/common/__pycache__/x.pyc",
        "services/api/build/lib/x.py", "services/api/.imgsmith/cache", "services/api/Dockerfile",
        ".dockerignore"}) {
    INFO("kept out: " << kept_out);
    CHECK_FALSE(docker_sends(ignore, kept_out));
  }
  // Without a context, the same rules keep today's meaning.
  const Rendered plain =
      render_plan(make_plan(detect_project(repo.root / "services" / "billing"), {}));
  CHECK(docker_sends(plain.dockerignore, "main.py"));
  CHECK_FALSE(docker_sends(plain.dockerignore, "build/x"));
  CHECK(docker_sends(plain.dockerignore, "pkg/build/x"));  // build/ is only the top one's
}

TEST_CASE("gen context: --explain names the context and what comes from outside the project") {
  const Repo repo = monorepo();
  const Plan plan = make_plan(detect_project(repo.root / "services" / "api", {}, repo.root), {});
  std::string explain;
  for (const auto& e : plan.explain) explain += e.source + ": " + e.text + "\n";
  INFO(explain);
  CHECK(explain.find("--context: the build context is " + fs::canonical(repo.root).string()) !=
        std::string::npos);
  CHECK(explain.find("the project is services/api in it") != std::string::npos);
  CHECK(explain.find("requirements.txt:1: -r ../../shared/requirements.txt is outside the project, "
                     "in the build "
                     "context: copied from shared/requirements.txt") != std::string::npos);
  CHECK(explain.find("requirements.txt:2: -e ../../libs/common is outside the project") !=
        std::string::npos);
}

TEST_CASE("gen context: a context that does not hold the project is refused, naming both") {
  const Repo repo = monorepo();
  const fs::path api = repo.root / "services" / "api";
  const std::string sibling = error_of([&] { detect_project(api, {}, repo.root / "libs"); });
  CHECK_THAT(sibling, Catch::Contains("--context " + (repo.root / "libs").string() +
                                      " is not the project directory " + api.string() +
                                      " or a directory above it"));
  CHECK(sibling.find('\n') == std::string::npos);
  const std::string below = error_of([&] { detect_project(repo.root / "services", {}, api); });
  CHECK_THAT(below, Catch::Contains("is not the project directory"));
  CHECK_THAT(
      error_of([&] { detect_project(api, {}, repo.root / "nowhere"); }),
      Catch::Contains("--context " + (repo.root / "nowhere").string() + ": no such directory"));
  CHECK_THAT(error_of([&] { detect_project(api, {}, repo.root / "README.md"); }),
             Catch::Contains("not a directory"));
  // COPY's plain form cannot name a path with a space.
  Repo spaced(
      {{"my services/api/requirements.txt", "numpy==2.1.3\n"}, {"my services/api/main.py", ""}});
  CHECK_THAT(
      error_of([&] { detect_project(spaced.root / "my services" / "api", {}, spaced.root); }),
      Catch::Contains("'my services/api', holds a space"));
}

TEST_CASE(
    "gen context: what lies outside the context is still refused, with the --context that would "
    "hold it") {
  const Repo repo = monorepo();
  const fs::path api = repo.root / "services" / "api";
  // No context: the project directory is the context.
  const std::string none = error_of([&] { detect_project(api); });
  CHECK_THAT(
      none,
      Catch::Contains((api / "requirements.txt").string() +
                      ":1: -r ../../shared/requirements.txt is outside the project directory") &&
          Catch::Contains("COPY cannot reach it. Pass --context " + repo.root.string()));
  // A context too low: services/ holds the project but not shared/.
  const std::string low = error_of([&] { detect_project(api, {}, repo.root / "services"); });
  CHECK_THAT(
      low,
      Catch::Contains(
          "requirements.txt:1: -r ../../shared/requirements.txt is outside the build context " +
          (repo.root / "services").string() + " (--context)") &&
          Catch::Contains("Pass --context " + repo.root.string()));
  // A local path dependency beyond the context, and a missing one inside it.
  Repo far({{"services/api/requirements.txt", "-e ../../../elsewhere/lib\n"},
            {"services/api/main.py", ""}});
  CHECK_THAT(error_of([&] { detect_project(far.root / "services" / "api", {}, far.root); }),
             Catch::Contains(
                 "requirements.txt:1: -e ../../../elsewhere/lib is outside the build context"));
  CHECK_THAT(
      error_of([&] { detect_project(far.root / "services" / "api"); }),
      Catch::Contains(
          "requirements.txt:1: -e ../../../elsewhere/lib is outside the project directory") &&
          Catch::Contains("--context"));
  Repo missing(
      {{"services/api/requirements.txt", "../../libs/gone\n"}, {"services/api/main.py", ""}});
  CHECK_THAT(error_of([&] { detect_project(missing.root / "services" / "api", {}, missing.root); }),
             Catch::Contains("requirements.txt:1: the local path ../../libs/gone names") &&
                 Catch::Contains("missing"));
  // An absolute include is the host's, which no context holds.
  Repo absolute({{"services/api/requirements.txt", "-c /etc/constraints.txt\n"},
                 {"services/api/main.py", ""}});
  const std::string host =
      error_of([&] { detect_project(absolute.root / "services" / "api", {}, absolute.root); });
  CHECK_THAT(host,
             Catch::Contains(
                 "requirements.txt:1: -c /etc/constraints.txt is an absolute path on this host, "
                 "which no docker build context holds") &&
                 Catch::Contains("Copy the file into the build context " + absolute.root.string() +
                                 " and name it by a relative path"));
  CHECK_THAT(host, !Catch::Contains("outside the project directory") &&
                       !Catch::Contains("Pass --context"));
  // Paths inside the project are what they were: -e . needs the code first.
  Repo own({{"services/api/requirements.txt", "-e .\nflask==3.0.0\n"},
            {"services/api/pyproject.toml",
             "[project]\nname='api'\nversion='1'\n[build-system]\nrequires=['x']\n"},
            {"services/api/app.py", "from flask import Flask\napp = Flask(__name__)\n"}});
  const Project p = detect_project(own.root / "services" / "api", {}, own.root);
  CHECK(p.outside_paths.empty());
  CHECK(p.python->requirements_need_source);
  const Plan plan = make_plan(p, {});
  const std::string df = render_plan(plan).dockerfile;
  CHECK(df.find("COPY services/api/. .") < df.find("pip install"));
  CHECK(context_broken_rules(plan, df) == "");
}

TEST_CASE("gen context: an include that leads back into the project is the project's own file") {
  Repo repo({{"shared/base.txt", "-r ../services/api/extra.txt\nnumpy==2.1.3\n"},
             {"services/api/requirements.txt", "-r ../../shared/base.txt\nscikit-learn==1.5.2\n"},
             {"services/api/extra.txt", "pandas==2.2.3\n"},
             {"services/api/main.py", ""}});
  const Project p = detect_project(repo.root / "services" / "api", {}, repo.root);
  CHECK(p.python->requirement_files ==
        std::vector<std::string>{"requirements.txt", "../../shared/base.txt", "extra.txt"});
  REQUIRE(p.outside_paths.size() == 1);
  CHECK(p.outside_paths[0].path == "shared/base.txt");
  const Rendered r = render_plan(make_plan(p, {}));
  CHECK(has_line(r.dockerfile, "COPY services/api/extra.txt extra.txt"));
  CHECK(has_line(r.dockerfile, "COPY shared/base.txt /app/shared/base.txt"));
  CHECK(has_line(r.dockerignore, "!services/api/extra.txt"));
  CHECK(has_line(r.dockerignore, "!shared/base.txt"));
}

TEST_CASE("gen context: the printed build command runs from where gen ran") {
  const Repo repo = monorepo();
  const fs::path api = repo.root / "services" / "api";
  const Plan plan = make_plan(detect_project(api, {}, repo.root), {});
  {
    const InDirectory here(repo.root);
    CHECK_THAT(
        summary(plan),
        Catch::Contains("  build   DOCKER_BUILDKIT=1 docker build -f services/api/Dockerfile "
                        "-t api .\n"));
  }
  {
    const InDirectory here(api);
    CHECK_THAT(
        summary(plan),
        Catch::Contains("  build   DOCKER_BUILDKIT=1 docker build -f Dockerfile -t api ../..\n"));
  }
  {
    const InDirectory here(repo.root / "libs" / "common");
    CHECK_THAT(summary(plan),
               Catch::Contains("docker build -f ../../services/api/Dockerfile -t api ../..\n"));
  }
  {
    // Far away, the absolute paths are the shorter.
    TempDir elsewhere;
    const fs::path deep = fs::path(elsewhere.path()) / "a" / "b" / "c" / "d" / "e" / "f";
    fs::create_directories(deep);
    const InDirectory here(deep);
    const std::string root = fs::canonical(repo.root).string();
    CHECK_THAT(summary(plan), Catch::Contains("docker build -f " + root +
                                              "/services/api/Dockerfile -t api " + root + "\n"));
  }
}

TEST_CASE("gen context: compose.yaml builds from the context, with the project's Dockerfile") {
  const Repo repo = monorepo();
  Options o;
  o.compose = true;
  const Rendered r =
      render_plan(make_plan(detect_project(repo.root / "services" / "api", {}, repo.root), o));
  INFO(r.compose);
  CHECK(has_line(r.compose, "    build:"));
  CHECK(has_line(r.compose, "      context: ../.."));
  CHECK(has_line(r.compose, "      dockerfile: services/api/Dockerfile"));
  CHECK_FALSE(has_line(r.compose, "    build: ."));
  CHECK(has_line(r.dockerignore, "services/api/compose.yaml"));
}

TEST_CASE(
    "gen context: pyproject.toml's path sources outside the project are copied, and pip is given "
    "them") {
  Repo repo({{"libs/common/pyproject.toml", "[project]\nname='common'\nversion='1'\n"},
             {"services/api/pyproject.toml",
              "[project]\nname='api'\nversion='1'\ndependencies=['common[fast]', 'numpy==2.1.3']\n"
              "[tool.uv.sources]\ncommon = { path = '../../libs/common', editable = true }\n"},
             {"services/api/main.py", ""}});
  const fs::path api = repo.root / "services" / "api";
  CHECK_THAT(error_of([&] { detect_project(api); }),
             Catch::Contains((api / "pyproject.toml").string() +
                             ":6: [tool.uv.sources] common path ../../libs/common "
                             "is outside the project directory"));
  const Project p = detect_project(api, {}, repo.root);
  REQUIRE(p.outside_paths.size() == 1);
  CHECK(p.outside_paths[0].path == "libs/common");
  CHECK(p.outside_paths[0].source == "pyproject.toml:6");
  const Plan plan = make_plan(p, {});
  CHECK(plan.install_mode == "pyproject");
  CHECK(plan.pyproject_deps ==
        std::vector<std::string>{"'common[fast]@file:///app/libs/common'", "numpy==2.1.3"});
  const std::string df = render_plan(plan).dockerfile;
  INFO(df);
  CHECK(has_line(df, "COPY libs/common/ /app/libs/common/"));
  CHECK(df.find("COPY libs/common/") < df.find("pip install"));
  CHECK(context_broken_rules(plan, df) == "");
  // Poetry's path dependencies, installed from the lock by poetry export.
  Repo poetry(
      {{"libs/common/pyproject.toml", "[project]\nname='common'\nversion='1'\n"},
       {"services/api/pyproject.toml",
        "[tool.poetry]\nname='api'\nversion='1'\n[tool.poetry.dependencies]\npython='^3.12'\n"
        "common = { path = '../../libs/common', develop = true }\n"},
       {"services/api/poetry.lock", "[[package]]\nname='common'\nversion='1'\n"},
       {"services/api/main.py", ""}});
  const Plan locked =
      make_plan(detect_project(poetry.root / "services" / "api", {}, poetry.root), {});
  CHECK(locked.install_mode == "poetry");
  const std::string ldf = render_plan(locked).dockerfile;
  CHECK(has_line(ldf, "COPY libs/common/ /app/libs/common/"));
  CHECK(has_line(ldf, "COPY services/api/pyproject.toml services/api/poetry.lock ./"));
}

TEST_CASE(
    "gen context: a uv project's lock and pyproject.toml are bound from the project's place in the "
    "context") {
  Repo repo({{"services/api/pyproject.toml",
              "[project]\nname='api'\nversion='1'\ndependencies=['numpy==2.1.3']\n"},
             {"services/api/uv.lock", "version = 1\n[[package]]\nname='numpy'\nversion='2.1.3'\n"},
             {"services/api/main.py", ""}});
  const std::string df =
      render_plan(make_plan(detect_project(repo.root / "services" / "api", {}, repo.root), {}))
          .dockerfile;
  CHECK(df.find("--mount=type=bind,source=services/api/uv.lock,target=uv.lock") !=
        std::string::npos);
  CHECK(df.find("--mount=type=bind,source=services/api/pyproject.toml,target=pyproject.toml") !=
        std::string::npos);
}

TEST_CASE("gen context: --wheelhouse is bound from the project's place in the context") {
  Repo repo({{"services/api/requirements.txt", "numpy==2.1.3\n"},
             {"services/api/wheels/numpy-2.1.3-py3-none-any.whl", "x"},
             {"services/api/main.py", ""}});
  Options o;
  o.wheelhouse = "wheels";
  const Plan plan = make_plan(detect_project(repo.root / "services" / "api", {}, repo.root), o);
  const Rendered r = render_plan(plan);
  CHECK(r.dockerfile.find("--mount=type=bind,source=services/api/wheels,target=/wheels") !=
        std::string::npos);
  CHECK(r.dockerfile.find("RUN rm -rf /app/services/api/.imgsmith /app/services/api/wheels") !=
        std::string::npos);
  CHECK(has_line(r.dockerignore, "!services/api/wheels"));
}

TEST_CASE("gen context: a CMake program adding a library from beside it") {
  Repo repo(
      {{"libs/kernels/CMakeLists.txt",
        "enable_language(CUDA)\nfind_package(CUDAToolkit REQUIRED)\nadd_library(kernels ops.cu)\n"
        "target_link_libraries(kernels PUBLIC CUDA::cublas)\ninstall(TARGETS kernels)\n"
        "add_executable(kernels_bench bench.cu)\n"},
       {"libs/kernels/ops.cu", "__global__ void scale(float* x) {}\n"},
       {"services/solver/CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.22)\nproject(solver LANGUAGES CXX CUDA)\n"
        "add_subdirectory(../../libs/kernels kernels)\nadd_executable(solver main.cu)\n"
        "target_link_libraries(solver PRIVATE kernels)\n"},
       {"services/solver/main.cu", "int main() { return 0; }\n"}});
  const fs::path solver = repo.root / "services" / "solver";
  CHECK_THAT(error_of([&] { detect_project(solver); }),
             Catch::Contains((solver / "CMakeLists.txt").string() +
                             ":3: add_subdirectory(../../libs/kernels) is "
                             "outside the project directory") &&
                 Catch::Contains("--context " + repo.root.string()));
  const Project p = detect_project(solver, {}, repo.root);
  REQUIRE(p.cuda_cpp);
  REQUIRE(p.outside_paths.size() == 1);
  CHECK(p.outside_paths[0].path == "libs/kernels");
  CHECK(p.outside_paths[0].directory);
  // The library's CMakeLists.txt says what the build links; the programs and
  // install rules are the project's own.
  CHECK(p.cuda_cpp->cuda_libs == std::vector<std::string>{"cublas"});
  CHECK(p.cuda_cpp->targets == std::vector<std::string>{"solver"});
  CHECK_FALSE(p.cuda_cpp->cmake_install);
  const Plan plan = make_plan(p, {});
  CHECK(plan.flavor == "runtime");
  CHECK(plan.app_dir == "/app");
  const Rendered r = render_plan(plan);
  INFO(r.dockerfile);
  CHECK(has_line(r.dockerfile, "WORKDIR /src/services/solver"));
  CHECK(has_line(r.dockerfile, "COPY libs/kernels/ /src/libs/kernels/"));
  CHECK(has_line(r.dockerfile, "COPY services/solver/. ."));
  CHECK(r.dockerfile.find("COPY libs/kernels/") < r.dockerfile.find("COPY services/solver/. ."));
  CHECK(context_broken_rules(plan, r.dockerfile) == "");
  CHECK(has_line(r.dockerignore, "!libs/kernels"));
  CHECK(has_line(r.dockerignore, "services/solver/cmake-build-*"));
  CHECK(docker_sends(r.dockerignore, "libs/kernels/ops.cu"));
  CHECK_FALSE(docker_sends(r.dockerignore, "libs/other/x.cu"));
  // A subdirectory named from the project's root variable resolves the same.
  Repo variable({{"libs/kernels/CMakeLists.txt", "add_library(kernels ops.cu)\n"},
                 {"libs/kernels/ops.cu", ""},
                 {"services/solver/CMakeLists.txt",
                  "project(solver LANGUAGES "
                  "CUDA)\nadd_subdirectory(${PROJECT_SOURCE_DIR}/../../libs/kernels k)\n"
                  "add_executable(solver main.cu)\n"},
                 {"services/solver/main.cu", "int main() { return 0; }\n"}});
  CHECK(detect_project(variable.root / "services" / "solver", {}, variable.root)
            .outside_paths.size() == 1);
}
