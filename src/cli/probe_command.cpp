// `imgsmith probe`: the embedded imgsmith-probe, run from memory or written
// out (the Dockerfile generator copies it into build contexts).
#include "probe_command.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "imgsmith/util/error.hpp"
#include "output_file.hpp"
#include "probe_summary.hpp"

extern "C" const char imgsmith_probe_start[];
extern "C" const char imgsmith_probe_end[];
extern "C" const char imgsmith_probe_arm64_start[];
extern "C" const char imgsmith_probe_arm64_end[];

namespace imgsmith {
namespace {

// Docker's name (TARGETARCH) for the CPU this imgsmith, and so its own
// embedded probe, was built for.
#if defined(__x86_64__)
constexpr const char* kOwnArch = "amd64";
#elif defined(__aarch64__)
constexpr const char* kOwnArch = "arm64";
#else
#error "imgsmith-probe is built for x86-64 and arm64 only"
#endif

bool has_cross_arm64() {
  // Two labels of one assembled section (embedded_probe.S): equal when the
  // build had no arm64 probe to put between them.
  return std::string(kOwnArch) != "arm64" &&
         reinterpret_cast<std::uintptr_t>(imgsmith_probe_arm64_end) >
             reinterpret_cast<std::uintptr_t>(imgsmith_probe_arm64_start);
}

}  // namespace

std::string embedded_probe() { return std::string(imgsmith_probe_start, imgsmith_probe_end); }

std::vector<std::string> embedded_probe_arches() {
  std::vector<std::string> out = {kOwnArch};
  if (has_cross_arm64()) out.emplace_back("arm64");
  return out;
}

std::string embedded_probe(const std::string& arch) {
  if (arch == kOwnArch) return embedded_probe();
  if (arch == "arm64" && has_cross_arm64())
    return std::string(imgsmith_probe_arm64_start, imgsmith_probe_arm64_end);
  if (arch == "amd64" || arch == "arm64")
    throw InputError("this imgsmith carries no " + arch +
                     " probe: it was built without the cross compiler (scripts/setup.sh installs "
                     "g++-aarch64-linux-gnu)");
  throw InputError("--arch " + arch + ": the probe is built for amd64 and arm64");
}

void write_probe(const std::string& path, const std::string& arch) {
  const std::string bytes = embedded_probe(arch);
  // A fresh clone has no .imgsmith/ yet (gen keeps it out of git): the step
  // CI runs creates it.
  const auto parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw InputError(parent.string() + ": cannot create it (" + ec.message() + ")");
  write_output(path, bytes);
  if (::chmod(path.c_str(), 0755) != 0)
    throw InputError(path + ": cannot make it executable: " + std::strerror(errno));
}

namespace {

struct ProbeArgs {  // --write PATH [--arch A], --write-all DIR, or the probe's own arguments
  std::string write, write_all;
  std::string arch = kOwnArch;
  std::vector<std::string> args;
};

int run_probe(const ProbeArgs& a) {
  if (!a.write.empty()) {
    write_probe(a.write, a.arch);
    return 0;
  }
  if (!a.write_all.empty()) {
    for (const auto& arch : embedded_probe_arches())
      write_probe((std::filesystem::path(a.write_all) / ("imgsmith-probe-" + arch)).string(), arch);
    return 0;
  }
  const int fd = ::memfd_create("imgsmith-probe", MFD_CLOEXEC);
  if (fd < 0)
    throw InputError(std::string("cannot create the probe in memory: ") + std::strerror(errno));
  const std::string bytes = embedded_probe();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) throw InputError(std::string("cannot write the probe: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  std::vector<char*> argv;
  std::string name = "imgsmith-probe";
  argv.push_back(name.data());
  std::vector<std::string> args = a.args;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  ::fexecve(fd, argv.data(), environ);
  throw InputError(std::string("cannot run the probe: ") + std::strerror(errno));
}

}  // namespace

int probe_main(int argc, char** argv) {
  if (argc >= 1 && std::string(argv[0]) == "--summarize")
    return summarize_main(std::vector<std::string>(argv + 1, argv + argc));
  ProbeArgs a;
  const std::string first = argc >= 1 ? argv[0] : "";
  if (first == "--write" || first == "--write-all") {
    // imgsmith's own options: the first word decides, so that every other
    // `imgsmith probe ...` reaches the probe as typed.
    const std::string usage =
        "give imgsmith probe --write PATH [--arch amd64|arm64], or --write-all DIR";
    if (argc < 2)
      throw InputError(first + " needs a " + (first == "--write" ? "PATH" : "DIR") + ": " + usage);
    (first == "--write" ? a.write : a.write_all) = argv[1];
    for (int i = 2; i < argc; ++i) {
      if (first == "--write" && std::string(argv[i]) == "--arch" && i + 1 < argc)
        a.arch = argv[++i];
      else
        throw InputError(std::string("unexpected '") + argv[i] + "': " + usage);
    }
    return run_probe(a);
  }
  for (int i = 0; i < argc; ++i) a.args.emplace_back(argv[i]);
  return run_probe(a);
}

void register_probe_command(CLI::App& app) {
  // Listed for `imgsmith --help`; main() hands `imgsmith probe ...` to
  // probe_main() before parsing, so every argument reaches the probe as typed
  // ("--" included).
  app.add_subcommand(
      "probe",
      "Run the GPU probe generated images use as their entrypoint:\n"
      "  imgsmith probe [ARGS...]        (imgsmith probe --help for the probe's)\n"
      "  imgsmith probe --write PATH [--arch amd64|arm64]\n"
      "                                  write it out, mode 0755 (default: this CPU's)\n"
      "  imgsmith probe --write-all DIR  DIR/imgsmith-probe-ARCH for each CPU it is\n"
      "                                  built for (what gen's Dockerfiles copy)\n"
      "  imgsmith probe --summarize REPORT...  one table of many nodes' reports\n"
      "                                  (imgsmith probe --summarize --help)");
}

}  // namespace imgsmith
