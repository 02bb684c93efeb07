// gen's decision functions (src/gen/decisions.hpp) alone, and through
// make_plan and render_plan: packages gen does not know, the system
// libraries wheels need, paths the app writes, the build-time check, and
// what stays out of the build context.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "decisions.hpp"
#include "image_builder.hpp"
#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/error.hpp"
#include "policy.hpp"
#include "project_tree.hpp"

using namespace imgsmith;
using namespace imgsmith::gen;
using imgsmith::testing::TempDir;
namespace fs = std::filesystem;

namespace {

struct Tree : imgsmith::testing::ProjectTree {
  using ProjectTree::ProjectTree;
  Plan plan(Options o = {}) const { return make_plan(detect_project(dir), o); }
};

bool any_has(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

bool has(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

const char* kServer = "from fastapi import FastAPI\napp = FastAPI()\n";

}  // namespace

TEST_CASE("gen decisions: a package no table knows is unknown, never CPU in silence") {
  Tree t({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\nacme-inference==1.2\n"},
          {"main.py", kServer}});
  const Plan plan = t.plan();
  CHECK_FALSE(plan.gpu);
  REQUIRE(plan.unknown_packages.size() == 1);
  CHECK(plan.unknown_packages[0] == "acme-inference (requirements.txt:3)");
  CHECK(any_has(plan.warnings, "gen does not know what acme-inference (requirements.txt:3)"));
  CHECK(any_has(plan.warnings, "[gen] packages = { \"acme-inference\" = \"bundled\" }"));
  // The summary no longer claims that nothing uses a GPU.
  CHECK_FALSE(any_has(plan.why_base, "nothing in this project uses one"));
  CHECK(any_has(plan.why_base, "No GPU as far as gen knows"));
  // --explain names it, with the reason.
  bool explained = false;
  for (const auto& e : plan.explain)
    if (e.source == "requirements.txt:3" && e.text.find("unknown") != std::string::npos)
      explained = true;
  CHECK(explained);
}

TEST_CASE("gen decisions: a package known to be CPU-only raises no warning") {
  Tree t({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\nrequests==2.31\n"},
          {"main.py", kServer}});
  const Plan plan = t.plan();
  CHECK(plan.unknown_packages.empty());
  CHECK(any_has(plan.why_base, "nothing in this project uses one"));
}

TEST_CASE("gen decisions: an unknown name that speaks of CUDA is warned about as such") {
  Tree t({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\nacme-kernels-cu12==0.3\n"},
          {"main.py", kServer}});
  const Plan plan = t.plan();
  CHECK(any_has(plan.warnings,
                "acme-kernels-cu12 (requirements.txt:3), whose name speaks of "
                "CUDA or a GPU; the image has no CUDA for it"));
}

TEST_CASE("gen decisions: what imgsmith.toml tells of a package decides its need") {
  Tree t({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\nacme-inference==1.2\n"},
          {"main.py", kServer},
          {"imgsmith.toml", "[gen]\npackages = { \"Acme_Inference\" = \"bundled\" }\n"}});
  const auto policy = load_gen_policy(t.dir.string());
  REQUIRE(policy);
  CHECK(policy->packages.at("acme-inference") == "bundled");
  Options o;
  std::string requirements;
  apply_gen_policy(*policy, o, requirements);
  const Plan plan = t.plan(o);
  CHECK(plan.gpu);
  CHECK(plan.flavor == "base");
  CHECK(plan.unknown_packages.empty());
}

TEST_CASE("gen decisions: [gen] packages refuses a need it does not know") {
  Tree t({{"imgsmith.toml", "[gen]\npackages = { acme = \"gpu\" }\n"}});
  CHECK_THROWS_WITH(load_gen_policy(t.dir.string()),
                    Catch::Contains("packages.acme") && Catch::Contains("choose none, bundled"));
}

TEST_CASE("gen decisions: the package table gives GPU needs gen's frameworks table lacks") {
  // faster-whisper runs CTranslate2, which loads cuBLAS and cuDNN from the
  // system: a runtime image with cuDNN, of CUDA 12.
  Tree t({{"requirements.txt", "faster-whisper==1.0.3\n"},
          {"transcribe.py", "import faster_whisper\n"}});
  const Plan plan = t.plan({.cmd = {"python", "transcribe.py"}});
  CHECK(plan.gpu);
  CHECK(plan.flavor == "runtime");
  CHECK(plan.cudnn);
  CHECK(plan.cuda.rfind("12.", 0) == 0);
}

TEST_CASE("gen decisions: a CPU build that can use a GPU another way says how") {
  Tree t({{"requirements.txt", "llama-cpp-python==0.2.90\n"}, {"chat.py", "import llama_cpp\n"}});
  const Plan plan = t.plan({.cmd = {"python", "chat.py"}});
  CHECK_FALSE(plan.gpu);
  CHECK(any_has(plan.notes, "llama-cpp-python (requirements.txt:1) runs on the CPU as installed"));
  CHECK(any_has(plan.notes, "CUDA runtime and cuBLAS"));
}

TEST_CASE("gen decisions: the system libraries a wheel needs are installed in the final stage") {
  Tree t({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\nopencv-python==4.9.0.80\n"},
          {"main.py", kServer}});
  const Plan plan = t.plan();
  CHECK(has(plan.final_apt, "libgl1"));
  CHECK(has(plan.final_apt, "libglib2.0-0"));
  CHECK(render_plan(plan).dockerfile.find("apt-get install -y --no-install-recommends libgl1 "
                                          "libglib2.0-0") != std::string::npos);
  // The headless build needs neither.
  Tree h({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\nopencv-python-headless==4.9.0.80\n"},
          {"main.py", kServer}});
  CHECK_FALSE(has(h.plan().final_apt, "libgl1"));
}

TEST_CASE("gen decisions: a library's package is named as the final image's OS names it") {
  const Tables& tables = builtin_tables();
  // Ubuntu 24.04 renamed GLib's library package in its 64-bit time_t move.
  CHECK(package_on("libglib2.0-0", tables, "ubuntu24.04") == "libglib2.0-0t64");
  CHECK(package_on("libglib2.0-0", tables, "ubuntu22.04") == "libglib2.0-0");
  CHECK(package_on("libglib2.0-0", tables, "debian") == "libglib2.0-0");
  CHECK(package_on("libgl1", tables, "ubuntu24.04") == "libgl1");
}

TEST_CASE("gen decisions: every row of the package table says where it comes from") {
  const Tables& tables = builtin_tables();
  REQUIRE(tables.packages.size() > 300);
  for (const auto& [name, fact] : tables.packages) {
    INFO(name);
    CHECK(name == normalise_name(name));
    CHECK(fact.source.rfind("http", 0) == 0);
    CHECK((fact.need == "none" || fact.need == "bundled" || fact.need == "system" ||
           fact.need == "system-cudnn" || fact.need == "unknown"));
    for (const auto& [extra, need] : fact.extras)
      CHECK((need == "none" || need == "bundled" || need == "system" || need == "system-cudnn"));
  }
  REQUIRE(tables.sonames.size() > 100);
  CHECK(tables.sonames.at("libGL.so.1").at("debian") == "libgl1");
  CHECK(has(tables.driver_injected, "libcuda.so.1"));
}

TEST_CASE("gen decisions: directories the app writes beside its code are made its own") {
  Tree t({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\n"},
          {"main.py", std::string(kServer) +
                          "import os\nos.makedirs(\"outputs/images\", exist_ok=True)\n"
                          "UPLOAD_DIR = './uploads/'\nLOG_LEVEL = 'info'\n"},
          {"tools/cli.py",
           "import argparse\np = argparse.ArgumentParser()\n"
           "p.add_argument('--output-dir', default='results')\n"
           "p.add_argument('--model', default='base')\n"},
          {"tests/test_x.py", "import os\nos.makedirs('scratch')\n"}});
  const Plan plan = t.plan();
  CHECK(has(plan.writable_dirs, "/app/outputs/images"));
  CHECK(has(plan.writable_dirs, "/app/uploads"));
  CHECK(has(plan.writable_dirs, "/app/results"));
  CHECK_FALSE(has(plan.writable_dirs, "/app/info"));
  CHECK_FALSE(has(plan.writable_dirs, "/app/base"));
  CHECK_FALSE(has(plan.writable_dirs, "/app/scratch"));  // tests do not run in the image
  const std::string dockerfile = render_plan(plan).dockerfile;
  const auto install = dockerfile.find("RUN install -d -o app -g app -m 0755 /app/outputs/images");
  CHECK(install != std::string::npos);
  CHECK(install < dockerfile.find("USER app"));
}

TEST_CASE("gen decisions: a database file written in the code directory is warned about") {
  Tree t({{"manage.py", "import django\n"},
          {"requirements.txt", "django==5.0\ngunicorn==22.0\n"},
          {"site/settings.py",
           "DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3',\n"
           "    'NAME': BASE_DIR / 'db.sqlite3'}}\nMEDIA_ROOT = BASE_DIR / 'media'\n"}});
  const Plan plan = t.plan({.cmd = {"gunicorn", "site.wsgi"}});
  CHECK(has(plan.writable_dirs, "/app/media"));
  CHECK(any_has(plan.warnings, "site/settings.py:2: the app writes db.sqlite3"));
}

TEST_CASE("gen decisions: what frameworks write by default, and [gen] writable") {
  Tree t({{"requirements.txt", "lightning==2.2.0\n"}, {"train.py", "import lightning\n"}});
  Options o;
  o.cmd = {"python", "train.py"};
  o.writable = {"exports"};
  o.k8s = true;
  const Plan plan = t.plan(o);
  CHECK(has(plan.writable_dirs, "/app/lightning_logs"));
  CHECK(has(plan.writable_dirs, "/app/exports"));
  // Kubernetes runs the image with a read-only root: each is an emptyDir.
  const auto rendered = render_plan(plan);
  REQUIRE_FALSE(rendered.k8s.empty());
  CHECK(rendered.k8s[0].second.find("mountPath: /app/lightning_logs") != std::string::npos);
  CHECK(rendered.k8s[0].second.find("emptyDir: {}") != std::string::npos);
}

TEST_CASE("gen decisions: the final stage checks itself unless told not to") {
  Tree t({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\n"}, {"main.py", kServer}});
  const Plan plan = t.plan();
  CHECK(plan.verify);
  CHECK(plan.verify_entry_modules == std::vector<std::string>{"main"});
  CHECK(has(plan.verify_allowed, "libcuda.so"));
  const Rendered r = render_plan(plan);
  CHECK(r.dockerfile.find("bash /tmp/imgsmith-check/libraries.sh") != std::string::npos);
  REQUIRE(r.check_files.size() == 2);
  CHECK(r.check_files[0].first == ".imgsmith/check/libraries.sh");
  CHECK(r.check_files[1].first == ".imgsmith/check/imports.py");
  CHECK(r.check_files[1].second.find("entry_modules = [\"main\"]") != std::string::npos);
  const std::string& libraries = r.check_files[0].second;
  // Libraries the CPU image's base already carries are not listed.
  CHECK(libraries.find(" libz.so.1=") == std::string::npos);
  CHECK(libraries.find(" libGL.so.1=libgl1 ") != std::string::npos);
  CHECK(r.dockerignore.find("\n!.imgsmith/check\n") != std::string::npos);

  Options off;
  off.verify = false;
  const Plan quiet = t.plan(off);
  CHECK_FALSE(quiet.verify);
  CHECK(render_plan(quiet).dockerfile.find("imgsmith-check") == std::string::npos);
  CHECK(render_plan(quiet).check_files.empty());
}

TEST_CASE("gen decisions: the check starts from the file or module the command names") {
  ImageCheck c;
  Plan p;
  p.python = "3.12";
  p.cmd = {"python", "-u", "serve.py", "--port", "8000"};
  CHECK(image_check(p, true, builtin_tables()).entry_files == std::vector<std::string>{"serve.py"});
  p.cmd = {"python", "-m", "svc.server"};
  CHECK(image_check(p, true, builtin_tables()).entry_modules ==
        std::vector<std::string>{"svc.server"});
  p.cmd = {"gunicorn", "-b", "0.0.0.0:8000", "web.app:create_app()"};
  CHECK(image_check(p, true, builtin_tables()).entry_modules ==
        std::vector<std::string>{"web.app"});
  p.cmd = {"streamlit", "run", "ui/app.py"};
  CHECK(image_check(p, true, builtin_tables()).entry_files ==
        std::vector<std::string>{"ui/app.py"});
  p.cmd = {"my-console-script"};
  const ImageCheck none = image_check(p, true, builtin_tables());
  CHECK(none.entry_files.empty());
  CHECK(none.entry_modules.empty());
  CHECK(none.enabled);  // the libraries are still checked
}

TEST_CASE("gen decisions: .gitignore lines become .dockerignore patterns") {
  CHECK(docker_patterns("db.sqlite3", "").at(0) == "**/db.sqlite3");
  CHECK(docker_patterns("/data/", "").at(0) == "data");
  CHECK(docker_patterns("saves/", "").at(0) == "**/saves");
  CHECK(docker_patterns("logs/*.log", "").at(0) == "logs/*.log");
  CHECK(docker_patterns("!keep.gguf", "").at(0) == "!**/keep.gguf");
  CHECK(docker_patterns("**/tmp", "").at(0) == "**/tmp");
  CHECK(docker_patterns("\\#notes", "").at(0) == "**/#notes");
  CHECK(docker_patterns("*.gguf   ", "svc/").at(0) == "svc/**/*.gguf");
  CHECK(docker_patterns("# a comment", "").empty());
  CHECK(docker_patterns("   ", "").empty());
  CHECK(docker_patterns("/", "").empty());
}

TEST_CASE("gen decisions: secrets by content and Git LFS pointers stay out, with a warning") {
  Tree t({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\n"},
          {"main.py", kServer},
          {".gitignore", "uploads/\n*.gguf\n"},
          {"config/prod-1234.json",
           "{\"type\": \"service_account\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n\"}"},
          {"deploy.txt",
           "-----BEGIN OPENSSH PRIVATE KEY-----\nxx\n-----END OPENSSH PRIVATE KEY-----\n"},
          {"models/weights.safetensors",
           "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 4294967296\n"},
          {"notes.txt", "nothing secret here\n"}});
  const Plan plan = t.plan();
  CHECK(has(plan.ignore_secrets, "config/prod-1234.json"));
  CHECK(has(plan.ignore_secrets, "deploy.txt"));
  CHECK_FALSE(has(plan.ignore_secrets, "notes.txt"));
  CHECK(any_has(plan.warnings, "config/prod-1234.json holds a cloud service account's key"));
  CHECK(any_has(plan.warnings, "models/weights.safetensors is a Git LFS pointer"));
  const std::string ignore = render_plan(plan).dockerignore;
  CHECK(ignore.find("\ndeploy.txt\n") != std::string::npos);
  CHECK(ignore.find("\n**/uploads\n") != std::string::npos);
  CHECK(ignore.find("\n**/*.gguf\n") != std::string::npos);
  CHECK(ignore.find("\n**/.envrc\n") != std::string::npos);
  CHECK(ignore.find("\n**/*.tfstate\n") != std::string::npos);
  // A file the Dockerfile copies is let back in after .gitignore's lines.
  Tree g({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\n"},
          {"main.py", kServer},
          {".gitignore", "*.txt\n"}});
  const std::string kept = render_plan(g.plan()).dockerignore;
  CHECK(kept.find("\n**/*.txt\n") < kept.rfind("\n!requirements.txt\n"));
}

TEST_CASE("gen decisions: the Python is one the pinned frameworks publish wheels for") {
  // torch 2.1 has no wheel for 3.12 (the CPU image's preferred Python) or
  // for Ubuntu 24.04's own 3.12.
  Tree t({{"requirements.txt", "torch==2.1.0\n"}, {"train.py", "import torch\n"}});
  const Plan gpu = t.plan();
  CHECK(gpu.python == "3.10");
  CHECK(gpu.os == "ubuntu22.04");
  // Its PyPI wheel is built for CUDA 12.1, so the image is 12.1's.
  CHECK(gpu.cuda == "12.1.1");
  Tree cpu({{"requirements.txt", "tensorflow-cpu==2.15.0\nflask==3.0\n"},
            {"app.py", "from flask import Flask\napp = Flask(__name__)\n"}});
  CHECK(cpu.plan().python == "3.11");
  // Unpinned, pip finds a release with a wheel for the preferred Python.
  Tree loose({{"requirements.txt", "tensorflow-cpu\nflask==3.0\n"},
              {"app.py", "from flask import Flask\napp = Flask(__name__)\n"}});
  CHECK(loose.plan().python == "3.12");
  // --python against the wheels is warned about.
  Options o;
  o.python = "3.12";
  CHECK(any_has(cpu.plan(o).warnings, "--python 3.12: the project's frameworks publish no wheels"));
}

TEST_CASE("gen decisions: python_from_wheels reads series and ranges of releases") {
  const Tables& tables = builtin_tables();
  const auto jax = python_from_wheels(
      {*parse_requirement("jaxlib==0.4.15", "r:1"), *parse_requirement("flask", "r:2")}, tables);
  CHECK(jax.constrained);
  CHECK(jax.allowed == std::set<std::string>{"3.9", "3.10", "3.11"});
  const auto both = python_from_wheels({*parse_requirement("torch==2.1.2+cu118", "r:1"),
                                        *parse_requirement("onnxruntime==1.20.1", "r:2")},
                                       tables);
  CHECK(both.allowed == std::set<std::string>{"3.10", "3.11"});
  const auto beyond = python_from_wheels({*parse_requirement("torch==9.1", "r:1")}, tables);
  CHECK_FALSE(beyond.constrained);
  REQUIRE(beyond.reasons.size() == 1);
  CHECK(beyond.reasons[0].text.find("does not narrow") != std::string::npos);
}

TEST_CASE("gen decisions: entrypoints real projects declare") {
  SECTION("a Procfile's web process, with $PORT") {
    Tree t(
        {{"requirements.txt", "flask==3.0\ngunicorn==22.0\n"},
         {"Procfile",
          "worker: celery -A tasks worker\nweb: gunicorn --bind 0.0.0.0:${PORT:-5050} wsgi:app\n"},
         {"wsgi.py", "from flask import Flask\napp = Flask(__name__)\n"},
         {"app.py", "from flask import Flask\napp = Flask(__name__)\n"}});
    const Plan plan = t.plan();
    CHECK(plan.cmd == std::vector<std::string>{"gunicorn", "--bind", "0.0.0.0:5050", "wsgi:app"});
    CHECK(plan.port == 5050);
    CHECK(has(plan.env, "PORT=5050"));
  }
  SECTION("a Procfile line that needs a shell gets one") {
    Tree t({{"requirements.txt", "fastapi\nuvicorn\n"},
            {"Procfile", "web: python migrate.py && uvicorn api:app --host 0.0.0.0 --port $PORT\n"},
            {"api.py", kServer}});
    const Plan plan = t.plan();
    REQUIRE(plan.cmd.size() == 3);
    CHECK(plan.cmd[0] == "/bin/sh");
    CHECK(plan.port == 8000);
    CHECK(has(plan.env, "PORT=8000"));
  }
  SECTION("Django's WSGI application, served by gunicorn") {
    Tree t({{"requirements.txt", "django==5.0\ngunicorn==22.0\n"},
            {"manage.py", "import django\n"},
            {"shop/settings.py", "WSGI_APPLICATION = 'shop.wsgi.application'\n"}});
    const Plan plan = t.plan();
    CHECK(plan.cmd == std::vector<std::string>{"gunicorn", "--bind", "0.0.0.0:8000", "shop.wsgi"});
    CHECK(plan.port == 8000);
  }
  SECTION("Django with manage.py in src/: gunicorn serves it from there") {
    Tree t({{"requirements.txt", "django==5.0\ngunicorn==22.0\n"},
            {"src/manage.py", "import django\n"},
            {"src/paperless/__init__.py", ""},
            {"src/paperless/settings.py", "WSGI_APPLICATION = \"paperless.wsgi.application\"\n"}});
    const Plan plan = t.plan();
    CHECK(plan.cmd == std::vector<std::string>{"gunicorn", "--chdir", "src", "--bind",
                                               "0.0.0.0:8000", "paperless.wsgi"});
    CHECK(plan.port == 8000);
  }
  SECTION("Django without gunicorn: runserver on every interface, and a warning") {
    Tree t({{"requirements.txt", "django==5.0\n"},
            {"manage.py", "import django\n"},
            {"shop/settings/base.py", "WSGI_APPLICATION = \"shop.wsgi.application\"\n"}});
    const Plan plan = t.plan();
    CHECK(plan.cmd == std::vector<std::string>{"python", "manage.py", "runserver", "0.0.0.0:8000"});
    CHECK(any_has(plan.warnings, "Django's development server"));
  }
  SECTION("the one script at the top of a project with dependencies") {
    Tree t({{"requirements.txt", "numpy==2.1.3\n"},
            {"batch_score.py", "import numpy\n"},
            {"setup.py", "from setuptools import setup\nsetup()\n"}});
    CHECK(t.plan().cmd == std::vector<std::string>{"python", "batch_score.py"});
    Tree named({{"requirements.txt", "numpy==2.1.3\n"},
                {"run.py", "import numpy\n"},
                {"helpers.py", "x = 1\n"}});
    CHECK(named.plan().cmd == std::vector<std::string>{"python", "run.py"});
    Tree two({{"requirements.txt", "numpy==2.1.3\n"}, {"a.py", ""}, {"b.py", ""}});
    CHECK_THROWS_WITH(two.plan(), Catch::Contains("found no entrypoint"));
  }
  SECTION("an app object in a module of any name") {
    Tree t({{"requirements.txt", "fastapi\nuvicorn\n"},
            {"app/webservice.py", kServer},
            {"tests/test_api.py", kServer}});
    const Plan plan = t.plan();
    CHECK(plan.cmd == std::vector<std::string>{"uvicorn", "app.webservice:app", "--host", "0.0.0.0",
                                               "--port", "8000"});
    CHECK(plan.verify_entry_modules == std::vector<std::string>{"app.webservice"});
  }
}

TEST_CASE(
    "gen decisions: extras compare as PEP 685 spells them, and an unknown GPU extra is said") {
  // jax[cuda12_pip], the 0.4-era spelling, brings CUDA wheels: not the CPU.
  Tree jax({{"requirements.txt", "jax[cuda12_pip]==0.4.20\n"}, {"run.py", "import jax\n"}});
  const Plan j = jax.plan();
  CHECK(j.gpu);
  CHECK(j.flavor == "base");
  Tree upper({{"requirements.txt", "jax[CUDA12]==0.4.30\n"}, {"run.py", "import jax\n"}});
  CHECK(upper.plan().gpu);
  // A known package with an extra no table knows, whose name speaks of CUDA.
  Tree odd({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\nxgboost[cuda13x]==2.1\n"},
            {"main.py", kServer}});
  const Plan o = odd.plan();
  CHECK(any_has(o.warnings, "gen does not know xgboost[cuda13x] (requirements.txt:3)"));
  CHECK(any_has(o.warnings, "[gen] packages = { \"xgboost\" = \"bundled\" }"));
}

TEST_CASE("gen decisions: a generated module with one very long line is read without a crash") {
  // libstdc++'s regular expressions recurse per character; a 900 kB line
  // of a data module overflowed the stack of the writable-paths scan.
  Tree t({{"requirements.txt", "fastapi==0.110\nuvicorn==0.29\n"},
          {"main.py", kServer},
          {"gen_data.py", std::string(900000, 'x') + " = 1\n"},
          {"paths.py", "UPLOAD_DIR = 'uploads'\n"}});
  const Plan plan = t.plan();
  CHECK(has(plan.writable_dirs, "/app/uploads"));
}
