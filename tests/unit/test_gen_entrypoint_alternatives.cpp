// When gen infers a project's command, the other programs the project holds
// are named in a warning (src/gen/detect_entrypoint_alternatives.cpp): a
// guess among several is said, never silent. A command the project declares,
// or an app in a conventional file with only scripts beside it, is no guess.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "imgsmith/gen/gen.hpp"
#include "project_tree.hpp"

using namespace imgsmith::gen;

namespace {

struct EntrypointTree : imgsmith::testing::ProjectTree {
  using ProjectTree::ProjectTree;
  Plan plan() const { return make_plan(detect_project(dir), Options{}); }
};

// The warning about other programs, or "" when there is none.
std::string alternatives_warning(const Plan& plan) {
  for (const auto& w : plan.warnings)
    if (w.find("gen guessed the command") != std::string::npos) return w;
  return "";
}

const char* const kFastApiApp = "from fastapi import FastAPI\napp = FastAPI()\n";
const char* const kLaunchedGradio =
    "import gradio as gr\ndemo = gr.Interface(fn=str, inputs='text', outputs='text')\n"
    "if __name__ == '__main__':\n    demo.launch()\n";
const char* const kMainScript = "import sys\n\nif __name__ == \"__main__\":\n    print(sys.argv)\n";

}  // namespace

TEST_CASE("gen entrypoint: a second server in the project is named, with how to choose") {
  EntrypointTree t({{"requirements.txt", "fastapi\nuvicorn\ngradio\n"},
                    {"openai_api.py", kFastApiApp},
                    {"web_demo.py", kLaunchedGradio},
                    {"cli_demo.py", kMainScript}});
  const Plan plan = t.plan();
  REQUIRE(plan.cmd.front() == "uvicorn");
  const std::string w = alternatives_warning(plan);
  CHECK(w.find("web_demo.py (a Gradio app)") != std::string::npos);
  // openai_api.py is no conventional name: gen found it by its code, so the
  // scripts at the top are candidates too.
  CHECK(w.find("cli_demo.py (a script)") != std::string::npos);
  CHECK(w.find("2 other programs") != std::string::npos);
  CHECK(w.find("--cmd") != std::string::npos);
  CHECK(w.find("port") != std::string::npos);
  CHECK(w.find("openai_api.py (") == std::string::npos);  // not its own alternative
}

TEST_CASE("gen entrypoint: an app in a conventional file beside plain scripts is no guess") {
  EntrypointTree t({{"requirements.txt", "fastapi\nuvicorn\n"},
                    {"app.py", kFastApiApp},
                    {"train.py", kMainScript},
                    {"ui/layout.py", "import gradio as gr\nblocks = None\n"}});
  const Plan plan = t.plan();
  REQUIRE(plan.cmd.front() == "uvicorn");
  // train.py is a script beside a server by its conventional name, and a
  // module that imports gradio without launching serves nothing.
  CHECK(alternatives_warning(plan).empty());

  // A second app that launches is another server, whatever the first's name.
  EntrypointTree two({{"requirements.txt", "fastapi\nuvicorn\ngradio\n"},
                      {"app.py", kFastApiApp},
                      {"ui/demo_ui.py", kLaunchedGradio}});
  CHECK(alternatives_warning(two.plan()).find("ui/demo_ui.py (a Gradio app)") != std::string::npos);
}

TEST_CASE("gen entrypoint: a script chosen by its name lists the other runnable scripts") {
  EntrypointTree t({{"requirements.txt", "torch\n"},
                    {"train.py", kMainScript},
                    {"deepy.py", kMainScript},
                    {"setup.py", kMainScript},
                    {"helpers.py", "def f():\n    return 1\n"}});
  const Plan plan = t.plan();
  REQUIRE(plan.cmd == std::vector<std::string>{"python", "train.py"});
  const std::string w = alternatives_warning(plan);
  CHECK(w.find("deepy.py (a script)") != std::string::npos);
  CHECK(w.find("setup.py") == std::string::npos);    // packaging, not a program
  CHECK(w.find("helpers.py") == std::string::npos);  // no __main__ guard: a module
  CHECK(w.find("1 other program ") != std::string::npos);
}

TEST_CASE(
    "gen entrypoint: CUDA and C programs a Makefile builds beside a Python script are named") {
  EntrypointTree t(
      {{"requirements.txt", "torch\nnumpy\n"},
       {"train_gpt2.py", kMainScript},
       {"Makefile", "train_gpt2cu: train_gpt2.cu\n\tnvcc -O3 $< -o $@\n"},
       {"train_gpt2.cu", "#include <cstdio>\nint main(int argc, char** argv) { return 0; }\n"},
       {"common.h", "int helper();\n"}});
  const std::string w = alternatives_warning(t.plan());
  CHECK(w.find("train_gpt2.cu (a program the Makefile build makes)") != std::string::npos);
  CHECK(w.find("common.h") == std::string::npos);

  // Without a Makefile or CMakeLists.txt nothing builds the source: not named.
  EntrypointTree loose({{"requirements.txt", "torch\nnumpy\n"},
                        {"train_gpt2.py", kMainScript},
                        {"train_gpt2.cu", "int main() { return 0; }\n"}});
  CHECK(alternatives_warning(loose.plan()).empty());
}

TEST_CASE("gen entrypoint: a declared command and the project's tests are not second-guessed") {
  EntrypointTree declared({{"requirements.txt", "fastapi\nuvicorn\ngunicorn\n"},
                           {"Procfile", "web: uvicorn svc:app --host 0.0.0.0 --port $PORT\n"},
                           {"svc.py", kFastApiApp},
                           {"other_api.py", kFastApiApp}});
  CHECK(alternatives_warning(declared.plan()).empty());

  // Apps in tests, examples and a nested project of its own are not this
  // image's programs.
  EntrypointTree tests({{"requirements.txt", "fastapi\nuvicorn\n"},
                        {"server.py", kFastApiApp},
                        {"tests/test_api.py", kFastApiApp},
                        {"examples/mini.py", kFastApiApp},
                        {"services/other/requirements.txt", "flask\n"},
                        {"services/other/web.py", kFastApiApp}});
  CHECK(alternatives_warning(tests.plan()).empty());
}

TEST_CASE("gen entrypoint: the script that launches the UI, not the module that builds it") {
  // A module that imports gradio and launches nothing is a piece of the UI;
  // the script that calls launch() on it is the program, and listens on
  // Gradio's port once told to (AUTOMATIC1111's webui.py shape).
  EntrypointTree top(
      {{"requirements.txt", "gradio==4.19\ntorch\n"},
       {"modules/__init__.py", ""},
       {"modules/ui.py", "import gradio as gr\ndef create_ui():\n    return gr.Blocks()\n"},
       {"webui.py",
        "from modules import ui\nif __name__ == '__main__':\n    ui.create_ui().launch()\n"},
       {"launch.py", kMainScript}});
  const Plan plan = top.plan();
  CHECK(plan.cmd == std::vector<std::string>{"python", "webui.py"});
  CHECK(plan.port == 7860);
  CHECK(alternatives_warning(plan).find("launch.py (a script)") != std::string::npos);

  // The same launch deeper in the tree (fish-speech's tools/run_webui.py).
  EntrypointTree deep(
      {{"requirements.txt", "gradio\n"},
       {"tools/__init__.py", ""},
       {"tools/webui/__init__.py", "import gradio as gr\ndef build():\n    return gr.Blocks()\n"},
       {"tools/run_webui.py",
        "from tools.webui import build\nif __name__ == '__main__':\n"
        "    app = build()\n    app.launch(show_api=True)\n"}});
  const Plan deep_plan = deep.plan();
  CHECK(deep_plan.cmd == std::vector<std::string>{"python", "tools/run_webui.py"});
  CHECK(deep_plan.port == 7860);

  // Without Gradio among the dependencies, launch() is someone else's.
  EntrypointTree other({{"requirements.txt", "numpy\n"},
                        {"tools/__init__.py", ""},
                        {"tools/go.py", "import rocket\nrocket.launch()\n"},
                        {"run.py", kMainScript}});
  CHECK(other.plan().cmd == std::vector<std::string>{"python", "run.py"});
}

TEST_CASE("gen entrypoint: the script named after the project's package runs it") {
  EntrypointTree t({{"requirements.txt", "onnxruntime\nnumpy\n"},
                    {"facefusion.py",
                     "from facefusion import core\nif __name__ == '__main__':\n    core.cli()\n"},
                    {"facefusion/__init__.py", ""},
                    {"facefusion/core.py", "def cli():\n    pass\n"},
                    {"install.py", kMainScript}});
  const Plan plan = t.plan();
  CHECK(plan.cmd == std::vector<std::string>{"python", "facefusion.py"});
  CHECK(alternatives_warning(plan).find("install.py (a script)") != std::string::npos);
}

TEST_CASE("gen entrypoint: a web framework among the dependencies with no port in sight is said") {
  // The image would publish nothing while the app may serve Gradio on 7860.
  EntrypointTree t({{"requirements.txt", "gradio==4.41.0\nonnxruntime\n"},
                    {"facefusion.py",
                     "from facefusion import core\nif __name__ == '__main__':\n    core.cli()\n"},
                    {"facefusion/__init__.py", ""},
                    {"facefusion/core.py", "def cli():\n    pass\n"}});
  const Plan plan = t.plan();
  REQUIRE(plan.port == 0);
  std::string said;
  for (const auto& w : plan.warnings)
    if (w.find("a web server") != std::string::npos) said = w;
  CHECK(said.find("depends on gradio") != std::string::npos);
  CHECK(said.find("7860") != std::string::npos);  // from data/servers.json's row
  CHECK(said.find("--port") != std::string::npos);

  // A port gen found, or no web framework at all, needs no such warning.
  EntrypointTree served({{"requirements.txt", "gradio\n"}, {"app.py", kLaunchedGradio}});
  EntrypointTree batch({{"requirements.txt", "numpy\n"}, {"run.py", kMainScript}});
  for (const Plan& p : {served.plan(), batch.plan()})
    for (const auto& w : p.warnings) CHECK(w.find("a web server") == std::string::npos);
}

TEST_CASE("gen: a project that is itself a package whose GPU use is a build flag says so") {
  // llama-cpp-python's own repository: its source builds a CPU llama.cpp
  // unless CMAKE_ARGS say otherwise, and gen does not set them for it.
  EntrypointTree own(
      {{"pyproject.toml",
        "[build-system]\nrequires=['scikit-build-core']\nbuild-backend='scikit_build_core.build'\n"
        "[project]\nname='llama_cpp_python'\nversion='0.3.0'\ndependencies=['numpy']\n"},
       {"llama_cpp/__init__.py", ""},
       {"llama_cpp/server/__init__.py", ""},
       {"llama_cpp/server/__main__.py", kMainScript}});
  const Plan plan = own.plan();
  REQUIRE_FALSE(plan.gpu);
  bool said = false;
  for (const auto& w : plan.warnings)
    said = said || w.find(
                       "the project is llama-cpp-python, which runs on the CPU as built from its "
                       "source") != std::string::npos;
  CHECK(said);

  // A project of another name that depends on it gets the table's note, not this warning.
  EntrypointTree user({{"requirements.txt", "llama-cpp-python\n"}, {"run.py", kMainScript}});
  for (const auto& w : user.plan().warnings) CHECK(w.find("the project is") == std::string::npos);
}

TEST_CASE("gen entrypoint: invoke's tasks.py beside the one real script is a helper, not it") {
  EntrypointTree t({{"requirements.txt", "numpy\ninvoke\n"},
                    {"tasks.py", "from invoke import task\n\n@task\ndef lint(c):\n    pass\n"},
                    {"batch_score.py", kMainScript}});
  const Plan plan = t.plan();
  CHECK(plan.cmd == std::vector<std::string>{"python", "batch_score.py"});
  CHECK(alternatives_warning(plan).find("tasks.py") == std::string::npos);
}

TEST_CASE("gen entrypoint: a command whose port is already in a warning is not warned twice") {
  // The console script of an installable project serves with arguments gen
  // cannot see: one warning says so; the framework's own is not added.
  EntrypointTree t({{"pyproject.toml",
                     "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = "
                     "\"setuptools.build_meta\"\n[project]\nname = \"demo-tool\"\nversion = "
                     "\"1.0\"\ndependencies = [\"gradio\"]\n[project.scripts]\ndemo-tool = "
                     "\"demo_tool.cli:main\"\n"},
                    {"demo_tool/__init__.py", ""},
                    {"demo_tool/cli.py", "def main():\n    pass\n"}});
  const Plan plan = t.plan();
  REQUIRE(plan.port == 0);
  int about_port = 0;
  for (const auto& w : plan.warnings)
    if (w.find("publishes no port") != std::string::npos ||
        w.find("listens on no port") != std::string::npos)
      ++about_port;
  CHECK(about_port == 1);
}
