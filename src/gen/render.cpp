// Rendering: the plan's decisions become mustache data, and the templates in
// templates/ (embedded) become the Dockerfile, .dockerignore and compose.yaml.
// All Dockerfile text lives in the templates; this file only fills holes.
#include <cctype>
#include <filesystem>
#include <kainjow/mustache.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "gen_internal.hpp"
#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/version.hpp"

namespace imgsmith::gen {
namespace {

namespace km = kainjow::mustache;
namespace fs = std::filesystem;

km::data list_of(const std::vector<std::string>& items) {
  km::data list{km::data::type::list};
  for (const auto& i : items) list.push_back(km::data{i});
  return list;
}

std::string port_args(const Plan& p) {
  return p.port == 0 ? "" : " -p " + std::to_string(p.port) + ":" + std::to_string(p.port);
}

// Run in the build context: the project directory, or --context's.
std::string build_command(const Plan& p) {
  if (p.context_path.empty()) return "DOCKER_BUILDKIT=1 docker build -t " + p.project_name + " .";
  return "DOCKER_BUILDKIT=1 docker build -f " + p.context_path + "/Dockerfile -t " +
         p.project_name + " .";
}

// The shorter of `path` relative to the working directory and `path` itself:
// "../..", not /home/me/src/repo; /srv/repo, not ../../../srv/repo.
std::string from_working_dir(const fs::path& path) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec) return path.generic_string();
  const std::string relative = fs::relative(path, cwd, ec).generic_string();
  if (ec || relative.empty()) return path.generic_string();
  return relative.size() <= path.generic_string().size() ? relative : path.generic_string();
}

// The build command as printed where gen ran, which need not be the context.
std::string build_command_here(const Plan& p) {
  if (p.context_path.empty()) return build_command(p);
  return "DOCKER_BUILDKIT=1 docker build -f " +
         from_working_dir(p.context_dir / p.context_path / "Dockerfile") + " -t " + p.project_name +
         " " + from_working_dir(p.context_dir);
}

bool outside_project(const std::string& project_relative) {
  return project_relative == ".." || project_relative.rfind("../", 0) == 0;
}

km::data copy_of(const std::string& source, const std::string& target) {
  km::data d;
  d.set("source", source);
  d.set("target", target);
  return d;
}

std::string run_command(const Plan& p, const std::string& gpus) {
  return "docker run --rm" + (p.gpu ? " --gpus " + gpus : std::string()) +
         (p.shm_size.empty() ? std::string() : " --shm-size=" + p.shm_size) + port_args(p) + " " +
         p.project_name;
}

// A Kubernetes object name (DNS-1123 label): lower case, digits and '-',
// at most 63 characters, a letter or digit at each end.
std::string k8s_name(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9');
    if (ok)
      out += l;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "app" : out;
}

// Docker's --shm-size "8g" as a Kubernetes quantity, "8Gi".
std::string shm_quantity(const std::string& docker_size) {
  if (docker_size.empty()) return "";
  const char unit = docker_size.back();
  const std::string number = docker_size.substr(0, docker_size.size() - 1);
  if (unit == 'g') return number + "Gi";
  if (unit == 'm') return number + "Mi";
  return docker_size;
}

km::data plan_data(const Plan& p) {
  const Tables& t = builtin_tables();
  km::data d;
  d.set("project_name", p.project_name);
  d.set("syntax", p.syntax);
  d.set("why_base", list_of(p.why_base));
  d.set("build_command", build_command(p));
  d.set("run_command", run_command(p, "all"));
  d.set("builder_image", p.builder_image);
  d.set("final_image", p.final_image);
  d.set("builder_purpose", p.kind == "cuda-cpp" ? "compiles the program with nvcc"
                                                : "installs the dependencies into /opt/venv");
  d.set("has_builder_apt", !p.builder_apt.empty());
  d.set("builder_apt", join(p.builder_apt, " "));
  d.set("has_final_apt", !p.final_apt.empty());
  d.set("final_apt", join(p.final_apt, " "));
  d.set("uv", !p.uv_image.empty());
  d.set("uv_image", p.uv_image);
  const bool python = p.kind != "cuda-cpp";
  d.set("python", python);
  d.set("managed_python", p.managed_python);
  d.set("mode_uv", p.install_mode == "uv");
  d.set("mode_requirements", p.install_mode == "requirements");
  d.set("mode_pyproject", p.install_mode == "pyproject");
  d.set("mode_poetry", p.install_mode == "poetry");
  d.set("venv_command", p.venv_command);
  d.set("uv_python", p.uv_python);
  d.set("source_before_deps", p.source_before_deps);
  // COPY sources are relative to the build context; with --context, the
  // project's files are under context_prefix ("services/api/"), and what it
  // names outside its directory keeps its place beside it in the image.
  const bool context = !p.context_path.empty();
  const std::string prefix = context ? p.context_path + "/" : "";
  d.set("has_context", context);
  d.set("context_prefix", prefix);
  d.set("context_up", p.context_up);
  d.set("app_dir", p.app_dir);
  d.set("src_dir", context ? "/src/" + p.context_path : std::string("/src"));
  const std::string root = p.kind == "cuda-cpp" ? "/src/" : "/app/";
  km::data outside_copies{km::data::type::list};
  for (const auto& o : p.outside_paths)
    outside_copies.push_back(copy_of(o, o == "." ? root : root + o));
  d.set("outside_copies", outside_copies);
  km::data requirement_copies{km::data::type::list};
  for (const auto& f : p.requirement_files)
    if (!outside_project(f)) requirement_copies.push_back(copy_of(prefix + f, f));
  d.set("requirement_copies", requirement_copies);
  d.set("requirement_files_top", list_of(p.requirement_files_top));
  d.set("pip_index_args", list_of(p.pip_index_args));
  d.set("has_wheelhouse", !p.wheelhouse.empty());
  d.set("wheelhouse", prefix + p.wheelhouse);
  d.set("runtime_compiler", p.runtime_compiler);
  d.set("runtime_compiler_size", t.runtime_compiler_size);
  d.set("has_cleanup_paths", !p.cleanup_paths.empty());
  d.set("cleanup_paths", list_of(p.cleanup_paths));
  d.set("has_torch_cuda_arch_list", !p.torch_cuda_arch_list.empty());
  d.set("torch_cuda_arch_list", p.torch_cuda_arch_list);
  d.set("has_cuda_architectures", !p.cuda_architectures.empty());
  d.set("cmake_from_pypi", !p.cmake_from_pypi.empty());
  d.set("cmake_series", p.cmake_from_pypi);
  d.set("pyproject_deps", list_of(p.pyproject_deps));
  d.set("poetry_packages", list_of(p.poetry_packages));
  d.set("install_project", p.install_project);
  d.set("project_install_args", p.project_install_args);
  d.set("cmake", p.cmake);
  d.set("cmake_install", p.cmake_install);
  d.set("cuda_architectures", p.cuda_architectures);
  d.set("targets", list_of(p.targets));
  const bool nvcc = p.kind == "cuda-cpp" && !p.cmake;
  d.set("nvcc", nvcc);
  d.set("nvcc_arch_flags", p.nvcc_arch_flags);
  d.set("nvcc_target", p.targets.empty() ? std::string() : p.targets.front());
  d.set("nvcc_sources", list_of(p.nvcc_sources));
  d.set("nvcc_libs", list_of(p.nvcc_libs));
  d.set("binary", p.kind == "cuda-cpp");
  d.set("cpp", p.kind == "cuda-cpp");
  d.set("nvidia_env", p.nvidia_env);
  d.set("probe", p.probe);
  // The probe stage BuildKit builds: the build context's, unless the probe
  // image is the default.
  d.set("probe_image", p.probe_image.empty() ? "probe-from-context" : p.probe_image);
  d.set("imgsmith_version", std::string(kVersion));
  d.set("gpu", p.gpu);
  d.set("has_app_env", !p.env.empty());
  d.set("app_env", join(p.env, " "));
  d.set("has_shm_size", !p.shm_size.empty());
  d.set("shm_size", p.shm_size + "b");  // compose spells sizes "8gb"
  d.set("has_port", p.port != 0);
  d.set("port", std::to_string(p.port));
  d.set("description", "Built from a Dockerfile by imgsmith gen (" + p.kind + ")");
  d.set("cmd_json", command_json(p.cmd));
  d.set("has_ignore_from_git", !p.ignore_from_git.empty());
  d.set("ignore_from_git", list_of(p.ignore_from_git));
  d.set("has_ignore_secrets", !p.ignore_secrets.empty());
  d.set("ignore_secrets", list_of(p.ignore_secrets));
  d.set("has_writable_dirs", !p.writable_dirs.empty());
  d.set("writable_dirs", join(p.writable_dirs, " "));
  km::data writable_volumes{km::data::type::list};
  for (std::size_t i = 0; i < p.writable_dirs.size(); ++i) {
    km::data v;
    v.set("name", "writable-" + std::to_string(i + 1));
    v.set("path", p.writable_dirs[i]);
    writable_volumes.push_back(v);
  }
  d.set("writable_volumes", writable_volumes);
  km::data workers{km::data::type::list};
  for (const auto& w : p.workers) {
    km::data v;
    v.set("service", w.service);
    v.set("what", w.what);
    v.set("worker_cmd_json", command_json(w.cmd));
    v.set("source", w.source);
    workers.push_back(v);
  }
  d.set("workers", workers);
  d.set("image_check", p.verify);
  d.set("verify_roots", join(p.verify_roots, " "));
  d.set("verify_allowed", join(p.verify_allowed, " "));
  // Six pairs a line, each line starting and ending with a space, so that
  // the check finds " soname=" anywhere in the string.
  std::string packages;
  for (std::size_t i = 0; i < p.verify_packages.size(); ++i) {
    if (i != 0 && i % 6 == 0) packages += "\n ";
    packages += p.verify_packages[i].first + "=" + p.verify_packages[i].second + " ";
  }
  d.set("verify_packages", packages);
  const bool entries = !p.verify_entry_files.empty() || !p.verify_entry_modules.empty();
  d.set("has_verify_entries", entries && python);
  d.set("verify_app_dir_json", nlohmann::json(p.app_dir).dump());
  d.set("verify_entry_files_json", nlohmann::json(p.verify_entry_files).dump());
  d.set("verify_entry_modules_json", nlohmann::json(p.verify_entry_modules).dump());
  d.set("verify_allowed_json", nlohmann::json(p.verify_allowed).dump());
  // The files the Dockerfile names in COPY must survive .dockerignore, even
  // when they sit in a folder it leaves out (-r env/base.txt, a wheelhouse
  // under venv/): a build that cannot find them fails.
  std::vector<std::string> copied;
  for (const auto& f : p.requirement_files)
    if (!outside_project(f)) copied.push_back(prefix + f);
  if (!p.wheelhouse.empty()) copied.push_back(prefix + p.wheelhouse);
  // So must what pip installs from a path (a wheel under dist/).
  for (const auto& path : p.local_install_paths) copied.push_back(prefix + path);
  // A file from outside the project is re-included by name, as the project's
  // are; a directory only at the top (below), so that the secrets and caches
  // left out everywhere stay out of it too.
  for (const auto& o : p.outside_paths)
    if (o.back() != '/' && o != ".") copied.push_back(o);
  d.set("has_copied_paths", !copied.empty());
  d.set("copied_paths", list_of(copied));
  // With --context, the ignore file first leaves out the whole context, then
  // lets in the project and what it names outside itself: another service of
  // a monorepo never reaches the builder. Docker's rule is that the last
  // pattern matching a path (or a directory above it) decides.
  std::vector<std::string> kept = {p.context_path};
  bool whole_context = false;
  for (const auto& o : p.outside_paths) {
    if (o == ".") whole_context = true;
    kept.push_back(o.back() == '/' ? o.substr(0, o.size() - 1) : o);
  }
  d.set("has_kept_paths", context && !whole_context);
  d.set("kept_paths", list_of(kept));
  d.set("ignore_file", context ? "Dockerfile.dockerignore" : ".dockerignore");
  // Kubernetes (--k8s): a DNS-1123 name, the GPU request, the model's need
  // as GPU Feature Discovery's nvidia.com/gpu.memory label counts (MiB),
  // and a startup budget that covers loading the weights.
  d.set("k8s_name", k8s_name(p.project_name));
  d.set("k8s_image", k8s_name(p.project_name));
  d.set("gpus", std::to_string(p.k8s_gpus));
  d.set("gpu_resource", p.gpu_resource);
  d.set("has_model_vram", p.model_vram > 0);
  d.set("model_vram", std::to_string(p.model_vram));
  d.set("model_vram_text", format_size(p.model_vram));
  // Gt is strict: more than need - 1 MiB is at least the need, rounded up.
  d.set("gpu_memory_gt_mib", std::to_string((p.model_vram + (1u << 20) - 1) / (1u << 20) - 1));
  std::uint64_t weights = 0;
  for (const auto& m : p.models) weights += m.model.file_bytes;
  const std::uint64_t startup_seconds = 60 + weights / 100'000'000;
  d.set("startup_seconds", std::to_string(startup_seconds));
  d.set("startup_failures", std::to_string((startup_seconds + 9) / 10));
  d.set("shm_quantity", shm_quantity(p.shm_size));
  d.set("cudnn", p.cudnn && p.flavor != "base");
  d.set("cudnn_size", t.cudnn_extra.size);
  const auto f = t.flavours.find(p.flavor);
  d.set("flavour_size", f == t.flavours.end() ? std::string() : f->second.size);
  return d;
}

std::string render(const std::string& name, km::data& data) {
  const auto& templates = builtin_templates();
  const auto it = templates.find(name);
  if (it == templates.end()) throw std::logic_error("no template " + name);
  for (const char* partial : {"header", "builder", "final", "verify"}) {
    const std::string file = std::string(partial) + ".Dockerfile.mustache";
    const std::string text = templates.at(file);
    data.set(partial, km::partial{[text] { return text; }});
  }
  const std::string pod = templates.at("k8s-pod.yaml.mustache");
  data.set("k8s-pod", km::partial{[pod] { return pod; }});
  km::mustache tmpl{it->second};
  // Dockerfiles are not HTML: values go in as they are.
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  std::string out = tmpl.render(data);
  if (!tmpl.is_valid()) throw std::logic_error(name + ": " + tmpl.error_message());
  // Section tags leave blank lines behind, whether they render or not. The
  // layout is fixed here instead: one blank line before each stage heading.
  std::string tidy;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (line.rfind("# ---- ", 0) == 0 && !tidy.empty()) tidy += "\n";
    tidy += line + "\n";
  }
  return tidy;
}

}  // namespace

const std::map<std::string, std::string>& builtin_templates() {
  static const std::map<std::string, std::string> templates = [] {
    std::map<std::string, std::string> out;
    for (const auto& [name, text] : embedded_files())
      if (name.size() > 9 && name.compare(name.size() - 9, 9, ".mustache") == 0) out[name] = text;
    return out;
  }();
  return templates;
}

Rendered render_plan(const Plan& plan) {
  km::data data = plan_data(plan);
  Rendered r;
  r.dockerfile = render(plan.template_name + ".Dockerfile.mustache", data);
  r.dockerignore = render("dockerignore.mustache", data);
  if (!plan.context_path.empty()) r.dockerignore_name = "Dockerfile.dockerignore";
  if (plan.compose) r.compose = render("compose.yaml.mustache", data);
  if (plan.k8s) {
    if (plan.port != 0) {
      r.k8s.emplace_back("deployment.yaml", render("k8s-deployment.yaml.mustache", data));
      r.k8s.emplace_back("service.yaml", render("k8s-service.yaml.mustache", data));
    } else {
      r.k8s.emplace_back("job.yaml", render("k8s-job.yaml.mustache", data));
    }
    // A task queue's worker: a Deployment of the same image with the
    // worker's command, no port and no Service.
    for (const auto& w : plan.workers) {
      km::data worker = data;
      worker.set("k8s_name", k8s_name(plan.project_name + "-" + w.service));
      worker.set("has_port", false);
      worker.set("has_args", true);
      worker.set("args_json", command_json(w.cmd));
      worker.set("worker_of", w.what);
      worker.set("worker_source", w.source);
      r.k8s.emplace_back(w.service + ".yaml", render("k8s-deployment.yaml.mustache", worker));
    }
  }
  if (plan.k8s_validator)
    r.k8s.emplace_back("gpu-node-validator.yaml", render("k8s-validator.yaml.mustache", data));
  if (plan.verify) {
    r.check_files.emplace_back(".imgsmith/check/libraries.sh",
                               render("check-libraries.sh.mustache", data));
    if (plan.kind != "cuda-cpp" &&
        (!plan.verify_entry_files.empty() || !plan.verify_entry_modules.empty()))
      r.check_files.emplace_back(".imgsmith/check/imports.py",
                                 render("check-imports.py.mustache", data));
  }
  return r;
}

std::string summary(const Plan& p) {
  std::string s;
  auto line = [&](const std::string& label, const std::string& text) {
    s += "  " + label + std::string(label.size() < 8 ? 8 - label.size() : 1, ' ') + text + "\n";
  };
  line("image", p.final_image);
  for (const auto& w : p.why_base) line("", w);
  line("size", p.size_class);
  if (p.gpu)
    line("driver", "host NVIDIA driver >= " + std::to_string(p.min_driver) + ": " +
                       (p.min_driver_why.empty()
                            ? "the image sets NVIDIA_REQUIRE_CUDA=cuda>=" + major_minor(p.cuda) +
                                  ", and the NVIDIA Container Toolkit refuses to start it on an "
                                  "older driver"
                            : p.min_driver_why));
  else
    line("driver", "none: the image uses no GPU");
  line("build", build_command_here(p));
  if (p.probe && p.probe_image.empty())
    line("ci",
         "the build copies .imgsmith/imgsmith-probe-ARCH (amd64, arm64: BuildKit's "
         "TARGETARCH picks), which stays out of git (.imgsmith/.gitignore): in a fresh "
         "clone, run `imgsmith probe --write-all .imgsmith` in this directory before the "
         "build, or build with --build-arg IMGSMITH_PROBE_IMAGE=REGISTRY/imgsmith-probe:" +
             std::string(kVersion) + " (`imgsmith probe --write-image` makes that image)");
  else if (p.probe)
    line("ci", "the build copies the probe from " + p.probe_image +
                   " (a fresh clone needs no imgsmith); --build-arg "
                   "IMGSMITH_PROBE_IMAGE=probe-from-context takes .imgsmith/ instead");
  line("run", run_command(p, "all"));
  if (p.gpu) line("", run_command(p, "'\"device=0\"'") + "   # one GPU of a shared machine");
  for (const auto& [m, v] : p.models) {
    // One line a model: its need at each precision, and the smallest GPU
    // of data/gpus.json it fits on alone.
    std::string text = m.path + " (" + std::string(model_format_name(m.format)) + ", " +
                       "budget of " + std::string(engine_name(v.engine)) + "): ";
    for (const auto& n : v.needs)
      text += (&n == &v.needs.front() ? "" : ", ") + std::string(precision_name(n.precision)) +
              " " + format_size(board_free_needed(v, n.total)) +
              (n.fits_on.empty() ? " (no single GPU)"
               : fits_on_text(n.fits_on).ends_with(" and larger") ||
                       fits_on_text(n.fits_on).starts_with("every")
                   ? " (" + n.fits_on.front() + "+)"
                   : " (" + fits_on_text(n.fits_on) + ")");
    line("model", text);
  }
  for (const auto& n : p.notes) s += "note: " + n + "\n";
  for (const auto& w : p.warnings) s += "warning: " + w + "\n";
  return s;
}

}  // namespace imgsmith::gen
