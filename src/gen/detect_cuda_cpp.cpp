// Project detection for CUDA C/C++: a CMake project that builds CUDA, or
// plain *.cu sources one nvcc command builds; which programs they make and
// which CUDA libraries those link.
#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "detect_internal.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;
namespace {

// Directories of other people's code that a project vendors: their targets
// are not the project's programs.
bool is_vendored(const std::string& rel) {
  for (const auto& part : split(rel, "/"))
    if (part == "third_party" || part == "thirdparty" || part == "3rdparty" || part == "external" ||
        part == "extern" || part == "vendor" || part == "deps" || part == "_deps")
      return true;
  return false;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The directory add_subdirectory() names, relative to the project, or ""
// when a variable gen cannot resolve or an absolute path names it.
std::string subdirectory_of(const CMakeCommand& c, const std::string& list_dir) {
  std::string source = c.args.front();
  std::string base = list_dir;
  for (const char* var : {"${CMAKE_CURRENT_SOURCE_DIR}", "${CMAKE_CURRENT_LIST_DIR}",
                          "${PROJECT_SOURCE_DIR}", "${CMAKE_SOURCE_DIR}"})
    if (source.rfind(var, 0) == 0) {
      if (std::string(var).find("CURRENT") == std::string::npos) base = ".";
      source = source.substr(std::string(var).size());
      while (!source.empty() && source.front() == '/') source.erase(0, 1);
      if (source.empty()) source = ".";
      break;
    }
  if (source.find("${") != std::string::npos || fs::path(source).is_absolute()) return "";
  return (fs::path(base) / source).generic_string();
}

const std::map<std::string, std::string>& header_libraries() {
  return builtin_tables().header_libraries;
}

// Reads the commands of a CUDA CMake project's CMakeLists.txt files: which
// CUDA, CMake and libraries the build needs, which programs it makes and
// whether it installs them.
class CMakeReader {
 public:
  CMakeReader(const fs::path& root, std::vector<Evidence>& evidence, BuildContext& build_context)
      : root_(root), evidence_(evidence), build_context_(build_context) {}

  // The project's CMakeLists.txt files, then those of directories it adds
  // from outside itself (add_subdirectory(../../libs/kernels kernels)): those
  // tell which CUDA, CMake and libraries the build needs, never which
  // programs the project is or how it installs them.
  void read(const std::vector<fs::path>& project_lists) {
    for (const auto& f : project_lists) lists_.emplace_back(f, false);
    for (std::size_t n = 0; n < lists_.size(); ++n) {
      const fs::path file = lists_[n].first;  // a copy: following a subdirectory grows the list
      ListsFile list;
      list.outside = lists_[n].second;
      list.rel = relative_to_root(file, root_);
      if (is_vendored(list.rel)) continue;
      const std::string text = strip_cmake_comments(read_text(file));
      list.dir = relative_to_root(file.parent_path(), root_);
      for (const auto& c : cmake_commands(text)) command(c, list);
    }
  }

  bool builds_cuda() const { return cuda_; }
  const CudaCppProject& project() const { return cpp_; }
  const std::set<std::string>& libraries() const { return libs_; }

 private:
  struct ListsFile {
    std::string rel;       // relative to the project
    std::string dir;       // the directory holding it, relative to the project
    bool outside = false;  // added from outside the project
  };

  void command(const CMakeCommand& c, const ListsFile& list) {
    if (c.name == "add_subdirectory" && !c.args.empty()) {
      follow_subdirectory(c, list);
      return;
    }
    if (c.name == "project" && !c.args.empty()) {
      if (project_name_.empty() && !list.outside) project_name_ = c.args.front();
      for (const auto& a : c.args)
        if (a == "CUDA") {
          cuda_ = true;
          evidence_.push_back({list.rel, "CMake project with CUDA as a language"});
        }
    } else if (c.name == "enable_language" && !c.args.empty() && upper(c.args.front()) == "CUDA") {
      cuda_ = true;
      evidence_.push_back({list.rel, "enable_language(CUDA)"});
    } else if (c.name == "find_package" && !c.args.empty() && c.args.front() == "CUDAToolkit") {
      find_cuda_toolkit(c, list);
    } else if (c.name == "find_package" && !c.args.empty() && c.args.front() == "CUDA") {
      // FindCUDA, deprecated since CMake 3.10 and still in many projects
      // (tensorrtx, older samples): cuda_add_executable() compiles the .cu.
      cuda_ = true;
      evidence_.push_back({list.rel, "find_package(CUDA): the FindCUDA module"});
    } else if (c.name == "cmake_minimum_required") {
      minimum_cmake(c, list);
    } else if (c.name == "install") {
      if (!list.outside) cpp_.cmake_install = true;
    } else if ((c.name == "add_executable" || c.name == "cuda_add_executable") && !c.args.empty() &&
               !list.outside) {
      // An executable that is not the project's program: its arguments
      // link nothing the image needs either.
      if (!add_executable(c, list)) return;
    }
    for (const auto& a : c.args) {
      if (a.find("CUDA_ARCHITECTURES") != std::string::npos && !list.outside)
        cpp_.sets_architectures = true;
      if (a.rfind("CUDA::", 0) == 0) libs_.insert(a.substr(6));
    }
    found_by_hand(c, list);
  }

  void follow_subdirectory(const CMakeCommand& c, const ListsFile& list) {
    const std::string named = subdirectory_of(c, list.dir);
    if (named.empty()) return;
    const std::string where = list.rel + ":" + std::to_string(c.line);
    const auto reached = build_context_.reach(".", named, where, (root_ / where).string(),
                                              "add_subdirectory(" + c.args.front() + ")");
    if (!reached.in_project && followed_.insert(reached.path).second)
      for (const auto& f : walk_project(root_ / reached.path).cmake_lists)
        lists_.emplace_back(f, true);
  }

  void find_cuda_toolkit(const CMakeCommand& c, const ListsFile& list) {
    cuda_ = true;
    const bool versioned =
        c.args.size() > 1 && std::isdigit(static_cast<unsigned char>(c.args[1][0]));
    if (versioned) {
      cpp_.min_cuda = c.args[1];
      cpp_.min_cuda_source = list.rel + ":" + std::to_string(c.line);
    }
    evidence_.push_back({list.rel, "find_package(CUDAToolkit" +
                                       (versioned ? " " + c.args[1] : std::string()) + ")"});
  }

  // VERSION 3.24 or a policy range 3.24...3.28: the first is the minimum.
  void minimum_cmake(const CMakeCommand& c, const ListsFile& list) {
    for (std::size_t k = 0; k + 1 < c.args.size(); ++k)
      if (c.args[k] == "VERSION") {
        const std::string v = c.args[k + 1].substr(0, c.args[k + 1].find("..."));
        if (!v.empty() && std::isdigit(static_cast<unsigned char>(v[0])) &&
            (cpp_.min_cmake.empty() || version_less(cpp_.min_cmake, v))) {
          cpp_.min_cmake = v;
          cpp_.min_cmake_source = list.rel + ":" + std::to_string(c.line);
        }
      }
  }

  // Records the program an add_executable() makes; false when it is none of
  // the project's (imported, an alias, a test, or named by a variable).
  bool add_executable(const CMakeCommand& c, const ListsFile& list) {
    if (std::find(c.args.begin(), c.args.end(), "IMPORTED") != c.args.end() ||
        std::find(c.args.begin(), c.args.end(), "ALIAS") != c.args.end())
      return false;
    std::string name = c.args.front();
    if (name == "${PROJECT_NAME}" || name == "${CMAKE_PROJECT_NAME}") name = project_name_;
    if (name.empty() || name.find("${") != std::string::npos) {
      evidence_.push_back({list.rel, "skipped an executable named by a variable (" +
                                         c.args.front() + "); --cmd names the program"});
      return false;
    }
    const std::string path = (list.dir == "." || list.dir.empty()) ? name : list.dir + "/" + name;
    if (is_test_path(path) || name.find("test") != std::string::npos) {
      evidence_.push_back({list.rel, "skipped the executable " + name + ": a test"});
      return false;
    }
    cpp_.targets.push_back(name);
    return true;
  }

  // cuDNN and NCCL have no CUDA:: targets: projects find them by hand
  // (find_library(... cudnn), find_path(... cudnn.h), NCCL_* variables,
  // find_package(NCCL)), and fail at configure on an image without them.
  void found_by_hand(const CMakeCommand& c, const ListsFile& list) {
    const std::string where = list.rel + ":" + std::to_string(c.line);
    for (const auto& a : c.args) {
      std::string l;
      for (char ch : a) l += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const bool finder = c.name == "find_library" || c.name == "find_path" ||
                          c.name == "find_package" || c.name == "find_file";
      for (const char* lib : {"cudnn", "nccl"}) {
        const std::string name = lib;
        const bool named = l == name || l == name + ".h" || l == "lib" + name + ".so" ||
                           l == "lib" + name ||
                           (c.name == "find_package" && l == name && &a == &c.args.front());
        const bool variable =
            a.rfind(upper(name) + "_", 0) == 0 || a.rfind("${" + upper(name) + "_", 0) == 0;
        if (((finder && named) || variable) && libs_.insert(name).second)
          evidence_.push_back({where, c.name + "(" + join(c.args, " ").substr(0, 80) +
                                          "): the program uses " +
                                          (name == "cudnn" ? "cuDNN" : "NCCL")});
      }
      // Libraries NVIDIA's CUDA images do not carry: gen installs nothing
      // for them yet, so the build would fail at configure or link. Said
      // once each, with the way out.
      const bool tensorrt = l == "tensorrt" || l.rfind("nvinfer", 0) == 0 ||
                            l.rfind("nvonnxparser", 0) == 0 || l.rfind("libnvinfer", 0) == 0;
      const bool opencv = c.name == "find_package" && l == "opencv" && &a == &c.args.front();
      if ((tensorrt || opencv) && unsupplied_.insert(tensorrt ? "TensorRT" : "OpenCV").second)
        evidence_.push_back(
            {where, "warning: " + c.name + "(" + join(c.args, " ").substr(0, 60) + ") needs " +
                        (tensorrt ? std::string("TensorRT (libnvinfer), which NVIDIA's CUDA images "
                                                "do not carry: build on nvcr.io/nvidia/tensorrt "
                                                "(--base for the final stage), or add TensorRT's "
                                                "apt packages (libnvinfer-dev, libnvinfer10)")
                                  : std::string("OpenCV, which the CUDA images do not carry: add "
                                                "libopencv-dev to the builder and the runtime "
                                                "libraries to the final stage (imgsmith.toml: "
                                                "[gen] system_packages)"))});
    }
  }
  std::set<std::string> unsupplied_;  // TensorRT, OpenCV: warned about once

  fs::path root_;
  std::vector<Evidence>& evidence_;
  BuildContext& build_context_;
  std::vector<std::pair<fs::path, bool>> lists_;  // file, outside the project
  std::set<std::string> followed_;                // directories added from outside
  CudaCppProject cpp_;
  bool cuda_ = false;  // the build compiles CUDA
  std::set<std::string> libs_;
  std::string project_name_;
};

// A CMake project that builds CUDA: the programs its lists name.
CudaCppProject cmake_program(const fs::path& root, const CMakeReader& reader,
                             std::vector<Evidence>& evidence) {
  CudaCppProject cpp = reader.project();
  cpp.cmake = true;
  if (cpp.targets.empty())
    throw InputError(
        (root / "CMakeLists.txt").string() +
        ": a CUDA CMake project with no add_executable() gen can name; gen builds programs, "
        "so add one with a literal name");
  cpp.cuda_libs.assign(reader.libraries().begin(), reader.libraries().end());
  std::vector<std::string> targets_of_libs;
  for (const auto& l : cpp.cuda_libs)
    targets_of_libs.push_back(l == "cudnn" || l == "nccl" ? l + " (found by hand)" : "CUDA::" + l);
  evidence.push_back(
      {"CMakeLists.txt", "executables: " + join(cpp.targets, ", ") +
                             (targets_of_libs.empty() ? "; links no CUDA library targets"
                                                      : "; links " + join(targets_of_libs, ", "))});
  if (cpp.sets_architectures)
    evidence.push_back({"CMakeLists.txt", "chooses its own CUDA architectures"});
  return cpp;
}

// Plain *.cu sources: one nvcc command builds them, and their #includes
// tell which CUDA libraries to link.
CudaCppProject nvcc_program(const fs::path& root, const Walk& walk,
                            std::vector<Evidence>& evidence) {
  CudaCppProject cpp;
  std::set<std::string> libs;
  static const std::regex kInclude(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  // A definition of main: "int main(", "auto main (", GNU style's "main ("
  // at the start of a line; not "domain(", not a comment line.
  static const std::regex kMain(R"(^\s*([A-Za-z_][\w:<>\*&\s]*[\s\*&])?main\s*\()");
  std::string main_at;
  for (const auto* list : {&walk.cuda_sources, &walk.cpp_sources})
    for (const auto& f : *list) {
      const std::string rel = relative_to_root(f, root);
      if (is_test_path(rel)) continue;
      if (f.extension() != ".cuh") cpp.sources.push_back(rel);
      std::istringstream lines(read_text(f));
      std::string line;
      int number = 0;
      while (std::getline(lines, line)) {
        ++number;
        if (main_at.empty() && line.size() <= 1000 && line.find("main") != std::string::npos &&
            std::regex_search(line, kMain))
          main_at = rel + ":" + std::to_string(number);
        std::smatch m;
        if (line.size() > 1000 || line.find("include") == std::string::npos ||
            !std::regex_search(line, m, kInclude))
          continue;
        const auto hit = header_libraries().find(m[1].str());
        if (hit != header_libraries().end() && libs.insert(hit->second).second)
          evidence.push_back({rel, "includes " + m[1].str() + ": links -l" + hit->second});
      }
    }
  // nvcc -o links a program; sources without main() are a library, which
  // would fail to link in the build (or, worse, be shipped as a "program").
  if (main_at.empty())
    throw InputError(
        (root / relative_to_root(walk.cuda_sources.front(), root)).string() + ": none of the " +
        std::to_string(cpp.sources.size()) +
        " CUDA/C++ sources defines main(), so they are a library, and gen builds programs. "
        "Run gen on the program that uses it, or build the library with CMake");
  evidence.push_back({main_at, "defines main(): the sources build one program"});
  cpp.cuda_libs.assign(libs.begin(), libs.end());
  evidence.push_back(
      {cpp.sources.empty() ? "." : cpp.sources.front(),
       std::to_string(cpp.sources.size()) + " CUDA/C++ sources, built with one nvcc command"});
  return cpp;
}

}  // namespace

std::optional<CudaCppProject> detect_cuda_cpp(const fs::path& root, const Walk& walk,
                                              std::vector<Evidence>& evidence,
                                              BuildContext& build_context) {
  const bool cmake_project = regular_or_absent(root / "CMakeLists.txt");
  CMakeReader reader(root, evidence, build_context);
  if (cmake_project) reader.read(walk.cmake_lists);
  if (reader.builds_cuda()) return cmake_program(root, reader, evidence);
  if (walk.cuda_sources.empty()) return std::nullopt;
  if (cmake_project) return std::nullopt;  // a CMake project that does not build CUDA
  return nvcc_program(root, walk, evidence);
}

}  // namespace imgsmith::gen
