// The decisions: which image, which CUDA, which Python, how to install. The
// facts come from the embedded tables; this file holds only the rules, and
// records each decision with its reason for `--explain` and the summary.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "imgsmith/util/error.hpp"
#include "plan_internal.hpp"

namespace imgsmith::gen {

std::string shell_quote(const std::string& word) {
  static const std::regex kPlain(R"([A-Za-z0-9_.,:/=+@%^-]+)");
  if (std::regex_match(word, kPlain)) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Rewrites an image reference to come from a mirror: PREFIX replaces the
// registry, and Docker Hub's official images gain their "library/" path.
std::string mirrored(const std::string& ref, const std::string& mirror) {
  if (mirror.empty()) return ref;
  std::string prefix = mirror;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  std::string path = ref;
  const auto slash = ref.find('/');
  const std::string first = slash == std::string::npos ? "" : ref.substr(0, slash);
  if (first.find('.') != std::string::npos || first.find(':') != std::string::npos ||
      first == "localhost")
    path = ref.substr(slash + 1);  // ghcr.io/astral-sh/uv -> astral-sh/uv
  else if (slash == std::string::npos)
    path = "library/" + ref;  // python:3.12 -> library/python:3.12
  return prefix + "/" + path;
}

Decider::Decider(const Project& project, const Options& options)
    : project_(project), options_(options), tables_(builtin_tables()) {}

// --port: the detected server is told to listen there (its --port
// argument, its bind address, its environment); a command gen did not
// write only gets the port published, and a warning.
void Decider::use_port(bool detected_command) {
  const std::string from = std::to_string(plan_.port);
  const std::string to = std::to_string(options_.port);
  bool changed = false;
  auto rewrite = [&](std::string& word) {
    for (const std::string& lead : {std::string(), std::string(":"), std::string("=")}) {
      const std::string old_tail = lead + from;
      if (plan_.port != 0 && word.size() >= old_tail.size() &&
          word.compare(word.size() - old_tail.size(), old_tail.size(), old_tail) == 0 &&
          (!lead.empty() || word == from)) {
        word.replace(word.size() - from.size(), from.size(), to);
        changed = true;
        return;
      }
    }
  };
  if (detected_command) {
    for (auto& w : plan_.cmd) rewrite(w);
    for (auto& e : plan_.env) rewrite(e);
  }
  if (!changed)
    plan_.warnings.push_back("--port " + to + ": gen publishes the port but cannot tell " +
                             join(plan_.cmd, " ") +
                             " to listen on it; make sure the app does, on 0.0.0.0");
  decide("--port", "the app listens on port " + to + (changed ? ", in place of " + from : ""));
  plan_.port = options_.port;
}

void Decider::listen_outside(bool told, const std::string& source,
                             const std::string& configured_host) {
  std::set<std::string> top_level;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(project_.dir, ec))
    top_level.insert(e.path().filename().string());
  const ServerListen sl = server_listen(plan_.cmd, plan_.env, tables_, top_level, configured_host);
  if (sl.server == nullptr && sl.without_subcommand != nullptr) {
    const ServerFact& row = *sl.without_subcommand;
    // Where the subcommand goes is the program's usage: after the program
    // alone is certain, among other arguments (vllm bench throughput) it is not.
    const std::string how =
        plan_.cmd.size() == 1
            ? "pass --cmd '" + plan_.cmd.front() + " " + row.subcommand + "'"
            : "pass --cmd with " + row.subcommand + " where " + row.name + "'s usage puts it";
    port_said_ = true;
    plan_.warnings.push_back(source + ": " + join(plan_.cmd, " ") + " serves (as " + row.name +
                             ") only with " + row.subcommand + " among its arguments (" +
                             row.source +
                             "); without it the image runs it as a command-line program, with no "
                             "server and no port. If the image should serve, " +
                             how);
    return;
  }
  if (sl.server == nullptr) {
    // A console script that no server row names is a program that does its
    // work and exits, or waits for arguments: the image cannot know which.
    if (!told && source == "pyproject.toml scripts" && plan_.port == 0 && plan_.cmd.size() == 1) {
      port_said_ = true;
      plan_.warnings.push_back(
          source + ": the image's command is the console script " + plan_.cmd.front() +
          ", which gen knows as no server: it runs with no arguments, and the image publishes no "
          "port. Give it its arguments after the image's name (docker run IMAGE " +
          plan_.cmd.front() + " ARGS), or pass --cmd (and --port, if it serves)");
    }
    return;
  }
  const std::string& name = sl.server->name;
  const bool guessed = !told && project_.python && project_.python->port_guessed;
  if (sl.port != 0 && sl.port != plan_.port && (told || plan_.port == 0 || guessed)) {
    decide(source, name + " listens on port " + std::to_string(sl.port) + " (" + sl.port_from +
                       ")" +
                       (plan_.port != 0 ? ", in place of the detected " + std::to_string(plan_.port)
                                        : std::string()) +
                       "; source: " + sl.server->source);
    plan_.port = sl.port;
  }
  if (sl.unexpanded_port) {
    port_said_ = true;
    plan_.warnings.push_back(source + ": Docker runs an exec-form command without a shell, so " +
                             name + " gets " + sl.port_from.substr(0, sl.port_from.find(" (")) +
                             " as written, which is no port; give the number, or run the "
                             "command under sh -c");
  }
  if (sl.config)
    decide(source, name +
                       " reads a config file that may set its address and port; gen takes "
                       "neither from it (--port publishes one)");
  if (!sl.loopback_only) return;
  const std::string fix = !sl.fix.empty() ? join(sl.fix, " ") : sl.fix_env;
  // The user's own command, a shell line, or an address the command or the
  // project's config sets on purpose is theirs to change: said, not done.
  if (told || sl.shell || sl.host_by_argument || fix.empty()) {
    std::string how = sl.server->listen_all_hint.empty() ? "make it listen on 0.0.0.0"
                                                         : sl.server->listen_all_hint;
    if (sl.host_from == "the project's config")
      how = "set its address to 0.0.0.0 in " + source;
    else if (sl.host_by_argument && !sl.fix.empty())
      how = "make " + sl.host_from + " listen on 0.0.0.0 (" + fix + ")";
    else if (!sl.fix.empty())
      how = "add " + fix + " to the command";
    else if (!fix.empty())
      how = "set " + fix + " in the image's environment";
    plan_.warnings.push_back(source + ": " + name + " listens on " + sl.host + " only (" +
                             sl.host_from +
                             "), which no port mapping reaches from outside the container: " + how +
                             " (" + sl.server->source + ")");
    return;
  }
  if (!sl.fix.empty())
    plan_.cmd.insert(plan_.cmd.end(), sl.fix.begin(), sl.fix.end());
  else
    plan_.env.push_back(sl.fix_env);
  decide(source, name + " listens on " + sl.host + " only (" + sl.host_from + "): gen " +
                     (sl.fix.empty() ? "sets " : "adds ") + fix +
                     " so that it listens on every interface (" + sl.server->source + ")");
}

// The packages gen cannot classify: one warning naming them all, with how
// to tell gen, never a silent "CPU".
void Decider::apply_unknown_packages() {
  if (unknown_.empty()) return;
  // Labels ("name[extra] (file:line)") for the warnings, and the first name
  // of each kind for the imgsmith.toml line that tells gen.
  std::vector<std::string> hinted, plain;
  std::string first_hinted, first_plain;
  for (const auto* v : unknown_) {
    const std::string label =
        v->name + (v->need.empty() ? "" : "[" + v->unknown_extra + "]") + " (" + v->source + ")";
    plan_.unknown_packages.push_back(label);
    const bool gpu_words = v->basis == Basis::NameHint || !v->unknown_extra.empty();
    (gpu_words ? hinted : plain).push_back(label);
    std::string& first = gpu_words ? first_hinted : first_plain;
    if (first.empty()) first = v->name;
  }
  auto how = [](const std::string& name) {
    return "tell gen in imgsmith.toml: [gen] packages = { \"" + name +
           "\" = \"bundled\" } (bundled: its wheels bring their own CUDA; system: it loads the "
           "image's CUDA; system-cudnn: and cuDNN; none: CPU only)";
  };
  if (!hinted.empty())
    plan_.warnings.push_back("gen does not know " + join(hinted, ", ") +
                             ", whose name speaks of CUDA or a GPU" +
                             (plan_.gpu ? "; the image's CUDA was chosen without it"
                                        : "; the image has no CUDA for it") +
                             ": " + how(first_hinted));
  if (!plain.empty())
    plan_.warnings.push_back(
        "gen does not know what " + join(plain, ", ") + (plain.size() > 1 ? " need" : " needs") +
        " from a GPU, and chose as if nothing; if one needs CUDA, " + how(first_plain));
}

// System libraries the project's wheels need and do not bundle (libGL for
// opencv-python, ffmpeg for whisper), on the final image's OS.
void Decider::apply_system_libraries() {
  const std::string os = plan_.gpu ? plan_.os : std::string("debian");
  const SystemLibraries libs = system_libraries(verdicts_, tables_, os);
  for (const auto& need : libs.final_stage)
    if (!contains(plan_.final_apt, need.package)) {
      plan_.final_apt.push_back(need.package);
      decide("data/python-packages.json",
             need.package + ": installed in the final stage, the " + need.why);
    }
  // Programs the code runs (ffmpeg through subprocess): their packages too.
  if (project_.python)
    for (const auto& [program, where] : project_.python->programs_run) {
      const auto row = tables_.programs.find(program);
      if (row == tables_.programs.end()) continue;
      const auto by_os = row->second.find(os);
      const std::string package =
          by_os != row->second.end() ? by_os->second : row->second.begin()->second;
      if (contains(plan_.final_apt, package)) continue;
      plan_.final_apt.push_back(package);
      decide(where, "the code runs " + program + ": " + package +
                        " installed in the final stage (data/soname-packages.json programs)");
    }
  // A package that runs on the CPU as installed, but can use a GPU another
  // way (a build flag, another wheel): said, so that a CPU image is no surprise.
  for (const auto& v : verdicts_)
    if (v.fact != nullptr && !v.fact->gpu_note.empty() && v.need == "none" &&
        (!v.from_lock || plan_.gpu))
      plan_.notes.push_back(v.name + " (" + v.source + ") runs on the CPU as installed: " +
                            v.fact->gpu_note + " (" + v.fact->source + ")");
  // The project is itself a package gen's table knows, one that runs on the
  // CPU as built from source unless told otherwise (llama-cpp-python's
  // CMAKE_ARGS): its own source is built here as the plain install, so the
  // CPU image is said, with how the package uses a GPU.
  if (project_.python && !plan_.gpu && !project_.python->distribution.empty()) {
    const auto own = tables_.packages.find(project_.python->distribution);
    if (own != tables_.packages.end() && own->second.need == "none" &&
        !own->second.gpu_note.empty())
      plan_.warnings.push_back(
          "pyproject.toml: the project is " + own->first +
          ", which runs on the CPU as built from its source: " + own->second.gpu_note + " (" +
          own->second.source +
          "). gen made a CPU image and does not set the project's own build flags; for a GPU "
          "image, build its source for CUDA on a CUDA devel builder (data/python-packages.json's "
          "row gives the flags)");
  }
  for (const auto& need : libs.builder)
    if (!contains(plan_.builder_apt, need.package)) {
      plan_.builder_apt.push_back(need.package);
      decide("data/python-packages.json",
             need.package + ": installed in the builder, a " + need.why);
    }
}

// Paths the app writes beside its code: directories become the app
// user's (and emptyDir volumes under Kubernetes' read-only root); a file
// there cannot be, without the code directory itself, so gen warns.
void Decider::apply_writable_paths() {
  const auto paths = writable_paths(project_, verdicts_, options_.writable, options_.policy_source);
  std::vector<std::string> said;
  for (const auto& w : paths) {
    const std::string in_image = plan_.app_dir + "/" + w.path;
    if (w.directory) {
      plan_.writable_dirs.push_back(in_image);
      said.push_back(w.path + "/");
      decide(w.source, in_image + ": writable by the app (" + w.why + ")");
    } else {
      const auto slash = w.path.rfind('/');
      if (slash != std::string::npos) {
        const std::string dir = plan_.app_dir + "/" + w.path.substr(0, slash);
        if (!contains(plan_.writable_dirs, dir)) plan_.writable_dirs.push_back(dir);
        said.push_back(w.path.substr(0, slash) + "/");
        decide(w.source,
               dir + ": writable by the app, which writes " + w.path + " (" + w.why + ")");
      } else {
        plan_.warnings.push_back(
            w.source + ": the app writes " + w.path + " (" + w.why + ") in " + plan_.app_dir +
            ", which it cannot write (the code is read-only to it); point it into a "
            "directory, such as data/" +
            w.path +
            ", and list that directory in imgsmith.toml's "
            "[gen] writable, or mount a volume there");
      }
    }
  }
  if (!said.empty())
    plan_.notes.push_back("the app writes " + join(said, ", ") +
                          " beside its code: the image makes " + (said.size() > 1 ? "them" : "it") +
                          " the app user's; mount a volume there to keep what it writes");
}

// The final stage checks itself at build time (libraries and imports).
void Decider::apply_image_check() {
  const ImageCheck check = image_check(plan_, options_.verify, tables_);
  plan_.verify = check.enabled;
  plan_.verify_roots = check.library_roots;
  plan_.verify_allowed = check.allowed_missing;
  plan_.verify_packages = check.soname_packages;
  plan_.verify_entry_files = check.entry_files;
  plan_.verify_entry_modules = check.entry_modules;
  decide(options_.verify ? "gen" : "--no-verify", check.why);
}

void Decider::apply_context_hygiene() {
  const ContextHygiene hygiene =
      context_hygiene(project_, project_.context_path.empty() ? "" : project_.context_path + "/");
  plan_.ignore_from_git = hygiene.from_git;
  plan_.ignore_secrets = hygiene.secrets;
  for (const auto& w : hygiene.warnings) plan_.warnings.push_back(w);
  for (const auto& r : hygiene.reasons) decide(r.source, r.text);
}

// A declared package as the final image's OS names it: a transitional
// package that OS removed becomes its replacement (data/soname-packages.json
// "removed"), and a library another OS names otherwise for the same soname
// (Ubuntu 24.04's t64 names: libasound2 -> libasound2t64) takes this OS's
// name. A pinned package is the user's exact choice and stays.
std::vector<std::string> Decider::package_on_os(const std::string& source, const std::string& spec,
                                                const std::string& os) {
  if (spec.find('=') != std::string::npos) return {spec};
  if (const auto removed = tables_.removed_packages.find(spec);
      removed != tables_.removed_packages.end()) {
    if (const auto on_os = removed->second.find(os); on_os != removed->second.end()) {
      decide(source, spec + ": " + os + " no longer has this transitional package; installs " +
                         join(on_os->second, " and ") +
                         ", which it stood for (data/soname-packages.json removed)");
      return on_os->second;
    }
  }
  std::string renamed;
  for (const auto& [soname, by_os] : tables_.sonames) {
    const auto here = by_os.find(os);
    if (here != by_os.end() && here->second == spec) return {spec};  // the OS's own name
    if (!renamed.empty() || here == by_os.end()) continue;
    for (const auto& [other, package] : by_os)
      if (other != os && package == spec) renamed = here->second;
  }
  if (renamed.empty() || renamed == spec) return {spec};
  decide(source, spec + ": " + os + " names this library " + renamed +
                     " (the same soname, data/soname-packages.json); installs " + renamed);
  return {renamed};
}

// What the project declares outside pip (apt.txt, [gen] system_packages):
// run-time packages into the final stage; -dev packages, which are for
// compiling, into the builder only.
void Decider::system_packages() {
  std::vector<Evidence> all = project_.system_packages;
  for (const auto& s : options_.system_packages)
    all.push_back({options_.policy_source + " system_packages", s});
  std::vector<std::string> unpinned;
  const std::string os = plan_.gpu ? plan_.os : std::string("debian");
  std::vector<Evidence> named;
  for (const auto& [source, spec] : all) {
    for (const auto& package : package_on_os(source, spec, os)) named.push_back({source, package});
  }
  for (const auto& [source, spec] : named) {
    const std::string name = spec.substr(0, spec.find('='));
    const bool dev = name.size() > 4 && name.compare(name.size() - 4, 4, "-dev") == 0;
    auto& list = dev ? plan_.builder_apt : plan_.final_apt;
    if (!contains(list, spec)) list.push_back(spec);
    plan_.declared_apt.push_back(spec);
    if (spec.find('=') == std::string::npos) unpinned.push_back(name);
    decide(source, spec + ": installed with apt in the " +
                       (dev ? "builder (headers, for compiling)" : "final stage"));
  }
  if (!unpinned.empty())
    plan_.notes.push_back(
        join(unpinned, ", ") + (unpinned.size() > 1 ? " are" : " is") +
        " installed unpinned, as "
        "declared (hadolint DL3008): write NAME=VERSION* (such as ffmpeg=7:5.1.*) to pin");
}

// cog.yaml's Python is the version Cog's build picked, not one the
// project needs: where gen builds on none that matches, it is said and
// the dependencies choose (a file that asks for a Python, such as
// .python-version, is refused instead).
void Decider::known_cog_python(PythonProject& py) {
  if (py.python_constraint_source.rfind("cog.yaml", 0) != 0 || !options_.python.empty()) return;
  for (const auto& v : tables_.known_python)
    if (python_satisfies(v, py.python_constraint)) return;
  plan_.warnings.push_back(py.python_constraint_source + " asks for Python " +
                           py.python_constraint + ", which gen builds on no image for (" +
                           join(tables_.known_python, ", ") +
                           "): the dependencies choose the Python instead; pass --python 3.X "
                           "to choose it");
  py.python_constraint.clear();
  py.python_constraint_source.clear();
}

// [gen] extras: the project's optional dependency groups, installed with it
// and seen by every decision (an extra may bring torch).
PythonProject Decider::with_extras(const PythonProject& given) {
  PythonProject py = given;
  if (options_.extras.empty()) return py;
  const std::string where =
      (options_.policy_source.empty() ? std::string("extras") : options_.policy_source + " extras");
  std::vector<std::string> names;
  for (const auto& [name, reqs] : py.optional_dependencies) names.push_back(name);
  std::vector<std::string> wanted;
  for (const auto& e : options_.extras) {
    const std::string n = normalise_name(e);
    const auto it = py.optional_dependencies.find(n);
    if (it == py.optional_dependencies.end())
      throw InputError(where + ": '" + e + "' is not an extra of this project; pyproject.toml " +
                       (names.empty()
                            ? std::string("has no [project.optional-dependencies]")
                            : "[project.optional-dependencies] has " + join(names, ", ")));
    py.requirements.insert(py.requirements.end(), it->second.begin(), it->second.end());
    wanted.push_back(n);
  }
  if (!py.lock.empty() || (!py.install_files.empty() && !py.installable))
    throw InputError(where + ": extras are installed with the project from pyproject.toml, but " +
                     (py.lock.empty() ? std::string("it has no [build-system] to install it with")
                                      : py.lock + " decides what is installed") +
                     "; list those packages in the requirements instead");
  extras_ = wanted;
  return py;
}

// --context above the project: the Dockerfile names its sources from the
// context, and the image keeps the context's layout (the project's code
// under /app/services/api, a shared file at /app/shared/...), so that every
// relative path the project names resolves in the image as in the checkout.
void Decider::build_context() {
  plan_.context_path = project_.context_path;
  plan_.context_dir = project_.context;
  std::vector<std::string> up;
  for ([[maybe_unused]] const auto& part : std::filesystem::path(project_.context_path))
    up.push_back("..");
  plan_.context_up = join(up, "/");
  std::vector<std::string> copied;
  for (const auto& outside : project_.outside_paths) {
    plan_.outside_paths.push_back(outside.directory && outside.path != "." ? outside.path + "/"
                                                                           : outside.path);
    copied.push_back(outside.path);
  }
  const bool python = project_.python.has_value();
  if (python) plan_.app_dir = "/app/" + project_.context_path;
  decide("--context", "the build context is " + project_.context.string() + " (" +
                          plan_.context_up +
                          " from the project): COPY names paths from there, the project is " +
                          project_.context_path + " in it and " +
                          (python ? plan_.app_dir + " in the image"
                                  : "/src/" + project_.context_path + " in the builder") +
                          (copied.empty() ? "" : ", beside " + join(copied, ", ")) +
                          "; Dockerfile.dockerignore, which BuildKit reads in place of the "
                          "context's .dockerignore, "
                          "leaves out the rest of the context");
}

void Decider::validate() {
  if (options_.port < 0 || options_.port > 65535)
    throw InputError("--port " + std::to_string(options_.port) +
                     ": give a TCP port from 1 to 65535");
  static const std::regex kCuda(R"(\d+\.\d+(\.\d+)?)");
  static const std::regex kPython(R"(3\.\d+)");
  if (options_.flavor != "auto" && options_.flavor != "base" && options_.flavor != "runtime" &&
      options_.flavor != "devel")
    throw InputError("--flavor " + options_.flavor + ": choose auto, base, runtime or devel");
  if (!options_.cuda.empty() && !std::regex_match(options_.cuda, kCuda))
    throw InputError("--cuda " + options_.cuda +
                     ": give a CUDA release as X.Y or X.Y.Z, e.g. 12.8");
  if (!options_.os.empty() && tables_.os.find(options_.os) == tables_.os.end())
    throw InputError("--os " + options_.os + ": choose ubuntu22.04 or ubuntu24.04");
  if (!options_.python.empty() && !std::regex_match(options_.python, kPython))
    throw InputError("--python " + options_.python + ": give a Python release as 3.X, e.g. 3.12");
  if (!options_.python.empty() && !contains(tables_.known_python, options_.python))
    throw InputError("--python " + options_.python + ": gen knows " +
                     join(tables_.known_python, ", "));
  if (options_.gpus < 1 || options_.gpus > 64)
    throw InputError("--gpus " + std::to_string(options_.gpus) + ": give 1 to 64 GPUs a pod");
  // An extended resource name: DOMAIN/NAME, as the device plugin advertises
  // it (nvidia.com/gpu, nvidia.com/mig-1g.10gb, nvidia.com/gpu.shared).
  static const std::regex kResource(
      R"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?)");
  if (!std::regex_match(options_.gpu_resource, kResource))
    throw InputError("--gpu-resource '" + options_.gpu_resource +
                     "': give the device plugin's resource name, e.g. nvidia.com/gpu or "
                     "nvidia.com/mig-1g.10gb");
}

Plan Decider::make() {
  validate();
  plan_.project_name = project_.name;
  plan_.explain = project_.evidence;
  plan_.syntax = options_.syntax;
  plan_.compose = options_.compose;
  plan_.k8s = options_.k8s;
  plan_.k8s_gpus = options_.gpus;
  plan_.gpu_resource = options_.gpu_resource;
  if (!project_.context_path.empty()) build_context();
  if (project_.python) {
    PythonProject py = with_extras(*project_.python);
    known_cog_python(py);
    python(py);
  } else if (project_.cuda_cpp) {
    cuda_cpp(*project_.cuda_cpp);
  } else {
    throw InputError(project_.dir.string() + ": nothing to build");
  }
  apply_target_gpus();
  system_packages();
  if (project_.python) {
    apply_unknown_packages();
    apply_system_libraries();
    apply_writable_paths();
  }
  models();
  if (plan_.template_name.empty()) plan_.template_name = plan_.flavor;
  if (!options_.probe && plan_.gpu) decide("--no-probe", "no probe: the app is the entrypoint");
  apply_image_check();
  apply_context_hygiene();
  if (options_.k8s_validator) {
    // The validator runs the image's probe on the GPU nodes: an image
    // without one (no GPU in the project, or --no-probe) has nothing to run.
    if (!plan_.gpu)
      throw InputError("--k8s-validator: nothing in " + project_.dir.string() +
                       " uses a GPU, so its image carries no probe to validate GPU nodes with; "
                       "generate the validator from a GPU project");
    if (!plan_.probe)
      throw InputError("--k8s-validator runs imgsmith-probe from the image: drop --no-probe");
    plan_.k8s_validator = true;
  }
  return plan_;
}

Plan make_plan(const Project& project, const Options& options) {
  return Decider(project, options).make();
}

// The exec form of CMD is a JSON array: a word holding a tab or a newline
// must be escaped, or Docker, failing to parse it, silently runs the line
// as a shell command instead.
std::string command_json(const std::vector<std::string>& words) {
  std::vector<std::string> quoted;
  for (const auto& w : words) {
    try {
      quoted.push_back(nlohmann::json(w).dump());
    } catch (const nlohmann::json::exception&) {
      throw InputError("the command word '" + visible(w) +
                       "' is not valid UTF-8, which a Dockerfile's exec form (JSON) cannot hold");
    }
  }
  return "[" + join(quoted, ", ") + "]";
}

}  // namespace imgsmith::gen
