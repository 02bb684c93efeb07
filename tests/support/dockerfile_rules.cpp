#include "dockerfile_rules.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace imgsmith::test {
namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The image a FROM names: the first word that is not a --flag.
std::string from_image(const std::string& args) {
  for (const auto& w : words(args))
    if (w.rfind("--", 0) != 0) return w;
  return "";
}

bool pinned_image(const std::string& ref) {
  if (has(ref, "@sha256:")) return true;
  const auto slash = ref.rfind('/');
  const auto colon = ref.find(':', slash == std::string::npos ? 0 : slash);
  if (colon == std::string::npos) return false;
  return ref.substr(colon + 1) != "latest";
}

// The packages of each `apt-get install` in a RUN.
std::vector<std::string> apt_packages(const std::string& run) {
  std::vector<std::string> out;
  const auto w = words(run);
  for (std::size_t i = 0; i + 1 < w.size(); ++i) {
    if (w[i] != "apt-get" || w[i + 1] != "install") continue;
    for (std::size_t j = i + 2; j < w.size(); ++j) {
      if (w[j] == "&&" || w[j] == ";" || w[j] == "\\") break;
      if (w[j][0] == '-') continue;
      out.push_back(w[j]);
    }
  }
  return out;
}

// The arguments of each `pip install`, without options and their values.
std::vector<std::vector<std::string>> pip_installs(const std::string& run) {
  std::vector<std::vector<std::string>> out;
  const auto w = words(run);
  for (std::size_t i = 0; i + 1 < w.size(); ++i) {
    const bool pip =
        w[i] == "pip" || (w[i].size() > 4 && w[i].compare(w[i].size() - 4, 4, "/pip") == 0);
    if (!pip || w[i + 1] != "install") continue;
    std::vector<std::string> args;
    for (std::size_t j = i + 2; j < w.size(); ++j) {
      if (w[j] == "&&" || w[j] == ";") break;
      if (w[j] == "-r" || w[j] == "--extra-index-url" || w[j] == "--index-url" || w[j] == "-c" ||
          w[j] == "--find-links") {
        ++j;  // the option's value: a file or a URL, not a package
        continue;
      }
      if (w[j][0] == '-') continue;
      args.push_back(w[j]);
    }
    out.push_back(args);
  }
  return out;
}

}  // namespace

Dockerfile parse_dockerfile(const std::string& text) {
  Dockerfile d;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  Instruction current;
  bool continuing = false;
  while (std::getline(in, line)) {
    ++number;
    std::string trimmed = line;
    trimmed.erase(0, trimmed.find_first_not_of(" \t"));
    if (!continuing && trimmed.empty()) continue;
    if (trimmed.rfind("#", 0) == 0) {
      d.comments.push_back(trimmed);
      continue;
    }
    const bool more = !trimmed.empty() && trimmed.back() == '\\';
    if (more) trimmed.pop_back();
    if (!continuing) {
      const auto space = trimmed.find_first_of(" \t");
      current =
          Instruction{upper(trimmed.substr(0, space)),
                      space == std::string::npos ? "" : trimmed.substr(space + 1), number, -1};
    } else {
      current.args += " " + trimmed;
    }
    continuing = more;
    if (!continuing) {
      if (current.keyword == "FROM") d.stage_images.push_back(from_image(current.args));
      current.stage = static_cast<int>(d.stage_images.size()) - 1;
      d.instructions.push_back(current);
    }
  }
  return d;
}

std::vector<std::string> check_rules(const std::string& text, const RuleContext& context) {
  std::vector<std::string> broken;
  const Dockerfile d = parse_dockerfile(text);
  auto fail = [&](const std::string& rule, const Instruction* i, const std::string& why) {
    broken.push_back(rule + (i != nullptr ? " line " + std::to_string(i->line) : "") + ": " + why);
  };
  const int final_stage = static_cast<int>(d.stage_images.size()) - 1;

  if (d.stage_images.size() < 2)
    fail("multi-stage", nullptr, "one FROM; the build needs its own stage");
  const bool syntax = !d.comments.empty() && d.comments.front().rfind("# syntax=", 0) == 0;
  if (syntax != context.syntax_line)
    fail("syntax", nullptr,
         syntax ? "a # syntax= line nobody asked for" : "the # syntax= line is missing");

  std::vector<bool> stage_has_pipefail(d.stage_images.size(), false);
  bool code_copied = false;
  bool deps_installed = false;
  bool code_before_deps = false;  // the code came first, and dependencies were installed after
  std::string last_user;
  bool final_has_labels = false;
  bool final_nvidia_env = false;
  std::string entrypoint;
  std::string cmd;
  // The run-time user's home: created by useradd, owned by the user, and
  // named by HOME; caches under it are written at run time.
  std::string home_dir;
  std::string home_owned_by;  // the owner given when the home was created
  std::string env_home;
  std::string env_cache;
  std::vector<std::string> final_workdirs;
  bool code_given_to_user = false;
  // Global ARGs (before the first FROM), NAME=DEFAULT, and the stages
  // named so far: a FROM may name an earlier stage, or ${NAME} of a global
  // ARG, judged by its default.
  std::map<std::string, std::string> global_args;
  std::vector<std::string> stage_names;
  for (const auto& i : d.instructions) {
    const bool in_final = i.stage == final_stage;
    if (i.keyword == "ARG" && i.stage < 0) {
      const std::string arg = words(i.args).empty() ? "" : words(i.args).front();
      const auto eq = arg.find('=');
      global_args[arg.substr(0, eq)] = eq == std::string::npos ? "" : arg.substr(eq + 1);
    }
    if (i.keyword == "FROM") {
      std::string image = from_image(i.args);
      if (image.size() > 3 && image.rfind("${", 0) == 0 && image.back() == '}') {
        const auto arg = global_args.find(image.substr(2, image.size() - 3));
        if (arg == global_args.end())
          fail("from-arg", &i, image + " names no global ARG with a default");
        else
          image = arg->second;
      }
      const auto w = words(i.args);
      const bool earlier_stage =
          std::find(stage_names.begin(), stage_names.end(), image) != stage_names.end();
      for (std::size_t k = 0; k + 1 < w.size(); ++k)
        if (upper(w[k]) == "AS") stage_names.push_back(w[k + 1]);
      if (image != "scratch" && !earlier_stage && !pinned_image(image))
        fail("DL3006/DL3007", &i, image + " is not pinned to a tag");
      if (in_final && has(image, "-devel-") && !context.devel_final_allowed)
        fail("no-compiler", &i, "the final stage is a devel image, which holds nvcc");
    }
    if (i.keyword == "ADD") fail("DL3020", &i, "ADD instead of COPY");
    if (i.keyword == "SHELL" && has(i.args, "pipefail"))
      stage_has_pipefail[static_cast<std::size_t>(i.stage)] = true;
    if (i.keyword == "COPY") {
      static const std::regex kFrom(R"(--from=(\S+))");
      std::smatch m;
      if (std::regex_search(i.args, m, kFrom) && has(m[1].str(), ":") && !pinned_image(m[1].str()))
        fail("DL3006/DL3007", &i, m[1].str() + " is not pinned");
      if (in_final && (has(i.args, "/usr/local/cuda") || has(i.args, "nvcc")))
        fail("no-compiler", &i, "copies the CUDA toolkit into the final stage");
      if (!in_final && (has(i.args, ". .") || has(i.args, ". /src"))) code_copied = true;
    }
    if (i.keyword == "RUN") {
      if (!stage_has_pipefail[static_cast<std::size_t>(i.stage)])
        fail("DL4006", &i, "RUN before a SHELL with -o pipefail");
      const auto packages = apt_packages(i.args);
      if (!packages.empty()) {
        for (const auto& p : packages)
          if (!has(p, "=") && std::find(context.declared_apt.begin(), context.declared_apt.end(),
                                        p) == context.declared_apt.end())
            fail("DL3008", &i, "apt package " + p + " is not pinned");
        if (!has(i.args, "--no-install-recommends"))
          fail("DL3015", &i, "apt-get install without --no-install-recommends");
        if (!has(i.args, "target=/var/lib/apt") && !has(i.args, "rm -rf /var/lib/apt/lists"))
          fail("DL3009", &i, "apt lists stay in the layer");
        if (in_final)
          for (const auto& p : packages) {
            for (const char* compiler :
                 {"cuda-nvcc", "cuda-toolkit", "build-essential", "g++", "gcc", "cmake", "clang"})
              if (p.rfind(compiler, 0) == 0 &&
                  !(context.runtime_compiler && p.rfind("gcc=", 0) == 0))
                fail("no-compiler", &i, "installs " + p + " in the final stage");
            const bool documented =
                std::any_of(d.comments.begin(), d.comments.end(),
                            [](const std::string& c) { return has(c, "Triton"); });
            if (context.runtime_compiler && p.rfind("gcc=", 0) == 0 && !documented)
              fail("no-compiler", &i,
                   "installs gcc in the final stage without saying why (Triton)");
            // Headers are for compiling: only Triton's documented case.
            static const std::regex kPythonDev(R"(^(lib)?python3\.\d+-dev(=|$))");
            if (std::regex_search(p, kPythonDev) && !context.runtime_compiler)
              fail("no-compiler", &i,
                   "installs " + p + " (headers to compile against) in the final stage");
          }
      }
      for (const auto& args : pip_installs(i.args)) {
        if (code_copied && !deps_installed) code_before_deps = true;
        deps_installed = true;
        for (std::size_t k = 0; k < args.size(); ++k) {
          // The project itself, with its extras: '.[gpu]'.
          if (args[k] == "." || args[k].rfind(".[", 0) == 0 || args[k].rfind("'.[", 0) == 0)
            continue;
          std::string a = args[k];
          if (a.front() == '\'') a = a.substr(1);
          if (!std::regex_search(a, std::regex("(==|>=|<=|~=|!=|<|>|@)")))
            fail("DL3013", &i, "pip package " + args[k] + " is not pinned");
        }
        if (!has(i.args, "target=/root/.cache/pip") && !has(i.args, "--no-cache-dir"))
          fail("DL3042", &i, "pip keeps its cache in the layer");
      }
      if (has(i.args, "uv sync") && has(i.args, "--no-install-project")) {
        if (code_copied && !deps_installed) code_before_deps = true;
        deps_installed = true;
      }
      if (in_final && has(i.args, "nvcc")) fail("no-compiler", &i, "runs nvcc in the final stage");
    }
    if (in_final) {
      if (i.keyword == "RUN" && has(i.args, "useradd")) {
        const auto w = words(i.args);
        bool in_useradd = false;
        for (std::size_t k = 0; k + 1 < w.size(); ++k) {
          if (w[k] == "useradd") in_useradd = true;
          if (w[k] == "&&") in_useradd = false;
          if (in_useradd && (w[k] == "--home-dir" || w[k] == "-d")) home_dir = w[k + 1];
          // install -d -o USER ... DIR: the home is created owned by USER.
          if (w[k] == "install" && !home_dir.empty() &&
              std::find(w.begin() + static_cast<long>(k), w.end(), home_dir) != w.end())
            for (std::size_t j = k; j + 1 < w.size() && w[j] != "&&"; ++j)
              if (w[j] == "-o") home_owned_by = w[j + 1];
        }
      }
      if (i.keyword == "ENV") {
        static const std::regex kHome(R"((^|\s)HOME=(\S+))");
        static const std::regex kCache(R"(XDG_CACHE_HOME=(\S+))");
        std::smatch m;
        if (std::regex_search(i.args, m, kHome)) env_home = m[2].str();
        if (std::regex_search(i.args, m, kCache)) env_cache = m[1].str();
      }
      if (i.keyword == "WORKDIR") final_workdirs.push_back(i.args);
      if ((i.keyword == "COPY" && has(i.args, "--chown")) ||
          (i.keyword == "RUN" && has(i.args, "chown -R")))
        code_given_to_user = true;
      if (i.keyword == "USER") last_user = i.args;
      if (i.keyword == "LABEL" && has(i.args, "org.opencontainers.image.title="))
        final_has_labels = true;
      if (i.keyword == "ENV" && has(i.args, "NVIDIA_VISIBLE_DEVICES") &&
          has(i.args, "NVIDIA_DRIVER_CAPABILITIES"))
        final_nvidia_env = true;
      if (i.keyword == "ENTRYPOINT") entrypoint = i.args;
      if (i.keyword == "CMD") cmd = i.args;
    }
  }
  if (last_user.empty() || last_user == "root" || last_user == "0" || last_user.rfind("0:", 0) == 0)
    fail("DL3002", nullptr, "the final stage runs as root");
  if (!last_user.empty() && last_user != "root" && last_user != "0") {
    const std::string user = last_user.substr(0, last_user.find(':'));
    if (home_dir.empty()) {
      fail("home", nullptr, "the user " + user + " is created without --home-dir");
    } else {
      if (std::find(final_workdirs.begin(), final_workdirs.end(), home_dir) != final_workdirs.end())
        fail("home", nullptr,
             "the home " + home_dir + " is the code directory, which the user cannot write");
      if (home_owned_by != user)
        fail("home", nullptr, "the home " + home_dir + " is not created owned by " + user);
      if (env_home != home_dir) fail("home", nullptr, "HOME is not set to " + home_dir);
      if (env_cache.rfind(home_dir + "/", 0) != 0)
        fail("home", nullptr, "XDG_CACHE_HOME is not under " + home_dir);
    }
  }
  if (code_given_to_user)
    fail("read-only-code", nullptr, "the code is handed to the run-time user to change");
  for (const auto& [what, value] :
       {std::pair<std::string, std::string>{"CMD", cmd}, {"ENTRYPOINT", entrypoint}}) {
    if (value.empty()) continue;
    const auto parsed = nlohmann::json::parse(value, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_array())
      fail("DL3025", nullptr, what + " is not in JSON form: " + value);
  }
  if (cmd.empty()) fail("cmd", nullptr, "no CMD");
  if (context.expect_probe != has(entrypoint, "imgsmith-probe"))
    fail("probe", nullptr,
         context.expect_probe ? "the probe is not the entrypoint" : "a probe nobody asked for");
  if (!final_has_labels) fail("labels", nullptr, "no OCI labels on the final stage");
  const std::string final_image = d.stage_images.empty() ? "" : d.stage_images.back();
  if (context.gpu && !has(final_image, "nvidia/cuda:") && !final_nvidia_env)
    fail("nvidia-env", nullptr, "a GPU app on " + final_image + " without NVIDIA_* variables");
  if (!code_copied) fail("layers", nullptr, "the builder never copies the code");
  if (code_before_deps && !context.source_before_deps)
    fail("layers", nullptr, "the code is copied before the dependencies are installed");
  return broken;
}

}  // namespace imgsmith::test
