// `imgsmith gen`: detect the project, decide the image, render the
// Dockerfile, .dockerignore (and compose.yaml), and put the probe in the
// build context. A file that exists stops everything before anything is
// written; each file is written whole or not at all.
#include "gen_command.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "imgsmith/gen/gen.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"
#include "output_file.hpp"
#include "policy.hpp"
#include "probe_command.hpp"

namespace imgsmith {
namespace {

namespace fs = std::filesystem;

struct GenArgs {
  std::string dir = ".";
  gen::Options options;
  std::string cmd;
  std::string requirements;
  std::string context;  // the docker build context, DIR or above it; "" for DIR
  bool no_probe = false;
  bool no_runtime_compiler = false;
  bool no_verify = false;
  bool to_stdout = false;
  bool force = false;
  bool explain = false;
};

void print_explain(const gen::Plan& plan, std::ostream& out) {
  out << "What gen found and decided:\n";
  for (const auto& e : plan.explain) out << "  " << e.source << ": " << e.text << "\n";
}

int run_gen(GenArgs args) {
  if (!args.cmd.empty()) args.options.cmd = gen::split_command(args.cmd);
  args.options.probe = !args.no_probe;
  // imgsmith.toml's [gen] table fills what no flag set.
  if (const auto policy = load_gen_policy(args.dir))
    apply_gen_policy(*policy, args.options, args.requirements);
  if (args.options.flavor.empty()) args.options.flavor = "auto";
  args.options.runtime_compiler = !args.no_runtime_compiler;
  args.options.verify = !args.no_verify;
  const fs::path dir = args.dir;
  gen::Project project = gen::detect_project(dir, args.requirements, args.context);
  project.models = gen::detect_models(dir, args.options.models);
  const gen::Plan plan = gen::make_plan(project, args.options);
  const gen::Rendered files = gen::render_plan(plan);

  std::ostream& report = args.to_stdout ? std::cerr : std::cout;
  if (args.explain) print_explain(plan, report);
  if (args.to_stdout) {
    std::cout << files.dockerfile << std::flush;
    report << gen::summary(plan);
    if (plan.probe && plan.context_path.empty())
      report
          << "note: --stdout wrote nothing; the Dockerfile copies .imgsmith/imgsmith-probe-ARCH, "
             "which\n      `imgsmith probe --write-all .imgsmith` puts in place\n";
    else if (plan.probe)
      report << "note: --stdout wrote nothing; the Dockerfile copies " << plan.context_path
             << "/.imgsmith/imgsmith-probe-ARCH from the build context, which\n"
                "      `imgsmith probe --write-all "
             << (dir / ".imgsmith").string() << "` puts in place\n";
    if (plan.verify)
      report << "note: --stdout wrote nothing; the Dockerfile's check mounts .imgsmith/check, "
                "which gen writes without --stdout (or build with --no-verify)\n";
    // stdout holds the Dockerfile alone, so it can be piped; the compose
    // file asked for is not dropped without a word.
    if (plan.compose)
      report << "note: --stdout prints only the Dockerfile; compose.yaml was not written (run "
                "without --stdout "
                "to write it)\n";
    if (plan.k8s || plan.k8s_validator)
      report << "note: --stdout prints only the Dockerfile; the k8s/ manifests were not written "
                "(run without --stdout to write them)\n";
    return kExitOk;
  }

  std::vector<std::pair<fs::path, const std::string*>> outputs = {
      {dir / "Dockerfile", &files.dockerfile},
      {dir / files.dockerignore_name, &files.dockerignore}};
  if (plan.compose) outputs.emplace_back(dir / "compose.yaml", &files.compose);
  for (const auto& [name, text] : files.k8s) outputs.emplace_back(dir / "k8s" / name, &text);
  // Refuse before writing anything, so a refusal changes nothing.
  if (!args.force)
    for (const auto& [path, content] : outputs) {
      std::error_code ec;
      if (fs::exists(fs::symlink_status(path, ec)))
        throw InputError(path.string() +
                         " exists; gen changed nothing. Pass --force to replace it, "
                         "or --stdout to see the Dockerfile it would write");
    }
  // Compose reads compose.yaml before docker-compose.yml: a compose.yaml
  // written beside the project's own file would silently replace it.
  if (plan.compose)
    for (const char* other : {"compose.yml", "docker-compose.yaml", "docker-compose.yml"}) {
      std::error_code ec;
      if (!fs::exists(fs::symlink_status(dir / other, ec))) continue;
      if (!args.force)
        throw InputError((dir / other).string() +
                         " exists, and Compose would read gen's compose.yaml in its place; gen "
                         "changed nothing. Add gen's service to it by hand, or pass --force to "
                         "write compose.yaml anyway");
      report << "warning: " << other
             << " exists; Compose now reads compose.yaml in its place (--force)\n";
    }
  // What --force replaces is said, file by file.
  std::vector<std::string> replaced;
  for (const auto& [path, content] : outputs) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(path, ec)))
      replaced.push_back(fs::relative(path, dir).string());
  }
  std::vector<std::string> written;
  if (plan.probe || !files.check_files.empty()) {
    const fs::path probe_dir = dir / ".imgsmith";
    std::error_code ec;
    fs::create_directories(plan.verify ? probe_dir / "check" : probe_dir, ec);
    if (ec) throw InputError(probe_dir.string() + ": cannot create it (" + ec.message() + ")");
    // The build-time check the Dockerfile mounts: gen's own files, written
    // again each time, like the probe.
    for (const auto& [name, text] : files.check_files) {
      write_output((dir / name).string(), text);
      written.push_back(name);
    }
  }
  if (plan.probe) {
    const fs::path probe_dir = dir / ".imgsmith";
    std::error_code ec;
    // One for each CPU this imgsmith carries a probe for; the Dockerfile
    // copies the one for BuildKit's TARGETARCH.
    for (const auto& arch : embedded_probe_arches()) {
      const std::string name = "imgsmith-probe-" + arch;
      write_probe((probe_dir / name).string(), arch);
      written.push_back(".imgsmith/" + name);
    }
    // A binary of imgsmith's has no place in the project's history: CI
    // writes it again with `imgsmith probe --write-all` (gen's summary says so).
    // A .gitignore the user has edited is left as it is.
    const fs::path ignore = probe_dir / ".gitignore";
    if (!fs::exists(fs::symlink_status(ignore, ec))) {
      write_output(
          ignore.string(),
          "# Written by imgsmith gen: the probe is rebuilt from imgsmith, not kept in git.\n"
          "# In CI: imgsmith probe --write-all .imgsmith\n"
          "# check/ is the image's build-time check, which the Dockerfile mounts: kept.\n"
          "*\n!.gitignore\n!check/\n!check/*\n");
      written.push_back(".imgsmith/.gitignore");
    }
  }
  if (!files.k8s.empty()) {
    std::error_code ec;
    fs::create_directories(dir / "k8s", ec);
    if (ec) throw InputError((dir / "k8s").string() + ": cannot create it (" + ec.message() + ")");
  }
  for (const auto& [path, content] : outputs) {
    write_output(path.string(), *content);
    written.push_back(fs::relative(path, dir).string());
  }
  std::string list;
  for (const auto& w : written) list += (list.empty() ? "" : ", ") + w;
  report << "imgsmith gen: wrote " << list << " in " << dir.string() << "\n";
  if (!replaced.empty())
    report << "imgsmith gen: replaced " << join(replaced, ", ") << " (--force)\n";
  report << gen::summary(plan);
  if (plan.k8s && !plan.gpu)
    report << "note: the k8s/ manifests ask for no GPU: nothing in this project uses one\n";
  else if (plan.k8s)
    report << "note: kubectl apply -f k8s/ once the image is pushed where the cluster pulls from "
              "(set image: in k8s/); the pod asks for "
           << plan.k8s_gpus << " " << plan.gpu_resource << "\n";
  if (plan.k8s_validator)
    report << "note: validate the GPU nodes: kubectl apply -f k8s/gpu-node-validator.yaml; then\n"
              "      mkdir -p reports && for p in $(kubectl get pods -o name -l "
              "app.kubernetes.io/component=gpu-validator); do\n"
              "        kubectl logs \"$p\" > \"reports/${p#pod/}.log\"; done\n"
              "      imgsmith probe --summarize reports/   (a node a row: GPU, driver, bandwidths, "
              "verdict)\n";
  return kExitOk;
}

}  // namespace

void register_gen_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<GenArgs>();
  CLI::App* cmd =
      app.add_subcommand("gen",
                         "Detect what a project needs and write a small multi-stage Dockerfile\n"
                         "on NVIDIA's CUDA images (or a slim CPU image when nothing uses a GPU).");
  cmd->footer(
      "It detects Python projects (requirements*.txt, pyproject.toml with PEP 621\n"
      "or Poetry, uv.lock/poetry.lock, .python-version, FastAPI/Flask apps,\n"
      "[project.scripts]) and CUDA C/C++ projects (CMakeLists.txt with CUDA, *.cu).\n"
      "The framework decides the flavour: pip torch brings its own CUDA libraries\n"
      "and gets `base`; TensorFlow and onnxruntime-gpu load the system's and get\n"
      "`runtime` with cuDNN; programs linking cuBLAS & co. get `runtime`.\n"
      "\n"
      "apt.txt (one Debian package per line) adds system packages; imgsmith.toml's\n"
      "[gen] table (cuda, flavor, cmd, port, system_packages, requirements, extras,\n"
      "packages, writable) holds what would otherwise be flags, which override it.\n"
      "A package gen does not know is named in a warning, never taken for a CPU one\n"
      "in silence: [gen] packages = { \"NAME\" = \"bundled\" } tells it (none, bundled,\n"
      "system, system-cudnn).\n"
      "\n"
      "The final stage checks itself at build time with .imgsmith/check/ (keep it in\n"
      "git): every Python extension's shared libraries resolve, and what the command\n"
      "imports imports; a missing library fails the build naming its apt package.\n"
      "--no-verify leaves that step out.\n"
      "\n"
      "It writes Dockerfile, .dockerignore (compose.yaml with --compose, k8s/*.yaml with\n"
      "--k8s) in DIR, and the probe as .imgsmith/imgsmith-probe-ARCH (amd64, arm64), the image's "
      "entrypoint.\n"
      "Existing files are never replaced without --force.\n"
      "\n"
      "In a monorepo, --context names the build context above DIR (its root), so\n"
      "that what DIR names outside itself (-r ../../shared/requirements.txt,\n"
      "-e ../../libs/common, add_subdirectory(../../libs/kernels)) can be copied:\n"
      "  imgsmith gen services/api --context .\n"
      "  DOCKER_BUILDKIT=1 docker build -f services/api/Dockerfile -t api .\n"
      "The Dockerfile stays in DIR, with Dockerfile.dockerignore beside it instead of\n"
      ".dockerignore: BuildKit reads it in place of the context's own, which gen\n"
      "leaves alone, and it lets in only DIR and the files it names.\n"
      "\n"
      "Exit status: 0 written; 2 bad usage, an unreadable or unrecognised project,\n"
      "or a file that exists without --force; 70 a bug in imgsmith (please report\n"
      "it); 74 a file or standard output could not be written.");
  cmd->add_option("DIR", args->dir, "The project directory (default: the current one)");
  args->options.flavor.clear();  // unset, so that imgsmith.toml's [gen] flavor can fill it
  cmd->add_option("--flavor", args->options.flavor,
                  "The final stage's CUDA image: auto (default), base, runtime or devel");
  cmd->add_option("--cuda", args->options.cuda,
                  "CUDA release X.Y[.Z] (default: from the framework)");
  cmd->add_option("--gpu", args->options.target_gpus,
                  "The GPUs the image must run on: H100,L4 (data/gpus.json; repeatable): the\n"
                  "project's CUDA code is compiled for them alone, a CUDA release without\n"
                  "kernels for one is refused");
  cmd->add_option("--os", args->options.os,
                  "ubuntu22.04 or ubuntu24.04 (default: the newest that fits)");
  cmd->add_option("--python", args->options.python, "Python 3.X (default: from the project)");
  cmd->add_flag("--cudnn", args->options.cudnn, "Use the cuDNN variant of the runtime/devel image");
  cmd->add_option(
      "--registry-mirror", args->options.registry_mirror,
      "Pull every base image through PREFIX: nvidia/cuda:T becomes PREFIX/nvidia/cuda:T");
  cmd->add_option(
      "--base", args->options.base,
      "Build the final stage on IMAGE instead of NVIDIA's (adds the NVIDIA_* variables)");
  cmd->add_option("--wheelhouse", args->options.wheelhouse,
                  "A directory of wheels in the project: pip installs from it alone (--no-index),\n"
                  "for air-gapped builds");
  cmd->add_option("--index-url", args->options.index_url,
                  "pip's package index (a private index or mirror)");
  cmd->add_option(
         "--context", args->context,
         "The docker build context: DIR or a directory above it, such as a monorepo's root.\n"
         "COPY paths are relative to it, and files DIR names outside itself but inside it\n"
         "are copied; the Dockerfile and Dockerfile.dockerignore are written in DIR")
      ->type_name("DIR");
  cmd->add_option(
      "--requirements", args->requirements,
      "The requirements file to install, relative to DIR (default: requirements.txt, else\n"
      "the requirements*.txt files; of -cpu and -gpu alternatives, the GPU one)");
  cmd->add_option("--port", args->options.port,
                  "The port the app listens on (default: the detected server's: uvicorn 8000,\n"
                  "Streamlit 8501, Gradio 7860, Jupyter 8888)")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--cmd", args->cmd,
                  "The command the image runs, e.g. 'python -m app' (default: detected)");
  cmd->add_option(
      "--model", args->options.models,
      "Model weights (a file or folder) to size the GPU for, besides those in the\n"
      "project; the largest need goes into the image as IMGSMITH_MODEL_VRAM, which the\n"
      "probe checks against the GPU's free memory at start (repeatable)");
  cmd->add_flag("--no-probe", args->no_probe, "Do not bake in imgsmith-probe as the entrypoint");
  cmd->add_option("--probe-image", args->options.probe_image,
                  "Copy the probe from this image by default (REGISTRY/imgsmith-probe:TAG, made\n"
                  "by `imgsmith probe --write-image`), so that a fresh clone builds without\n"
                  "imgsmith; without it, from .imgsmith/ in the build context")
      ->check([](const std::string& text) -> std::string {
        // Docker's reference rules (RegistryRef::parse); no tag reads as
        // "latest", which is refused with it: the probe must be a version.
        const auto ref = RegistryRef::parse(text);
        if (!ref || (ref->digest.empty() && ref->tag == "latest"))
          return text +
                 ": give an image with its version tag or digest, e.g. "
                 "registry.example.com/imgsmith-probe:0.1.0";
        return "";
      });
  cmd->add_flag("--no-verify", args->no_verify,
                "Leave out the final stage's build-time check (every Python extension's shared "
                "libraries resolve, the command's imports import)");
  cmd->add_flag("--no-runtime-compiler", args->no_runtime_compiler,
                "Leave gcc and the Python headers out of the final image, which Triton (vllm,\n"
                "sglang, triton) otherwise gets to compile its kernels at start");
  cmd->add_flag("--compose", args->options.compose,
                "Also write compose.yaml with the GPU reservation");
  cmd->add_flag("--k8s", args->options.k8s,
                "Also write Kubernetes manifests in k8s/: a Deployment and Service for a server\n"
                "(a detected port), a Job otherwise; the GPU as a limit, GPU-node scheduling\n"
                "(and GPU memory, when the model's need is known), the probe's --check as the\n"
                "startup probe, the image's non-root user");
  cmd->add_flag("--k8s-validator", args->options.k8s_validator,
                "Also write k8s/gpu-node-validator.yaml: a DaemonSet that runs this image's\n"
                "imgsmith-probe --bench --json once on every GPU node and keeps each report in\n"
                "its log, for `imgsmith probe --summarize`");
  cmd->add_option("--gpus", args->options.gpus, "GPUs a pod asks for, with --k8s (default 1)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--gpu-resource", args->options.gpu_resource,
                  "The device plugin's resource name, with --k8s (default nvidia.com/gpu; a MIG\n"
                  "or time-sliced one such as nvidia.com/mig-1g.10gb)");
  cmd->add_flag("--syntax", args->options.syntax,
                "Start with '# syntax=docker/dockerfile:1' (BuildKit then pulls that frontend)");
  cmd->add_flag("--stdout", args->to_stdout, "Print the Dockerfile instead of writing files");
  cmd->add_flag(
      "--force", args->force,
      "Replace an existing Dockerfile, .dockerignore (Dockerfile.dockerignore), compose.yaml\n"
      "or k8s/ manifest");
  cmd->add_flag("--explain", args->explain, "Show every detection and decision with its source");
  cmd->callback([args, &exit_code] { exit_code = run_gen(*args); });
}

}  // namespace imgsmith
