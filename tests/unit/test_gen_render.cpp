// imgsmith gen on the example projects: golden Dockerfiles, and the output
// rules checked on every flavour and option that changes the text.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "dockerfile_rules.hpp"
#include "imgsmith/gen/gen.hpp"

using namespace imgsmith::gen;
namespace fs = std::filesystem;

namespace {

const fs::path kSource = IMGSMITH_SOURCE_DIR;
const std::vector<std::string> kExamples = {"pytorch-api", "cuda-saxpy", "fraud-api-cpu"};

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The golden file, or (IMGSMITH_UPDATE_GOLDEN=1) rewrites it and passes.
void check_golden(const std::string& name, const std::string& actual) {
  const fs::path path = kSource / "tests" / "golden" / name;
  if (std::getenv("IMGSMITH_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  INFO("golden file " << path.string() << " (IMGSMITH_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(fs::exists(path));
  CHECK(read(path) == actual);
}

std::string describe(const std::vector<std::string>& broken) {
  std::string s;
  for (const auto& b : broken) s += b + "\n";
  return s;
}

}  // namespace

TEST_CASE("gen golden: the three examples render as reviewed") {
  for (const auto& example : kExamples) {
    INFO(example);
    const Plan plan = make_plan(detect_project(kSource / "examples" / example), Options{});
    const Rendered r = render_plan(plan);
    check_golden(example + ".Dockerfile", r.dockerfile);
    check_golden(example + ".dockerignore", r.dockerignore);
  }
}

TEST_CASE("gen golden: the examples land where their frameworks belong") {
  const auto plan = [](const std::string& e) {
    return make_plan(detect_project(kSource / "examples" / e), {});
  };
  CHECK(plan("pytorch-api").final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
  CHECK(plan("cuda-saxpy").final_image == "nvidia/cuda:12.8.1-runtime-ubuntu24.04");
  CHECK(plan("fraud-api-cpu").final_image == "python:3.12-slim-bookworm");
}

TEST_CASE("gen properties: every example, flavour and option passes the output rules") {
  for (const auto& example : kExamples) {
    const Project project = detect_project(kSource / "examples" / example);
    for (const std::string flavor : {"auto", "base", "runtime", "devel"})
      for (const bool probe : {true, false})
        for (const bool syntax : {false, true})
          for (const std::string mirror : {"", "mirror.example.com:5000/hub"}) {
            Options o;
            o.flavor = flavor;
            o.probe = probe;
            o.syntax = syntax;
            o.registry_mirror = mirror;
            o.compose = true;
            const Plan plan = make_plan(project, o);
            const Rendered r = render_plan(plan);
            imgsmith::test::RuleContext context;
            context.expect_probe = plan.probe;
            context.gpu = plan.gpu;
            context.devel_final_allowed = flavor == "devel";
            context.source_before_deps = plan.source_before_deps;
            context.syntax_line = syntax;
            const auto broken = imgsmith::test::check_rules(r.dockerfile, context);
            INFO(example << " --flavor " << flavor << (probe ? "" : " --no-probe")
                         << (syntax ? " --syntax" : "") << " mirror '" << mirror << "'\n"
                         << r.dockerfile);
            CHECK(describe(broken) == "");
            // The final stage never holds nvcc: no devel base unless asked.
            const auto d = imgsmith::test::parse_dockerfile(r.dockerfile);
            CHECK(
                (d.stage_images.back().find("-devel-") == std::string::npos || flavor == "devel"));
            // The probe is copied in, and the rest of .imgsmith/ kept out.
            CHECK((r.dockerignore.find("!.imgsmith/imgsmith-probe-*") != std::string::npos) ==
                  plan.probe);
            CHECK(r.dockerignore.find(".imgsmith/*") != std::string::npos);
            CHECK((r.compose.find("driver: nvidia") != std::string::npos) == plan.gpu);
            // The image's health is the probe's verdict on its GPU, checked
            // beside the app (--check), after a start period that covers
            // loading the weights (a minute at least); without the probe
            // there is no HEALTHCHECK.
            const auto health = r.dockerfile.find("\nHEALTHCHECK ");
            CHECK((health != std::string::npos) == plan.probe);
            if (health != std::string::npos) {
              const std::string line =
                  r.dockerfile.substr(health + 1, r.dockerfile.find("]\n", health) - health);
              CHECK_THAT(line,
                         Catch::Contains("CMD [\"/usr/local/bin/imgsmith-probe\", \"--check\""));
              const auto period = line.find("--start-period=");
              REQUIRE(period != std::string::npos);
              CHECK(std::stoul(line.substr(period + 15)) >= 60);
            }
          }
  }
}

TEST_CASE("gen properties: the rule checker catches what it is meant to") {
  // Each rule must be able to fail, or the property test above proves nothing.
  const std::string good = read(kSource / "tests" / "golden" / "pytorch-api.Dockerfile");
  imgsmith::test::RuleContext context;
  context.expect_probe = true;
  context.gpu = true;
  REQUIRE(imgsmith::test::check_rules(good, context).empty());
  const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> breaks = {
      {"DL3007",
       {"FROM nvidia/cuda:12.4.1-base-ubuntu22.04 AS builder",
        "FROM nvidia/cuda:latest AS builder"}},
      {"DL3006", {"FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n", "FROM ubuntu\n"}},
      {"DL3008", {"python3.10=3.10.* python3.10-venv", "python3.10 python3.10-venv"}},
      {"DL3015",
       {"install -y --no-install-recommends python3.10=3.10.*\n# The app runs as",
        "install -y python3.10=3.10.*\n# The app runs as"}},
      {"DL3009",
       {"    --mount=type=cache,target=/var/lib/apt,sharing=locked \\\n    apt-get update \\\n && "
        "apt-get install -y --no-install-recommends python3.10=3.10.*\n# The app runs as",
        "    apt-get update \\\n && apt-get install -y --no-install-recommends "
        "python3.10=3.10.*\n# The app runs as"}},
      {"DL3042",
       {"RUN --mount=type=cache,target=/root/.cache/pip \\\n    pip install -r",
        "RUN pip install -r"}},
      {"DL3013", {"pip install -r requirements.txt", "pip install -r requirements.txt torch"}},
      {"DL3002", {"USER app", "USER root"}},
      {"DL3025", {"CMD [\"uvicorn\"", "CMD uvicorn [\"uvicorn\""}},
      {"DL3020", {"COPY . .", "ADD . ."}},
      {"DL4006", {"SHELL [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"]\nENV DEBIAN", "ENV DEBIAN"}},
      {"no-compiler",
       {"FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n",
        "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n"}},
      {"probe", {"ENTRYPOINT [\"/usr/local/bin/imgsmith-probe\", \"--\"]\n", ""}},
      // The probe stage's image: a global ARG's default, an earlier stage or
      // a pinned image.
      {"from-arg", {"ARG IMGSMITH_PROBE_IMAGE=probe-from-context\n", ""}},
      {"DL3006",
       {"ARG IMGSMITH_PROBE_IMAGE=probe-from-context", "ARG IMGSMITH_PROBE_IMAGE=no-such-stage"}},
      {"DL3007",
       {"ARG IMGSMITH_PROBE_IMAGE=probe-from-context",
        "ARG IMGSMITH_PROBE_IMAGE=example.com/imgsmith-probe:latest"}},
      {"labels", {"LABEL org.opencontainers.image.title", "LABEL title"}},
      {"layers", {"COPY requirements.txt requirements.txt\n", "COPY . .\n"}},
      {"home", {"--home-dir /home/app", "--home-dir /app"}},
      {"home", {"install -d -o app -g app", "install -d"}},
      {"home", {"ENV HOME=/home/app", "ENV HOME_UNSET=/home/app"}},
      {"read-only-code",
       {"COPY --from=builder /app /app", "COPY --chown=app --from=builder /app /app"}},
  };
  for (const auto& [rule, edit] : breaks) {
    const auto at = good.find(edit.first);
    INFO(rule << ": cannot find '" << edit.first << "' in the golden file");
    REQUIRE(at != std::string::npos);
    std::string bad = good;
    bad.replace(at, edit.first.size(), edit.second);
    const auto broken = imgsmith::test::check_rules(bad, context);
    INFO(describe(broken));
    CHECK(describe(broken).find(rule) != std::string::npos);
  }
}
