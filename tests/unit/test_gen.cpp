// imgsmith gen: detection, decisions and the rules every rendered Dockerfile
// must pass, on small projects written here and on examples/.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "dockerfile_rules.hpp"
#include "image_builder.hpp"
#include "imgsmith/error.hpp"
#include "imgsmith/gen.hpp"

using namespace imgsmith;
using namespace imgsmith::gen;
using imgsmith::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// The directory name of a ProjectDir, when the test cares about it.
struct Named {
  std::string value;
};

// A project directory written from {path, content} pairs.
struct ProjectDir {
  TempDir tmp;
  fs::path dir;
  explicit ProjectDir(std::initializer_list<std::pair<std::string, std::string>> files,
                      const Named& name = {"my-project"}) {
    dir = fs::path(tmp.path()) / name.value;
    fs::create_directories(dir);
    for (const auto& [path, content] : files) {
      fs::create_directories((dir / path).parent_path());
      std::ofstream(dir / path, std::ios::binary) << content;
    }
  }
};

Plan plan_for(const ProjectDir& p, Options o = {}) { return make_plan(detect_project(p.dir), o); }

bool mentions(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

bool explains(const Plan& plan, const std::string& part) {
  for (const auto& e : plan.explain)
    if ((e.source + ": " + e.text).find(part) != std::string::npos) return true;
  return false;
}

std::string from_lines(const std::string& dockerfile) {
  std::string out;
  std::istringstream in(dockerfile);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("FROM ", 0) == 0 || (line.rfind("COPY --from=", 0) == 0 && line.find("--from=builder") == std::string::npos))
      out += line + "\n";
  return out;
}

std::string broken_rules(const std::string& dockerfile, const imgsmith::test::RuleContext& context) {
  std::string s;
  for (const auto& b : imgsmith::test::check_rules(dockerfile, context)) s += b + "\n";
  return s;
}

const std::string kTorchApi = "torch==2.6.0\nfastapi==0.115.6\nuvicorn==0.34.0\n";
const std::string kFastApiMain = "from fastapi import FastAPI\napp = FastAPI()\n";

}  // namespace

// ----- PEP 508 / 440 ----------------------------------------------------

TEST_CASE("gen: requirement lines are read as PEP 508") {
  auto r = parse_requirement("Torch_Vision[Extra_One, two] >= 0.21 ; python_version > '3.9'  # pinned", "f:1");
  REQUIRE(r);
  CHECK(r->name == "torch-vision");
  CHECK(r->extras == std::vector<std::string>{"extra-one", "two"});
  CHECK(r->specifier == ">=0.21");
  CHECK(parse_requirement("torch==2.6.0+cu124", "f")->specifier == "==2.6.0+cu124");
  CHECK(parse_requirement("pkg @ https://example.com/pkg.whl", "f")->name == "pkg");
  CHECK_FALSE(parse_requirement("git+https://example.com/x.git", "f"));
  CHECK_FALSE(parse_requirement("# only a comment", "f"));
  CHECK(normalise_name("Scikit_Learn") == "scikit-learn");
  CHECK(normalise_name("zope.interface") == "zope-interface");
}

TEST_CASE("gen: Python version constraints, PEP 440 and Poetry's") {
  CHECK(python_satisfies("3.12", ">=3.10"));
  CHECK_FALSE(python_satisfies("3.9", ">=3.10"));
  CHECK(python_satisfies("3.11", ">=3.9,<3.12"));
  CHECK_FALSE(python_satisfies("3.12", ">=3.9,<3.12"));
  CHECK(python_satisfies("3.11", "==3.11.*"));
  CHECK_FALSE(python_satisfies("3.12", "==3.11.*"));
  CHECK(python_satisfies("3.11", "~=3.10"));
  CHECK_FALSE(python_satisfies("4.0", "~=3.10"));
  CHECK(python_satisfies("3.13", "^3.10"));
  CHECK(python_satisfies("3.10", "~3.10"));
  CHECK_FALSE(python_satisfies("3.11", "~3.10"));
  CHECK(python_satisfies("3.12", ">=3.8,!=3.11.*"));
  CHECK_FALSE(python_satisfies("3.11", ">=3.8,!=3.11.*"));
  CHECK(python_satisfies("3.9", "3.8.* || 3.9.*"));
  CHECK_FALSE(python_satisfies("3.12", "<=3.11.4"));
  CHECK_FALSE(python_satisfies("3.12", "nonsense"));
}

TEST_CASE("gen: --cmd is split like a shell would, without expansion") {
  CHECK(split_command("python -m app --name 'two words' \"say \\\"hi\\\"\"") ==
        std::vector<std::string>{"python", "-m", "app", "--name", "two words", "say \"hi\""});
  CHECK_THROWS_WITH(split_command("python 'open"), Catch::Contains("never closed"));
  CHECK_THROWS_WITH(split_command("   "), Catch::Contains("empty"));
}

// ----- the tables ---------------------------------------------------------

TEST_CASE("gen: every torch CUDA build and the default CUDA have a base image") {
  // A table entry without an image would make gen write an unbuildable FROM.
  ProjectDir p({{"requirements.txt", "torch==2.6.0\n"}, {"main.py", ""}});
  const Project project = detect_project(p.dir);
  for (const std::string torch : {"2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11"}) {
    ProjectDir q({{"requirements.txt", "torch==" + torch + ".0\n"}, {"main.py", ""}});
    const Plan plan = plan_for(q);
    INFO(torch);
    CHECK(plan.final_image.rfind("nvidia/cuda:", 0) == 0);
    CHECK(plan.min_driver >= 525);
  }
  CHECK(make_plan(project, Options{}).min_driver == 525);
}

// ----- detection ----------------------------------------------------------

TEST_CASE("gen: requirements files, their includes, index options and the FastAPI app") {
  ProjectDir p({{"requirements.txt", "-r requirements/base.txt\n--extra-index-url https://example.com/simple\n"
                                     "uvicorn==0.34.0  # server\n"},
                {"requirements/base.txt", "fastapi==0.115.6 \\\n  ; python_version >= '3.8'\n"},
                {"requirements-dev.txt", "pytest\n"},
                {"app/main.py", "import os\n\napi: FastAPI = FastAPI(title='x')\n"}});
  const Project project = detect_project(p.dir);
  REQUIRE(project.python);
  const PythonProject& py = *project.python;
  CHECK(py.install_files == std::vector<std::string>{"requirements.txt"});
  CHECK(py.requirement_files == std::vector<std::string>{"requirements.txt", "requirements/base.txt"});
  REQUIRE(py.requirements.size() == 2);
  CHECK(py.requirements[0].name == "fastapi");
  CHECK(py.requirements[0].source == "requirements/base.txt:1");
  CHECK(py.index_options == std::vector<std::string>{"--extra-index-url https://example.com/simple"});
  CHECK(py.cmd == std::vector<std::string>{"uvicorn", "app.main:api", "--host", "0.0.0.0", "--port", "8000"});
  CHECK(py.cmd_source == "app/main.py:3");
  CHECK(py.port == 8000);
}

TEST_CASE("gen: -e . in requirements puts the code before the install") {
  ProjectDir p({{"requirements.txt", "-e .\nflask==3.0.0\ngunicorn==23.0.0\n"},
                {"pyproject.toml", "[project]\nname='x'\nversion='1'\n[build-system]\nrequires=['setuptools']\n"},
                {"app.py", "from flask import Flask\napp = Flask(__name__)\n"}});
  const Plan plan = plan_for(p);
  CHECK(plan.source_before_deps);
  CHECK(plan.install_project);
  CHECK(plan.cmd == std::vector<std::string>{"gunicorn", "--bind", "0.0.0.0:8000", "app:app"});
  const std::string df = render_plan(plan).dockerfile;
  CHECK(broken_rules(df, {false, false, false, true, false}) == "");
}

TEST_CASE("gen: pyproject scripts, Poetry's tables and the lock decide the install") {
  ProjectDir pep621({{"pyproject.toml",
                      "[project]\nname='svc'\nversion='1'\nrequires-python='>=3.11,<3.12'\n"
                      "dependencies=['numpy>=2', 'torch==2.7.1']\n[project.scripts]\nserve='svc:main'\n"
                      "[build-system]\nrequires=['hatchling']\nbuild-backend='hatchling.build'\n"}});
  const Plan a = plan_for(pep621);
  CHECK(a.cmd == std::vector<std::string>{"serve"});
  CHECK(a.install_mode == "pyproject");
  CHECK(a.install_project);
  CHECK(a.pyproject_deps == std::vector<std::string>{"'numpy>=2'", "torch==2.7.1"});
  // 3.11 is neither OS's Python: uv's managed build.
  CHECK(a.managed_python);
  CHECK(a.python == "3.11");
  CHECK(!a.uv_image.empty());
  CHECK(a.cuda == "12.6.3");  // torch 2.7's PyPI wheel

  ProjectDir poetry({{"pyproject.toml", "[tool.poetry]\nname='p'\nversion='1'\n"
                                        "[tool.poetry.dependencies]\npython='^3.12'\n"
                                        "onnxruntime-gpu={version='^1.19'}\nfastapi='*'\n"
                                        "[tool.poetry.scripts]\napi='p.main:run'\n"},
                     {"poetry.lock", "[[package]]\nname='onnxruntime-gpu'\nversion='1.20.1'\n"
                                     "[[package]]\nname='fastapi'\nversion='0.115.6'\n"}});
  const Plan b = plan_for(poetry);
  CHECK(b.install_mode == "poetry");
  CHECK(b.flavor == "runtime");
  CHECK(b.cudnn);
  CHECK(b.final_image == "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04");
  CHECK(b.python == "3.12");
  CHECK_FALSE(b.managed_python);
  CHECK(explains(b, "poetry.lock: onnxruntime-gpu==1.20.1: GPU"));

  ProjectDir no_lock({{"pyproject.toml", "[tool.poetry]\nname='p'\nversion='1'\n"
                                         "[tool.poetry.dependencies]\npython='^3.10'\nrequests='^2.31'\n"},
                      {"main.py", ""}});
  const Plan c = plan_for(no_lock);
  CHECK(c.install_mode == "pyproject");
  CHECK(c.pyproject_deps == std::vector<std::string>{"'requests>=2.31,<3'"});
}

TEST_CASE("gen: uv.lock installs with uv sync, and .python-version picks the Python") {
  ProjectDir p({{"pyproject.toml", "[project]\nname='x'\nversion='1'\ndependencies=['jax[cuda12]']\n"},
                {"uv.lock", "version = 1\n[[package]]\nname = \"jax\"\nversion = \"0.4.35\"\n"
                            "[[package]]\nname = \"nvidia-cublas-cu12\"\nversion = \"12.6.4.1\"\n"},
                {".python-version", "3.10.14\n"},
                {"main.py", "print('hi')\n"}});
  const Plan plan = plan_for(p);
  CHECK(plan.install_mode == "uv");
  CHECK(plan.flavor == "base");  // nvidia-*-cu12 wheels from the lock
  CHECK(plan.python == "3.10");
  CHECK(plan.os == "ubuntu22.04");  // the OS whose own Python is 3.10
  CHECK(plan.uv_python == "/usr/bin/python3.10");
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py"});
  const std::string df = render_plan(plan).dockerfile;
  CHECK(df.find("uv sync --frozen --no-dev --no-install-project") != std::string::npos);
  CHECK(df.find("UV_PYTHON_DOWNLOADS=never") != std::string::npos);
  CHECK(broken_rules(df, {true, true, false, false, false}) == "");
}

TEST_CASE("gen: CUDA CMake projects: targets, linked libraries, tests skipped") {
  ProjectDir p({{"CMakeLists.txt", "cmake_minimum_required(VERSION 3.22)\n"
                                   "project(demo LANGUAGES CXX CUDA) # CUDA::cufft in a comment\n"
                                   "find_package(CUDAToolkit 12.6 REQUIRED)\nadd_subdirectory(tools)\n"
                                   "add_executable(demo main.cu)\nadd_library(alias ALIAS demo)\n"
                                   "target_link_libraries(demo PRIVATE CUDA::cudart)\n"},
                {"tools/CMakeLists.txt", "add_executable(tool tool.cu)\ntarget_link_libraries(tool CUDA::cublas)\n"},
                {"tests/CMakeLists.txt", "add_executable(check check.cu)\n"},
                {"main.cu", ""}});
  const Project project = detect_project(p.dir);
  REQUIRE(project.cuda_cpp);
  const CudaCppProject& cpp = *project.cuda_cpp;
  CHECK(cpp.cmake);
  CHECK(cpp.targets == std::vector<std::string>{"demo", "tool"});
  CHECK(cpp.cuda_libs == std::vector<std::string>{"cublas", "cudart"});
  CHECK(cpp.min_cuda == "12.6");
  const Plan plan = make_plan(project, {});
  CHECK(plan.flavor == "runtime");  // tool links cuBLAS
  CHECK(plan.builder_image == "nvidia/cuda:12.8.1-devel-ubuntu24.04");
  CHECK(plan.cmd == std::vector<std::string>{"/opt/app/bin/demo"});
  CHECK(plan.cuda_architectures == "75-real;80-real;86-real;89-real;90");

  Options newer;
  newer.cuda = "13.0";
  CHECK(make_plan(project, newer).cuda_architectures == "75-real;80-real;86-real;89-real;90-real;100-real;120");
}

TEST_CASE("gen: a pyproject.toml that only configures tools does not make a Python project") {
  ProjectDir p({{"pyproject.toml", "[tool.black]\nline-length = 100\n"},
                {"CMakeLists.txt", "project(x LANGUAGES CXX CUDA)\nadd_executable(x x.cu)\n"}});
  const Project project = detect_project(p.dir);
  CHECK_FALSE(project.python);
  CHECK(project.cuda_cpp);
}

TEST_CASE("gen: a CMake project asking for a newer toolkit gets it") {
  ProjectDir p({{"CMakeLists.txt", "project(x LANGUAGES CUDA)\nfind_package(CUDAToolkit 13.0)\n"
                                   "add_executable(x x.cu)\n"}});
  const Plan plan = plan_for(p);
  CHECK(plan.cuda == "13.0.0");
  CHECK(plan.min_driver == 580);
  CHECK(plan.flavor == "base");
}

TEST_CASE("gen: plain .cu files build with one nvcc, their #includes pick the libraries") {
  ProjectDir p({{"kernels/fft.cu", "#include <cufft.h>\n#include \"common.cuh\"\n"},
                {"kernels/common.cuh", ""},
                {"main.cpp", "#include <cublas_v2.h>\n"}},
               Named{"Signal Lab"});
  const Plan plan = plan_for(p);
  CHECK(plan.project_name == "signal-lab");
  CHECK(plan.nvcc_sources == std::vector<std::string>{"kernels/fft.cu", "main.cpp"});
  CHECK(plan.nvcc_libs == std::vector<std::string>{"-lcublas", "-lcufft"});
  CHECK(plan.flavor == "runtime");
  const std::string df = render_plan(plan).dockerfile;
  CHECK(df.find("nvcc -O2 -gencode arch=compute_75,code=sm_75") != std::string::npos);
  CHECK(df.find("-o /opt/app/bin/signal-lab kernels/fft.cu main.cpp -lcublas -lcufft") != std::string::npos);
  CHECK(broken_rules(df, {true, true, false, false, false}) == "");
}

// ----- decisions ------------------------------------------------------------

TEST_CASE("gen: torch's version decides the CUDA build and the wheel index") {
  auto torch = [](const std::string& requirements, Options o = {}) {
    ProjectDir p({{"requirements.txt", requirements}, {"main.py", ""}});
    return plan_for(p, o);
  };
  const Plan pypi = torch("torch==2.6.0\n");
  CHECK(pypi.cuda == "12.4.1");
  CHECK(pypi.flavor == "base");
  CHECK(pypi.final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
  CHECK(pypi.pip_index_args.empty());

  const Plan newest12 = torch("torch>=2.9,<2.10\n");  // no PyPI build recorded
  CHECK(newest12.cuda == "12.8.1");
  CHECK(newest12.pip_index_args == std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cu128"});

  const Plan label = torch("torch==2.7.1+cu128\n");
  CHECK(label.cuda == "12.8.1");
  CHECK(label.pip_index_args == std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cu128"});

  const Plan named = torch("--index-url https://download.pytorch.org/whl/cu126\ntorch==2.6.0\n");
  CHECK(named.cuda == "12.6.3");
  CHECK(named.pip_index_args.empty());  // the requirements file already says it

  Options cuda126;
  cuda126.cuda = "12.6";
  const Plan asked = torch("torch==2.6.0\n", cuda126);
  CHECK(asked.cuda == "12.6.3");
  CHECK(asked.os == "ubuntu24.04");
  CHECK(asked.pip_index_args == std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cu126"});

  Options cuda125;
  cuda125.cuda = "12.5";
  CHECK_THROWS_WITH(torch("torch==2.6.0\n", cuda125), Catch::Contains("11.8, 12.4, 12.6"));

  const Plan unpinned = torch("torch\n");
  CHECK(mentions(unpinned.warnings, "not pinned"));

  const Plan cpu = torch("torch==2.6.0+cpu\n");
  CHECK_FALSE(cpu.gpu);
  CHECK(cpu.template_name == "cpu-python");
  const Plan cpu_index = torch("--index-url https://download.pytorch.org/whl/cpu\ntorch==2.6.0\n");
  CHECK_FALSE(cpu_index.gpu);
}

TEST_CASE("gen: frameworks that load the system's CUDA get runtime, with cuDNN when they need it") {
  auto plan = [](const std::string& requirements) {
    ProjectDir p({{"requirements.txt", requirements}, {"main.py", ""}});
    return plan_for(p);
  };
  CHECK(plan("onnxruntime-gpu==1.20.1\n").final_image == "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04");
  CHECK(plan("tensorflow==2.18.0\n").cudnn);
  CHECK(plan("tensorflow[and-cuda]==2.18.0\n").flavor == "base");
  CHECK(plan("cupy-cuda12x==13.3.0\n").final_image == "nvidia/cuda:12.8.1-runtime-ubuntu24.04");
  CHECK(plan("jax==0.4.35\n").template_name == "cpu-python");
  CHECK(plan("vllm==0.6.4\n").flavor == "base");
}

TEST_CASE("gen: a scikit-learn project gets a CPU image, honestly explained") {
  ProjectDir p({{"requirements.txt", "scikit-learn==1.5.2\npandas==2.2.3\nxgboost==2.1.3\n"},
                {"app.py", kFastApiMain}});
  Options o;
  o.cuda = "12.8";
  const Plan plan = plan_for(p, o);
  CHECK_FALSE(plan.gpu);
  CHECK_FALSE(plan.probe);
  CHECK(plan.final_image == "python:3.12-slim-bookworm");
  CHECK(mentions(plan.why_base, "No GPU"));
  CHECK(mentions(plan.warnings, "--cuda/--cudnn ignored"));
  CHECK(explains(plan, "xgboost==2.1.3: CPU"));
  CHECK(summary(plan).find("--gpus") == std::string::npos);
}

TEST_CASE("gen: explicit flavours are honoured, with the size they cost") {
  ProjectDir torch({{"requirements.txt", kTorchApi}, {"app.py", kFastApiMain}});
  Options runtime;
  runtime.flavor = "runtime";
  const Plan r = plan_for(torch, runtime);
  CHECK(r.final_image == "nvidia/cuda:12.4.1-runtime-ubuntu22.04");
  CHECK(mentions(r.warnings, "--flavor base saves about 2.21 GB"));

  Options devel;
  devel.flavor = "devel";
  const Plan d = plan_for(torch, devel);
  CHECK(d.final_image == "nvidia/cuda:12.4.1-devel-ubuntu22.04");
  CHECK(mentions(d.warnings, "~9-10 GB"));

  ProjectDir onnx({{"requirements.txt", "onnxruntime-gpu==1.20.1\n"}, {"main.py", ""}});
  Options base;
  base.flavor = "base";
  const Plan b = plan_for(onnx, base);
  CHECK(b.final_image == "nvidia/cuda:12.8.1-base-ubuntu24.04");
  CHECK(mentions(b.warnings, "expect it to fail at run time"));

  Options base_cudnn = base;
  base_cudnn.cudnn = true;
  CHECK_THROWS_WITH(plan_for(onnx, base_cudnn), Catch::Contains("no cuDNN image of the base flavour"));

  ProjectDir cpu({{"requirements.txt", "scikit-learn==1.5.2\n"}, {"main.py", ""}});
  const Plan forced = plan_for(cpu, runtime);
  CHECK(forced.gpu);
  CHECK(mentions(forced.warnings, "nothing in this project uses a GPU"));
}

TEST_CASE("gen: bad options name the option and the choices") {
  ProjectDir p({{"requirements.txt", kTorchApi}, {"main.py", ""}});
  auto fails = [&](Options o, const std::string& part) {
    INFO(part);
    CHECK_THROWS_WITH(plan_for(p, o), Catch::Contains(part));
  };
  Options o;
  o.flavor = "tiny";
  fails(o, "--flavor tiny: choose auto, base, runtime or devel");
  o = {};
  o.os = "ubuntu24.04";  // CUDA 12.4.1 has no 24.04 image
  fails(o, "ubuntu22.04 only");
  o = {};
  o.os = "alpine";
  fails(o, "choose ubuntu22.04 or ubuntu24.04");
  o = {};
  o.cuda = "twelve";
  fails(o, "--cuda twelve");
  o = {};
  o.python = "2.7";
  fails(o, "--python 2.7");
  ProjectDir cpp({{"CMakeLists.txt", "project(x CUDA)\nadd_executable(x x.cu)\n"}});
  o = {};
  o.cuda = "10.2";
  CHECK_THROWS_WITH(plan_for(cpp, o), Catch::Contains("has no nvidia/cuda image"));
}

TEST_CASE("gen: --registry-mirror rewrites every base image, --base adds the NVIDIA variables") {
  ProjectDir p({{"pyproject.toml", "[project]\nname='x'\nversion='1'\nrequires-python='==3.11.*'\n"
                                   "dependencies=['torch==2.6.0']\n"},
                {"main.py", ""}});
  Options o;
  o.registry_mirror = "localhost:5000/";
  const std::string df = render_plan(plan_for(p, o)).dockerfile;
  const std::string froms = from_lines(df);
  CHECK(froms.find("localhost:5000/nvidia/cuda:12.4.1-base-ubuntu22.04") != std::string::npos);
  CHECK(froms.find("COPY --from=localhost:5000/astral-sh/uv:") != std::string::npos);
  std::istringstream lines(froms);
  std::string line;
  while (std::getline(lines, line)) {
    INFO(line);
    CHECK(line.find("localhost:5000/") != std::string::npos);
  }

  ProjectDir cpu({{"requirements.txt", "pandas==2.2.3\n"}, {"main.py", ""}});
  CHECK(plan_for(cpu, o).final_image == "localhost:5000/library/python:3.12-slim-bookworm");

  Options base;
  base.base = "registry.example.com/hardened/ubuntu:24.04";
  const Plan b = plan_for(p, base);
  CHECK(b.nvidia_env);
  CHECK(b.managed_python);  // the base image's own Python is unknown
  const std::string bdf = render_plan(b).dockerfile;
  CHECK(bdf.find("NVIDIA_DRIVER_CAPABILITIES=compute,utility") != std::string::npos);
  CHECK(broken_rules(bdf, {true, true, false, false, false}) == "");
}

TEST_CASE("gen: a Python project with CUDA sources builds on devel, ships on base") {
  ProjectDir p({{"requirements.txt", "torch==2.6.0\n"}, {"setup.py", ""}, {"ext/op.cu", ""}, {"main.py", ""}});
  const Plan plan = plan_for(p);
  CHECK(plan.builder_image == "nvidia/cuda:12.4.1-devel-ubuntu22.04");
  CHECK(plan.final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
  CHECK(std::find(plan.builder_apt.begin(), plan.builder_apt.end(), "python3.10-dev=3.10.*") != plan.builder_apt.end());
}

TEST_CASE("gen: review cases: installs, entrypoints and names that must work in a real build") {
  // setup.py lists its dependencies only in install_requires: pip installs them with it.
  ProjectDir setup({{"setup.py", "from setuptools import setup\nsetup(install_requires=['requests'])\n"},
                    {"main.py", "import requests\n"}});
  const Plan a = plan_for(setup);
  CHECK(a.project_install_args == ".");
  CHECK(render_plan(a).dockerfile.find("pip install .\n") != std::string::npos);
  // The code sits at /app in both stages, so an editable path stays valid.
  ProjectDir editable({{"requirements.txt", "-e ./libs/mylib\n"}, {"libs/mylib/setup.py", ""}, {"main.py", ""}});
  const std::string df = render_plan(plan_for(editable)).dockerfile;
  CHECK(df.find("WORKDIR /app\n# Dependencies") == std::string::npos);  // code first here
  CHECK(df.find("COPY --from=builder /app /app") != std::string::npos);
  CHECK(df.find("/src") == std::string::npos);
  // Flask without gunicorn listens on all interfaces.
  ProjectDir flask({{"requirements.txt", "flask==3.0.3\n"}, {"app.py", "from flask import Flask\nweb = Flask(__name__)\n"}});
  CHECK(plan_for(flask).cmd ==
        std::vector<std::string>{"flask", "--app", "app:web", "run", "--host", "0.0.0.0", "--port", "5000"});
  // Scripts without a [build-system] are not installed: the target is called.
  ProjectDir virtual_project({{"pyproject.toml", "[project]\nname='s'\nversion='1'\ndependencies=['numpy==2.1.3']\n"
                                                 "[project.scripts]\nserve='svc.main:run'\n"}});
  CHECK(plan_for(virtual_project).cmd ==
        std::vector<std::string>{"python", "-c", "import svc.main; svc.main.run()"});
  // Whole words decide what a development requirements file is.
  ProjectDir docker_reqs({{"requirements-docker.txt", "torch==2.6.0\n"}, {"requirements-dev.txt", "pytest\n"},
                          {"main.py", ""}});
  const Plan d = plan_for(docker_reqs);
  CHECK(d.gpu);
  CHECK(d.requirement_files_top == std::vector<std::string>{"requirements-docker.txt"});
  // Docker names allow one separator between alphanumerics.
  ProjectDir odd({{"main.py", ""}}, Named{"R2..x__y"});
  CHECK(plan_for(odd).project_name == "r2-x-y");
  // torch+cpu exists only on PyTorch's CPU index.
  ProjectDir cpu_torch({{"requirements.txt", "torch==2.6.0+cpu\n"}, {"main.py", ""}});
  CHECK(plan_for(cpu_torch).pip_index_args == std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cpu"});
  // Uncommon Pythons come from uv, but the preferred one before the newest.
  ProjectDir py311({{"pyproject.toml", "[project]\nname='x'\nversion='1'\nrequires-python='>=3.11'\n"
                                       "dependencies=['torch==2.4.1']\n"},
                    {"main.py", ""}});
  CHECK(plan_for(py311).python == "3.12");
}

TEST_CASE("gen: frameworks that name their CUDA get it") {
  auto plan = [](const std::string& requirements) {
    ProjectDir p({{"requirements.txt", requirements}, {"main.py", ""}});
    return plan_for(p);
  };
  CHECK(plan("cupy-cuda11x==13.3.0\n").final_image == "nvidia/cuda:11.8.0-runtime-ubuntu22.04");
  const Plan jax = plan("jax[cuda13]==0.7.0\n");
  CHECK(jax.cuda == "13.0.0");
  CHECK(jax.min_driver == 580);
  CHECK(plan("nvidia-cublas-cu12==12.6.4.1\n").cuda == "12.8.1");
  ProjectDir indexed({{"requirements.txt", "--index-url https://download.pytorch.org/whl/cu118\ntorch==2.6.0\n"},
                      {"main.py", ""}});
  Options o;
  o.cuda = "12.6";
  CHECK_THROWS_WITH(plan_for(indexed, o), Catch::Contains("CUDA 11.8 index"));
}

TEST_CASE("gen: Poetry's space-separated constraints keep every clause") {
  CHECK(python_satisfies("3.10", ">=3.9 <3.11"));
  CHECK_FALSE(python_satisfies("3.12", ">=3.9 <3.11"));
  CHECK(python_satisfies("3.10", ">= 3.9, < 3.11"));
  CHECK_FALSE(python_satisfies("3.12", ">=3.99999999999"));  // no overflow, no match
}

TEST_CASE("gen: odd CMake projects") {
  // ${PROJECT_NAME} names the executable.
  ProjectDir named({{"CMakeLists.txt", "project(saxpy LANGUAGES CXX CUDA)\nadd_executable(${PROJECT_NAME} main.cu)\n"}});
  CHECK(plan_for(named).cmd == std::vector<std::string>{"/opt/app/bin/saxpy"});
  // A vendored library's CMakeLists.txt does not hide plain .cu sources.
  ProjectDir vendored({{"main.cu", "#include <cufft.h>\n"}, {"third_party/fmt/CMakeLists.txt", "project(fmt)\n"},
                       {"my kernel.cu", ""}});
  const Plan v = plan_for(vendored);
  CHECK(v.nvcc_libs == std::vector<std::string>{"-lcufft"});
  CHECK(std::find(v.nvcc_sources.begin(), v.nvcc_sources.end(), "'my kernel.cu'") != v.nvcc_sources.end());
  // Long argument lists and long lines are read without recursion.
  std::string sources;
  for (int i = 0; i < 20000; ++i) sources += " src/file" + std::to_string(i) + ".cu";
  ProjectDir big({{"CMakeLists.txt", "project(big LANGUAGES CUDA)\nadd_executable(big" + sources + ")\n"},
                  {"unused.py", ""}});
  CHECK(plan_for(big).targets == std::vector<std::string>{"big"});
  ProjectDir long_line({{"app.py", std::string(3 << 20, 'x') + "\n"}, {"requirements.txt", "numpy==2.1.3\n"}});
  CHECK(plan_for(long_line).cmd == std::vector<std::string>{"python", "app.py"});
}

TEST_CASE("gen: --wheelhouse installs offline from the project's wheels, --index-url sets the index") {
  ProjectDir p({{"requirements.txt", "greeting==1.0.0\n"}, {"wheels/greeting-1.0.0-py3-none-any.whl", "zip"},
                {"main.py", ""}});
  Options o;
  o.wheelhouse = "./wheels/";
  const Plan plan = plan_for(p, o);
  CHECK(plan.pip_index_args == std::vector<std::string>{"--no-index", "--find-links wheels"});
  const std::string df = render_plan(plan).dockerfile;
  const auto copy = df.find("COPY wheels wheels");
  REQUIRE(copy != std::string::npos);
  CHECK(copy < df.find("pip install --no-index --find-links wheels -r requirements.txt"));
  CHECK(broken_rules(df, {false, false, false, false, false}) == "");
  for (const std::string bad : {"/abs/wheels", "../wheels", "missing"}) {
    o.wheelhouse = bad;
    INFO(bad);
    CHECK_THROWS_WITH(plan_for(p, o), Catch::Contains("--wheelhouse " + bad));
  }
  Options index;
  index.index_url = "https://pypi.internal.example/simple";
  ProjectDir torch({{"requirements.txt", "torch==2.9.0\n"}, {"main.py", ""}});
  const Plan t = plan_for(torch, index);
  REQUIRE_FALSE(t.pip_index_args.empty());
  CHECK(t.pip_index_args.front() == "--index-url https://pypi.internal.example/simple");
  ProjectDir locked({{"pyproject.toml", "[project]\nname='x'\nversion='1'\n"}, {"uv.lock", "version = 1\n"},
                     {"main.py", ""}});
  CHECK_THROWS_WITH(plan_for(locked, index), Catch::Contains("uv.lock decides where packages come from"));
}

// ----- bad projects -------------------------------------------------------

TEST_CASE("gen: bad projects get one message naming the input and what to do") {
  TempDir tmp;
  CHECK_THROWS_WITH(detect_project(tmp / "missing"), Catch::Contains("no such directory"));
  imgsmith::testing::write_file(tmp / "file", "x");
  CHECK_THROWS_WITH(detect_project(tmp / "file"), Catch::Contains("not a directory"));
  fs::create_directories(tmp / "empty");
  CHECK_THROWS_WITH(detect_project(tmp / "empty"),
                    Catch::Contains("requirements*.txt, pyproject.toml") && Catch::Contains("*.cu files"));
  ProjectDir bad_toml({{"pyproject.toml", "[project]\nname = 'x'\ndependencies = [\n"}});
  CHECK_THROWS_WITH(detect_project(bad_toml.dir), Catch::Contains("pyproject.toml:") && Catch::Contains("not valid TOML"));
  ProjectDir missing_include({{"requirements.txt", "-r base.txt\n"}});
  CHECK_THROWS_WITH(detect_project(missing_include.dir), Catch::Contains("base.txt: named by -r but missing"));
  ProjectDir no_entry({{"requirements.txt", "numpy==2.1.3\n"}});
  CHECK_THROWS_WITH(plan_for(no_entry), Catch::Contains("found no entrypoint") && Catch::Contains("--cmd"));
  Options cmd;
  cmd.cmd = {"python", "-m", "job"};
  CHECK(plan_for(no_entry, cmd).cmd == cmd.cmd);
  ProjectDir no_exe({{"CMakeLists.txt", "project(x LANGUAGES CUDA)\nadd_library(x x.cu)\n"}});
  CHECK_THROWS_WITH(detect_project(no_exe.dir), Catch::Contains("no add_executable()"));
  if (::geteuid() != 0) {  // root reads everything
    ProjectDir locked({{"requirements.txt", "numpy\n"}, {"main.py", ""}});
    fs::permissions(locked.dir / "requirements.txt", fs::perms::none);
    CHECK_THROWS_WITH(detect_project(locked.dir), Catch::Contains("cannot read"));
  }
}
