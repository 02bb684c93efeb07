// `imgsmith probe`: the embedded imgsmith-probe, run from memory or written
// out (the Dockerfile generator copies it into build contexts).
#include "probe_command.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

namespace imgsmith {

std::string embedded_probe() { return std::string(imgsmith_probe_start, imgsmith_probe_end); }

namespace {

struct ProbeArgs {  // --write PATH, or the probe's own arguments
  std::string write;
  std::vector<std::string> args;
};

int run_probe(const ProbeArgs& a) {
  if (!a.write.empty()) {
    // A fresh clone has no .imgsmith/ yet (gen keeps it out of git): the
    // step CI runs creates it.
    const auto parent = std::filesystem::path(a.write).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) throw InputError(parent.string() + ": cannot create it (" + ec.message() + ")");
    write_output(a.write, embedded_probe());
    if (::chmod(a.write.c_str(), 0755) != 0)
      throw InputError(a.write + ": cannot make it executable: " + std::strerror(errno));
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
  int i = 0;
  if (argc >= 1 && std::string(argv[0]) == "--write") {
    if (argc < 2) throw InputError("imgsmith probe --write needs a PATH");
    a.write = argv[1];
    i = 2;
    if (argc > 2) throw InputError("imgsmith probe --write PATH takes no other arguments");
  }
  for (; i < argc; ++i) a.args.emplace_back(argv[i]);
  return run_probe(a);
}

void register_probe_command(CLI::App& app) {
  // Listed for `imgsmith --help`; main() hands `imgsmith probe ...` to
  // probe_main() before parsing, so every argument reaches the probe as typed
  // ("--" included).
  app.add_subcommand("probe",
                     "Run the GPU probe generated images use as their entrypoint:\n"
                     "  imgsmith probe [ARGS...]        (imgsmith probe --help for the probe's)\n"
                     "  imgsmith probe --write PATH     write it out, mode 0755\n"
                     "  imgsmith probe --summarize REPORT...  one table of many nodes' reports\n"
                     "                                  (imgsmith probe --summarize --help)");
}

}  // namespace imgsmith
