// The compatibility tables, read once from the embedded data/*.json. A table
// that does not parse is a build defect, so it fails loudly at first use and
// the unit tests read every table.
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "gen_internal.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::gen {

std::string fill_placeholder(std::string text, const std::string& key, const std::string& value) {
  for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

namespace {

using nlohmann::json;

// IMGSMITH_GEN_TABLES=DIR replaces an embedded table by DIR/<name> when that
// file exists: for a site's own mirror of images, or local stand-ins whose
// OS differs from NVIDIA's.
json table(const std::string& name) {
  if (const char* dir = std::getenv("IMGSMITH_GEN_TABLES"); dir != nullptr && *dir != '\0') {
    const std::string path = std::string(dir) + "/" + name;
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream text;
      text << in.rdbuf();
      try {
        return json::parse(text.str());
      } catch (const json::exception& e) {
        throw InputError(path + ": not valid JSON (" + e.what() +
                         "); fix it or unset IMGSMITH_GEN_TABLES");
      }
    }
  }
  const auto& files = embedded_files();
  const auto it = files.find(name);
  if (it == files.end()) throw std::logic_error("embedded table missing: " + name);
  return json::parse(it->second);
}

std::vector<std::string> strings(const json& j) {
  std::vector<std::string> out;
  for (const auto& s : j) out.push_back(s.get<std::string>());
  return out;
}

Flavour flavour(const json& j) {
  return {j.at("approx_bytes").get<double>(), j.at("size").get<std::string>(),
          j.value("carries", std::string())};
}

Tables load() {
  Tables t;
  const json torch = table("torch-cuda.json");
  t.torch_index_url = torch.at("index_url").get<std::string>();
  for (const auto& r : torch.at("releases"))
    t.torch.push_back({r.at("torch").get<std::string>(), strings(r.at("builds")),
                       r.at("pypi").is_null() ? "" : r.at("pypi").get<std::string>()});

  const json drivers = table("cuda-drivers.json");
  for (const auto& [major, driver] : drivers.at("minimum_driver").items())
    t.minimum_driver[std::stoi(major)] = driver.get<int>();
  for (const auto& [cuda, driver] : drivers.at("require_cuda").items())
    t.require_cuda_driver[cuda] = driver.get<int>();
  t.require_cuda_source = drivers.value("require_cuda_source", std::string());

  const json images = table("cuda-images.json");
  t.repository = images.at("repository").get<std::string>();
  t.default_cuda = images.at("default_cuda").get<std::string>();
  t.os_preference = strings(images.at("os_preference"));
  for (const auto& r : images.at("releases")) {
    // A table without cudnn_major (an old override) is read from the tag:
    // "cudnn8" names cuDNN 8; "cudnn9" and the plain "cudnn" carry cuDNN 9.
    const std::string cudnn_tag = r.at("cudnn_tag").get<std::string>();
    t.releases.push_back({r.at("cuda").get<std::string>(), strings(r.at("os")), cudnn_tag,
                          r.value("cudnn_major", cudnn_tag == "cudnn8" ? 8 : 9)});
  }
  for (const auto& [name, f] : images.at("flavours").items()) t.flavours[name] = flavour(f);
  t.cudnn_extra = flavour(images.at("cudnn_extra"));
  for (const auto& [major, archs] : images.at("cuda_architectures").items())
    if (major[0] != '_') t.cuda_architectures[major] = strings(archs);
  for (const auto& [arch, cuda] : images.at("architecture_first_cuda").items())
    if (cuda.is_string() && std::isdigit(static_cast<unsigned char>(arch[0])))
      t.architecture_first_cuda[arch] = cuda.get<std::string>();
  for (const auto& [name, o] : images.at("os").items())
    t.os[name] = {o.at("python").get<std::string>(),
                  strings(o.at("python_runtime")),
                  strings(o.at("python_build")),
                  strings(o.at("cmake_build")),
                  strings(o.value("runtime_compiler", json::array())),
                  strings(o.value("vcs", json::array()))};
  const json& py = images.at("python");
  t.known_python = strings(py.at("known"));
  t.preferred_python = py.at("preferred").get<std::string>();
  t.cpu_image = py.at("cpu_image").get<std::string>();
  t.uv_image = py.at("uv_image").get<std::string>();
  t.poetry = strings(py.at("poetry"));
  t.cpu_runtime_compiler = strings(py.value("cpu_runtime_compiler", json::array()));
  t.cpu_vcs = strings(py.value("cpu_vcs", json::array()));
  t.runtime_compiler_size = py.value("runtime_compiler_size", std::string());

  const json frameworks = table("python-frameworks.json");
  for (const auto& p : frameworks.at("packages")) {
    FrameworkNeed need{p.at("need").get<std::string>(),
                       p.at("why").get<std::string>(),
                       p.value("size", std::string()),
                       {},
                       p.value("cuda", std::string()),
                       {},
                       p.value("shared_memory", std::string()),
                       p.value("runtime_compiler", std::string()),
                       {},
                       {}};
    if (p.contains("torch_pins")) {
      need.torch_pins_source = p.at("torch_pins").value("source", std::string());
      for (const auto& pin : p.at("torch_pins").at("from"))
        need.torch_pins.emplace_back(pin.at(0).get<std::string>(), pin.at(1).get<std::string>());
    }
    if (p.contains("extras"))
      for (const auto& [extra, n] : p.at("extras").items())
        need.extras[extra] = n.get<std::string>();
    if (p.contains("extra_cuda"))
      for (const auto& [extra, c] : p.at("extra_cuda").items())
        need.extra_cuda[extra] = c.get<std::string>();
    t.frameworks[p.at("name").get<std::string>()] = need;
  }
  const json builds = table("framework-cuda.json");
  for (const auto& r : builds.at("rows"))
    t.framework_builds.push_back({r.at("package").get<std::string>(), strings(r.at("releases")),
                                  r.at("cuda").get<std::string>(), r.at("cudnn").get<int>(),
                                  r.at("source").get<std::string>(),
                                  r.value("note", std::string())});
  for (const auto& [header, library] : images.at("header_libraries").items())
    if (header[0] != '_') t.header_libraries[header] = library.get<std::string>();
  for (const auto& word : strings(frameworks.at("dev_requirement_words").at("words")))
    t.dev_requirement_words.insert(word);
  for (const auto& name : strings(frameworks.at("conda_from_image").at("packages")))
    t.conda_from_image.insert(name);
  for (const auto& p : frameworks.at("patterns"))
    t.patterns.push_back({p.at("prefix").get<std::string>(), p.at("suffix").get<std::string>(),
                          p.at("need").get<std::string>(), p.at("why").get<std::string>(),
                          p.value("cuda", std::string())});
  const json packages = table("python-packages.json");
  for (const auto& p : packages.at("packages")) {
    PackageFact f;
    f.need = p.at("need").get<std::string>();
    f.why = p.at("why").get<std::string>();
    f.source = p.at("source").get<std::string>();
    f.cuda = p.value("cuda", std::string());
    if (p.contains("extras"))
      for (const auto& [extra, n] : p.at("extras").items()) f.extras[extra] = n.get<std::string>();
    f.apt = strings(p.value("apt", json::array()));
    f.build_apt = strings(p.value("build_apt", json::array()));
    f.writes = strings(p.value("writes", json::array()));
    f.gpu_note = p.value("gpu_note", std::string());
    t.packages[p.at("name").get<std::string>()] = f;
  }
  const json wheels = table("python-wheels.json");
  for (const auto& [name, rows] : wheels.at("packages").items())
    for (const auto& r : rows)
      t.wheel_pythons[name].push_back(
          {strings(r.at("releases")), strings(r.at("python")), r.at("source").get<std::string>()});
  const json sonames = table("soname-packages.json");
  for (const auto& [soname, by_os] : sonames.at("sonames").items())
    for (const auto& [os, package] : by_os.items())
      if (package.is_string()) t.sonames[soname][os] = package.get<std::string>();
  t.driver_injected = strings(sonames.at("driver_injected"));
  if (sonames.contains("programs"))
    for (const auto& [program, by_os] : sonames.at("programs").items())
      for (const auto& [os, package] : by_os.items())
        if (package.is_string() && os != "source")
          t.programs[program][os] = package.get<std::string>();
  if (sonames.contains("removed"))
    for (const auto& r : sonames.at("removed"))
      for (const auto& os : r.at("os"))
        t.removed_packages[r.at("package").get<std::string>()][os.get<std::string>()] =
            strings(r.at("replacement"));
  const json stdlib = table("python-stdlib.json");  // kept: .at() refers into it
  for (const auto& m : stdlib.at("modules")) t.stdlib_modules.insert(m.get<std::string>());
  const json servers = table("servers.json");
  for (const auto& r : servers.at("servers")) {
    ServerFact f;
    f.name = r.at("name").get<std::string>();
    f.programs = strings(r.value("program", json::array()));
    f.modules = strings(r.value("module", json::array()));
    f.subcommand = r.value("subcommand", std::string());
    f.script = r.value("script", std::string());
    f.markers = strings(r.value("markers", json::array()));
    f.default_host = r.value("default_host", std::string());
    f.default_port = r.value("default_port", 0);
    f.port_flags = strings(r.value("port_flags", json::array()));
    f.host_flags = strings(r.value("host_flags", json::array()));
    f.bind_flags = strings(r.value("bind_flags", json::array()));
    f.positional_addrport = r.value("positional_addrport", false);
    f.bare_listen_flag = r.value("bare_listen_flag", std::string());
    f.config_flags = strings(r.value("config_flags", json::array()));
    f.config_files = strings(r.value("config_files", json::array()));
    f.env_host = r.value("env_host", std::string());
    f.env_port = r.value("env_port", std::string());
    f.env_port_host = r.value("env_port_host", std::string());
    f.listen_all = strings(r.value("listen_all", json::array()));
    f.listen_all_env = r.value("listen_all_env", std::string());
    f.listen_all_hint = r.value("listen_all_hint", std::string());
    f.source = r.at("source").get<std::string>();
    t.servers.push_back(std::move(f));
  }
  const json queues = table("task-queues.json");
  for (const auto& r : queues.at("task_queues")) {
    TaskQueueFact q;
    q.name = r.at("name").get<std::string>();
    q.package = r.at("package").get<std::string>();
    q.service = r.at("service").get<std::string>();
    q.what = r.at("what").get<std::string>();
    q.app_of = r.value("app_of", std::string());
    // Every pattern of a row compiled (those with {object} as a project's
    // app will fill it) here, so that a bad row is an error at load, not a
    // crash mid-scan.
    const auto compiled = [&](const std::string& key, const std::string& text) {
      try {
        return std::regex(fill_placeholder(text, "{object}", "app"));
      } catch (const std::regex_error&) {
        throw InputError("task-queues.json: the " + (key.empty() ? std::string() : key + " ") +
                         "pattern of " + q.name + " (" + text +
                         ") is no regular expression; fix the row");
      }
    };
    q.pattern = compiled("", r.at("pattern").get<std::string>());
    q.worker = strings(r.at("worker"));
    q.tasks = r.value("tasks", std::string());
    q.registers = r.value("registers", std::string());
    compiled("tasks", q.tasks);
    compiled("registers", q.registers);
    for (const auto& [key, field] :
         {std::pair{"queues", &q.queues}, std::pair{"queues_unless", &q.queues_unless}}) {
      const std::string text = r.value(key, std::string());
      if (!text.empty()) *field = compiled(key, text);
    }
    q.default_queue = r.value("default_queue", std::string());
    q.queue_args = strings(r.value("queue_args", json::array()));
    q.source = r.at("source").get<std::string>();
    t.task_queues.push_back(std::move(q));
  }
  // The base images gen builds on, by the OS name the other tables use.
  const std::map<std::string, std::string> base_os = {
      {"python:3.X-slim-bookworm", "debian"},
      {"nvidia/cuda:*-base-ubuntu22.04", "ubuntu22.04"},
      {"nvidia/cuda:*-base-ubuntu24.04", "ubuntu24.04"}};
  for (const auto& [image, os] : base_os)
    if (sonames.contains("in_base") && sonames.at("in_base").contains(image))
      for (const auto& soname : strings(sonames.at("in_base").at(image)))
        t.sonames_in_base[os].insert(soname);
  return t;
}

}  // namespace

const Tables& builtin_tables() {
  static const Tables tables = [] {
    try {
      return load();
    } catch (const json::exception& e) {
      // Only an override can get here: the embedded tables are tested.
      throw InputError(std::string("IMGSMITH_GEN_TABLES: a table lacks what gen needs (") +
                       e.what() + ")");
    }
  }();
  return tables;
}

}  // namespace imgsmith::gen
