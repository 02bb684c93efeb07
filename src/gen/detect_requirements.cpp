// Project detection's requirements files: which of them install the app,
// and what pip would read from them, line by line.
#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include "detect_internal.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;
namespace {

// The words of a file's name, lower-cased, as its separators (anything but
// a letter or a digit) leave them: requirements-dev.txt is "requirements",
// "dev", "txt".
std::vector<std::string> name_words(const std::string& name) {
  std::vector<std::string> words;
  std::string word;
  for (char c : name + ".") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    words.push_back(word);
    word.clear();
  }
  return words;
}

// requirements-dev.txt, requirements_test.txt, requirements.lint.txt: whole
// words only, so requirements-docker.txt or -device.txt still count.
bool is_dev_requirements(const std::string& name) {
  const std::set<std::string>& dev_words = builtin_tables().dev_requirement_words;
  for (const auto& word : name_words(name))
    if (dev_words.count(word) != 0) return true;
  return false;
}

class RequirementsReader {
 public:
  RequirementsReader(const fs::path& root, PythonProject& py, std::vector<Evidence>& evidence,
                     BuildContext& build_context)
      : root_(root), py_(py), evidence_(evidence), build_context_(build_context) {}

  void read(const std::string& rel, int depth, const std::string& named_at = "",
            bool constraints = false) {
    if (depth > 10 || !visited_.insert(rel).second) return;
    // What a constraints file (-c) and its own includes list pins versions
    // and installs nothing.
    const bool outer_constraints = in_constraints_;
    in_constraints_ = constraints;
    const fs::path path = root_ / rel;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (status.type() == fs::file_type::not_found)
      throw InputError(path.string() + ": " +
                       (named_at.empty() ? "" : "named by -r at " + named_at + " but ") +
                       "missing; fix the include or create it");
    if (status.type() != fs::file_type::regular)
      throw InputError(
          path.string() + ": is " + kind_of(status) +
          ", not a regular file; pip cannot read requirements from it. Replace it with a file");
    py_.requirement_files.push_back(rel);
    const std::string text = read_text(path);
    if (const auto nul = text.find('\0'); nul != std::string::npos)
      throw InputError(
          path.string() + ":" +
          std::to_string(1 +
                         std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n')) +
          ": holds a NUL byte, so it is binary or not UTF-8 (UTF-16?), not a requirements file; "
          "save it as UTF-8 text");
    std::istringstream lines(text);
    std::string line;
    std::string logical;
    int number = 0;
    int first = 0;
    while (std::getline(lines, line)) {
      ++number;
      if (logical.empty()) first = number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty() && line.back() == '\\') {  // continuation
        logical += line.substr(0, line.size() - 1);
        continue;
      }
      logical += line;
      handle(std::string(trim(logical)), rel, first, depth);
      logical.clear();
    }
    if (!logical.empty()) handle(std::string(trim(logical)), rel, first, depth);
    in_constraints_ = outer_constraints;
  }

 private:
  // One line pip would read. Anything that is neither a requirement, an
  // option, a path nor a URL makes pip fail in the build, or worse, is a
  // half-resolved merge: stop here, naming the line.
  void handle(const std::string& line, const std::string& rel, int number, int depth) {
    const std::string where = rel + ":" + std::to_string(number);
    const std::string at = (root_ / rel).string() + ":" + std::to_string(number);
    for (const char* marker : {"<<<<<<<", "=======", ">>>>>>>", "|||||||"})
      if (line.rfind(marker, 0) == 0)
        throw InputError(at + ": a merge-conflict marker (" + marker +
                         "); resolve the conflict in this file, then run gen again");
    if (line.empty() || line[0] == '#') return;
    // "git+https://...", "-e git+ssh://...#egg=x", "name @ git+https://...":
    // pip clones these with git, which the builder must then have.
    if (py_.vcs_source.empty() && !in_constraints_ && line.find("git+") != std::string::npos &&
        std::regex_search(line, vcs_url()))
      py_.vcs_source = where;
    if (line[0] == '-') {
      const auto space = line.find_first_of(" =");
      const std::string flag = line.substr(0, space);
      const std::string value =
          space == std::string::npos ? "" : std::string(trim(line.substr(space + 1)));
      if (flag == "-r" || flag == "--requirement" || flag == "-c" || flag == "--constraint") {
        // docker build sees only the build context: COPY ../shared.txt fails
        // there, so a file outside it is refused now. An absolute path is
        // the host's, which no context holds, whatever --context says.
        if (fs::path(value).is_absolute())
          throw InputError(
              at + ": " + flag + " " + value +
              " is an absolute path on this host, which no docker "
              "build context holds; COPY cannot reach it. Copy the file into the build context " +
              build_context_.shown().string() + " and name it by a relative path");
        // pip reads an include relative to the file that names it.
        const std::string inc = build_context_
                                    .reach(fs::path(rel).parent_path().generic_string(), value,
                                           where, at, flag + " " + value)
                                    .path;
        const bool constraint = in_constraints_ || flag == "-c" || flag == "--constraint";
        if (constraint) py_.constraint_files.push_back(inc);
        evidence_.push_back({where, (constraint ? "constraints from " : "includes ") + inc});
        read(inc, depth + 1, at, constraint);
      } else if (flag == "-e" || flag == "--editable") {
        // pip reads a local path relative to its working directory, the
        // project's: one outside the project is copied beside it, and the
        // project's own code need not come first for it.
        const std::string local = local_path(value);
        if (!local.empty() && !reaches_in_project(local, where, at, flag + " " + value)) return;
        if (!local.empty()) installs_local(local, extras_of(value), where);
        py_.requirements_need_source = true;
        evidence_.push_back({where, "installs " + value +
                                        " from the source tree, so the code is "
                                        "copied before the dependencies are installed"});
      } else if (flag == "-i" || flag == "--index-url" || flag == "--extra-index-url" ||
                 flag == "-f" || flag == "--find-links") {
        py_.index_options.push_back(flag + " " + value);
        evidence_.push_back({where, "package index option " + flag + " " + value});
      }
      return;
    }
    if (line[0] == '.' || line[0] == '/' || looks_like_path(line)) {
      const std::string local = local_path(line);
      if (!local.empty() && !reaches_in_project(local, where, at, "the local path " + local))
        return;
      if (!local.empty()) installs_local(local, extras_of(line), where);
      py_.requirements_need_source = true;
      evidence_.push_back({where, "installs the local path " + line +
                                      ", so the code is copied "
                                      "before the dependencies are installed"});
      return;
    }
    if (looks_like_url(line)) {
      evidence_.push_back({where, "installs " + line + " by URL"});
      return;
    }
    // Per-requirement options ("pkg==1.0 --hash=sha256:...") are pip's, not
    // part of the requirement.
    const std::string requirement(trim(line.substr(0, line.find(" --"))));
    if (auto r = parse_requirement(requirement, where)) {
      // name @ file:../../libs/common: a local path by URL.
      if (const std::string local = file_url_path(requirement); !local.empty())
        if (reaches_in_project(local, where, at, r->name + " @ file:" + local))
          installs_local(local, r->extras, where);
      if (in_constraints_) {
        py_.constraints.emplace(r->name, *r);
        return;
      }
      py_.requirements.push_back(*r);
      return;
    }
    throw InputError(
        at + ": '" + (line.size() > 60 ? line.substr(0, 60) + "..." : line) +
        "' is not a requirement (PEP 508: name[extras] specifier ; marker), a pip option, a path "
        "or a URL; fix or delete the line");
  }

  static const std::regex& vcs_url() {
    static const std::regex kVcs(R"((^|[\s@=])git\+[a-z]+://)");
    return kVcs;
  }

  static bool looks_like_url(const std::string& line) {
    static const std::regex kScheme(R"(^[A-Za-z][A-Za-z0-9+.-]*://)");
    return std::regex_search(line, kScheme);
  }

  // pip takes "wheels/x.whl" or "pkg/" as a path when it holds a '/' before
  // any space, or names an archive.
  static bool looks_like_path(const std::string& line) {
    const std::string first = line.substr(0, line.find_first_of(" \t;"));
    if (looks_like_url(first)) return false;
    for (const char* ext : {".whl", ".tar.gz", ".zip"}) {
      const std::string e = ext;
      if (first.size() > e.size() && first.compare(first.size() - e.size(), e.size(), e) == 0)
        return true;
    }
    return first.find('/') != std::string::npos && first.find('@') == std::string::npos;
  }

  // The relative path a local install names ("../../libs/common" of
  // "-e ../../libs/common[dev]" or "file:../../libs/common"), or "" for a URL,
  // an absolute path (the image's own) or anything else.
  static std::string local_path(const std::string& text) {
    std::string path = text.substr(0, text.find_first_of(" \t;#"));
    if (path.rfind("file:", 0) == 0) {
      path = path.substr(5);
      if (path.rfind("//", 0) == 0) return "";  // file:///abs or file://host/...
    } else if (looks_like_url(path) || path.find('@') != std::string::npos) {
      return "";
    }
    if (const auto bracket = path.find('['); bracket != std::string::npos)
      path.resize(bracket);  // [extras]
    if (path.empty() || path[0] == '/') return "";
    return path;
  }

  // "name @ file:PATH" with a relative PATH; "" otherwise.
  static std::string file_url_path(const std::string& requirement) {
    const auto at = requirement.find('@');
    if (at == std::string::npos) return "";
    const std::string url(trim(requirement.substr(at + 1)));
    return url.rfind("file:", 0) == 0 ? local_path(url) : "";
  }

  // A local install of the project's own directory ("-e .", ".[gpu]"):
  // pip resolves its pyproject.toml dependencies, with those extras.
  // The extras a local install names ("[gpu,dev]" of ".[gpu,dev]"), from
  // the path alone: not from a comment or a marker after it.
  static std::vector<std::string> extras_of(const std::string& text) {
    const std::string path = text.substr(0, text.find_first_of(" \t;#"));
    std::vector<std::string> extras;
    const auto open = path.find('[');
    const auto close = path.find(']', open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos) return extras;
    for (const auto& extra : split(path.substr(open + 1, close - open - 1), ","))
      if (const std::string e(trim(extra)); !e.empty()) extras.push_back(normalise_name(e));
    return extras;
  }

  void installs_local(const std::string& local, const std::vector<std::string>& extras,
                      const std::string& where) {
    std::string normal = fs::path(local).lexically_normal().generic_string();
    if (normal != "." && normal != "./") {
      // A path of the project's own, relative to it, which .dockerignore
      // must not leave out of the build context.
      while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
      if (normal.rfind("../", 0) != 0 && normal != ".." &&
          std::find(py_.local_install_paths.begin(), py_.local_install_paths.end(), normal) ==
              py_.local_install_paths.end())
        py_.local_install_paths.push_back(normal);
      return;
    }
    py_.requirements_install_project = true;
    py_.requirements_project_extras.insert(py_.requirements_project_extras.end(), extras.begin(),
                                           extras.end());
    evidence_.push_back(
        {where, "installs the project itself, with its pyproject.toml dependencies"});
  }

  // True when the local path is inside the project; one in the build
  // context above it is recorded for copying, one beyond it refused.
  bool reaches_in_project(const std::string& local, const std::string& where, const std::string& at,
                          const std::string& what) {
    return build_context_.reach(".", local, where, at, what).in_project;
  }

  fs::path root_;
  PythonProject& py_;
  std::vector<Evidence>& evidence_;
  BuildContext& build_context_;
  std::set<std::string> visited_;
  bool in_constraints_ = false;
};

// The accelerator a requirements file is written for, from the words of its
// name: Cpu for "cpu", Gpu for gpu, cuda, cuda12, cu121..., else Either.
enum class Accelerator { Either, Cpu, Gpu };

Accelerator requirements_variant(const std::string& name) {
  static const std::regex kCudaWord(R"((gpu|cuda\d*|cu\d{2,3}))");
  Accelerator variant = Accelerator::Either;
  for (const auto& word : name_words(name)) {
    if (word == "cpu")
      variant = Accelerator::Cpu;
    else if (std::regex_match(word, kCudaWord))
      variant = Accelerator::Gpu;
  }
  return variant;
}

}  // namespace

void read_requirements(const fs::path& root, const std::vector<std::string>& files,
                       PythonProject& py, std::vector<Evidence>& evidence,
                       BuildContext& build_context) {
  RequirementsReader reader(root, py, evidence, build_context);
  for (const auto& f : files) reader.read(f, 0);
}

// Which requirements files install the app: --requirements when given, else
// requirements.txt, else every requirements*.txt that is not for development.
// Files for the CPU and for the GPU are alternatives, never merged: merged,
// the CPU index wins and a GPU project gets a CPU image.
std::vector<std::string> choose_requirements(const fs::path& root, const std::string& chosen,
                                             std::vector<Evidence>& evidence) {
  if (!chosen.empty()) {
    const fs::path rel = fs::path(chosen).lexically_normal();
    const std::string text = rel.generic_string();
    if (rel.is_absolute() || text == ".." || text.rfind("../", 0) == 0)
      throw InputError("--requirements " + chosen + ": give a file inside the project " +
                       root.string() + " (the docker build context)");
    evidence.push_back({"--requirements", "installs " + text + ", as asked"});
    return {text};
  }
  if (regular_or_absent(root / "requirements.txt")) return {"requirements.txt"};
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("requirements", 0) != 0 || e.path().extension() != ".txt") continue;
    if (is_dev_requirements(name)) {
      evidence.push_back({name, "skipped: development requirements"});
      continue;
    }
    regular_or_absent(e.path());  // a directory or FIFO by that name stops here
    files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> gpu;
  std::vector<std::string> cpu;
  for (const auto& f : files) {
    const Accelerator v = requirements_variant(f);
    if (v == Accelerator::Gpu) gpu.push_back(f);
    if (v == Accelerator::Cpu) cpu.push_back(f);
  }
  if (gpu.size() > 1)
    throw InputError(
        root.string() + ": " + join(gpu, " and ") +
        " are alternatives for different GPU builds; choose one with --requirements FILE");
  if (!gpu.empty() && !cpu.empty()) {
    for (const auto& c : cpu) {
      files.erase(std::find(files.begin(), files.end(), c));
      evidence.push_back({c, "skipped: the CPU alternative to " + gpu.front() +
                                 "; gen installs the GPU one (--requirements " + c +
                                 " picks this instead)"});
    }
  }
  return files;
}

}  // namespace imgsmith::gen
