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
#include <regex>
#include <string>
#include <vector>

#include "imgsmith/util/error.hpp"
#include "imgsmith/version.hpp"
#include "output_file.hpp"
#include "probe_image.hpp"
#include "probe_summary.hpp"

// The probes embedded_probe.S carries, assembled into the imgsmith program
// alone: weak, so that the unit tests, which link this library and never
// write a probe, link without it (every label is then null, and an
// embedded probe empty), and so do not depend on building the probes.
extern "C" const char imgsmith_probe_start[] __attribute__((weak));
extern "C" const char imgsmith_probe_end[] __attribute__((weak));
extern "C" const char imgsmith_probe_arm64_start[] __attribute__((weak));
extern "C" const char imgsmith_probe_arm64_end[] __attribute__((weak));

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

struct ProbeArgs {  // --write PATH [--arch A], --write-all DIR, --write-image FILE [--tag T],
                    // or the probe's own arguments
  std::string write, write_all, write_image;
  std::string tag = kVersion;
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
  if (!a.write_image.empty()) {
    // A tag as the distribution specification allows one, so that the
    // archive can be pushed under it.
    static const std::regex kTag("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
    if (!std::regex_match(a.tag, kTag))
      throw InputError("--tag '" + a.tag +
                       "': a tag is letters, digits, '_', '.' and '-' (128 at most), not "
                       "starting with '.' or '-'");
    std::vector<ProbeBinary> probes;
    for (const auto& arch : embedded_probe_arches()) probes.push_back({arch, embedded_probe(arch)});
    write_output(a.write_image, probe_image_archive(probes, a.tag));
    std::string arches;
    for (const auto& p : probes) arches += (arches.empty() ? "" : ", ") + p.arch;
    std::cerr << "imgsmith: wrote the probe image (" << arches << ") to " << a.write_image
              << " as an OCI archive tagged " << a.tag << "; publish it with\n"
              << "  skopeo copy --all oci-archive:" << a.write_image
              << " docker://REGISTRY/imgsmith-probe:" << a.tag << "\n"
              << "and build with --build-arg IMGSMITH_PROBE_IMAGE=REGISTRY/imgsmith-probe:" << a.tag
              << " (or imgsmith gen --probe-image)\n";
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
  if (first == "--write" || first == "--write-all" || first == "--write-image") {
    // imgsmith's own options: the first word decides, so that every other
    // `imgsmith probe ...` reaches the probe as typed.
    const std::string usage =
        "give imgsmith probe --write PATH [--arch amd64|arm64], --write-all DIR, or "
        "--write-image FILE [--tag TAG]";
    if (argc < 2)
      throw InputError(first + " needs a " +
                       (first == "--write"       ? "PATH"
                        : first == "--write-all" ? "DIR"
                                                 : "FILE") +
                       ": " + usage);
    (first == "--write" ? a.write : first == "--write-all" ? a.write_all : a.write_image) = argv[1];
    for (int i = 2; i < argc; ++i) {
      if (first == "--write" && std::string(argv[i]) == "--arch" && i + 1 < argc)
        a.arch = argv[++i];
      else if (first == "--write-image" && std::string(argv[i]) == "--tag" && i + 1 < argc)
        a.tag = argv[++i];
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
      "  imgsmith probe --write-image FILE [--tag TAG]\n"
      "                                  the probe image: an OCI archive, one FROM-scratch\n"
      "                                  image per CPU with /imgsmith-probe (TAG: this\n"
      "                                  version); skopeo copy --all oci-archive:FILE\n"
      "                                  docker://REGISTRY/imgsmith-probe:TAG publishes it\n"
      "                                  for --build-arg IMGSMITH_PROBE_IMAGE"
      "  imgsmith probe --summarize REPORT...  one table of many nodes' reports\n"
      "                                  (imgsmith probe --summarize --help)");
}

}  // namespace imgsmith
