// The plan for a Python project: the CPU image or a CUDA one, the CUDA
// release, the OS and the Python, then the install steps and the command.
#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "imgsmith/util/error.hpp"
#include "plan_internal.hpp"

namespace imgsmith::gen {
namespace {

// "12.4" -> "12".
std::string major_of(const std::string& version) { return version.substr(0, version.find('.')); }

}  // namespace

std::string Decider::newest_python(const PythonProject& py, bool with_wheels) const {
  auto fits = [&](const std::string& v) {
    return (py.python_constraint.empty() || python_satisfies(v, py.python_constraint)) &&
           (!with_wheels || wheels_fit(v));
  };
  if (fits(tables_.preferred_python)) return tables_.preferred_python;
  for (auto it = tables_.known_python.rbegin(); it != tables_.known_python.rend(); ++it)
    if (fits(*it)) return *it;
  return {};
}

std::string Decider::python_for_cpu(const PythonProject& py) {
  if (!options_.python.empty()) return options_.python;
  const std::string project_only = newest_python(py, false);
  // Where no Python has every framework's wheels (warned about), the
  // project's own constraint decides.
  const std::string with_wheels = newest_python(py, true);
  if (!with_wheels.empty()) {
    if (with_wheels != project_only)
      decide("data/python-wheels.json",
             "Python " + with_wheels + ": the newest the project's frameworks have wheels for");
    return with_wheels;
  }
  if (!project_only.empty()) return project_only;
  throw InputError(py.python_constraint_source + " asks for Python " + py.python_constraint +
                   ", which matches none gen knows (" + join(tables_.known_python, ", ") +
                   "); pass --python 3.X");
}

// Picks the OS and the Python together: the OS's own Python when it fits,
// since it costs nothing extra, else uv's managed build of the one asked for.
void Decider::choose_gpu_python(const PythonProject& py, const CudaRelease& release) {
  auto fits = [&](const std::string& version) {
    if (!options_.python.empty()) return version == options_.python;
    return (py.python_constraint.empty() || python_satisfies(version, py.python_constraint)) &&
           wheels_fit(version);
  };
  std::vector<std::string> candidates;
  if (!options_.os.empty())
    candidates.push_back(choose_os(release));
  else
    for (const auto& os : tables_.os_preference)
      if (contains(release.os, os)) candidates.push_back(os);
  if (options_.base.empty())
    for (const auto& os : candidates)
      if (fits(tables_.os.at(os).python)) {
        plan_.os = os;
        plan_.python = tables_.os.at(os).python;
        decide(plan_.os, "Python " + plan_.python + ": the OS's own, installed with apt");
        return;
      }
  plan_.os = candidates.empty() ? choose_os(release) : candidates.front();
  plan_.managed_python = true;
  const std::string both = wheels_.constrained ? newest_python(py, true) : std::string();
  if (!options_.python.empty()) {
    plan_.python = options_.python;
  } else if (!both.empty()) {
    plan_.python = both;
  } else if (py.python_constraint.empty()) {
    plan_.python = tables_.os.at(plan_.os).python;
  } else if (python_satisfies(tables_.preferred_python, py.python_constraint)) {
    // The newest Python is not the safest: frameworks publish wheels for
    // it last. The preferred one first, when the project accepts it.
    plan_.python = tables_.preferred_python;
  } else {
    for (auto it = tables_.known_python.rbegin();
         it != tables_.known_python.rend() && plan_.python.empty(); ++it)
      if (python_satisfies(*it, py.python_constraint)) plan_.python = *it;
    if (plan_.python.empty())
      throw InputError(py.python_constraint_source + " asks for Python " + py.python_constraint +
                       ", which matches none gen knows (" + join(tables_.known_python, ", ") +
                       "); pass --python 3.X");
  }
  decide(plan_.os, "Python " + plan_.python + ": uv's managed build in /opt/python" +
                       (options_.base.empty()
                            ? ", since " + plan_.os + " ships " + tables_.os.at(plan_.os).python
                            : ", since the --base image's own Python is unknown"));
}

void Decider::python(const PythonProject& py) {
  verdicts_ = classify_packages(py.requirements, tables_,
                                {options_.packages, options_.policy_source + " packages"}, py.lock);
  GpuNeeds g = python_needs(py);
  unknown_ = unknown_packages(verdicts_);
  std::vector<Requirement> with_implied = py.requirements;
  if (!implied_torch_.name.empty()) with_implied.push_back(implied_torch_);
  wheels_ = python_from_wheels(with_implied, tables_);
  for (const auto& r : wheels_.reasons) decide(r.source, r.text);
  if (!options_.python.empty() && !wheels_fit(options_.python))
    plan_.warnings.push_back("--python " + options_.python +
                             ": the project's frameworks publish no wheels for it (see --explain); "
                             "pip will build them from source or fail");
  if (wheels_.constrained && wheels_.allowed.empty())
    plan_.warnings.push_back(
        "no Python has wheels of every framework the project pins (see --explain, "
        "data/python-wheels.json); pip may fail to install them together");
  // Detection's doubts that would stop the container are warnings, not
  // only --explain lines.
  for (const auto& e : project_.evidence)
    if (e.text.rfind("warning: ", 0) == 0)
      plan_.warnings.push_back(e.source + ": " + e.text.substr(9));
  const bool forced = options_.flavor != "auto" || !options_.base.empty();
  if (g.need == Need::None && !forced) {
    plan_.kind = "python-cpu";
    plan_.template_name = "cpu-python";
    plan_.python = python_for_cpu(py);
    if (!contains(tables_.known_python, plan_.python))
      throw InputError("--python " + plan_.python + ": gen knows " +
                       join(tables_.known_python, ", "));
    const std::string image =
        std::regex_replace(tables_.cpu_image, std::regex(R"(\{version\})"), plan_.python);
    plan_.final_image = plan_.builder_image = mirrored(image, options_.registry_mirror);
    plan_.why_base.push_back(
        (!py.undeclared_imports.empty()
             ? std::string("No GPU as far as gen knows: the code imports modules no dependency "
                           "file names (see the warning)")
         : unknown_.empty()
             ? std::string("No GPU: nothing in this project uses one")
             : "No GPU as far as gen knows: no package it knows needs one, but it does not know " +
                   std::to_string(unknown_.size()) + " (see the warning)") +
        (g.cpu_torch ? " (torch is the CPU build)" : "") + ", so the image has no CUDA at all.");
    plan_.why_base.push_back("Final stage on " + plan_.final_image + ".");
    if (!options_.cuda.empty() || options_.cudnn)
      plan_.warnings.push_back(
          "--cuda/--cudnn ignored: nothing in this project uses a GPU; pass "
          "--flavor base or runtime to build on CUDA anyway.");
    decide(".", unknown_.empty() ? "CPU image: no dependency needs a GPU"
                                 : "CPU image: no dependency gen knows needs a GPU");
    if (project_.has_cuda_sources)
      plan_.warnings.push_back(
          "the project has CUDA sources, but no dependency needs a GPU, so the CPU image has "
          "no nvcc to build them; pass --flavor base or runtime to build on CUDA");
    if (options_.probe)
      decide(".", "no probe: the image uses no GPU, so there is nothing to check");
    size_class(" plus the dependencies");
  } else {
    plan_.kind = "python-gpu";
    plan_.gpu = true;
    if (g.need == Need::None) {
      plan_.warnings.push_back(
          "nothing in this project uses a GPU, yet a CUDA image was asked for; the CPU image "
          "would be smaller (run gen without --flavor/--base).");
      g.need = Need::Bundled;
    }
    std::string cuda;
    std::string why;
    std::string torch_build;  // torch's own CUDA, when the image follows another framework
    if (g.torch != nullptr) {
      cuda = torch_cuda(py, *g.torch);
      why = "torch's CUDA build";
      // torch's wheels bring their own CUDA libraries; a framework beside
      // it that loads the system's (onnxruntime-gpu, tensorflow) finds only
      // the image's, so the image follows that framework's build unless
      // torch's release is one it accepts (the same major, when it names
      // only a major).
      const bool accepted = g.cuda == major_of(cuda) || g.cuda == major_minor(cuda);
      if (g.cuda_loaded_from_system && options_.cuda.empty() && !accepted) {
        torch_build = cuda;
        cuda = cuda_for_major(g.cuda);
        why = g.cuda_source;
        decide(g.cuda_source,
               "CUDA " + cuda +
                   ": what its build loads from the system; torch brings its own CUDA " +
                   torch_build + " libraries as pip wheels" +
                   (major_of(torch_build) != major_of(cuda)
                        ? ", which need a driver for CUDA " + major_of(torch_build) +
                              " on the host (the image asks only for " + cuda + ")"
                        : ""));
      }
    } else if (!options_.cuda.empty()) {
      cuda = options_.cuda;
      why = "--cuda";
      decide("--cuda", "CUDA " + options_.cuda + ", as asked");
    } else if (!g.cuda.empty() && g.need == Need::Bundled &&
               g.cuda.find('.') == std::string::npos) {
      // The wheels bring their own CUDA libraries and need only a driver
      // of their major (minor-version compatibility); the image's
      // NVIDIA_REQUIRE_CUDA is the only other demand, so the lowest
      // release of that major runs on the most hosts.
      cuda = lowest_of_major(g.cuda);
      why = g.cuda_source;
      decide(g.cuda_source, "CUDA " + cuda + ": its wheels bring their own CUDA " + g.cuda +
                                " libraries, so the "
                                "lowest CUDA " +
                                g.cuda + " image (the oldest driver) is enough");
    } else if (!g.cuda.empty()) {
      cuda = cuda_for_major(g.cuda);
      why = g.cuda_source;
      decide(g.cuda_source, "CUDA " + cuda + ": what its build expects");
    } else {
      cuda = tables_.default_cuda;
      why = "gen's default";
      decide("data/cuda-images.json",
             "CUDA " + cuda + ": gen's default; set --cuda to match your framework's build");
    }
    const bool cudnn_wanted = g.need == Need::SystemCudnn || options_.cudnn;
    const CudaRelease& release =
        cudnn_wanted && g.cudnn != 0
            ? release_with_cudnn(cuda, why, g.cudnn, g.cudnn_source, why == "--cuda")
            : release_for(cuda, why);
    const std::string names = join(g.reasons, ", ");
    const bool plural = g.reasons.size() > 1;
    std::vector<std::string> reasons;
    if (g.need == Need::Bundled)
      reasons.push_back(names + (plural ? " bring their" : " brings its") +
                        " own CUDA libraries as pip wheels, so runtime's would go unused");
    else if (g.need == Need::System)
      reasons.push_back(names + (plural ? " load" : " loads") +
                        " CUDA libraries (cuBLAS and others) from the system");
    else
      reasons.push_back(names + (plural ? " load" : " loads") +
                        " CUDA and cuDNN libraries from the system");
    choose_flavor(g.need, reasons, g.torch != nullptr);
    choose_gpu_python(py, release);
    set_images(release, project_.has_cuda_sources || py.cuda_extension);
    // Wheels carry their own CUDA libraries and need only a driver of their
    // major (minor-version compatibility), not the one a CUDA image of their
    // exact release would ask for.
    const auto wheel_driver = torch_build.empty()
                                  ? tables_.minimum_driver.end()
                                  : tables_.minimum_driver.find(std::stoi(major_of(torch_build)));
    if (wheel_driver != tables_.minimum_driver.end() && wheel_driver->second > plan_.min_driver) {
      plan_.min_driver = wheel_driver->second;
      plan_.min_driver_why = "torch's CUDA " + torch_build +
                             " wheels need it (the image itself asks only for CUDA " +
                             major_minor(release.cuda) + ")";
      decide("data/cuda-drivers.json",
             "torch's CUDA " + torch_build +
                 " wheels need a host driver >= " + std::to_string(plan_.min_driver));
    }
    plan_.probe = options_.probe;
    plan_.probe_image = options_.probe_image;
    std::string extra = " plus the dependencies";
    if (g.torch != nullptr)
      extra = " plus torch with its CUDA wheels (" + tables_.frameworks.at("torch").size + ")";
    size_class(extra);
  }
  python_install(py);
  if (!extras_.empty() && plan_.install_mode == "requirements" && plan_.install_project) {
    // -r files do not name the extras: pip resolves them with the project.
    plan_.project_install_args = "'.[" + join(extras_, ",") + "]'";
    decide(options_.policy_source + " extras",
           "installs the project with its extras " + join(extras_, ", "));
  } else if (!extras_.empty()) {
    decide(options_.policy_source + " extras",
           "the extras " + join(extras_, ", ") + " are installed with the dependencies");
  }
  if (py.cuda_extension) cuda_extension(py);
  package_sources(py);
  runtime_compiler(g);
  if (!options_.cmd.empty()) {
    plan_.cmd = options_.cmd;
    decide("--cmd", "runs " + join(options_.cmd, " "));
  } else if (!py.cmd.empty()) {
    plan_.cmd = py.cmd;
  } else {
    throw InputError(
        project_.dir.string() +
        ": found no entrypoint. gen looked for [project.scripts], app/main.py, main.py, app.py, "
        "server.py, serve.py, streamlit_app.py, demo.py, train.py, a package with __main__.py "
        "and notebooks; pass the command with --cmd 'python -m yourpackage'");
  }
  plan_.port = py.port;
  plan_.env = py.env;
  if (!py.cog_predictor.empty() &&
      join(plan_.cmd, " ").find("cog.server.http") == std::string::npos) {
    port_said_ = true;
    plan_.warnings.push_back(
        py.cog_source + ": cog.yaml's predictor " + py.cog_predictor +
        " is served by Cog's HTTP server on port 5000 (python -m cog.server.http, in the cog "
        "package), which the maintainers' image runs; gen's command is " +
        join(plan_.cmd, " ") +
        " instead. To serve the predictor, add cog to the requirements and pass --cmd 'python -m "
        "cog.server.http' --port 5000");
  }
  listen_outside(!options_.cmd.empty(),
                 !options_.cmd.empty()   ? "--cmd"
                 : py.cmd_source.empty() ? "the command"
                                         : py.cmd_source,
                 options_.cmd.empty() ? py.server_host : "");
  if (options_.port != 0) use_port(options_.cmd.empty());
  if (options_.cmd.empty()) warn_server_without_port(py);
  task_workers(py);
}

// A task queue's jobs run only in its worker. When the image's command is
// something else (the API that queues them), the worker is said, with the
// command that starts it from the same image, and compose.yaml runs it: an
// image that accepts jobs nothing runs fails in silence.
void Decider::task_workers(const PythonProject& py) {
  const std::vector<std::string> words = split(join(plan_.cmd, " "), " ");
  for (const auto& worker : py.task_workers) {
    // The image's command is this process when it holds the process's
    // program and subcommand (celery ... beat), whatever the options.
    const auto holds = [&](const std::string& w) {
      return std::find(words.begin(), words.end(), w) != words.end();
    };
    const bool runs_it =
        holds(worker.cmd.front()) &&
        std::all_of(worker.cmd.begin(), worker.cmd.end(), [&](const std::string& w) {
          const bool plain_word =
              std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
          return !plain_word || holds(w);
        });
    if (runs_it) continue;
    const std::string& service = worker.service;
    std::vector<std::string> written;
    if (plan_.compose) written.push_back("compose.yaml runs it as the service " + service);
    if (plan_.k8s) written.push_back("k8s/" + service + ".yaml as a Deployment");
    // compose.yaml runs only a command that is whole.
    if (!worker.unnamed) plan_.workers.push_back({service, worker.what, worker.cmd, worker.source});
    plan_.warnings.push_back(worker.where + ": " + worker.what + ", and the image's command (" +
                             join(plan_.cmd, " ") +
                             ") starts none. Run one from the same image: docker run " +
                             plan_.project_name + " " + join(worker.cmd, " ") +
                             (worker.unnamed    ? std::string()
                              : written.empty() ? " (--compose and --k8s write it beside the app)"
                                                : " (" + join(written, "; ") + ")") +
                             ", with the broker the app connects to reachable from it" +
                             (worker.caveat.empty() ? std::string() : "; " + worker.caveat) +
                             "; source: " + worker.source);
  }
}

// A project that depends on a web server or UI framework while the command
// gen found publishes no port: the command is not the server (a CLI beside
// it, a launcher), or the server's port is set where gen cannot read it.
// Either way a silent image with no port would be wrong half the time.
void Decider::warn_server_without_port(const PythonProject& py) {
  // A warning already about the command's port (a console script that
  // serves only with a subcommand, a port gen cannot read, the other
  // servers a guessed command passed over) says it once.
  if (plan_.port != 0 || port_said_ || py.port_said) return;
  // The framework's package, and the row of data/servers.json that gives
  // its default port and the source of that default.
  static const std::pair<const char*, const char*> kFrameworks[] = {
      {"gradio", "gradio app"},      {"streamlit", "streamlit run"}, {"fastapi", "uvicorn"},
      {"uvicorn", "uvicorn"},        {"flask", "flask run"},         {"gunicorn", "gunicorn"},
      {"django", "django runserver"}};
  for (const auto& framework : kFrameworks) {
    const std::string package = framework.first;
    const std::string row_name = framework.second;
    if (std::none_of(py.requirements.begin(), py.requirements.end(),
                     [&](const auto& r) { return r.name == package; }))
      continue;
    std::string hint;
    for (const auto& row : tables_.servers)
      if (row.name == row_name)
        hint = " (" + row.name + "'s default is " + std::to_string(row.default_port) + ", on " +
               row.default_host + "; " + row.source + ")";
    plan_.warnings.push_back(
        (py.cmd_source.empty() ? std::string("the command") : py.cmd_source) +
        ": the project depends on " + package + ", a web server, but gen's command (" +
        join(plan_.cmd, " ") +
        ") listens on no port gen can see, so the image publishes none. If the app serves, "
        "pass --port with the port it listens on" +
        hint + ", and make it listen on 0.0.0.0; if another program is the server, pass --cmd");
    return;
  }
}

}  // namespace imgsmith::gen
