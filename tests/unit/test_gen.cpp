// imgsmith gen: detection, decisions and the rules every rendered Dockerfile
// must pass, on small projects written here and on examples/.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "dockerfile_rules.hpp"
#include "image_builder.hpp"
#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/error.hpp"
#include "policy.hpp"

using namespace imgsmith;
using namespace imgsmith::gen;
using namespace std::string_literals;
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

// The lines that pull an image: FROM and COPY --from= of an image, not
// scratch, a stage, or the probe stage's build argument.
std::string from_lines(const std::string& dockerfile) {
  std::string out;
  std::istringstream in(dockerfile);
  std::string line;
  while (std::getline(in, line))
    if ((line.rfind("FROM ", 0) == 0 && line.rfind("FROM scratch ", 0) != 0 &&
         line.rfind("FROM ${", 0) != 0) ||
        (line.rfind("COPY --from=", 0) == 0 && line.find("--from=builder") == std::string::npos &&
         line.find("--from=probe ") == std::string::npos))
      out += line + "\n";
  return out;
}

std::string broken_rules(const std::string& dockerfile,
                         const imgsmith::test::RuleContext& context) {
  std::string s;
  for (const auto& b : imgsmith::test::check_rules(dockerfile, context)) s += b + "\n";
  return s;
}

const std::string kTorchApi = "torch==2.6.0\nfastapi==0.115.6\nuvicorn==0.34.0\n";
const std::string kFastApiMain = "from fastapi import FastAPI\napp = FastAPI()\n";

}  // namespace

// ----- PEP 508 / 440 ----------------------------------------------------

TEST_CASE("gen: requirement lines are read as PEP 508") {
  auto r = parse_requirement(
      "Torch_Vision[Extra_One, two] >= 0.21 ; python_version > '3.9'  # pinned", "f:1");
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

TEST_CASE("gen: CMD's exec form is JSON that a parser reads back word for word") {
  // A raw tab or newline makes the array invalid JSON, and Docker then runs
  // the whole line through a shell instead, silently.
  const std::vector<std::string> words{"python",
                                       "-c",
                                       "print(1)\tx",
                                       "a\nb",
                                       "quote \" back\\slash",
                                       "caf\xc3\xa9",
                                       std::string("nul\x01", 4)};
  const std::string text = command_json(words);
  CHECK(text.find('\t') == std::string::npos);
  CHECK(text.find('\n') == std::string::npos);
  CHECK(nlohmann::json::parse(text).get<std::vector<std::string>>() == words);
  CHECK_THROWS_WITH(command_json({"python", "caf\xe9.py"}), Catch::Contains("not valid UTF-8"));
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
  CHECK(make_plan(project, Options{}).min_driver ==
        550);  // its 12.4 image: NVIDIA_REQUIRE_CUDA=cuda>=12.4
}

// ----- detection ----------------------------------------------------------

TEST_CASE("gen: requirements files, their includes, index options and the FastAPI app") {
  ProjectDir p({{"requirements.txt",
                 "-r requirements/base.txt\n--extra-index-url https://example.com/simple\n"
                 "uvicorn==0.34.0  # server\n"},
                {"requirements/base.txt", "fastapi==0.115.6 \\\n  ; python_version >= '3.8'\n"},
                {"requirements-dev.txt", "pytest\n"},
                {"app/main.py", "import os\n\napi: FastAPI = FastAPI(title='x')\n"}});
  const Project project = detect_project(p.dir);
  REQUIRE(project.python);
  const PythonProject& py = *project.python;
  CHECK(py.install_files == std::vector<std::string>{"requirements.txt"});
  CHECK(py.requirement_files ==
        std::vector<std::string>{"requirements.txt", "requirements/base.txt"});
  REQUIRE(py.requirements.size() == 2);
  CHECK(py.requirements[0].name == "fastapi");
  CHECK(py.requirements[0].source == "requirements/base.txt:1");
  CHECK(py.index_options ==
        std::vector<std::string>{"--extra-index-url https://example.com/simple"});
  CHECK(py.cmd ==
        std::vector<std::string>{"uvicorn", "app.main:api", "--host", "0.0.0.0", "--port", "8000"});
  CHECK(py.cmd_source == "app/main.py:3");
  CHECK(py.port == 8000);
}

TEST_CASE("gen: -e . in requirements puts the code before the install") {
  ProjectDir p({{"requirements.txt", "-e .\nflask==3.0.0\ngunicorn==23.0.0\n"},
                {"pyproject.toml",
                 "[project]\nname='x'\nversion='1'\n[build-system]\nrequires=['setuptools']\n"},
                {"app.py", "from flask import Flask\napp = Flask(__name__)\n"}});
  const Plan plan = plan_for(p);
  CHECK(plan.source_before_deps);
  CHECK(plan.install_project);
  CHECK(plan.cmd == std::vector<std::string>{"gunicorn", "--bind", "0.0.0.0:8000", "app:app"});
  const std::string df = render_plan(plan).dockerfile;
  CHECK(broken_rules(df, {false, false, false, true, false}) == "");
}

TEST_CASE("gen: pyproject scripts, Poetry's tables and the lock decide the install") {
  ProjectDir pep621(
      {{"pyproject.toml",
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

  ProjectDir poetry({{"pyproject.toml",
                      "[tool.poetry]\nname='p'\nversion='1'\n"
                      "[tool.poetry.dependencies]\npython='^3.12'\n"
                      "onnxruntime-gpu={version='^1.19'}\nfastapi='*'\n"
                      "[tool.poetry.scripts]\napi='p.main:run'\n"},
                     {"poetry.lock",
                      "[[package]]\nname='onnxruntime-gpu'\nversion='1.20.1'\n"
                      "[[package]]\nname='fastapi'\nversion='0.115.6'\n"}});
  const Plan b = plan_for(poetry);
  CHECK(b.install_mode == "poetry");
  CHECK(b.flavor == "runtime");
  CHECK(b.cudnn);
  CHECK(b.final_image == "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04");
  CHECK(b.python == "3.12");
  CHECK_FALSE(b.managed_python);
  CHECK(explains(b, "poetry.lock: onnxruntime-gpu==1.20.1: GPU"));

  // A lock with no package gen can read leaves the project's own
  // dependencies to judge it by, and says so.
  ProjectDir stub_lock({{"pyproject.toml",
                         "[tool.poetry]\nname='p'\nversion='1'\n"
                         "[tool.poetry.dependencies]\npython='^3.12'\n"
                         "onnxruntime-gpu={version='^1.19'}\nfastapi='*'\n"},
                        {"poetry.lock", "# a stub\n"},
                        {"main.py", "import onnxruntime\n"}});
  const Plan stub = plan_for(stub_lock);
  CHECK(stub.install_mode == "poetry");
  CHECK(stub.gpu);
  CHECK(stub.flavor == "runtime");
  CHECK(mentions(stub.warnings, "poetry.lock: lists no package gen can read"));

  ProjectDir no_lock({{"pyproject.toml",
                       "[tool.poetry]\nname='p'\nversion='1'\n"
                       "[tool.poetry.dependencies]\npython='^3.10'\nrequests='^2.31'\n"},
                      {"main.py", ""}});
  const Plan c = plan_for(no_lock);
  CHECK(c.install_mode == "pyproject");
  CHECK(c.pyproject_deps == std::vector<std::string>{"'requests>=2.31,<3'"});
}

TEST_CASE("gen: uv.lock installs with uv sync, and .python-version picks the Python") {
  ProjectDir p(
      {{"pyproject.toml", "[project]\nname='x'\nversion='1'\ndependencies=['jax[cuda12]']\n"},
       {"uv.lock",
        "version = 1\n[[package]]\nname = \"jax\"\nversion = \"0.4.35\"\n"
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
  ProjectDir p({{"CMakeLists.txt",
                 "cmake_minimum_required(VERSION 3.22)\n"
                 "project(demo LANGUAGES CXX CUDA) # CUDA::cufft in a comment\n"
                 "find_package(CUDAToolkit 12.6 REQUIRED)\nadd_subdirectory(tools)\n"
                 "add_executable(demo main.cu)\nadd_library(alias ALIAS demo)\n"
                 "target_link_libraries(demo PRIVATE CUDA::cudart)\n"},
                {"tools/CMakeLists.txt",
                 "add_executable(tool tool.cu)\ntarget_link_libraries(tool CUDA::cublas)\n"},
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
  CHECK(make_plan(project, newer).cuda_architectures ==
        "75-real;80-real;86-real;89-real;90-real;100-real;120");
}

TEST_CASE("gen: a pyproject.toml that only configures tools does not make a Python project") {
  ProjectDir p({{"pyproject.toml", "[tool.black]\nline-length = 100\n"},
                {"CMakeLists.txt", "project(x LANGUAGES CXX CUDA)\nadd_executable(x x.cu)\n"}});
  const Project project = detect_project(p.dir);
  CHECK_FALSE(project.python);
  CHECK(project.cuda_cpp);
}

TEST_CASE("gen: a CMake project asking for a newer toolkit gets it") {
  ProjectDir p({{"CMakeLists.txt",
                 "project(x LANGUAGES CUDA)\nfind_package(CUDAToolkit 13.0)\n"
                 "add_executable(x x.cu)\n"}});
  const Plan plan = plan_for(p);
  CHECK(plan.cuda == "13.0.0");
  CHECK(plan.min_driver == 580);
  CHECK(plan.flavor == "base");
}

TEST_CASE("gen: plain .cu files build with one nvcc, their #includes pick the libraries") {
  ProjectDir p({{"kernels/fft.cu", "#include <cufft.h>\n#include \"common.cuh\"\n"},
                {"kernels/common.cuh", ""},
                {"main.cpp", "#include <cublas_v2.h>\nint main() { return 0; }\n"}},
               Named{"Signal Lab"});
  const Plan plan = plan_for(p);
  CHECK(plan.project_name == "signal-lab");
  CHECK(plan.nvcc_sources == std::vector<std::string>{"kernels/fft.cu", "main.cpp"});
  CHECK(plan.nvcc_libs == std::vector<std::string>{"-lcublas", "-lcufft"});
  CHECK(plan.flavor == "runtime");
  const std::string df = render_plan(plan).dockerfile;
  CHECK(df.find("nvcc -O2 -gencode arch=compute_75,code=sm_75") != std::string::npos);
  CHECK(df.find("-o /opt/app/bin/signal-lab kernels/fft.cu main.cpp -lcublas -lcufft") !=
        std::string::npos);
  CHECK(broken_rules(df, {true, true, false, false, false}) == "");
  // nvcc hands host code to g++, which the builder installs by name (the
  // OS's series, from the table) rather than trusting devel to carry it.
  REQUIRE(plan.builder_apt.size() == 1);
  CHECK(plan.builder_apt[0].rfind("g++=", 0) == 0);
  CHECK(df.find("apt-get install -y --no-install-recommends " + plan.builder_apt[0]) <
        df.find("nvcc -O2"));
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
  CHECK(newest12.pip_index_args ==
        std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cu128"});

  const Plan label = torch("torch==2.7.1+cu128\n");
  CHECK(label.cuda == "12.8.1");
  CHECK(label.pip_index_args ==
        std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cu128"});

  const Plan named = torch("--index-url https://download.pytorch.org/whl/cu126\ntorch==2.6.0\n");
  CHECK(named.cuda == "12.6.3");
  CHECK(named.pip_index_args.empty());  // the requirements file already says it

  Options cuda126;
  cuda126.cuda = "12.6";
  const Plan asked = torch("torch==2.6.0\n", cuda126);
  CHECK(asked.cuda == "12.6.3");
  CHECK(asked.os == "ubuntu24.04");
  CHECK(asked.pip_index_args ==
        std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cu126"});

  Options cuda125;
  cuda125.cuda = "12.5";
  CHECK_THROWS_WITH(torch("torch==2.6.0\n", cuda125), Catch::Contains("11.8, 12.4, 12.6"));
  // A +cuXYZ pin against another --cuda is refused, as an index is.
  Options cuda124;
  cuda124.cuda = "12.4";
  CHECK_THROWS_WITH(torch("torch==2.1.2+cu121\n", cuda124),
                    Catch::Contains("--cuda 12.4") && Catch::Contains("CUDA 12.1 build"));
  Options cuda121;
  cuda121.cuda = "12.1";
  CHECK(torch("torch==2.1.2+cu121\n", cuda121).final_image.find("12.1.1") != std::string::npos);

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
  CHECK(plan("onnxruntime-gpu==1.20.1\n").final_image ==
        "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04");
  CHECK(plan("tensorflow==2.18.0\n").cudnn);
  CHECK(plan("tensorflow[and-cuda]==2.18.0\n").flavor == "base");
  CHECK(plan("cupy-cuda12x==13.3.0\n").final_image == "nvidia/cuda:12.8.1-runtime-ubuntu24.04");
  CHECK(plan("jax==0.4.35\n").template_name == "cpu-python");
  CHECK(plan("vllm==0.6.4\n").flavor == "base");
}

TEST_CASE(
    "gen: torch beside a framework that loads the system's CUDA: the image follows that one") {
  auto plan = [](const std::string& requirements) {
    ProjectDir p({{"requirements.txt", requirements}, {"main.py", ""}});
    return plan_for(p);
  };
  // torch 2.6's wheels bring CUDA 12.4; onnxruntime-gpu 1.18 and
  // tensorflow 2.13 load CUDA 11.8 and cuDNN 8 from the image.
  for (const char* other : {"onnxruntime-gpu==1.18.0\n", "tensorflow==2.13.1\n"}) {
    CAPTURE(other);
    const Plan mixed = plan(std::string("torch==2.6.0\n") + other);
    CHECK(mixed.final_image == "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04");
    CHECK(mixed.cudnn);
    // The host needs a CUDA 12 driver for torch's wheels, not the 520 of
    // the image's own CUDA 11.8.
    CHECK(mixed.min_driver == 525);
    CHECK(summary(mixed).find("torch's CUDA 12.4 wheels need it") != std::string::npos);
    CHECK_FALSE(mentions(mixed.warnings, "built for CUDA 12.4"));
  }
  // The same CUDA major: the image's own driver floor stands.
  const Plan same = plan("torch==2.6.0\nonnxruntime-gpu==1.20.1\n");
  CHECK(same.final_image == "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04");
  CHECK(same.min_driver_why.empty());
  // torch alone is unchanged: its CUDA build decides.
  CHECK(plan("torch==2.6.0\n").final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
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
  CHECK_THROWS_WITH(plan_for(onnx, base_cudnn),
                    Catch::Contains("no cuDNN image of the base flavour"));

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
  ProjectDir p({{"pyproject.toml",
                 "[project]\nname='x'\nversion='1'\nrequires-python='==3.11.*'\n"
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
  ProjectDir p({{"requirements.txt", "torch==2.6.0\n"},
                {"setup.py", ""},
                {"ext/op.cu", ""},
                {"main.py", ""}});
  const Plan plan = plan_for(p);
  CHECK(plan.builder_image == "nvidia/cuda:12.4.1-devel-ubuntu22.04");
  CHECK(plan.final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
  CHECK(std::find(plan.builder_apt.begin(), plan.builder_apt.end(), "python3.10-dev=3.10.*") !=
        plan.builder_apt.end());
}

TEST_CASE("gen: review cases: installs, entrypoints and names that must work in a real build") {
  // setup.py lists its dependencies only in install_requires: pip installs them with it.
  ProjectDir setup(
      {{"setup.py", "from setuptools import setup\nsetup(install_requires=['requests'])\n"},
       {"main.py", "import requests\n"}});
  const Plan a = plan_for(setup);
  CHECK(a.project_install_args == ".");
  CHECK(render_plan(a).dockerfile.find("pip install .\n") != std::string::npos);
  // The code sits at /app in both stages, so an editable path stays valid.
  ProjectDir editable(
      {{"requirements.txt", "-e ./libs/mylib\n"}, {"libs/mylib/setup.py", ""}, {"main.py", ""}});
  const std::string df = render_plan(plan_for(editable)).dockerfile;
  CHECK(df.find("WORKDIR /app\n# Dependencies") == std::string::npos);  // code first here
  CHECK(df.find("COPY --from=builder /app /app") != std::string::npos);
  CHECK(df.find("/src") == std::string::npos);
  // Flask without gunicorn listens on all interfaces.
  ProjectDir flask({{"requirements.txt", "flask==3.0.3\n"},
                    {"app.py", "from flask import Flask\nweb = Flask(__name__)\n"}});
  CHECK(plan_for(flask).cmd == std::vector<std::string>{"flask", "--app", "app:web", "run",
                                                        "--host", "0.0.0.0", "--port", "5000"});
  // Scripts without a [build-system] are not installed: the target is called.
  ProjectDir virtual_project({{"pyproject.toml",
                               "[project]\nname='s'\nversion='1'\ndependencies=['numpy==2.1.3']\n"
                               "[project.scripts]\nserve='svc.main:run'\n"}});
  CHECK(plan_for(virtual_project).cmd ==
        std::vector<std::string>{"python", "-c", "import svc.main; svc.main.run()"});
  // Whole words decide what a development requirements file is.
  ProjectDir docker_reqs({{"requirements-docker.txt", "torch==2.6.0\n"},
                          {"requirements-dev.txt", "pytest\n"},
                          {"main.py", ""}});
  const Plan d = plan_for(docker_reqs);
  CHECK(d.gpu);
  CHECK(d.requirement_files_top == std::vector<std::string>{"requirements-docker.txt"});
  // Docker names allow one separator between alphanumerics.
  ProjectDir odd({{"main.py", ""}}, Named{"R2..x__y"});
  CHECK(plan_for(odd).project_name == "r2-x-y");
  // torch+cpu exists only on PyTorch's CPU index.
  ProjectDir cpu_torch({{"requirements.txt", "torch==2.6.0+cpu\n"}, {"main.py", ""}});
  CHECK(plan_for(cpu_torch).pip_index_args ==
        std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cpu"});
  // Uncommon Pythons come from uv, but the preferred one before the newest.
  ProjectDir py311({{"pyproject.toml",
                     "[project]\nname='x'\nversion='1'\nrequires-python='>=3.11'\n"
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
  CHECK(plan("nvidia-cublas-cu12==12.6.4.1\n").cuda == "12.1.1");  // bundled: the lowest 12.x image
  ProjectDir indexed(
      {{"requirements.txt", "--index-url https://download.pytorch.org/whl/cu118\ntorch==2.6.0\n"},
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
  ProjectDir named(
      {{"CMakeLists.txt",
        "project(saxpy LANGUAGES CXX CUDA)\nadd_executable(${PROJECT_NAME} main.cu)\n"}});
  CHECK(plan_for(named).cmd == std::vector<std::string>{"/opt/app/bin/saxpy"});
  // A vendored library's CMakeLists.txt does not hide plain .cu sources.
  ProjectDir vendored(
      {{"main.cu", "#include <cufft.h>\nint main(int argc, char** argv) { return 0; }\n"},
       {"third_party/fmt/CMakeLists.txt", "project(fmt)\n"},
       {"my kernel.cu", ""}});
  const Plan v = plan_for(vendored);
  CHECK(v.nvcc_libs == std::vector<std::string>{"-lcufft"});
  CHECK(std::find(v.nvcc_sources.begin(), v.nvcc_sources.end(), "'my kernel.cu'") !=
        v.nvcc_sources.end());
  // Long argument lists and long lines are read without recursion.
  std::string sources;
  for (int i = 0; i < 20000; ++i) sources += " src/file" + std::to_string(i) + ".cu";
  ProjectDir big(
      {{"CMakeLists.txt", "project(big LANGUAGES CUDA)\nadd_executable(big" + sources + ")\n"},
       {"unused.py", ""}});
  CHECK(plan_for(big).targets == std::vector<std::string>{"big"});
  ProjectDir long_line(
      {{"app.py", std::string(3 << 20, 'x') + "\n"}, {"requirements.txt", "numpy==2.1.3\n"}});
  CHECK(plan_for(long_line).cmd == std::vector<std::string>{"python", "app.py"});
}

TEST_CASE(
    "gen: --wheelhouse installs offline from the project's wheels, --index-url sets the index") {
  ProjectDir p({{"requirements.txt", "greeting==1.0.0\n"},
                {"wheels/greeting-1.0.0-py3-none-any.whl", "zip"},
                {"main.py", ""}});
  Options o;
  o.wheelhouse = "./wheels/";
  const Plan plan = plan_for(p, o);
  CHECK(plan.pip_index_args == std::vector<std::string>{"--no-index", "--find-links /wheels"});
  const std::string df = render_plan(plan).dockerfile;
  const auto mount = df.find("--mount=type=bind,source=wheels,target=/wheels");
  REQUIRE(mount != std::string::npos);
  CHECK(mount < df.find("pip install --no-index --find-links /wheels -r requirements.txt"));
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
  ProjectDir locked({{"pyproject.toml", "[project]\nname='x'\nversion='1'\n"},
                     {"uv.lock", "version = 1\n"},
                     {"main.py", ""}});
  CHECK_THROWS_WITH(plan_for(locked, index),
                    Catch::Contains("uv.lock decides where packages come from"));
}

// ----- bad projects -------------------------------------------------------

TEST_CASE("gen: bad projects get one message naming the input and what to do") {
  TempDir tmp;
  CHECK_THROWS_WITH(detect_project(tmp / "missing"), Catch::Contains("no such directory"));
  imgsmith::testing::write_file(tmp / "file", "x");
  CHECK_THROWS_WITH(detect_project(tmp / "file"), Catch::Contains("not a directory"));
  fs::create_directories(tmp / "empty");
  CHECK_THROWS_WITH(
      detect_project(tmp / "empty"),
      Catch::Contains("requirements*.txt, pyproject.toml") && Catch::Contains("*.cu files"));
  ProjectDir bad_toml({{"pyproject.toml", "[project]\nname = 'x'\ndependencies = [\n"}});
  CHECK_THROWS_WITH(detect_project(bad_toml.dir),
                    Catch::Contains("pyproject.toml:") && Catch::Contains("not valid TOML"));
  ProjectDir missing_include({{"requirements.txt", "-r base.txt\n"}});
  CHECK_THROWS_WITH(detect_project(missing_include.dir),
                    Catch::Contains("base.txt: named by -r at ") &&
                        Catch::Contains("requirements.txt:1 but missing"));
  ProjectDir no_entry({{"requirements.txt", "numpy==2.1.3\n"}});
  CHECK_THROWS_WITH(plan_for(no_entry),
                    Catch::Contains("found no entrypoint") && Catch::Contains("--cmd"));
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

// ----- issue 11: images that run, inputs that cannot be built ---------------

TEST_CASE("gen: the run-time user owns a writable home with the caches, the code stays root's") {
  ProjectDir torch({{"requirements.txt", kTorchApi}, {"main.py", kFastApiMain}});
  ProjectDir cpu({{"requirements.txt", "scikit-learn==1.5.2\n"}, {"main.py", ""}});
  ProjectDir cu({{"main.cu", "int main() { return 0; }\n"}});
  for (const ProjectDir* p : {&torch, &cpu, &cu}) {
    const Plan plan = plan_for(*p);
    const std::string df = render_plan(plan).dockerfile;
    INFO(plan.kind << "\n" << df);
    CHECK(df.find("--home-dir /app") == std::string::npos);
    CHECK(df.find("--home-dir /home/app") != std::string::npos);
    CHECK(df.find("install -d -o app -g app -m 0750 /home/app /home/app/.cache") !=
          std::string::npos);
    CHECK(df.find("ENV HOME=/home/app") != std::string::npos);
    CHECK(df.find("XDG_CACHE_HOME=/home/app/.cache") != std::string::npos);
    CHECK(df.find("--chown") == std::string::npos);  // the code is not the user's to change
    const bool python = plan.kind != "cuda-cpp";
    CHECK((df.find("HF_HOME=/home/app/.cache/huggingface") != std::string::npos) == python);
    CHECK((df.find("/home/app/.cache/huggingface /home/app/.cache/torch") != std::string::npos) ==
          python);
    CHECK(broken_rules(df, {plan.probe, plan.gpu, false, plan.source_before_deps, false}) == "");
  }
}

TEST_CASE("gen: a broken requirements file stops gen at its line") {
  auto error_for = [](const std::string& requirements) {
    ProjectDir p({{"requirements.txt", requirements}, {"main.py", ""}});
    try {
      detect_project(p.dir);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string conflict =
      error_for("numpy==2.1.3\n<<<<<<< HEAD\ntorch==2.6.0\n=======\ntorch==2.7.0\n>>>>>>> b\n");
  CHECK_THAT(conflict, Catch::Contains("requirements.txt:2: a merge-conflict marker (<<<<<<<)"));
  CHECK_THAT(error_for("numpy==2.1.3\n=======\n"),
             Catch::Contains("requirements.txt:2: a merge-conflict marker"));
  CHECK_THAT(
      error_for("numpy==2.1.3\nthis is not a requirement\n"),
      Catch::Contains("requirements.txt:2: 'this is not a requirement' is not a requirement"));
  CHECK_THAT(error_for("numpy===\n"), Catch::Contains("requirements.txt:1:"));
  CHECK_THAT(error_for("numpy==2.1.3\nscipy\0==1\n"s),
             Catch::Contains("requirements.txt:2: holds a NUL byte"));
  CHECK_THAT(error_for("\xff\xfen\0u\0m\0p\0y\0\n\0"s),
             Catch::Contains("requirements.txt:1: holds a NUL byte"));
  // What pip accepts is still accepted.
  ProjectDir fine({{"requirements.txt",
                    "numpy >= 1.26, < 3 ; python_version >= '3.9'\n"
                    "requests[socks]~=2.32\n"
                    "mylib @ https://example.com/mylib-1.0-py3-none-any.whl\n"
                    "git+https://github.com/org/repo.git@v1#egg=repo\n"
                    "wheels/local-1.0-py3-none-any.whl\n"
                    "--hash=sha256:abc\n"
                    "pkg==1.0 \\\n    --hash=sha256:def\n"},
                   {"main.py", ""}});
  CHECK(detect_project(fine.dir).python->requirements.size() == 4);
}

TEST_CASE("gen: a requirements.txt that is not a regular file is named as such, never opened") {
  ProjectDir dir({{"main.py", ""}});
  fs::create_directories(dir.dir / "requirements.txt");
  CHECK_THROWS_WITH(detect_project(dir.dir),
                    Catch::Contains("requirements.txt: is a directory, not a regular file") &&
                        !Catch::Contains("missing"));
  ProjectDir fifo({{"main.py", ""}});
  REQUIRE(::mkfifo((fifo.dir / "requirements.txt").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(detect_project(fifo.dir),
                    Catch::Contains("is a FIFO (named pipe), not a regular file"));
  ProjectDir included({{"requirements.txt", "-r base.txt\n"}, {"main.py", ""}});
  REQUIRE(::mkfifo((included.dir / "base.txt").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(detect_project(included.dir),
                    Catch::Contains("base.txt: is a FIFO (named pipe)"));
  ProjectDir globbed({{"requirements-gpu.txt", "torch==2.6.0\n"}, {"main.py", ""}});
  fs::create_directories(globbed.dir / "requirements-extra.txt");
  CHECK_THROWS_WITH(detect_project(globbed.dir),
                    Catch::Contains("requirements-extra.txt: is a directory"));
}

TEST_CASE("gen: an include outside the project is refused: the build context cannot reach it") {
  TempDir tmp;
  const fs::path root = tmp.path();
  fs::create_directories(root / "svc");
  imgsmith::testing::write_file(root / "shared.txt", "numpy==2.1.3\n");
  imgsmith::testing::write_file(root / "svc" / "requirements.txt",
                                "fastapi==0.115.6\n-r ../shared.txt\n");
  imgsmith::testing::write_file(root / "svc" / "main.py", "");
  CHECK_THROWS_WITH(detect_project(root / "svc"),
                    Catch::Contains("requirements.txt:2: -r ../shared.txt is outside "
                                    "the project directory") &&
                        Catch::Contains("build context"));
  imgsmith::testing::write_file(root / "svc" / "requirements.txt", "-c /etc/constraints.txt\n");
  CHECK_THROWS_WITH(detect_project(root / "svc"),
                    Catch::Contains("is an absolute path on this host") &&
                        Catch::Contains("into the build context " + (root / "svc").string()));
  CHECK_THROWS_WITH(detect_project(root / "svc", "../shared.txt"),
                    Catch::Contains("--requirements ../shared.txt"));
}

TEST_CASE(
    "gen: CPU and GPU requirements files are alternatives: the GPU one, or the one asked for") {
  ProjectDir p({{"requirements-cpu.txt",
                 "--extra-index-url https://download.pytorch.org/whl/cpu\ntorch==2.6.0\n"},
                {"requirements-gpu.txt", "torch==2.6.0\n"},
                {"requirements-common.txt", "fastapi==0.115.6\n"},
                {"main.py", ""}});
  const Project project = detect_project(p.dir);
  CHECK(project.python->install_files ==
        std::vector<std::string>{"requirements-common.txt", "requirements-gpu.txt"});
  const Plan gpu = make_plan(project, {});
  CHECK(gpu.gpu);
  CHECK(gpu.final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
  CHECK(
      explains(gpu, "requirements-cpu.txt: skipped: the CPU alternative to requirements-gpu.txt"));
  CHECK(render_plan(gpu).dockerfile.find("requirements-cpu.txt") == std::string::npos);
  const Plan cpu = make_plan(detect_project(p.dir, "requirements-cpu.txt"), {});
  CHECK_FALSE(cpu.gpu);
  CHECK(cpu.requirement_files_top == std::vector<std::string>{"requirements-cpu.txt"});
  ProjectDir cuda_names({{"requirements-cu118.txt", "torch==2.6.0\n"},
                         {"requirements-cu124.txt", "torch==2.6.0\n"},
                         {"main.py", ""}});
  CHECK_THROWS_WITH(
      detect_project(cuda_names.dir),
      Catch::Contains("requirements-cu118.txt and requirements-cu124.txt are alternatives") &&
          Catch::Contains("--requirements"));
}

TEST_CASE("gen: a conda environment is refused, never turned into an image without its packages") {
  const std::string env =
      "name: research\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n"
      "  - pytorch::pytorch=2.3\n  - numpy\n  - faiss-gpu\n  - pip\n  - pip:\n      - "
      "wandb==0.18.0\n";
  for (const char* name : {"environment.yml", "environment.yaml"}) {
    ProjectDir alone({{name, env}, {"main.py", "print('hi')\n"}});
    CHECK_THROWS_WITH(detect_project(alone.dir),
                      Catch::Contains(std::string(name) + ":4: a conda environment "
                                                          "(pytorch, numpy, faiss-gpu, "
                                                          "wandb (pip))") &&
                          Catch::Contains("requirements.txt"));
  }
  // Beside requirements.txt, pip's file is installed, and --explain and the
  // warnings say what conda listed that pip does not get.
  ProjectDir both({{"environment.yml", env},
                   {"requirements.txt", "torch==2.6.0\nnumpy==2.1.3\n"},
                   {"main.py", ""}});
  const Plan plan = plan_for(both);
  CHECK(plan.install_mode == "requirements");
  CHECK(explains(
      plan, "environment.yml:4: not installed: requirements.txt lists the Python dependencies"));
  CHECK(mentions(plan.warnings, "faiss-gpu (line 8)"));
  CHECK_FALSE(mentions(plan.warnings, "pytorch (line"));
  CHECK_FALSE(mentions(plan.warnings, "numpy (line"));
}

TEST_CASE("gen: .cu sources without main() are a library, not a program") {
  ProjectDir lib({{"kernels.cu", "__global__ void k() {}\nvoid launch() { k<<<1, 1>>>(); }\n"},
                  {"kernels.cuh", "void launch();\n"},
                  {"domain.cpp", "int domain(int x) { return x; }\n"}});
  CHECK_THROWS_WITH(detect_project(lib.dir),
                    Catch::Contains("kernels.cu: none of the 2 CUDA/C++ sources defines "
                                    "main()") &&
                        Catch::Contains("library"));
  ProjectDir program({{"kernels.cu", "__global__ void k() {}\n"},
                      {"app.cpp", "int\nmain(int argc, char** argv) {}\n"}});
  CHECK(explains(plan_for(program),
                 "app.cpp:2: defines main()"));  // GNU style: the type on the line before
  ProjectDir prog({{"kernels.cu", "__global__ void k() {}\n"},
                   {"app.cpp", "int main(int argc, char** argv) {}\n"}});
  CHECK(explains(plan_for(prog), "app.cpp:1: defines main()"));
}

TEST_CASE("gen: framework releases map to the CUDA and cuDNN they were built for") {
  auto plan = [](const std::string& requirements, Options o = {}) {
    ProjectDir p({{"requirements.txt", requirements}, {"main.py", ""}});
    return plan_for(p, o);
  };
  CHECK(plan("onnxruntime-gpu==1.17.3\n").final_image ==
        "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04");
  CHECK(plan("onnxruntime-gpu==1.18.1\n").final_image ==
        "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04");
  CHECK(plan("onnxruntime-gpu>=1.17,<1.19\n").final_image ==
        "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04");
  CHECK(plan("onnxruntime-gpu==1.19.2\n").final_image ==
        "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04");
  CHECK(plan("onnxruntime-gpu\n").final_image == "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04");
  CHECK(plan("tensorflow==2.13.1\n").final_image ==
        "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04");
  CHECK(plan("tensorflow==2.15.1\n").final_image ==
        "nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04");
  const Plan tf216 = plan("tensorflow==2.16.2\n");
  CHECK(tf216.final_image == "nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04");
  CHECK(mentions(tf216.warnings, "no cuDNN 8 image for it; gen uses 12.2.2"));
  CHECK(explains(tf216,
                 "tensorflow 2.16 is built for CUDA 12.3 and cuDNN 8 "
                 "(https://www.tensorflow.org/install/source#gpu)"));
  CHECK(plan("tensorflow~=2.17.0\n").final_image ==
        "nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04");
  CHECK(plan("tensorflow==2.18.0\n").final_image == "nvidia/cuda:12.5.1-cudnn-runtime-ubuntu24.04");
  const Plan newest = plan("tensorflow>=2.12\n");
  CHECK(newest.final_image == "nvidia/cuda:12.5.1-cudnn-runtime-ubuntu24.04");
  CHECK(explains(newest, "tensorflow>=2.12: pip installs the newest it allows, 2.18"));
  CHECK(plan("tensorflow[and-cuda]==2.16.1\n").flavor == "base");  // brings its own cuDNN
  Options cuda128;
  cuda128.cuda = "12.8";
  CHECK_THROWS_WITH(
      plan("tensorflow==2.16.1\n", cuda128),
      Catch::Contains("--cuda 12.8: tensorflow 2.16 loads cuDNN 8") && Catch::Contains("12.2.2"));
  CHECK(mentions(plan("tensorflow==2.99.0\n").warnings, "not in gen's table"));
}

TEST_CASE("gen: every framework row names its page and lands on an image with its cuDNN") {
  std::ifstream in(fs::path(IMGSMITH_SOURCE_DIR) / "data" / "framework-cuda.json");
  const auto table = nlohmann::json::parse(in);
  for (const auto& row : table.at("rows")) {
    CHECK(row.at("source").get<std::string>().rfind("https://", 0) == 0);
    for (const auto& release : row.at("releases")) {
      const std::string pin =
          row.at("package").get<std::string>() + "==" + release.get<std::string>() + ".0";
      INFO(pin);
      ProjectDir p({{"requirements.txt", pin + "\n"}, {"main.py", ""}});
      const Plan plan = plan_for(p);
      const bool cudnn8 = plan.final_image.find("-cudnn8-") != std::string::npos;
      CHECK(cudnn8 == (row.at("cudnn").get<int>() == 8));
      CHECK(plan.cudnn);
    }
  }
}

TEST_CASE("gen: a torch range means what pip installs today, the newest the table allows") {
  auto plan = [](const std::string& requirements) {
    ProjectDir p({{"requirements.txt", requirements}, {"main.py", ""}});
    return plan_for(p);
  };
  const Plan at_least = plan("torch>=2.4\n");
  CHECK(explains(at_least,
                 "torch>=2.4: pip installs the newest it allows; per data/torch-cuda.json that is "
                 "torch 2.11"));
  CHECK(at_least.cuda == "12.9.1");
  CHECK(plan("torch\n").cuda == "12.9.1");
  CHECK(plan("torch<2.5\n").pip_index_args ==
        std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cu124"});
  CHECK(plan("torch>=2.6,<2.8\n").cuda == "12.6.3");  // 2.7's PyPI wheel
}

TEST_CASE(
    "gen: the driver statement is the image's NVIDIA_REQUIRE_CUDA, not the CUDA major's floor") {
  ProjectDir torch({{"requirements.txt", "torch==2.6.0\n"}, {"main.py", ""}});
  const Plan t = plan_for(torch);
  CHECK(t.min_driver == 550);  // cuda>=12.4
  CHECK_THAT(summary(t),
             Catch::Contains("driver >= 550: the image sets NVIDIA_REQUIRE_CUDA=cuda>=12.4"));
  ProjectDir cu({{"main.cu", "int main() {}\n"}});
  CHECK(plan_for(cu).min_driver == 570);  // 12.8, gen's default
  ProjectDir ort({{"requirements.txt", "onnxruntime-gpu==1.18.0\n"}, {"main.py", ""}});
  CHECK(plan_for(ort).min_driver == 520);  // 11.8
}

TEST_CASE(
    "gen: .dockerignore leaves out secrets, ML artefacts and venvs everywhere, never what COPY "
    "names") {
  ProjectDir p({{"requirements.txt", "-r env/base.txt\ntorch==2.6.0\n"},
                {"env/base.txt", "numpy==2.1.3\n"},
                {"main.py", ""}});
  const Plan plan = plan_for(p);
  const std::string ignore = render_plan(plan).dockerignore;
  for (const char* pattern :
       {"**/*.pem", "**/*.key", "**/id_rsa*", "**/.aws", "**/.ssh", "**/.netrc", "**/.env",
        "**/.env.*", "**/checkpoints", "**/wandb", "**/mlruns", "**/lightning_logs",
        "**/.ipynb_checkpoints", "**/.venv", "**/venv"}) {
    INFO(pattern);
    CHECK(ignore.find(std::string("\n") + pattern + "\n") != std::string::npos);
  }
  // A Python project's stale build trees stay out as well as a C++ one's.
  CHECK(ignore.find("\nbuild\n") != std::string::npos);
  CHECK(ignore.find("\ndist\n") != std::string::npos);
  // env/ is left out, but the Dockerfile copies env/base.txt: it stays in.
  CHECK(ignore.find("\nenv\n") != std::string::npos);
  CHECK(ignore.find("\n!env/base.txt\n") != std::string::npos);
  CHECK(ignore.find("\n!requirements.txt\n") != std::string::npos);
  const auto last_exclusion = ignore.rfind("\n**/");
  CHECK(ignore.find("\n!env/base.txt\n") > last_exclusion);  // exceptions come after what they undo
}

TEST_CASE(
    "gen: torch projects get shared memory for DataLoader workers and NCCL in the run command") {
  for (const std::string torch : {"torch==2.6.0\n", "torch==2.6.0+cpu\n", "vllm==0.6.4\n"}) {
    ProjectDir p({{"requirements.txt", torch}, {"main.py", ""}});
    Options o;
    o.compose = true;
    const Plan plan = plan_for(p, o);
    INFO(torch);
    CHECK(plan.shm_size == "8g");
    CHECK_THAT(summary(plan),
               Catch::Contains("docker run --rm") && Catch::Contains(" --shm-size=8g "));
    CHECK_THAT(render_plan(plan).compose, Catch::Contains("    shm_size: \"8gb\"\n"));
    CHECK(explains(plan, "Docker's default is 64 MB"));
  }
  ProjectDir sklearn({{"requirements.txt", "scikit-learn==1.5.2\n"}, {"main.py", ""}});
  CHECK(plan_for(sklearn).shm_size.empty());
  // Downloaded models outlive the container in compose's named volume, at
  // the cache the image's HOME holds; C++ programs get none.
  Options compose;
  compose.compose = true;
  const std::string yaml = render_plan(plan_for(sklearn, compose)).compose;
  CHECK_THAT(yaml, Catch::Contains("    volumes:\n      - model-cache:/home/app/.cache\n") &&
                       Catch::EndsWith("\nvolumes:\n  model-cache: {}\n"));
  ProjectDir cu({{"main.cu", "int main() {}\n"}});
  CHECK(render_plan(plan_for(cu, compose)).compose.find("volumes") == std::string::npos);
  CHECK(summary(plan_for(sklearn)).find("--shm-size") == std::string::npos);
}

TEST_CASE(
    "gen: the entrypoints ML projects have: Streamlit, Gradio, train.py, python -m, notebooks, "
    "--port") {
  ProjectDir streamlit({{"requirements.txt", "streamlit==1.40.0\n"},
                        {"app.py", "import streamlit as st\nst.title('x')\n"}});
  const Plan s = plan_for(streamlit);
  CHECK(s.cmd == std::vector<std::string>{"streamlit", "run", "app.py", "--server.address=0.0.0.0",
                                          "--server.port=8501", "--server.headless=true"});
  CHECK(s.port == 8501);
  CHECK_THAT(render_plan(s).dockerfile, Catch::Contains("\nEXPOSE 8501\n"));

  ProjectDir gradio(
      {{"requirements.txt", "gradio==5.9.1\n"},
       {"main.py", "print('cli')\n"},
       {"demo.py",
        "import gradio as gr\ngr.Interface(fn=str, inputs='text', outputs='text').launch()\n"}});
  const Plan g = plan_for(gradio);
  CHECK(g.cmd == std::vector<std::string>{"python", "demo.py"});
  CHECK(g.port == 7860);
  const std::string gdf = render_plan(g).dockerfile;
  CHECK_THAT(gdf, Catch::Contains("\nENV GRADIO_SERVER_NAME=0.0.0.0 GRADIO_SERVER_PORT=7860\n"));
  CHECK(broken_rules(gdf, {false, false, false, false, false}) == "");
  Options port;
  port.port = 7000;
  const Plan moved = plan_for(gradio, port);
  CHECK(moved.port == 7000);
  CHECK(moved.env ==
        std::vector<std::string>{"GRADIO_SERVER_NAME=0.0.0.0", "GRADIO_SERVER_PORT=7000"});

  ProjectDir fastapi({{"requirements.txt", "fastapi==0.115.6\nuvicorn==0.34.0\n"},
                      {"main.py", "print('cli')\n"},
                      {"server.py", kFastApiMain}});
  const Plan f = plan_for(fastapi);  // the server, not the CLI beside it
  CHECK(f.cmd ==
        std::vector<std::string>{"uvicorn", "server:app", "--host", "0.0.0.0", "--port", "8000"});
  Options p9000;
  p9000.port = 9000;
  const Plan f9 = plan_for(fastapi, p9000);
  CHECK(f9.cmd ==
        std::vector<std::string>{"uvicorn", "server:app", "--host", "0.0.0.0", "--port", "9000"});
  CHECK_THAT(summary(f9), Catch::Contains("-p 9000:9000"));
  Options cmd_and_port;
  cmd_and_port.port = 9000;
  cmd_and_port.cmd = {"python", "-m", "svc"};
  CHECK(mentions(plan_for(fastapi, cmd_and_port).warnings,
                 "cannot tell python -m svc to listen on it"));

  ProjectDir train(
      {{"requirements.txt", "torch==2.6.0\n"}, {"train.py", ""}, {"explore.ipynb", "{}"}});
  CHECK(plan_for(train).cmd == std::vector<std::string>{"python", "train.py"});
  CHECK(plan_for(train).port == 0);

  ProjectDir module({{"requirements.txt", "numpy==2.1.3\n"},
                     {"trainer/__main__.py", ""},
                     {"trainer/__init__.py", ""}});
  CHECK(plan_for(module).cmd == std::vector<std::string>{"python", "-m", "trainer"});

  ProjectDir notebooks(
      {{"requirements.txt", "jupyterlab==4.3.4\npandas==2.2.3\n"}, {"analysis.ipynb", "{}"}});
  const Plan n = plan_for(notebooks);
  CHECK(n.cmd ==
        std::vector<std::string>{"jupyter", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser"});
  CHECK(n.port == 8888);
  CHECK_THAT(render_plan(n).dockerfile, Catch::Contains("\nEXPOSE 8888\n"));
  ProjectDir bare_notebooks({{"requirements.txt", "pandas==2.2.3\n"}, {"analysis.ipynb", "{}"}});
  CHECK(mentions(plan_for(bare_notebooks).warnings, "jupyterlab is not among the dependencies"));
}

TEST_CASE("gen: the indexes pyproject.toml names decide torch's CUDA and reach pip, with no lock") {
  ProjectDir uv({{"pyproject.toml",
                  "[project]\nname = 'x'\nversion = '1'\ndependencies = ['torch==2.4.0']\n"
                  "[[tool.uv.index]]\nname = 'pytorch-cu121'\n"
                  "url = 'https://download.pytorch.org/whl/cu121'\nexplicit = true\n"
                  "[tool.uv.sources]\ntorch = { index = 'pytorch-cu121' }\n"},
                 {"main.py", ""}});
  ProjectDir poetry({{"pyproject.toml",
                      "[tool.poetry]\nname = 'x'\nversion = '1'\npackage-mode = false\n"
                      "[tool.poetry.dependencies]\npython = '^3.10'\n"
                      "torch = { version = '2.4.0', source = 'pytorch' }\n"
                      "[[tool.poetry.source]]\nname = 'pytorch'\n"
                      "url = 'https://download.pytorch.org/whl/cu121'\npriority = 'explicit'\n"},
                     {"main.py", ""}});
  for (const ProjectDir* p : {&uv, &poetry}) {
    const Plan plan = plan_for(*p);
    CHECK(plan.cuda == "12.1.1");
    CHECK(plan.pip_index_args ==
          std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cu121"});
    CHECK_THAT(render_plan(plan).dockerfile,
               Catch::Contains("pip install --extra-index-url "
                               "https://download.pytorch.org/whl/cu121 torch==2.4.0"));
  }
}

// ----- issue 11, remaining classes ------------------------------------------

TEST_CASE(
    "gen: Triton users get a C compiler and the Python headers in the final stage, or not when "
    "asked") {
  const std::string vllm = "vllm==0.8.5\nfastapi==0.115.6\nuvicorn==0.34.0\n";
  ProjectDir p({{"requirements.txt", vllm}, {"server.py", kFastApiMain}});
  const Plan plan = plan_for(p);
  // vllm 0.8.5 pins torch 2.6.0, whose PyPI wheel is CUDA 12.4: on 22.04, Python 3.10.
  CHECK(plan.final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
  CHECK(plan.runtime_compiler);
  CHECK(std::find(plan.final_apt.begin(), plan.final_apt.end(), "gcc=4:11.*") !=
        plan.final_apt.end());
  CHECK(std::find(plan.final_apt.begin(), plan.final_apt.end(), "python3.10-dev=3.10.*") !=
        plan.final_apt.end());
  CHECK(mentions(plan.notes, "~150-200 MB"));
  CHECK(mentions(plan.notes, "--no-runtime-compiler"));
  CHECK(summary(plan).find("note: requirements.txt:1 (vllm): Triton") != std::string::npos);
  const std::string df = render_plan(plan).dockerfile;
  imgsmith::test::RuleContext context{true, true, false, false, false};
  // The checker forbids compilers in the final stage, except this documented case.
  CHECK(broken_rules(df, context).find("no-compiler") != std::string::npos);
  context.runtime_compiler = true;
  CHECK(broken_rules(df, context) == "");
  // ... and only gcc with its reason: g++ or an undocumented gcc still fails.
  std::string gxx = df;
  gxx.replace(gxx.find("gcc=4:11.*"), 10, "g++=4:11.*");
  CHECK(broken_rules(gxx, context).find("no-compiler") != std::string::npos);
  std::string silent = std::regex_replace(df, std::regex("Triton"), "It");
  CHECK(broken_rules(silent, context).find("without saying why") != std::string::npos);

  Options o;
  o.runtime_compiler = false;
  const Plan without = plan_for(p, o);
  CHECK_FALSE(without.runtime_compiler);
  CHECK(std::find(without.final_apt.begin(), without.final_apt.end(), "gcc=4:11.*") ==
        without.final_apt.end());
  CHECK(mentions(without.warnings, "--no-runtime-compiler left gcc"));
  CHECK(broken_rules(render_plan(without).dockerfile, {true, true, false, false, false}) == "");

  // triton itself, sglang; uv's managed Python carries its headers: gcc alone.
  ProjectDir triton({{"requirements.txt", "torch==2.6.0\ntriton==3.2.0\n"}, {"train.py", ""}});
  CHECK(plan_for(triton).runtime_compiler);
  ProjectDir sglang({{"pyproject.toml",
                      "[project]\nname='s'\nversion='1'\nrequires-python='>=3.11'\n"
                      "dependencies=['sglang==0.4.1', 'torch==2.5.1']\n"},
                     {"main.py", ""}});
  const Plan s = plan_for(sglang);
  CHECK(s.managed_python);
  CHECK(s.runtime_compiler);
  CHECK(mentions(s.final_apt, "gcc="));
  CHECK_FALSE(mentions(s.final_apt, "-dev"));
  // Nothing compiling at run time: no compiler.
  ProjectDir torch({{"requirements.txt", kTorchApi}, {"main.py", kFastApiMain}});
  CHECK_FALSE(plan_for(torch).runtime_compiler);
}

TEST_CASE("gen: a framework that pins torch gets torch's CUDA build") {
  auto plan = [](const std::string& requirements) {
    ProjectDir p({{"requirements.txt", requirements}, {"main.py", ""}});
    return plan_for(p);
  };
  CHECK(plan("vllm==0.8.5\n").cuda == "12.4.1");  // torch 2.6.0: PyPI's cu124
  CHECK(plan("vllm==0.6.3\n").cuda == "12.4.1");  // torch 2.4.0: the newest 12.x build, cu124
  CHECK(plan("vllm==0.6.3\n").pip_index_args ==
        std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cu124"});
  CHECK(plan("vllm==0.10.2\n").cuda == "12.8.1");  // torch 2.8.0: 12.8
  CHECK(plan("vllm>=0.8,<0.9\n").cuda == "12.4.1");
  // The project's own torch pin wins over the one vllm implies.
  CHECK(plan("vllm==0.8.5\ntorch==2.7.1\n").cuda == "12.6.3");
}

TEST_CASE(
    "gen: wheels that bring their own CUDA get the lowest image of their major, the widest driver "
    "range") {
  ProjectDir jax({{"requirements.txt", "jax[cuda12]==0.4.35\n"}, {"main.py", ""}});
  const Plan j = plan_for(jax);
  CHECK(j.final_image == "nvidia/cuda:12.1.1-base-ubuntu22.04");
  CHECK(j.min_driver == 530);
  CHECK(explains(j, "lowest CUDA 12 image"));
  // System libraries (CuPy) still get gen's default 12.x.
  ProjectDir cupy({{"requirements.txt", "cupy-cuda12x==13.3.0\n"}, {"main.py", ""}});
  CHECK(plan_for(cupy).cuda == "12.8.1");
}

TEST_CASE(
    "gen: a torch CUDA extension builds on devel with TORCH_CUDA_ARCH_LIST, no isolation, no build "
    "tree shipped") {
  ProjectDir p(
      {{"requirements.txt", "torch==2.6.0\n"},
       {"setup.py",
        "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, "
        "CUDAExtension\nsetup(name='ops', ext_modules=[CUDAExtension('ops._C', ['k.cu'])])\n"},
       {"k.cu", "__global__ void k() {}\n"},
       {"main.py", "import ops\n"}});
  const Plan plan = plan_for(p);
  CHECK(plan.builder_image == "nvidia/cuda:12.4.1-devel-ubuntu22.04");
  CHECK(plan.final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
  CHECK(plan.torch_cuda_arch_list == "7.5;8.0;8.6;8.9;9.0+PTX");  // data/cuda-images.json, CUDA 12
  CHECK(explains(plan, "setup.py:2: a torch CUDA extension"));
  const std::string df = render_plan(plan).dockerfile;
  INFO(df);
  const auto deps = df.find("pip install -r requirements.txt");
  const auto arch = df.find("ENV TORCH_CUDA_ARCH_LIST=\"7.5;8.0;8.6;8.9;9.0+PTX\"");
  const auto ext = df.find("pip install --no-build-isolation --no-deps .");
  const auto clean = df.find("RUN rm -rf /app/.imgsmith /app/build");
  const auto final_copy = df.find("COPY --from=builder /app /app");
  REQUIRE(deps != std::string::npos);
  REQUIRE(arch != std::string::npos);
  REQUIRE(ext != std::string::npos);
  REQUIRE(clean != std::string::npos);
  CHECK(deps < arch);  // torch is installed before the extension builds against it
  CHECK(arch < ext);
  CHECK(ext < clean);
  CHECK(clean < final_copy);
  CHECK(df.find("-name '*.o'", clean) != std::string::npos);
  CHECK(std::find(plan.builder_apt.begin(), plan.builder_apt.end(), "g++=4:11.*") !=
        plan.builder_apt.end());
  CHECK(std::find(plan.builder_apt.begin(), plan.builder_apt.end(), "python3.10-dev=3.10.*") !=
        plan.builder_apt.end());
  CHECK(broken_rules(df, {true, true, false, true, false}) == "");
  // pyproject.toml's build hook counts too; a CUDA 13 build gets CUDA 13's architectures.
  ProjectDir py(
      {{"pyproject.toml",
        "[build-system]\nrequires=['setuptools','torch']\n[project]\nname='o'\nversion='1'\n"
        "dependencies=['torch==2.9.0']\n[tool.ext]\nbuilder='torch.utils.cpp_extension'\n"},
       {"main.py", ""}});
  Options o;
  o.cuda = "13.0";
  CHECK(plan_for(py, o).torch_cuda_arch_list == "7.5;8.0;8.6;8.9;9.0;10.0;12.0+PTX");
}

TEST_CASE(
    "gen: --wheelhouse ships no wheel, installs the project offline, and --index-url leaves no "
    "public index") {
  ProjectDir p({{"pyproject.toml",
                 "[build-system]\nrequires=['setuptools']\n[project]\nname='svc'\nversion='1'\n"},
                {"requirements.txt", "torch==2.6.0\nfastapi==0.115.6\nuvicorn==0.34.0\n"},
                {"wheels/torch-2.6.0-cp310-cp310-linux_x86_64.whl", "zip"},
                {"main.py", kFastApiMain}});
  Options o;
  o.wheelhouse = "wheels";
  const Plan plan = plan_for(p, o);
  const std::string df = render_plan(plan).dockerfile;
  INFO(df);
  CHECK(df.find("COPY wheels") == std::string::npos);  // never a layer of wheels
  CHECK(df.find("--mount=type=bind,source=wheels,target=/wheels") != std::string::npos);
  CHECK(df.find("pip install --no-index --find-links /wheels -r requirements.txt") !=
        std::string::npos);
  CHECK(df.find("pip install --no-index --find-links /wheels --no-deps .") != std::string::npos);
  // COPY . . brings the wheels into the builder's /app: removed before the final stage copies it.
  const auto clean = df.find("RUN rm -rf /app/.imgsmith /app/wheels");
  REQUIRE(clean != std::string::npos);
  CHECK(clean < df.find("COPY --from=builder /app /app"));
  CHECK(df.find("download.pytorch.org") == std::string::npos);
  CHECK(broken_rules(df, {true, true, false, false, false}) == "");

  // --index-url: torch 2.5 would come from PyTorch's cu124 index; the mirror must carry it.
  ProjectDir t({{"requirements.txt", "torch==2.5.1\n"}, {"main.py", ""}});
  Options index;
  index.index_url = "https://pypi.internal.example/simple";
  const Plan ti = plan_for(t, index);
  const std::string tdf = render_plan(ti).dockerfile;
  CHECK(tdf.find("download.pytorch.org") == std::string::npos);
  CHECK(tdf.find(
            "pip install --index-url https://pypi.internal.example/simple -r requirements.txt") !=
        std::string::npos);
  CHECK(mentions(ti.warnings, "https://download.pytorch.org/whl/cu124"));
  // The project's install uses the private index too; pyproject's indexes go.
  ProjectDir uv({{"pyproject.toml",
                  "[build-system]\nrequires=['setuptools']\n[project]\nname='x'\nversion='1'\n"
                  "dependencies=['torch==2.6.0']\n[[tool.uv.index]]\nname='cu126'\n"
                  "url='https://download.pytorch.org/whl/cu126'\n"},
                 {"main.py", ""}});
  const std::string udf = render_plan(plan_for(uv, index)).dockerfile;
  CHECK(udf.find("download.pytorch.org") == std::string::npos);
  CHECK(udf.find("pip install --index-url https://pypi.internal.example/simple --no-deps .") !=
        std::string::npos);
}

TEST_CASE(
    "gen: CMake projects that find cuDNN and NCCL themselves, their minimum toolkit, their own "
    "architectures") {
  ProjectDir p({{"CMakeLists.txt",
                 "cmake_minimum_required(VERSION 3.22)\nproject(t LANGUAGES CXX CUDA)\n"
                 "find_package(CUDAToolkit 12.4 REQUIRED)\n"
                 "find_library(CUDNN_LIB NAMES cudnn)\nadd_executable(t main.cu)\n"
                 "target_link_libraries(t PRIVATE ${CUDNN_LIB})\n"},
                {"main.cu", "int main() { return 0; }\n"}});
  const Plan plan = plan_for(p);
  CHECK(plan.final_image == "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04");
  CHECK(plan.builder_image == "nvidia/cuda:12.8.1-cudnn-devel-ubuntu24.04");
  CHECK(explains(plan, "CMakeLists.txt:4: find_library"));
  ProjectDir header(
      {{"CMakeLists.txt",
        "project(t LANGUAGES CUDA)\nfind_path(CUDNN_INC cudnn.h)\nadd_executable(t m.cu)\n"},
       {"m.cu", ""}});
  CHECK(plan_for(header).cudnn);
  for (const std::string nccl :
       {"find_package(NCCL REQUIRED)\n", "find_library(NCCL_LIBRARY nccl)\n",
        "include_directories(${NCCL_INCLUDE_DIRS})\n"}) {
    INFO(nccl);
    ProjectDir n(
        {{"CMakeLists.txt", "project(t LANGUAGES CUDA)\n" + nccl + "add_executable(t m.cu)\n"},
         {"m.cu", ""}});
    const Plan np = plan_for(n);
    CHECK(np.flavor == "runtime");  // runtime carries libnccl2
    CHECK_FALSE(np.cudnn);
  }
  // A --cuda below the project's minimum fails at configure: refused, naming the line.
  Options old;
  old.cuda = "12.2";
  CHECK_THROWS_WITH(
      plan_for(p, old),
      Catch::Contains("--cuda 12.2: CMakeLists.txt:3 asks for find_package(CUDAToolkit 12.4)"));
  old.cuda = "12.4";
  CHECK_NOTHROW(plan_for(p, old));
  // The project's CMAKE_CUDA_ARCHITECTURES is not overridden.
  ProjectDir own(
      {{"CMakeLists.txt",
        "set(CMAKE_CUDA_ARCHITECTURES 80 90)\nproject(s LANGUAGES CUDA)\nadd_executable(s s.cu)\n"},
       {"s.cu", ""}});
  const std::string odf = render_plan(plan_for(own)).dockerfile;
  CHECK(odf.find("-DCMAKE_CUDA_ARCHITECTURES") == std::string::npos);
  CHECK(odf.find("RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release") != std::string::npos);
  CHECK(render_plan(plan).dockerfile.find(
            "-DCMAKE_CUDA_ARCHITECTURES=\"75-real;80-real;86-real;89-real;90\"") !=
        std::string::npos);
}

TEST_CASE("gen: a program the code runs is installed in the final stage from the OS") {
  // openai/whisper's shape: the command list built first, run later; and a
  // tool found with shutil.which.
  ProjectDir p({{"requirements.txt", "numpy==2.1.3\n"},
                {"audio.py",
                 "from subprocess import run\n\ndef load(file):\n    cmd = [\n"
                 "        \"ffmpeg\",\n        \"-nostdin\", \"-i\", file]\n"
                 "    return run(cmd, capture_output=True)\n"},
                {"docs.py", "import shutil\nHAVE = shutil.which('pandoc')\n# os.system('sox x')\n"},
                {"encode.py",
                 "import asyncio\n\nasync def encode(w):\n"
                 "    p = await asyncio.create_subprocess_exec(\"flac\", \"-8\", w)\n"},
                {"main.py", "import audio\n"}});
  const Plan plan = plan_for(p);
  CHECK(mentions(plan.final_apt, "ffmpeg"));
  CHECK(mentions(plan.final_apt, "pandoc"));
  CHECK(mentions(plan.final_apt, "flac"));       // asyncio's subprocess
  CHECK_FALSE(mentions(plan.final_apt, "sox"));  // a comment runs nothing
  CHECK(explains(plan, "audio.py:5: the code runs ffmpeg: ffmpeg installed in the final stage"));
  // A program no table row names is not guessed at, and names in prose are
  // no command.
  ProjectDir q({{"requirements.txt", "numpy==2.1.3\n"},
                {"main.py",
                 "import subprocess\nsubprocess.run(['mytool', '-x'])\n"
                 "print(\"use ffmpeg to convert\")\n"}});
  const Plan none = plan_for(q);
  CHECK_FALSE(mentions(none.final_apt, "ffmpeg"));
  CHECK_FALSE(mentions(none.final_apt, "mytool"));
}

TEST_CASE(
    "gen: apt.txt declares system packages: run-time ones in the final stage, -dev ones in the "
    "builder") {
  ProjectDir p(
      {{"requirements.txt", "soundfile==0.12.1\n"},
       {"apt.txt",
        "# as repo2docker reads it\nffmpeg\n\nlibsndfile1-dev  # for building\nlibgl1=1.7.*\n"},
       {"main.py", ""}});
  const Plan plan = plan_for(p);
  CHECK(mentions(plan.final_apt, "ffmpeg"));
  CHECK(mentions(plan.final_apt, "libgl1=1.7.*"));
  CHECK_FALSE(mentions(plan.final_apt, "libsndfile1-dev"));
  CHECK(mentions(plan.builder_apt, "libsndfile1-dev"));
  CHECK(explains(plan, "apt.txt:2: ffmpeg: installed with apt in the final stage"));
  CHECK(mentions(plan.notes, "ffmpeg, libsndfile1-dev are installed unpinned"));
  const std::string df = render_plan(plan).dockerfile;
  INFO(df);
  CHECK(df.find("apt-get install -y --no-install-recommends ffmpeg libgl1=1.7.*\n") !=
        std::string::npos);
  imgsmith::test::RuleContext context{false, false, false, false, false};
  CHECK(broken_rules(df, context).find("DL3008") != std::string::npos);  // hadolint would say so
  context.declared_apt = plan.declared_apt;
  CHECK(broken_rules(df, context) == "");  // the project's own choice, named in a note
  // A CUDA C++ program gets them too.
  ProjectDir cu({{"main.cu", "int main() { return 0; }\n"}, {"apt.txt", "libopencv-core406t64\n"}});
  CHECK(mentions(plan_for(cu).final_apt, "libopencv-core406t64"));
  for (const std::string bad :
       {"ffmpeg\nsudo apt-get install x\n", "ffmpeg\nFFmpeg\n", "ffmpeg\n<<<<<<< HEAD\n"}) {
    INFO(bad);
    ProjectDir b({{"requirements.txt", "numpy==2.1.3\n"}, {"apt.txt", bad}, {"main.py", ""}});
    CHECK_THROWS_WITH(detect_project(b.dir), Catch::Contains("apt.txt:2: '") &&
                                                 Catch::Contains("not a Debian package name"));
  }
}

TEST_CASE(
    "gen: imgsmith.toml's [gen] table holds the flags a team commits, flags override, bad values "
    "name the key") {
  const std::string toml =
      "[gen]\ncuda = \"12.6\"\nflavor = \"runtime\"\ncmd = \"python -m svc --fast\"\nport = 9000\n"
      "system_packages = [\"libgl1\"]\nrequirements = \"requirements-gpu.txt\"\nextras = "
      "[\"gpu\"]\ngpus = [\"L4\"]\n";
  ProjectDir p({{"imgsmith.toml", toml},
                {"pyproject.toml",
                 "[build-system]\nrequires=['setuptools']\n[project]\nname='svc'\nversion='1'\n"
                 "[project.optional-dependencies]\ngpu=['onnxruntime-gpu==1.20.1']\n"},
                {"requirements-gpu.txt", "torch==2.7.1\n"},
                {"requirements.txt", "numpy==2.1.3\n"},
                {"svc/__main__.py", ""}});
  const auto g = imgsmith::load_gen_policy(p.dir.string());
  REQUIRE(g);
  Options o;
  o.flavor.clear();
  std::string requirements;
  imgsmith::apply_gen_policy(*g, o, requirements);
  CHECK(o.cuda == "12.6");
  CHECK(o.flavor == "runtime");
  CHECK(o.cmd == std::vector<std::string>{"python", "-m", "svc", "--fast"});
  CHECK(o.port == 9000);
  CHECK(requirements == "requirements-gpu.txt");
  CHECK(o.target_gpus == std::vector<std::string>{"L4"});
  const Plan plan = make_plan(detect_project(p.dir, requirements), o);
  CHECK(plan.final_image ==
        "nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04");  // the gpu extra's onnxruntime-gpu
  CHECK(plan.requirement_files_top == std::vector<std::string>{"requirements-gpu.txt"});
  CHECK(plan.project_install_args == "'.[gpu]'");
  CHECK(mentions(plan.final_apt, "libgl1"));
  CHECK(plan.port == 9000);
  // Flags override the file.
  Options flags;
  flags.cuda = "12.8";
  flags.port = 8100;
  flags.cmd = {"python", "app.py"};
  flags.flavor = "base";
  std::string req = "requirements.txt";
  imgsmith::apply_gen_policy(*g, flags, req);
  CHECK(flags.cuda == "12.8");
  CHECK(flags.port == 8100);
  CHECK(flags.cmd == std::vector<std::string>{"python", "app.py"});
  CHECK(flags.flavor == "base");
  CHECK(req == "requirements.txt");
  // Every bad value: the file, its line, the key, what to do.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"cuda = \"twelve\"", "[gen] cuda: 'twelve' is no CUDA release"},
      {"cuda = 12.4", "[gen] cuda: must be a string"},
      {"flavor = \"tiny\"", "[gen] flavor: 'tiny': choose auto, base, runtime or devel"},
      {"port = 0", "[gen] port: give a TCP port from 1 to 65535"},
      {"port = \"80\"", "[gen] port: give a TCP port"},
      {"cmd = \"python 'open\"", "[gen] cmd: "},
      {"cmd = []", "[gen] cmd: is empty"},
      {"system_packages = [\"Bad Pkg\"]",
       "[gen] system_packages: 'Bad Pkg' is not a Debian package name"},
      {"extras = [1]", "[gen] extras must be a list of strings"},
      {"colour = \"red\"", "[gen] colour: unknown key"},
  };
  for (const auto& [line, message] : bad) {
    INFO(line);
    ProjectDir b({{"imgsmith.toml", "[gen]\n" + line + "\n"}, {"main.py", ""}});
    CHECK_THROWS_WITH(
        imgsmith::load_gen_policy(b.dir.string()),
        Catch::Contains((b.dir / "imgsmith.toml").string() + ":2: ") && Catch::Contains(message));
  }
  // An extra the project does not have.
  ProjectDir e({{"imgsmith.toml", "[gen]\nextras = [\"cpu\"]\n"},
                {"pyproject.toml",
                 "[project]\nname='x'\nversion='1'\n"
                 "[project.optional-dependencies]\ngpu=['torch==2.6.0']\n"},
                {"main.py", ""}});
  Options eo;
  std::string er;
  imgsmith::apply_gen_policy(*imgsmith::load_gen_policy(e.dir.string()), eo, er);
  CHECK_THROWS_WITH(
      make_plan(detect_project(e.dir), eo),
      Catch::Contains("imgsmith.toml [gen] extras: 'cpu' is not an extra of this project") &&
          Catch::Contains("has gpu"));
}

TEST_CASE("gen: a project needing a newer CMake than the builder's OS gets CMake's own wheels") {
  const std::string lists =
      "cmake_minimum_required(VERSION 3.30...3.31)\nproject(s LANGUAGES CXX CUDA)\n"
      "add_executable(s s.cu)\n";
  ProjectDir p({{"CMakeLists.txt", lists}, {"s.cu", "int main() { return 0; }\n"}});
  Options o;
  o.cuda = "12.4";  // ubuntu22.04 only: CMake 3.22
  const Plan plan = plan_for(p, o);
  CHECK(plan.cmake_from_pypi == "3.30");
  CHECK_FALSE(mentions(plan.builder_apt, "cmake="));
  CHECK(mentions(plan.builder_apt, "g++="));
  CHECK(mentions(plan.builder_apt, "make="));
  CHECK(explains(
      plan, "CMakeLists.txt:1: cmake_minimum_required(VERSION 3.30): ubuntu22.04's CMake is 3.22"));
  const std::string df = render_plan(plan).dockerfile;
  INFO(df);
  const auto uv = df.find("COPY --from=ghcr.io/astral-sh/uv:");
  const auto tool = df.find("uv tool install \"cmake==3.30.*\"");
  REQUIRE(uv != std::string::npos);
  REQUIRE(tool != std::string::npos);
  CHECK(uv < tool);
  CHECK(tool < df.find("RUN cmake -S ."));
  CHECK(broken_rules(df, {true, true, false, false, false}) == "");
  // The OS's CMake suffices: apt's, as before.
  ProjectDir old({{"CMakeLists.txt",
                   "cmake_minimum_required(VERSION 3.18)\nproject(s LANGUAGES "
                   "CUDA)\nadd_executable(s s.cu)\n"},
                  {"s.cu", ""}});
  const Plan a = plan_for(old, o);
  CHECK(a.cmake_from_pypi.empty());
  CHECK(mentions(a.builder_apt, "cmake=3.22.*"));
}

// ----- what pip installs beside the requirements files ------------------

TEST_CASE("gen: pyproject.toml's dependencies count when requirements files install too") {
  const std::string pyproject =
      "[project]\nname='pkg'\nversion='0.1'\ndependencies=['torch==2.6.0','fastapi']\n"
      "[project.optional-dependencies]\ngpu=['onnxruntime-gpu==1.18.0']\n"
      "[build-system]\nrequires=['setuptools']\nbuild-backend='setuptools.build_meta'\n";
  // requirements.txt names only some of them; `pip install .` brings the rest.
  ProjectDir beside(
      {{"requirements.txt", "fastapi==0.115.6\n"}, {"pyproject.toml", pyproject}, {"main.py", ""}});
  const Plan b = plan_for(beside);
  CHECK(b.gpu);
  CHECK(b.final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
  CHECK(explains(b, "the project's own dependencies, installed with it: torch==2.6.0"));
  const std::string df = render_plan(b).dockerfile;
  CHECK(df.find("pip install -r requirements.txt") != std::string::npos);
  // With its dependencies, not --no-deps: else torch never reaches the image.
  CHECK(df.find("pip install .\n") != std::string::npos);
  CHECK(df.find("--no-deps") == std::string::npos);

  // "-e .[gpu]" in the requirements installs the project with that extra.
  ProjectDir editable(
      {{"requirements.txt", "-e .[gpu]\n"}, {"pyproject.toml", pyproject}, {"main.py", ""}});
  const Plan e = plan_for(editable);
  CHECK(e.gpu);
  CHECK(e.final_image == "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04");  // onnxruntime 1.18
  CHECK(explains(e, "installs the project itself"));

  // A version the requirements pin stays theirs.
  ProjectDir pinned(
      {{"requirements.txt", "torch==2.4.1\n"}, {"pyproject.toml", pyproject}, {"main.py", ""}});
  CHECK(explains(plan_for(pinned), "torch 2.4"));

  // Without requirements files nothing changes: the deps get their own layer.
  ProjectDir alone({{"pyproject.toml", pyproject}, {"main.py", ""}});
  CHECK(render_plan(plan_for(alone)).dockerfile.find("pip install --no-deps .") !=
        std::string::npos);
}

TEST_CASE("gen: a -c constraints file pins what the requirements name, and installs nothing") {
  ProjectDir p({{"requirements.txt", "-c constraints.txt\ntorch\n"},
                {"constraints.txt", "torch==2.4.1\ntensorflow==2.13.1\n"},
                {"main.py", ""}});
  const Plan plan = plan_for(p);
  // torch 2.4.1 (its newest 12.x build is CUDA 12.4), not "unpinned, the
  // newest" (2.11, CUDA 12.9 and a driver of 575).
  CHECK_FALSE(mentions(plan.warnings, "not pinned"));
  CHECK(explains(plan, "constrains torch"));
  CHECK(plan.final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
  // tensorflow is only constrained, never installed: it decides nothing.
  CHECK_FALSE(plan.cudnn);
  CHECK_FALSE(explains(plan, "tensorflow==2.13.1: GPU"));
  // pip reads the constraints file itself, so the build copies it.
  CHECK(std::count(plan.requirement_files.begin(), plan.requirement_files.end(),
                   "constraints.txt") == 1);
}

TEST_CASE("gen: requirements with a byte-order mark, from git, or from the project's own wheels") {
  ProjectDir bom({{"requirements.txt", "\xEF\xBB\xBFtorch==2.6.0\n"}, {"main.py", ""}});
  CHECK(plan_for(bom).final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");

  // pip clones a VCS URL with git: the builder has it, the final stage not.
  for (const char* line : {"git+https://github.com/org/lib.git@v1.0#egg=lib\n",
                           "lib @ git+https://github.com/org/lib.git@v1.0\n",
                           "-e git+https://github.com/org/lib.git#egg=lib\n"}) {
    CAPTURE(line);
    for (const char* torch : {"torch==2.6.0\n", "numpy==2.1.3\n"}) {
      CAPTURE(torch);
      ProjectDir vcs({{"requirements.txt", std::string(torch) + line}, {"main.py", ""}});
      const Plan plan = plan_for(vcs);
      const std::string df = render_plan(plan).dockerfile;
      const auto final_stage = df.rfind("\nFROM ");
      const auto git = df.find(" git=1:");
      REQUIRE(git != std::string::npos);
      CHECK(git < final_stage);
      CHECK(df.find(" git=", final_stage) == std::string::npos);
    }
  }
  ProjectDir plain({{"requirements.txt", "numpy==2.1.3\n"}, {"main.py", ""}});
  CHECK(render_plan(plan_for(plain)).dockerfile.find(" git=") == std::string::npos);

  // A wheel under dist/ (which .dockerignore leaves out) stays in the context.
  ProjectDir wheel({{"requirements.txt", "./dist/mylib-0.1-py3-none-any.whl\nlibs/common/\n"},
                    {"dist/mylib-0.1-py3-none-any.whl", "PK"},
                    {"libs/common/setup.py", ""},
                    {"main.py", ""}});
  const std::string ignore = render_plan(plan_for(wheel)).dockerignore;
  CHECK(ignore.find("\ndist\n") != std::string::npos);
  const auto kept = ignore.find("\n!dist/mylib-0.1-py3-none-any.whl\n");
  CHECK(kept != std::string::npos);
  CHECK(kept > ignore.find("\ndist\n"));
  CHECK(ignore.find("\n!libs/common\n") != std::string::npos);
}

TEST_CASE("gen: a Pipfile alone is refused, beside requirements it is named as not read") {
  const std::string pipfile =
      "[packages]\ntorch = \"==2.7.1\"\nflask = \"*\"\n[requires]\npython_version = \"3.11\"\n";
  ProjectDir alone({{"Pipfile", pipfile}, {"app.py", "from flask import Flask\n"}});
  CHECK_THROWS_WITH(plan_for(alone),
                    Catch::Contains("Pipfile") && Catch::Contains("pipenv requirements"));
  ProjectDir beside(
      {{"Pipfile", pipfile}, {"requirements.txt", "torch==2.6.0\n"}, {"main.py", ""}});
  const Plan plan = plan_for(beside);
  CHECK(plan.gpu);
  CHECK(mentions(plan.warnings, "Pipfile: not read"));
}

TEST_CASE("gen: a conda environment's pip: packages are never dropped without a word") {
  const std::string env =
      "name: e\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n    - torch==2.3.1\n"
      "    - -r requirements-extra.txt\n";
  ProjectDir p(
      {{"environment.yml", env}, {"requirements-extra.txt", "einops==0.8.0\n"}, {"main.py", ""}});
  const Plan plan = plan_for(p);
  CHECK(mentions(plan.warnings, "torch (line 6)"));
  CHECK(mentions(plan.warnings, "pip: section"));
  // Listed in pip's files too: nothing to say.
  ProjectDir listed({{"environment.yml", env},
                     {"requirements-extra.txt", "torch==2.3.1\neinops==0.8.0\n"},
                     {"main.py", ""}});
  CHECK_FALSE(mentions(plan_for(listed).warnings, "pip: section"));
  // Alone, the refusal names the pip: packages too.
  ProjectDir alone({{"environment.yml", "name: e\ndependencies:\n  - pip:\n    - torch==2.3.1\n"},
                    {"main.py", ""}});
  CHECK_THROWS_WITH(plan_for(alone), Catch::Contains("torch (pip)"));
}

TEST_CASE("gen: an app made by a factory function is served through the factory") {
  const std::string flask =
      "from flask import Flask\n\ndef create_app(config=None):\n    app = Flask(__name__)\n"
      "    return app\n";
  ProjectDir served({{"requirements.txt", "flask==3.1.0\ngunicorn==23.0.0\n"}, {"app.py", flask}});
  CHECK(plan_for(served).cmd ==
        std::vector<std::string>{"gunicorn", "--bind", "0.0.0.0:8000", "app:create_app()"});
  ProjectDir dev({{"requirements.txt", "flask==3.1.0\n"}, {"app.py", flask}});
  CHECK(plan_for(dev).cmd[2] == "app:create_app()");
  const std::string fastapi =
      "from fastapi import FastAPI\n\ndef build() -> FastAPI:\n    api = FastAPI()\n    return "
      "api\n";
  ProjectDir factory(
      {{"requirements.txt", "fastapi==0.115.6\nuvicorn==0.34.0\n"}, {"main.py", fastapi}});
  const auto cmd = plan_for(factory).cmd;
  REQUIRE(cmd.size() >= 3);
  CHECK(cmd[1] == "main:build");
  CHECK(cmd[2] == "--factory");
  // A module-level app after a function is still the module's.
  ProjectDir module_level(
      {{"requirements.txt", "fastapi==0.115.6\nuvicorn==0.34.0\n"},
       {"main.py", "from fastapi import FastAPI\ndef helper():\n    pass\napp = FastAPI()\n"}});
  CHECK(plan_for(module_level).cmd[1] == "main:app");
  // A function that makes an app and serves it itself (A1111's api_only)
  // is no factory: the app is not gen's to serve.
  ProjectDir serves_itself(
      {{"requirements.txt", "fastapi==0.115.6\nuvicorn==0.34.0\n"},
       {"webui.py",
        "def api_only():\n    from fastapi import FastAPI\n    app = FastAPI()\n"
        "    launch(app, port=7861)\n\n\ndef webui():\n    return 1\n"},
       {"launch.py", "import webui\n"}});
  // With two scripts at the top and neither a conventional name, that leaves
  // no entrypoint, said loudly.
  CHECK_THROWS_WITH(plan_for(serves_itself), Catch::Contains("found no entrypoint"));
}

TEST_CASE("gen: a script of a src/ layout that nothing installs imports from src/") {
  const std::string pyproject =
      "[project]\nname='mytool'\nversion='0.1'\ndependencies=['click']\n"
      "[project.scripts]\nmytool='mytool.cli:main'\n";
  ProjectDir src({{"pyproject.toml", pyproject},
                  {"src/mytool/__init__.py", ""},
                  {"src/mytool/cli.py", "def main(): pass\n"}});
  const Plan plan = plan_for(src);
  CHECK(plan.cmd.back() == "import mytool.cli; mytool.cli.main()");
  CHECK(std::count(plan.env.begin(), plan.env.end(), "PYTHONPATH=src") == 1);
  ProjectDir flat({{"pyproject.toml", pyproject},
                   {"mytool/__init__.py", ""},
                   {"mytool/cli.py", "def main(): pass\n"}});
  const Plan flat_plan = plan_for(flat);
  CHECK(std::count(flat_plan.env.begin(), flat_plan.env.end(), "PYTHONPATH=src") == 0);
}

TEST_CASE("gen: review cases of the pip-file readers") {
  // A Pipfile of development tools, or beside a CUDA C++ project, asks nothing.
  ProjectDir cpp({{"CMakeLists.txt",
                   "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\n"
                   "add_executable(k main.cu)\n"},
                  {"main.cu", "int main() {}\n"},
                  {"Pipfile", "[packages]\nnumpy = \"*\"\n"}});
  CHECK(plan_for(cpp).kind != "python-cpu");
  ProjectDir dev_only({{"Pipfile", "[dev-packages]\nblack = \"*\"\n"}, {"main.py", ""}});
  CHECK_NOTHROW(plan_for(dev_only));

  // Extras are read from the path, not from a comment after it; a
  // "name[extra] @ file:." requirement keeps its extras.
  const std::string pyproject =
      "[project]\nname='pkg'\nversion='0.1'\ndependencies=['numpy']\n"
      "[project.optional-dependencies]\ngpu=['torch==2.6.0']\n"
      "[build-system]\nrequires=['setuptools']\nbuild-backend='setuptools.build_meta'\n";
  ProjectDir comment({{"requirements.txt", "-e .  # not [gpu] here\n"},
                      {"pyproject.toml", pyproject},
                      {"main.py", ""}});
  CHECK_FALSE(plan_for(comment).gpu);
  ProjectDir named({{"requirements.txt", "pkg[gpu] @ file:.\n"},
                    {"pyproject.toml", pyproject},
                    {"main.py", ""}});
  CHECK(plan_for(named).gpu);

  // Constraints hold for the project's own dependencies too, in the
  // detection and in the `pip install .` that brings them.
  ProjectDir constrained(
      {{"requirements.txt", "-c constraints.txt\n-e .\n"},
       {"constraints.txt", "torch==2.4.1\n"},
       {"pyproject.toml",
        "[project]\nname='pkg'\nversion='0.1'\ndependencies=['torch']\n"
        "[build-system]\nrequires=['setuptools']\nbuild-backend='setuptools.build_meta'\n"},
       {"main.py", ""}});
  const Plan c = plan_for(constrained);
  CHECK(c.final_image == "nvidia/cuda:12.4.1-base-ubuntu22.04");
  CHECK(c.project_install_args.find("-c constraints.txt") != std::string::npos);

  // A quoted pip: item of a conda environment is named like any other.
  ProjectDir quoted({{"environment.yml",
                      "dependencies:\n  - pip\n  - pip:\n    - \"wandb==0.16\"\n    - 'einops'\n"},
                     {"requirements.txt", "numpy==2.1.3\n"},
                     {"main.py", ""}});
  const Plan q = plan_for(quoted);
  CHECK(mentions(q.warnings, "wandb (line 4)"));
  CHECK(mentions(q.warnings, "einops (line 5)"));
}

TEST_CASE("gen: a factory whose signature spans lines is still the factory") {
  ProjectDir p({{"requirements.txt", "flask==3.1.0\ngunicorn==23.0.0\n"},
                {"app.py",
                 "from flask import Flask\n\n\ndef create_app(\n    config=None,\n) -> Flask:\n"
                 "    app = Flask(__name__)\n    return app\n"}});
  CHECK(plan_for(p).cmd.back() == "app:create_app()");
}

TEST_CASE("gen: a web app in the project's package, flat or under src/, is found") {
  const std::string main = "from fastapi import FastAPI\napp = FastAPI()\n";
  const std::string deps = "dependencies=['fastapi','uvicorn']\n";
  ProjectDir installed({{"pyproject.toml", "[project]\nname='svc'\nversion='0.1'\n" + deps +
                                               "[build-system]\nrequires=['setuptools']\n"
                                               "build-backend='setuptools.build_meta'\n"},
                        {"src/svc/__init__.py", ""},
                        {"src/svc/main.py", main},
                        {"tests/__init__.py", ""},
                        {"tests/main.py", main}});
  const Plan i = plan_for(installed);
  CHECK(i.cmd ==
        std::vector<std::string>{"uvicorn", "svc.main:app", "--host", "0.0.0.0", "--port", "8000"});
  CHECK(i.env.empty());  // installed into the venv: importable anywhere
  ProjectDir loose({{"pyproject.toml", "[project]\nname='svc'\nversion='0.1'\n" + deps},
                    {"src/svc/__init__.py", ""},
                    {"src/svc/main.py", main}});
  const Plan l = plan_for(loose);
  CHECK(l.cmd[1] == "svc.main:app");
  CHECK(std::count(l.env.begin(), l.env.end(), "PYTHONPATH=src") == 1);
  ProjectDir flat({{"requirements.txt", "fastapi==0.115.6\nuvicorn==0.34.0\n"},
                   {"svc/__init__.py", ""},
                   {"svc/api.py", main}});
  CHECK(plan_for(flat).cmd[1] == "svc.api:app");
}

TEST_CASE("gen: --gpu compiles the project's CUDA code for those GPUs alone") {
  ProjectDir p(
      {{"CMakeLists.txt", "project(demo LANGUAGES CXX CUDA)\nadd_executable(demo main.cu)\n"},
       {"main.cu", ""}});
  const Project project = detect_project(p.dir);
  Options o;
  o.target_gpus = {"h100,L4", "H100"};  // a list, repeated, any case: two GPUs
  const Plan plan = make_plan(project, o);
  // L4 is compute capability 8.9, H100 9.0 (data/gpus.json): SASS for each,
  // PTX for the newest.
  CHECK(plan.cuda_architectures == "89-real;90");
  CHECK(plan.nvcc_arch_flags ==
        "-gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90 "
        "-gencode arch=compute_90,code=compute_90");
  CHECK(explains(plan, "compiled for H100, L4: SASS for sm_89, sm_90"));
  // A project that sets its own architectures is overridden only by --gpu.
  ProjectDir own({{"CMakeLists.txt",
                   "project(demo LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80)\n"
                   "add_executable(demo main.cu)\n"},
                  {"main.cu", ""}});
  CHECK(make_plan(detect_project(own.dir), {}).cuda_architectures.empty());
  Options b;
  b.target_gpus = {"B300"};
  b.cuda = "13.0";
  CHECK(make_plan(detect_project(own.dir), b).cuda_architectures == "103");
}

TEST_CASE("gen: --gpu refuses a CUDA release with no kernels for a GPU, naming the one that has") {
  ProjectDir p(
      {{"CMakeLists.txt", "project(demo LANGUAGES CXX CUDA)\nadd_executable(demo main.cu)\n"},
       {"main.cu", ""}});
  const Project project = detect_project(p.dir);
  Options o;
  o.cuda = "12.4";
  o.target_gpus = {"H100", "RTX-5090"};
  // sm_120 is first compiled by CUDA 12.8 (data/cuda-images.json).
  CHECK_THROWS_WITH(make_plan(project, o),
                    Catch::Contains("RTX-5090 (sm_120, first built by CUDA 12.8)") &&
                        Catch::Contains("pass --cuda 12.8 or newer") &&
                        Catch::Contains("torch 2.7"));
  o.target_gpus = {"B300"};  // sm_103: 12.9
  o.cuda = "12.8";
  CHECK_THROWS_WITH(make_plan(project, o), Catch::Contains("--cuda 12.9"));
  o.target_gpus = {"V100"};
  CHECK_THROWS_WITH(make_plan(project, o), Catch::Contains("unknown GPU"));
  // A torch pinned to CUDA 12.4 wheels has no Blackwell kernels either.
  ProjectDir torch({{"requirements.txt", "torch==2.5.1\n"}, {"main.py", "import torch\n"}});
  Options blackwell;
  blackwell.target_gpus = {"B200"};
  CHECK_THROWS_WITH(plan_for(torch, blackwell),
                    Catch::Contains("B200 (sm_100, first built by CUDA 12.8)"));
  // A torch extension is built for the targets; a CPU project only hears it runs anywhere.
  ProjectDir ext({{"requirements.txt", "torch==2.6.0\n"},
                  {"setup.py",
                   "from setuptools import setup\nfrom torch.utils.cpp_extension import "
                   "BuildExtension, CUDAExtension\nsetup(name='ops', "
                   "ext_modules=[CUDAExtension('ops._C', ['k.cu'])])\n"},
                  {"k.cu", "__global__ void k() {}\n"},
                  {"main.py", "import ops\n"}});
  Options a10;
  a10.target_gpus = {"A10", "T4"};
  CHECK(plan_for(ext, a10).torch_cuda_arch_list == "7.5;8.6+PTX");
  ProjectDir cpu({{"requirements.txt", "fastapi\n"}, {"main.py", "import fastapi\n"}});
  const Plan cpu_plan = plan_for(cpu, a10);
  CHECK(std::any_of(cpu_plan.warnings.begin(), cpu_plan.warnings.end(), [](const std::string& w) {
    return w.find("CPU image and runs on any of them") != std::string::npos;
  }));
}

TEST_CASE("gen: a declared apt package is installed by the name the image's OS gives it") {
  const std::string apt = "libgl1-mesa-glx\nlibasound2\nlibglib2.0-0=2.72.*\nffmpeg\n";
  ProjectDir p({{"requirements.txt", kTorchApi}, {"apt.txt", apt}, {"main.py", kFastApiMain}});
  Options noble;
  noble.cuda = "12.6";
  noble.os = "ubuntu24.04";
  const Plan gpu = plan_for(p, noble);
  REQUIRE(gpu.os == "ubuntu24.04");
  // A transitional package Ubuntu 24.04 removed: what it stood for.
  CHECK_FALSE(mentions(gpu.final_apt, "libgl1-mesa-glx"));
  CHECK(std::find(gpu.final_apt.begin(), gpu.final_apt.end(), "libgl1") != gpu.final_apt.end());
  CHECK(std::find(gpu.final_apt.begin(), gpu.final_apt.end(), "libglx-mesa0") !=
        gpu.final_apt.end());
  CHECK(explains(gpu, "apt.txt:1: libgl1-mesa-glx: ubuntu24.04 no longer has this transitional"));
  // The same soname under its t64 name; a pinned package is left as written.
  CHECK(std::find(gpu.final_apt.begin(), gpu.final_apt.end(), "libasound2t64") !=
        gpu.final_apt.end());
  CHECK(std::find(gpu.final_apt.begin(), gpu.final_apt.end(), "libglib2.0-0=2.72.*") !=
        gpu.final_apt.end());
  CHECK(std::find(gpu.final_apt.begin(), gpu.final_apt.end(), "ffmpeg") != gpu.final_apt.end());
  // Ubuntu 22.04 still has both names.
  Options jammy;
  jammy.cuda = "12.4";
  jammy.os = "ubuntu22.04";
  const Plan older = plan_for(p, jammy);
  REQUIRE(older.os == "ubuntu22.04");
  CHECK(std::find(older.final_apt.begin(), older.final_apt.end(), "libgl1-mesa-glx") !=
        older.final_apt.end());
  CHECK(std::find(older.final_apt.begin(), older.final_apt.end(), "libasound2") !=
        older.final_apt.end());
}

TEST_CASE("gen: cog.yaml's system packages and Python are the project's, its predictor is said") {
  const std::string cog =
      "# Cog's config\nbuild:\n  gpu: true\n  python_version: \"3.11\"\n  system_packages:\n"
      "    - \"ffmpeg\"\n    - libsndfile1  # audio\n    - \"not a package\"\n  run:\n"
      "    - curl -o /usr/local/bin/pget -L \"https://example.invalid/pget\"\n"
      "predict: \"predict.py:Predictor\"\n";
  ProjectDir p({{"requirements.txt", kTorchApi},
                {"pyproject.toml", "[project]\nname='svc'\nversion='1'\nrequires-python='>=3.9'\n"},
                {"cog.yaml", cog},
                {"main.py", kFastApiMain},
                {"predict.py", "class Predictor:\n    pass\n"}});
  Plan plan = plan_for(p);
  CHECK(mentions(plan.final_apt, "ffmpeg"));
  CHECK(mentions(plan.final_apt, "libsndfile1"));
  CHECK(explains(plan, "cog.yaml:7: libsndfile1: installed with apt in the final stage"));
  CHECK(explains(plan, "cog.yaml:8: warning: 'not a package' in build.system_packages"));
  CHECK(plan.python == "3.11");  // over pyproject's range
  CHECK(mentions(plan.warnings,
                 "cog.yaml:11: cog.yaml's predictor predict.py:Predictor is "
                 "served by Cog's HTTP server on port 5000"));
  Options cog_server;
  cog_server.cmd = {"python", "-m", "cog.server.http"};
  CHECK_FALSE(mentions(plan_for(p, cog_server).warnings, "predictor"));

  // A Python no image has: said, and the dependencies choose; packages only
  // in cog.yaml are said to be missing.
  ProjectDir old({{"cog.yaml",
                   "build:\n  python_version: '3.8'\n  python_packages:\n"
                   "    - torch==1.12.1\npredict: predict.py:Predictor\n"},
                  {"main.py", "print('hi')\n"}});
  plan = plan_for(old);
  CHECK(mentions(plan.warnings,
                 "cog.yaml:2 build.python_version asks for Python ==3.8.*, which "
                 "gen builds on no image for"));
  CHECK(mentions(plan.warnings, "build.python_packages lists 1 package(s)"));

  // Cog's first format (environment:, model:) and a patch version.
  ProjectDir first({{"requirements.txt", kTorchApi},
                    {"cog.yaml",
                     "environment:\n  python_version: \"3.10.12\"\n  system_packages:\n"
                     "  # - \"libx11-6\"\n  - \"ffmpeg\"\nmodel: \"model.py:Model\"\n"},
                    {"main.py", kFastApiMain}});
  plan = plan_for(first);
  CHECK(plan.python == "3.10");
  CHECK(mentions(plan.final_apt, "ffmpeg"));
  CHECK_FALSE(mentions(plan.final_apt, "libx11-6"));
  CHECK(mentions(plan.warnings, "cog.yaml:6: cog.yaml's predictor model.py:Model"));

  // A project whose packages only cog.yaml lists: refused, saying how.
  ProjectDir only({{"cog.yaml",
                    "build:\n  python_packages:\n    - torch==2.6.0\n"
                    "predict: predict.py:Predictor\n"},
                   {"predict.py", "from cog import BasePredictor\n"}});
  CHECK_THROWS_WITH(detect_project(only.dir),
                    Catch::Contains("write them to requirements.txt") &&
                        Catch::Contains("--cmd 'python -m cog.server.http' --port 5000"));
}

TEST_CASE("gen: pdm.lock and pylock.toml pin the declared dependencies pip installs") {
  // PDM's lock: pip does not read it, so without the pins the image (and
  // gen's CUDA choice) would take the newest torch that ">=2.1" allows.
  ProjectDir pdm(
      {{"pyproject.toml",
        "[project]\nname='svc'\nversion='1'\nrequires-python='>=3.10'\n"
        "dependencies=['torch>=2.1', 'fastapi[standard]>=0.100; python_version>=\"3.9\"',"
        " 'uvicorn>=0.20']\n"},
       {"pdm.lock",
        "[metadata]\ngroups=['default']\nlock_version='4.5.0'\n"
        "[[package]]\nname='torch'\nversion='2.3.1'\ngroups=['default']\n"
        "[[package]]\nname='FastAPI'\nversion='0.110.0'\ngroups=['default']\n"
        "[[package]]\nname='uvicorn'\nversion='0.29.0'\ngroups=['default']\n"
        "[[package]]\nname='sympy'\nversion='1.12'\ngroups=['default']\n"},
       {"main.py", "from fastapi import FastAPI\napp = FastAPI()\n"}});
  const Plan a = plan_for(pdm);
  CHECK(a.install_mode == "pyproject");
  CHECK(mentions(a.pyproject_deps, "torch==2.3.1"));
  CHECK(mentions(a.pyproject_deps, "uvicorn==0.29.0"));
  // Extras and markers kept, the name normalised for the lookup.
  CHECK(mentions(a.pyproject_deps, "fastapi[standard]==0.110.0 ; python_version>=\"3.9\""));
  CHECK(explains(a, "pdm.lock: pins pyproject.toml's 3 dependencies"));
  CHECK(explains(a, "the 1 other packages it locks resolve afresh"));
  // torch 2.3.1's PyPI wheels are built for CUDA 12.1, not the newest release.
  CHECK(a.final_image.find("nvidia/cuda:12.1") == 0);

  // PEP 751's pylock.toml; a package locked at two versions (one per
  // platform) pins neither, and a declared package the lock lacks is an
  // out-of-date lock, said.
  ProjectDir pylock(
      {{"pyproject.toml",
        "[project]\nname='svc'\nversion='1'\n"
        "dependencies=['numpy>=1.26', 'scipy', 'requests>=2']\n"},
       {"pylock.toml",
        "lock-version='1.0'\ncreated-by='uv'\n"
        "[[packages]]\nname='numpy'\nversion='2.1.3'\nmarker=\"sys_platform == 'linux'\"\n"
        "[[packages]]\nname='numpy'\nversion='1.26.4'\nmarker=\"sys_platform == 'darwin'\"\n"
        "[[packages]]\nname='scipy'\nversion='1.14.1'\n"},
       {"main.py", "import numpy\n"}});
  const Plan b = plan_for(pylock);
  CHECK(mentions(b.pyproject_deps, "scipy==1.14.1"));
  CHECK(mentions(b.pyproject_deps, "numpy>=1.26"));
  CHECK_FALSE(mentions(b.pyproject_deps, "numpy=="));
  CHECK(mentions(b.warnings, "requests is declared in pyproject.toml but not in the lock"));

  // Rye's requirements.lock is pip's format: NAME==VERSION lines.
  ProjectDir rye(
      {{"pyproject.toml", "[project]\nname='svc'\nversion='1'\ndependencies=['torch>=2.1']\n"},
       {"requirements.lock",
        "# generated by rye\n-e file:.\ntorch==2.3.1\n    # via svc\n"
        "sympy==1.12 \\\n    --hash=sha256:00\n"},
       {"main.py", "import torch\n"}});
  const Plan r = plan_for(rye);
  CHECK(mentions(r.pyproject_deps, "torch==2.3.1"));
  CHECK(explains(r, "requirements.lock: pins pyproject.toml's 1 dependency to"));

  // With requirements files, those decide what is installed: no pins.
  ProjectDir reqs({{"pyproject.toml", "[project]\nname='svc'\nversion='1'\n"},
                   {"requirements.txt", "torch>=2.1\n"},
                   {"pdm.lock", "[[package]]\nname='torch'\nversion='2.3.1'\n"},
                   {"train.py", ""}});
  const Plan c = plan_for(reqs);
  CHECK(c.install_mode == "requirements");
  CHECK_FALSE(explains(c, "pdm.lock: pins"));
}
