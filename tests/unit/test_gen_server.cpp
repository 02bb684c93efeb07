// Where a container command listens (src/gen/decide_server.cpp): the port
// and address from the command's arguments, the image's environment or the
// server's defaults, and what gen does with a server that binds 127.0.0.1
// only: adds the arguments to a command it found, warns about --cmd.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "decisions.hpp"
#include "image_builder.hpp"
#include "imgsmith/gen/gen.hpp"
#include "project_tree.hpp"

using namespace imgsmith;
using namespace imgsmith::gen;
using imgsmith::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// Rows written here, not read from data/, so that each case states the
// server facts it depends on.
Tables server_rows() {
  Tables t;
  // Designated in ServerFact's order (gen_internal.hpp).
  t.servers = {
      {.name = "uvicorn",
       .programs = {"uvicorn"},
       .modules = {"uvicorn"},
       .default_host = "127.0.0.1",
       .default_port = 8000,
       .port_flags = {"--port"},
       .host_flags = {"--host"},
       .listen_all = {"--host", "0.0.0.0"},
       .source = "uvicorn docs"},
      {.name = "gunicorn",
       .programs = {"gunicorn"},
       .default_host = "127.0.0.1",
       .default_port = 8000,
       .bind_flags = {"-b", "--bind"},
       .listen_all = {"--bind", "0.0.0.0:8000"},
       .source = "gunicorn docs"},
      {.name = "Django runserver",
       .subcommand = "runserver",
       .script = "manage.py",
       .default_host = "127.0.0.1",
       .default_port = 8000,
       .positional_addrport = true,
       .listen_all = {"0.0.0.0:8000"},
       .source = "django docs"},
      {.name = "ComfyUI",
       .script = "main.py",
       .markers = {"comfy", "custom_nodes"},
       .default_host = "127.0.0.1",
       .default_port = 8188,
       .port_flags = {"--port"},
       .bare_listen_flag = "--listen",
       .listen_all = {"--listen", "0.0.0.0"},
       .source = "comfy/cli_args.py"},
      {.name = "vLLM",
       .programs = {"vllm"},
       .subcommand = "serve",
       .default_host = "0.0.0.0",
       .default_port = 8000,
       .port_flags = {"--port"},
       .host_flags = {"--host"},
       .source = "vllm docs"},
      {.name = "flask run",
       .programs = {"flask"},
       .subcommand = "run",
       .default_host = "127.0.0.1",
       .default_port = 5000,
       .port_flags = {"--port", "-p"},
       .host_flags = {"--host", "-h"},
       .env_host = "FLASK_RUN_HOST",
       .env_port = "FLASK_RUN_PORT",
       .listen_all = {"--host", "0.0.0.0"},
       .source = "flask docs"},
  };
  return t;
}

ServerListen listen(const std::vector<std::string>& cmd, const std::vector<std::string>& env = {},
                    const std::set<std::string>& top = {}) {
  static const Tables rows = server_rows();
  return server_listen(cmd, env, rows, top);
}

bool server_any_has(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

struct ServerTree : imgsmith::testing::ProjectTree {
  using ProjectTree::ProjectTree;
  Plan plan(Options o = {}) const { return make_plan(detect_project(dir), o); }
};

}  // namespace

TEST_CASE("gen server: the port and address come from the command's own arguments") {
  auto l = listen({"uvicorn", "app:app", "--port", "9000"});
  REQUIRE(l.server != nullptr);
  CHECK(l.server->name == "uvicorn");
  CHECK(l.port == 9000);
  CHECK(l.port_from == "--port 9000");
  CHECK(l.host == "127.0.0.1");
  CHECK(l.loopback_only);
  CHECK(l.fix == std::vector<std::string>{"--host", "0.0.0.0"});

  l = listen({"/opt/venv/bin/uvicorn", "app:app", "--host=0.0.0.0", "--port=8080"});
  CHECK(l.port == 8080);
  CHECK_FALSE(l.loopback_only);
  CHECK(l.fix.empty());

  l = listen({"gunicorn", "-b", ":9001", "svc.wsgi"});
  CHECK(l.port == 9001);
  CHECK(l.host == "0.0.0.0");
  CHECK_FALSE(l.loopback_only);

  l = listen({"gunicorn", "--bind=[::]:9002", "svc.wsgi"});
  CHECK(l.port == 9002);
  CHECK(l.host == "::");

  // A unix socket is no port at all.
  l = listen({"gunicorn", "--bind", "unix:/run/app.sock", "svc.wsgi"});
  CHECK(l.port == 0);
  CHECK_FALSE(l.loopback_only);
}

TEST_CASE("gen server: with no argument, the server's own default") {
  auto l = listen({"uvicorn", "app:app"});
  CHECK(l.port == 8000);
  CHECK(l.port_from == "uvicorn's default");
  CHECK(l.host_from == "uvicorn's default");
  CHECK(l.loopback_only);

  l = listen({"vllm", "serve", "meta-llama/Llama-3.1-8B"});
  REQUIRE(l.server != nullptr);
  CHECK(l.port == 8000);
  CHECK_FALSE(l.loopback_only);

  // A subcommand the row names must be there: `vllm bench` serves nothing.
  CHECK(listen({"vllm", "bench", "throughput"}).server == nullptr);
  CHECK(listen({"flask", "routes"}).server == nullptr);
}

TEST_CASE(
    "gen server: a program that serves only with a subcommand it lacks is named, not matched") {
  auto l = listen({"vllm", "bench", "throughput"});
  CHECK(l.server == nullptr);
  REQUIRE(l.without_subcommand != nullptr);
  CHECK(l.without_subcommand->subcommand == "serve");
  CHECK(l.port == 0);
  // Given the subcommand, it is the server; another program is neither.
  l = listen({"vllm", "serve", "m"});
  CHECK(l.server != nullptr);
  CHECK(l.without_subcommand == nullptr);
  l = listen({"python", "train.py"});
  CHECK(l.server == nullptr);
  CHECK(l.without_subcommand == nullptr);
}

TEST_CASE(
    "gen server: a console script that serves only with a flag it is not given is warned about") {
  // Open Interpreter's shape: one console script, a server only with --server
  // (a row of data/servers.json), a terminal UI without it.
  ServerTree t(
      {{"pyproject.toml",
        "[project]\nname = \"open-interpreter\"\nversion = \"0.2.0\"\n"
        "dependencies = [\"litellm\"]\n[project.scripts]\n"
        "interpreter = \"interpreter.terminal_interface.start_terminal_interface:main\"\n"
        "[build-system]\nrequires = [\"poetry-core\"]\nbuild-backend = "
        "\"poetry.core.masonry.api\"\n"},
       {"interpreter/__init__.py", ""},
       {"interpreter/terminal_interface/__init__.py", ""},
       {"interpreter/terminal_interface/start_terminal_interface.py", "import argparse\n"}});
  const Plan plan = t.plan();
  REQUIRE(plan.cmd == std::vector<std::string>{"interpreter"});
  CHECK(plan.port == 0);
  CHECK(server_any_has(plan.warnings,
                       "interpreter serves (as open-interpreter --server) only with --server"));
  CHECK(server_any_has(plan.warnings, "pass --cmd 'interpreter --server'"));
  // Told the flag, it serves on the row's port, and nothing is warned.
  Options o;
  o.cmd = {"interpreter", "--server"};
  const Plan served = t.plan(o);
  CHECK(served.port == 8000);
  CHECK_FALSE(server_any_has(served.warnings, "only with --server"));
  // With other arguments, where the flag goes is the program's usage: no
  // command is made up by appending it.
  o.cmd = {"interpreter", "--model", "gpt-4o"};
  const Plan other = t.plan(o);
  CHECK(server_any_has(other.warnings, "only with --server among its arguments"));
  CHECK(server_any_has(other.warnings,
                       "pass --cmd with --server where open-interpreter --server's usage puts it"));
  CHECK_FALSE(server_any_has(other.warnings, "pass --cmd 'interpreter --model gpt-4o --server'"));
}

TEST_CASE("gen server: the environment and shell variables give the port") {
  auto l = listen({"flask", "--app", "svc", "run"}, {"FLASK_RUN_PORT=7001"});
  CHECK(l.port == 7001);
  CHECK(l.port_from == "FLASK_RUN_PORT=7001");
  CHECK(l.loopback_only);
  l = listen({"flask", "--app", "svc", "run"}, {"FLASK_RUN_HOST=0.0.0.0"});
  CHECK(l.port == 5000);
  CHECK_FALSE(l.loopback_only);

  l = listen(
      {"/bin/sh", "-c", "cd /app && exec uvicorn app:app --host 0.0.0.0 --port ${PORT:-7000}"});
  REQUIRE(l.server != nullptr);
  CHECK(l.port == 7000);
  CHECK_FALSE(l.loopback_only);
  l = listen({"/bin/sh", "-c", "uvicorn app:app --port $PORT"}, {"PORT=8123"});
  CHECK(l.port == 8123);
  // A variable nothing sets is not guessed at.
  l = listen({"/bin/sh", "-c", "uvicorn app:app --port $PORT"});
  CHECK(l.port == 0);
  CHECK(l.port_from == "--port $PORT (not a port gen can read)");
  // A pipeline is not one command.
  CHECK(listen({"/bin/sh", "-c", "uvicorn app:app | tee log"}).server == nullptr);
}

TEST_CASE("gen server: runners and interpreters in front of the server are seen through") {
  CHECK(listen({"uv", "run", "uvicorn", "app:app"}).port == 8000);
  CHECK(listen({"env", "A=1", "uvicorn", "app:app", "--port", "81"}).port == 81);
  CHECK(listen({"python3.11", "-u", "-m", "uvicorn", "app:app", "--port", "82"}).port == 82);
  CHECK(listen({"python", "-X", "dev", "-m", "uvicorn", "app:app"}).port == 8000);
  CHECK(listen({"python", "-c", "import uvicorn"}).server == nullptr);
  CHECK(listen({"node", "server.js"}).server == nullptr);
}

TEST_CASE("gen server: Django's runserver takes its address as a positional argument") {
  auto l = listen({"python", "manage.py", "runserver"});
  REQUIRE(l.server != nullptr);
  CHECK(l.port == 8000);
  CHECK(l.loopback_only);
  CHECK(l.fix == std::vector<std::string>{"0.0.0.0:8000"});
  l = listen({"python", "manage.py", "runserver", "0.0.0.0:8001"});
  CHECK(l.port == 8001);
  CHECK_FALSE(l.loopback_only);
  l = listen({"python", "manage.py", "runserver", "8002"});
  CHECK(l.port == 8002);
  CHECK(l.loopback_only);
  CHECK(listen({"python", "manage.py", "migrate"}).server == nullptr);
}

TEST_CASE("gen server: a project's own script is the server only in that project") {
  const std::set<std::string> comfy_tree = {"main.py", "comfy", "custom_nodes", "nodes.py"};
  auto l = listen({"python", "main.py"}, {}, comfy_tree);
  REQUIRE(l.server != nullptr);
  CHECK(l.server->name == "ComfyUI");
  CHECK(l.port == 8188);
  CHECK(l.loopback_only);
  CHECK(l.fix == std::vector<std::string>{"--listen", "0.0.0.0"});
  CHECK(listen({"python", "main.py"}, {}, {"main.py", "comfy"}).server == nullptr);
  // --listen alone is every interface; with an address, that address.
  CHECK_FALSE(listen({"python", "main.py", "--listen"}, {}, comfy_tree).loopback_only);
  l = listen({"python", "main.py", "--listen", "127.0.0.1", "--port", "8190"}, {}, comfy_tree);
  CHECK(l.loopback_only);
  CHECK(l.port == 8190);
}

TEST_CASE("gen server: every row of the server table says where it comes from") {
  const Tables& t = builtin_tables();
  REQUIRE(t.servers.size() >= 15);
  for (const auto& row : t.servers) {
    INFO(row.name);
    CHECK_FALSE(row.source.empty());
    CHECK((!row.programs.empty() || !row.modules.empty() || !row.script.empty() ||
           !row.env_host.empty()));
    // A server that binds the loopback address by default must say how to
    // open it, or gen could only warn.
    if (row.default_host == "127.0.0.1" || row.default_host == "localhost")
      CHECK((!row.listen_all.empty() || !row.env_host.empty()));
  }
}

TEST_CASE("gen server: --cmd keeps the server's port, and a loopback-only one is warned about") {
  ServerTree t({{"requirements.txt", "ray[serve]==2.9.0\nfastapi==0.110\n"},
                {"serve_config.yaml", "applications:\n  - name: app\n    import_path: svc:app\n"},
                {"svc.py", "from ray import serve\n"}});
  Options o;
  o.cmd = {"uvicorn", "svc:app"};
  Plan plan = t.plan(o);
  CHECK(plan.port == 8000);
  CHECK(server_any_has(plan.warnings, "--cmd: uvicorn listens on 127.0.0.1 only"));
  CHECK(server_any_has(plan.warnings, "add --host 0.0.0.0 to the command"));
  // gen does not change the user's command.
  CHECK(plan.cmd == std::vector<std::string>{"uvicorn", "svc:app"});

  o.cmd = {"uvicorn", "svc:app", "--host", "0.0.0.0", "--port", "9100"};
  plan = t.plan(o);
  CHECK(plan.port == 9100);
  CHECK_FALSE(server_any_has(plan.warnings, "listens on 127.0.0.1"));

  // A program no row names gets no port from the table.
  ServerTree worker({{"requirements.txt", "numpy\n"}, {"worker.py", "print(1)\n"}});
  o.cmd = {"./run-my-thing", "--port", "9000"};
  plan = worker.plan(o);
  CHECK(plan.port == 0);
  o.cmd = {"gunicorn", "svc:app", "-b", "0.0.0.0"};
  CHECK(worker.plan(o).port == 8000);
}

TEST_CASE("gen server: a detected server that binds 127.0.0.1 is told to listen everywhere") {
  // ComfyUI's checkout, as its repository lays it out.
  ServerTree t({{"requirements.txt", "torch==2.5.1\naiohttp\n"},
                {"main.py", "import comfy\n"},
                {"nodes.py", "x = 1\n"},
                {"folder_paths.py", "x = 1\n"},
                {"comfy/__init__.py", ""},
                {"comfy_extras/__init__.py", ""},
                {"custom_nodes/README.md", "nodes\n"}});
  const Plan plan = t.plan();
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py", "--listen", "0.0.0.0"});
  CHECK(plan.port == 8188);
  bool said = false;
  for (const auto& e : plan.explain)
    said = said || e.text.find("gen adds --listen 0.0.0.0") != std::string::npos;
  CHECK(said);
}

TEST_CASE("gen server: a Ray Serve config is the entrypoint, on the port its http_options name") {
  ServerTree t({{"requirements.txt", "ray[serve]==2.9.0\n"},
                {"serve_config.yaml",
                 "# serve build output\nproxy_location: EveryNode\nhttp_options:\n  host: 0.0.0.0\n"
                 "  port: 8001\napplications:\n  - name: app\n    route_prefix: /\n"
                 "    import_path: svc:app\n"},
                {"svc.py", "from fastapi import FastAPI\napp = FastAPI()\n"}});
  Plan plan = t.plan();
  CHECK(plan.cmd == std::vector<std::string>{"serve", "run", "serve_config.yaml"});
  CHECK(plan.port == 8001);
  CHECK_FALSE(server_any_has(plan.warnings, "no port mapping reaches"));

  // Without http_options, Ray's proxy keeps 127.0.0.1:8000: the file is
  // the user's to change, and gen says how.
  ServerTree bare({{"requirements.txt", "ray[serve]==2.9.0\n"},
                   {"config.yaml", "applications:\n- name: app\n  import_path: svc:app\n"},
                   {"svc.py", "x = 1\n"}});
  plan = bare.plan();
  CHECK(plan.cmd == std::vector<std::string>{"serve", "run", "config.yaml"});
  CHECK(plan.port == 8000);
  CHECK(server_any_has(plan.warnings, "config.yaml: ray serve run listens on 127.0.0.1 only"));
  CHECK(server_any_has(plan.warnings, "set http_options: {host: 0.0.0.0} in the config file"));

  // A host the config sets to the loopback address on purpose is the
  // file's to change.
  ServerTree local(
      {{"requirements.txt", "ray[serve]\n"},
       {"serve.yaml", "http_options:\n  host: 127.0.0.1\napplications:\n- import_path: a:b\n"}});
  plan = local.plan();
  CHECK(server_any_has(plan.warnings, "set its address to 0.0.0.0 in serve.yaml"));

  // A YAML file that names no applications is not Ray's.
  ServerTree other({{"requirements.txt", "fastapi\nuvicorn\n"},
                    {"config.yaml", "import_path: x\n"},
                    {"main.py", "from fastapi import FastAPI\napp = FastAPI()\n"}});
  CHECK(other.plan().cmd.front() == "uvicorn");
}

TEST_CASE("gen server: a Makefile's serve or run target with one plain command is the entrypoint") {
  ServerTree t({{"requirements.txt", "fastapi\nuvicorn\n"},
                {"Makefile",
                 "install:\n\tpip install -r requirements.txt\n\nserve: install\n"
                 "\t@uvicorn service.api:app --reload --host 0.0.0.0 --port 8080\n"},
                {"service/api.py", "from fastapi import FastAPI\nrouter = 1\n"},
                {"tools.py", "print(1)\n"},
                {"cli.py", "print(2)\n"}});
  const Plan plan = t.plan();
  CHECK(plan.cmd == std::vector<std::string>{"uvicorn", "service.api:app", "--host", "0.0.0.0",
                                             "--port", "8080"});
  CHECK(plan.port == 8080);

  // A recipe with make variables is not a command gen can copy.
  ServerTree vars({{"requirements.txt", "numpy\n"},
                   {"Makefile", "PORT ?= 9000\nrun:\n\tpython serve_it.py --port $(PORT)\n"},
                   {"worker.py", "print(1)\n"}});
  const Plan p2 = vars.plan();
  CHECK(p2.cmd == std::vector<std::string>{"python", "worker.py"});
}

TEST_CASE("gen server: a LightningCLI script runs with the fit subcommand") {
  ServerTree t({{"requirements.txt", "lightning==2.2.0\n"},
                {"main.py",
                 "from lightning.pytorch.cli import LightningCLI\n\ndef cli_main():\n"
                 "    cli = LightningCLI (Model, DataModule)\n\nif __name__ == '__main__':\n"
                 "    cli_main()\n"}});
  CHECK(t.plan().cmd == std::vector<std::string>{"python", "main.py", "fit"});
  ServerTree norun(
      {{"requirements.txt", "lightning==2.2.0\n"},
       {"main.py",
        "from lightning.pytorch.cli import LightningCLI\ncli = LightningCLI(M, run=False)\n"
        "cli.trainer.fit(cli.model)\n"}});
  CHECK(norun.plan().cmd == std::vector<std::string>{"python", "main.py"});
}

TEST_CASE("gen server: a Procfile's server is read with the PORT it is given") {
  // gunicorn binds 0.0.0.0:$PORT when PORT is set: nothing to add.
  ServerTree g({{"requirements.txt", "flask\ngunicorn\n"},
                {"Procfile", "web: gunicorn app:app\n"},
                {"app.py", "x = 1\n"}});
  Plan plan = g.plan();
  CHECK(plan.cmd == std::vector<std::string>{"gunicorn", "app:app"});
  CHECK(plan.port == 8000);
  CHECK_FALSE(server_any_has(plan.warnings, "no port mapping reaches"));
  // uvicorn keeps 127.0.0.1 whatever the port: gen adds the address.
  ServerTree u({{"requirements.txt", "fastapi\nuvicorn\n"},
                {"Procfile", "web: uvicorn app:app --port $PORT\n"},
                {"app.py", "x = 1\n"}});
  plan = u.plan();
  CHECK(plan.cmd ==
        std::vector<std::string>{"uvicorn", "app:app", "--port", "8000", "--host", "0.0.0.0"});
}

TEST_CASE("gen server: a Makefile recipe that runs no Python and no known server is skipped") {
  ServerTree docker({{"requirements.txt", "flask\n"},
                     {"Makefile", "run:\n\tdocker run --gpus all -it myimage\n"},
                     {"train.py", "print(1)\n"}});
  CHECK(docker.plan().cmd == std::vector<std::string>{"python", "train.py"});
  // A runner is not in the image: what it runs is the command.
  ServerTree poetry({{"requirements.txt", "fastapi\nuvicorn\n"},
                     {"Makefile", "run:\n\tpoetry run uvicorn app:app --port 9000\n"},
                     {"main.py", "print(1)\n"}});
  const Plan plan = poetry.plan();
  CHECK(plan.cmd ==
        std::vector<std::string>{"uvicorn", "app:app", "--port", "9000", "--host", "0.0.0.0"});
  CHECK(plan.port == 9000);
}

TEST_CASE("gen server: an address argument already there is changed by the user, not doubled") {
  ServerTree t({{"requirements.txt", "django\n"},
                {"manage.py", "import django\n"},
                {"Procfile", "web: python manage.py runserver 9000\n"}});
  const Plan plan = t.plan();
  CHECK(plan.cmd == std::vector<std::string>{"python", "manage.py", "runserver", "9000"});
  CHECK(plan.port == 9000);
  CHECK(server_any_has(plan.warnings, "its address argument 9000"));
}

TEST_CASE("gen server: a Procfile web process without $PORT listens where its server does") {
  ServerTree t({{"requirements.txt", "streamlit\n"},
                {"app.py", "import streamlit as st\n"},
                {"Procfile", "web: streamlit run app.py\n"}});
  CHECK(t.plan().port == 8501);
}

TEST_CASE("gen server: Ray's http_options as a flow mapping, and a port out of range") {
  ServerTree t(
      {{"requirements.txt", "ray[serve]\n"},
       {"serve.yaml",
        "http_options: {host: 0.0.0.0, port: 9000}\napplications:\n- import_path: a:b\n"}});
  Plan plan = t.plan();
  CHECK(plan.port == 9000);
  CHECK_FALSE(server_any_has(plan.warnings, "no port mapping reaches"));
  ServerTree big(
      {{"requirements.txt", "ray[serve]\n"},
       {"serve.yaml", "http_options:\n  port: 99999\napplications:\n- import_path: a:b\n"}});
  CHECK(big.plan().port == 8000);
}

TEST_CASE("gen server: a variable is a port under a shell only") {
  auto l = listen({"/bin/sh", "-c", "exec gunicorn -b 0.0.0.0:${PORT:-9000} app:app"});
  CHECK(l.port == 9000);
  CHECK_FALSE(l.loopback_only);
  // Docker's exec form passes ${PORT:-9000} to the server as it is.
  l = listen({"gunicorn", "--bind", "0.0.0.0:${PORT:-9000}", "app:app"});
  CHECK(l.port == 0);
  ServerTree t({{"requirements.txt", "fastapi\nuvicorn\n"}, {"worker.py", "print(1)\n"}});
  Options o;
  o.cmd = {"uvicorn", "app:app", "--host", "0.0.0.0", "--port", "${PORT:-9000}"};
  const Plan plan = t.plan(o);
  CHECK(plan.port == 0);
  CHECK(server_any_has(plan.warnings, "Docker runs an exec-form command without a shell"));
}

TEST_CASE("gen server: a server's own config file may set the address: gen claims neither") {
  ServerTree t({{"requirements.txt", "gunicorn\nflask\n"},
                {"gunicorn.conf.py", "bind = \"0.0.0.0:5000\"\n"},
                {"Makefile", "serve:\n\tgunicorn wsgi:app\n"},
                {"wsgi.py", "app = 1\n"}});
  const Plan plan = t.plan();
  CHECK(plan.cmd == std::vector<std::string>{"gunicorn", "wsgi:app"});
  CHECK(plan.port == 0);
  CHECK_FALSE(server_any_has(plan.warnings, "no port mapping reaches"));
}

TEST_CASE("gen server: LightningCLI in a comment is no call") {
  ServerTree t({{"requirements.txt", "lightning\n"},
                {"train.py",
                 "import argparse\n# TODO: cli = "
                 "LightningCLI(Model)\n\"\"\"\nLightningCLI(Model)\n\"\"\"\n"}});
  CHECK(t.plan().cmd == std::vector<std::string>{"python", "train.py"});
}

TEST_CASE("gen server: code that imports what no dependency file names is warned about") {
  ServerTree t({{"server.py",
                 "import os, sys\nimport yaml\nfrom torch import nn\nfrom modules import shared\n"
                 "from . import sibling\nimport gradio as gr\n"},
                {"modules/shared.py", "x = 1\n"},
                {"requirements/full/requirements.txt", "torch==2.5.1\ngradio\n"}});
  const Plan plan = t.plan();
  CHECK(server_any_has(plan.warnings,
                       "the code imports yaml (server.py:2), torch (server.py:3), "
                       "gradio (server.py:6), but no dependency file"));
  CHECK(server_any_has(plan.warnings, "pass --requirements requirements/full/requirements.txt"));
  CHECK(server_any_has(plan.why_base, "No GPU as far as gen knows: the code imports modules"));
  // Nothing to say when the imports are the standard library's and the project's.
  ServerTree plain({{"server.py", "import os\nimport json\nfrom modules import shared\n"},
                    {"modules/shared.py", "x = 1\n"}});
  CHECK_FALSE(server_any_has(plain.plan().warnings, "the code imports"));
}

TEST_CASE("gen server: of several scripts, the one named as the project, else its author's first") {
  ServerTree t(
      {{"pyproject.toml",
        "[project]\nname = \"open-thing\"\ndependencies = [\"rich\"]\n"
        "[project.scripts]\nzed = \"thing.cli:main\"\nalpha = \"thing.alt:main\"\n"
        "[build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n"},
       {"thing/__init__.py", ""}});
  CHECK(t.plan().cmd == std::vector<std::string>{"zed"});
  ServerTree named(
      {{"pyproject.toml",
        "[tool.poetry]\nname = \"gpt-thing\"\n[tool.poetry.dependencies]\npython = \"^3.10\"\n"
        "[tool.poetry.scripts]\nbench = \"x.b:app\"\ngpt-thing = \"x.cli:app\"\n"
        "[build-system]\nrequires = [\"poetry-core\"]\n"
        "build-backend = \"poetry.core.masonry.api\"\n"},
       {"x/__init__.py", ""}});
  CHECK(named.plan().cmd == std::vector<std::string>{"gpt-thing"});
}

TEST_CASE("gen server: setup.py's literal install_requires and console_scripts are read") {
  ServerTree t(
      {{"setup.py",
        "import sys\nfrom setuptools import setup\nsetup(\n    name='clipper',\n"
        "    install_requires=[\n        'ftfy',  # text\n        'torch>=2.1',\n"
        "        'torchvision<=0.13.0' if sys.version_info <= (3, 7, 2) else 'torchvision',\n"
        "    ],\n    entry_points={\"console_scripts\": [\"clipper = clipper.cli:main\"]},\n)\n"},
       {"clipper/__init__.py", ""},
       {"clipper/cli.py", "import torch\n"}});
  const Plan plan = t.plan();
  CHECK(plan.gpu);
  CHECK(plan.cmd == std::vector<std::string>{"clipper"});
  // Read to classify; `pip install .` installs them as setup.py says.
  CHECK(plan.install_mode == "none");
  CHECK(plan.project_install_args == ".");
}

TEST_CASE(
    "gen real repos: FindCUDA projects build CUDA, and TensorRT and OpenCV are warned about") {
  ServerTree t(
      {{"CMakeLists.txt",
        "cmake_minimum_required(VERSION 2.6)\nproject(yolov5)\nfind_package(CUDA REQUIRED)\n"
        "cuda_add_library(plugins SHARED layer.cu)\ntarget_link_libraries(plugins nvinfer "
        "cudart)\nfind_package(OpenCV)\ncuda_add_executable(yolov5 main.cpp pre.cu)\n"},
       {"layer.cu", ""},
       {"pre.cu", ""},
       {"main.cpp", "int main() {}\n"}});
  const Plan plan = t.plan();
  CHECK(plan.kind == "cuda-cpp");
  CHECK(plan.cmd == std::vector<std::string>{"/opt/app/bin/yolov5"});
  CHECK(server_any_has(plan.warnings, "needs TensorRT (libnvinfer)"));
  CHECK(server_any_has(plan.warnings, "find_package(OpenCV) needs OpenCV"));
}

TEST_CASE("gen real repos: a subpackage's __main__ and a script in tools/ are entrypoints") {
  ServerTree sub(
      {{"pyproject.toml",
        "[project]\nname = \"llama-thing\"\ndependencies = [\"uvicorn\", \"fastapi\"]\n"},
       {"llama_thing/__init__.py", ""},
       {"llama_thing/server/__init__.py", ""},
       {"llama_thing/server/__main__.py", "import uvicorn\n"}});
  CHECK(sub.plan().cmd == std::vector<std::string>{"python", "-m", "llama_thing.server"});
  ServerTree tools({{"requirements.txt", "torch==2.5.1\n"},
                    {"tools/train_net.py", "import torch\n"},
                    {"tools/analyze.py", "import torch\n"}});
  const Plan plan = tools.plan();
  CHECK(plan.cmd == std::vector<std::string>{"python", "tools/train_net.py"});
  CHECK(server_any_has(plan.warnings, "gen runs python tools/train_net.py"));
}

TEST_CASE("gen real repos: with nothing at the top, the requirements below are named") {
  ServerTree t(
      {{"requirements/base.txt", "fastapi\n"}, {"prepline_general/api/app.py", "x = 1\n"}});
  try {
    (void)t.plan();
    FAIL("gen built a project it could not read");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("pass --requirements requirements/base.txt") !=
          std::string::npos);
  }
}

TEST_CASE("gen server: an entry script's own server call gives the port, or a warning") {
  // private-gpt's shape: `python -m pkg`, whose __main__ calls uvicorn.run
  // with a port from its settings.
  ServerTree settings(
      {{"requirements.txt", "uvicorn\nfastapi\n"},
       {"svc/__init__.py", ""},
       {"svc/__main__.py",
        "import uvicorn\nfrom svc.main import api\n\nuvicorn.run(api, host=\"0.0.0.0\", "
        "port=settings().server.port, log_config=None)\n"}});
  Plan plan = settings.plan();
  REQUIRE(plan.cmd == std::vector<std::string>{"python", "-m", "svc"});
  CHECK(plan.port == 0);
  CHECK(server_any_has(plan.warnings,
                       "svc/__main__.py:4: uvicorn.run's port is settings().server.port, "
                       "which gen cannot read"));

  // A Gradio script: its port from server_port over two lines, and its
  // address given: nothing to add.
  ServerTree gradio({{"requirements.txt", "gradio==4.44.0\n"},
                     {"infer-web.py",
                      "import gradio as gr\n# app.launch(server_port=1)\nwith gr.Blocks() as app:\n"
                      "    pass\napp.queue().launch(\n    server_name=\"0.0.0.0\",\n"
                      "    server_port=7865, inbrowser=False)\n"}});
  plan = gradio.plan();
  REQUIRE(plan.cmd == std::vector<std::string>{"python", "infer-web.py"});
  CHECK(plan.port == 7865);
  CHECK_FALSE(server_any_has(plan.warnings, "127.0.0.1"));

  // An aiohttp app run by its script on an environment port with its
  // default, bound to the loopback address: the port is read, the address
  // warned about.
  ServerTree aiohttp(
      {{"requirements.txt", "aiohttp\n"},
       {"run.py",
        "import os\nfrom aiohttp import web\napp = web.Application()\nif __name__ == "
        "\"__main__\":\n    web.run_app(app, host=\"127.0.0.1\", "
        "port=int(os.getenv(\"PORT\", \"8081\")))\n"}});
  plan = aiohttp.plan();
  REQUIRE(plan.cmd == std::vector<std::string>{"python", "run.py"});
  CHECK(plan.port == 8081);
  CHECK(server_any_has(plan.warnings, "aiohttp's web.run_app listens on 127.0.0.1 only"));

  // Gradio's default address is the loopback one: the environment moves it.
  ServerTree quiet(
      {{"requirements.txt", "gradio\n"},
       {"webui.py", "import gradio as gr\ndemo = gr.Interface(fn=f)\ndemo.launch()\n"}});
  plan = quiet.plan();
  CHECK(plan.port == 7860);
  CHECK(std::find(plan.env.begin(), plan.env.end(), "GRADIO_SERVER_NAME=0.0.0.0") !=
        plan.env.end());
}

TEST_CASE("gen server: an entry script's own options give its port and address") {
  // WhisperLive's shape: a server of the project's own, started with the
  // port of the script's --port option.
  ServerTree own(
      {{"requirements.txt", "websockets\n"},
       {"server.py",
        "import argparse\nif __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--port', '-p', type=int, default=9090,\n"
        "                        help=\"Websocket port (default: 9090), the one\")\n"
        "    args = parser.parse_args()\n"
        "    from svc.server import Server\n    Server().run(\"0.0.0.0\", port=args.port)\n"},
       {"svc/__init__.py", ""},
       {"svc/server.py", "from websockets.sync.server import serve\n"}});
  Plan plan = own.plan();
  REQUIRE(plan.cmd == std::vector<std::string>{"python", "server.py"});
  CHECK(plan.port == 9090);

  // ComfyUI's shape without ComfyUI's row: the parser in a module the
  // script imports, an address that listens everywhere in its bare form.
  ServerTree imported(
      {{"requirements.txt", "aiohttp\n"},
       {"main.py",
        "import os\nfrom aiohttp import web\nfrom app.cli_args import args\n\nif __name__ == "
        "\"__main__\":\n    start(args)\n"},
       {"app/__init__.py", ""},
       {"app/cli_args.py",
        "import argparse\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument(\"--listen\", type=str, default=\"127.0.0.1\", nargs=\"?\", "
        "const=\"0.0.0.0,::\")\nparser.add_argument(\"--port\", type=int, default=8288)\n"
        "args = parser.parse_args()\n"}});
  plan = imported.plan();
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py", "--listen"});
  CHECK(plan.port == 8288);

  // khoj's and fish-speech's shapes: a loopback --host is given 0.0.0.0; a
  // HOST:PORT default gives the port and keeps it.
  ServerTree host({{"requirements.txt", "fastapi\n"},
                   {"main.py",
                    "import argparse\nimport uvicorn\nparser = argparse.ArgumentParser()\n"
                    "parser.add_argument(\"--host\", type=str, default=\"127.0.0.1\")\n"
                    "parser.add_argument(\"--port\", \"-p\", type=int, default=42110)\n"
                    "if __name__ == \"__main__\":\n    serve(parser.parse_args())\n"}});
  plan = host.plan();
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py", "--host", "0.0.0.0"});
  CHECK(plan.port == 42110);
  ServerTree listen_port({{"requirements.txt", "fastapi\n"},
                          {"main.py",
                           "import argparse\nimport uvicorn\nparser = argparse.ArgumentParser()\n"
                           "parser.add_argument(\"--listen\", type=str, "
                           "default=\"127.0.0.1:8080\")\nif __name__ == \"__main__\":\n"
                           "    serve(parser.parse_args())\n"}});
  plan = listen_port.plan();
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py", "--listen", "0.0.0.0:8080"});
  CHECK(plan.port == 8080);

  // uvicorn.run given the options' values: their defaults are read, and
  // the loopback address is moved by the option, not warned about.
  // (The app is built by a function, so the script, not uvicorn, is the command.)
  ServerTree uvicorn(
      {{"requirements.txt", "uvicorn\nfastapi\n"},
       {"svc/__init__.py", ""},
       {"svc/api.py", "from fastapi import FastAPI\ndef build():\n    return FastAPI()\n"},
       {"serve.py",
        "import argparse, uvicorn\nfrom svc.api import build\n"
        "p = argparse.ArgumentParser()\np.add_argument('--host', "
        "default='localhost')\np.add_argument('--port', type=int, "
        "default=7000)\nif __name__ == '__main__':\n    a = p.parse_args()\n"
        "    uvicorn.run(build(), host=a.host, port=a.port)\n"}});
  plan = uvicorn.plan();
  CHECK(plan.port == 7000);
  CHECK(plan.cmd == std::vector<std::string>{"python", "serve.py", "--host", "0.0.0.0"});
  CHECK_FALSE(server_any_has(plan.warnings, "127.0.0.1 only"));

  // click and absl declare options too; a switch named --listen is turned on.
  ServerTree click(
      {{"requirements.txt", "click\n"},
       {"main.py",
        "import click\nfrom flask import Flask\n@click.command()\n@click.option(\"--port\", "
        "default=5005, help=\"port, (tcp)\")\n@click.option(\"--listen\", "
        "is_flag=True, action=\"store_true\")\ndef main(port, listen):\n"
        "    serve(port)\nif __name__ == \"__main__\":\n    main()\n"}});
  plan = click.plan();
  CHECK(plan.port == 5005);
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py", "--listen"});
  ServerTree absl(
      {{"requirements.txt", "absl-py\n"},
       {"main.py",
        "import grpc\nfrom absl import app, flags\nflags.DEFINE_integer(\"port\", 8500, "
        "\"the port\")\nflags.DEFINE_string(\"host\", \"0.0.0.0\", \"address\")\n"
        "def main(argv):\n    serve()\nif __name__ == \"__main__\":\n"
        "    app.run(main)\n"}});
  plan = absl.plan();
  CHECK(plan.port == 8500);
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py"});

  // set_defaults wins over add_argument (Fooocus's port=None): Gradio then
  // takes its own port. An address expression over a --listen switch
  // (text-generation-webui's) turns the switch on.
  ServerTree defaults(
      {{"requirements.txt", "gradio\n"},
       {"webui.py",
        "import gradio as gr\nfrom ui import options\ndemo = gr.Blocks()\n"
        "demo.launch(server_name=None if not options.args.listen else "
        "(options.args.listen_host or '0.0.0.0'),\n            "
        "server_port=options.args.port)\n"},
       {"ui/__init__.py", ""},
       {"ui/options.py",
        "import argparse\nparser = argparse.ArgumentParser()\ngroup = "
        "parser.add_argument_group('Gradio')\ngroup.add_argument('--listen', "
        "action='store_true')\ngroup.add_argument('--listen-host', type=str)\n"
        "parser.add_argument('--port', type=int, default=8188)\n"
        "parser.set_defaults(in_browser=True, port=None)\nargs = parser.parse_args()\n"}});
  plan = defaults.plan();
  CHECK(plan.port == 7860);
  CHECK(plan.cmd == std::vector<std::string>{"python", "webui.py", "--listen"});

  // A proxy listens on --listen-port, not on the --server-port it forwards
  // to, whatever the order they are declared in.
  ServerTree proxy({{"requirements.txt", "aiohttp\n"},
                    {"main.py",
                     "import argparse\nfrom aiohttp import web\np = argparse.ArgumentParser()\n"
                     "p.add_argument('--', dest='rest')\n"
                     "p.add_argument('--server-host', default='localhost')\n"
                     "p.add_argument('--server-port', type=int, default=9999)\n"
                     "p.add_argument('--listen-host', default='0.0.0.0')\n"
                     "p.add_argument('--listen-port', type=int, default=9998)\n"
                     "if __name__ == '__main__':\n    relay(p.parse_args())\n"}});
  plan = proxy.plan();
  CHECK(plan.port == 9998);
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py"});

  // A rendezvous port is no server's; a --port without a default is said.
  // (It imports a server framework, a metrics endpoint's, so that only the
  // option's name keeps its port from being taken.)
  ServerTree train(
      {{"requirements.txt", "torch\n"},
       {"main.py",
        "import argparse\nfrom http.server import HTTPServer\np = argparse.ArgumentParser()\n"
        "p.add_argument('--master_port', type=int, default=29500)\n"
        "if __name__ == '__main__':\n    train(p.parse_args())\n"}});
  plan = train.plan();
  CHECK(plan.port == 0);
  CHECK_FALSE(server_any_has(plan.warnings, "--master_port"));
  ServerTree no_default({{"requirements.txt", "fastapi\n"},
                         {"main.py",
                          "import argparse\nimport http.server\np = argparse.ArgumentParser()\n"
                          "p.add_argument('--port', type=int)\n"
                          "if __name__ == '__main__':\n    serve(p.parse_args())\n"}});
  plan = no_default.plan();
  CHECK(plan.port == 0);
  CHECK(server_any_has(plan.warnings, "main.py:4: the script takes --port without a default"));

  // Typer and Fire take a function's parameters as options.
  ServerTree typer({{"requirements.txt", "typer\nuvicorn\n"},
                    {"main.py",
                     "import typer, uvicorn\nfrom svc import build\n"
                     "def main(model: str, host: str = \"127.0.0.1\",\n         port: int = 8123,\n"
                     "         reload: bool = False):\n    uvicorn.run(build(model), host=host, "
                     "port=port)\nif __name__ == \"__main__\":\n    typer.run(main)\n"}});
  plan = typer.plan();
  CHECK(plan.port == 8123);
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py", "--host", "0.0.0.0"});
  ServerTree typer_option(
      {{"requirements.txt", "typer\ngradio\n"},
       {"main.py",
        "import typer\nimport gradio as gr\napp = typer.Typer()\n@app.command()\n"
        "def serve(server_port: int = typer.Option(7999, \"--server-port\", \"-p\"),\n"
        "          listen: bool = False):\n    gr.Blocks().launch(server_port=server_port, "
        "server_name=\"0.0.0.0\" if listen else None)\nif __name__ == \"__main__\":\n    "
        "app()\n"}});
  plan = typer_option.plan();
  CHECK(plan.port == 7999);
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py", "--listen"});
  ServerTree fire(
      {{"requirements.txt", "fire\nflask\n"},
       {"serve.py",
        "import fire\nfrom flask import Flask\n\ndef run(host='localhost', port=5100):\n"
        "    make().run(host=host, port=port)\n\nif __name__ == '__main__':\n"
        "    fire.Fire(run)\n"}});
  plan = fire.plan();
  CHECK(plan.port == 5100);
  CHECK(plan.cmd == std::vector<std::string>{"python", "serve.py", "--host", "0.0.0.0"});

  // A worker whose --host and --port are the queue it connects to imports
  // no server framework: neither is taken for its own, nor warned about.
  ServerTree worker({{"requirements.txt", "redis\n"},
                     {"main.py",
                      "import argparse\nimport redis\np = argparse.ArgumentParser()\n"
                      "p.add_argument('--host', default='localhost', help='the Redis server')\n"
                      "p.add_argument('--port', type=int, default=6379)\n"
                      "if __name__ == '__main__':\n    a = p.parse_args()\n"
                      "    work(redis.Redis(host=a.host, port=a.port))\n"}});
  plan = worker.plan();
  CHECK(plan.port == 0);
  CHECK(plan.cmd == std::vector<std::string>{"python", "main.py"});
  CHECK_FALSE(server_any_has(plan.warnings, "--port"));
}
