// imgsmith-probe: the entrypoint baked into images. It checks that the
// container can use its GPU, explains any failure in one line with the fix,
// shows each device, then execs the real command (same PID, same signals).
//
//   imgsmith-probe [--json] [--timeout SECONDS] [-- COMMAND ARGS...]
//
// IMGSMITH_PROBE=warn (default) reports, then runs the command; =require
// exits 3 without running it when no usable GPU is found; =off runs it at
// once. IMGSMITH_PROBE_TIMEOUT bounds the checks (default 10 s) and
// IMGSMITH_PROBE_BENCH_TIMEOUT the benchmark (default 60 s): both run in a
// child process that is killed when it overruns, so a hung driver cannot
// hold the application back, and no driver state of theirs is left in the
// process that becomes the application. IMGSMITH_PROBE_JSON=PATH also
// writes the report as JSON to PATH.
//
// It depends on nothing but the C and C++ runtimes: libstdc++ is linked
// statically and every CUDA library is loaded with dlopen.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench.hpp"
#include "checks_process.hpp"
#include "kernel_check.hpp"
#include "probe_report.hpp"

namespace probe {
namespace {

constexpr const char* kVersion = IMGSMITH_VERSION;  // from CMake: imgsmith's project() version
constexpr int kExitUsage = 2;
constexpr int kExitNoGpu = 3;
constexpr int kExitModelTooBig = 4;
// --check only: the verdict as an exit status, for Kubernetes probes and
// Docker HEALTHCHECK (0 usable, 3 no GPU, 4 model too big as above).
constexpr int kExitDriverTooOld = 5;
constexpr int kExitTimedOut = 6;
constexpr int kExitGpuError = 7;
// A CUDA binary of the image has no code GPU 0 can run (require mode and
// --check alike).
constexpr int kExitNoKernel = 8;
constexpr int kExitExecFailed = 127;

void usage(FILE* to) {
  std::fprintf(
      to,
      "usage: imgsmith-probe [--json] [--timeout SECONDS] [-- COMMAND [ARGS...]]\n"
      "       imgsmith-probe --check [--json] [--timeout SECONDS]\n"
      "       imgsmith-probe --write-kernel-inventory [PATH]\n"
      "\n"
      "Checks that this container can use its NVIDIA GPU, explains any failure in one\n"
      "line with the fix, shows each device, then execs COMMAND.\n"
      "\n"
      "  --json             also print the report as JSON on stdout (before COMMAND)\n"
      "  --bench            also measure: host<->device and device bandwidth, FP32,\n"
      "                     and a CPU-vs-GPU race (a network step, a logistic\n"
      "                     regression), every GPU result checked against the\n"
      "                     CPU's; about three seconds\n"
      "  --timeout SECONDS  bound the checks (or IMGSMITH_PROBE_TIMEOUT; default 10 s,\n"
      "                     60 s with IMGSMITH_PROBE=require, which waits on them);\n"
      "                     IMGSMITH_PROBE_BENCH_TIMEOUT bounds --bench (default 60);\n"
      "                     both run in a child process, killed when it overruns\n"
      "  --check            the checks alone, whatever IMGSMITH_PROBE says, the verdict\n"
      "                     as the exit status (a Kubernetes startupProbe, a Docker\n"
      "                     HEALTHCHECK); no COMMAND; nothing of the GPU is kept:\n"
      "                     the process ends with the checks. It runs beside the\n"
      "                     application: it takes no context of an exclusive-process\n"
      "                     GPU, and compares the model with GPU 0's total memory\n"
      "  --write-kernel-inventory [PATH]\n"
      "                     read the GPU code of every CUDA library the app can load\n"
      "                     and write it to PATH (default /etc/imgsmith/kernels.tsv, or\n"
      "                     IMGSMITH_PROBE_KERNEL_INVENTORY): run at image build time,\n"
      "                     so that the start-up check reads no library\n"
      "  --version          the version, then the benchmark kernels it carries and the\n"
      "                     oldest driver each loads on (\"kernels: fatbin CUDA 13.0\n"
      "                     (R580+), PTX ISA 7.0 (R450+)\")\n"
      "\n"
      "Environment:\n"
      "  IMGSMITH_PROBE=warn     report, then run COMMAND (default)\n"
      "  IMGSMITH_PROBE=require  exit 3 without running COMMAND when no GPU is usable\n"
      "  IMGSMITH_PROBE=off      run COMMAND at once\n"
      "  IMGSMITH_PROBE_JSON=PATH  also write the JSON report to PATH\n"
      "  IMGSMITH_MODEL_VRAM=BYTES  the model's GPU memory need (imgsmith gen writes it):\n"
      "                     checked against GPU 0's free memory before COMMAND starts\n"
      "  IMGSMITH_PROBE_KERNELS=fatbin|ptx  --bench loads only that image of its kernels\n"
      "  IMGSMITH_PROBE_KERNEL_CHECK=off  skip the check of the app's CUDA libraries\n"
      "                     against GPU 0 (SASS for its architecture, or PTX the driver\n"
      "                     can compile): read from the inventory, else from the\n"
      "                     libraries under LD_LIBRARY_PATH, the CUDA paths and\n"
      "                     Python's site-packages (IMGSMITH_PROBE_KERNEL_PATHS=DIR:DIR\n"
      "                     to choose)\n"
      "\n"
      "Exit status: COMMAND's own; without COMMAND, 0 when a GPU is usable, 8 when a\n"
      "CUDA library has no code GPU 0 can run, else 3;\n"
      "3 in require mode when no GPU is usable; 4 in require mode when the model\n"
      "(IMGSMITH_MODEL_VRAM bytes) does not fit GPU 0's free memory; 8 in require\n"
      "mode when a CUDA library has no code GPU 0 can run; 2 bad usage;\n"
      "127 COMMAND cannot run.\n"
      "With --check: 0 a GPU is usable (and the model fits); 3 no GPU is visible;\n"
      "4 the model is larger than GPU 0's total memory; 5 the driver is older than the\n"
      "image's CUDA; 6 the checks did not finish within the timeout; 7 a GPU is there\n"
      "but cannot be used (the line says why); 8 a CUDA library of the image has no\n"
      "code GPU 0 can run (\"no kernel image is available\"); 2 bad usage.\n"
      "--write-kernel-inventory: 0 written, 1 it could not be.\n");
}

[[noreturn]] void exec_command(char** argv) {
  ::execvp(argv[0], argv);
  std::fprintf(stderr, "imgsmith-probe: cannot run '%s': %s\n", argv[0], std::strerror(errno));
  std::fflush(stderr);
  ::_exit(kExitExecFailed);
}

}  // namespace
}  // namespace probe

int main(int argc, char** argv) {
  using namespace probe;
  bool json = false;
  bool bench = false;
  bool check = false;
  double timeout = 0;  // 0: not given
  if (const std::string t = env("IMGSMITH_PROBE_TIMEOUT"); !t.empty())
    timeout = std::atof(t.c_str());
  double bench_timeout = 60;
  if (const std::string t = env("IMGSMITH_PROBE_BENCH_TIMEOUT"); !t.empty())
    bench_timeout = std::atof(t.c_str());
  char** command = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--write-kernel-inventory") {
      if (i + 2 < argc || (i + 1 < argc && argv[i + 1][0] == '-')) {
        std::fprintf(stderr, "imgsmith-probe: --write-kernel-inventory takes a PATH alone\n");
        usage(stderr);
        return kExitUsage;
      }
      return write_kernel_inventory(i + 1 < argc ? argv[i + 1] : kernel_inventory_path());
    }
    const std::string a = argv[i];
    if (a == "--") {
      if (i + 1 < argc) command = argv + i + 1;
      break;
    }
    if (a == "--json") {
      json = true;
    } else if (a == "--bench") {
      bench = true;
    } else if (a == "--check") {
      check = true;
    } else if (a == "--timeout" && i + 1 < argc) {
      timeout = std::atof(argv[++i]);
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--version") {
      std::printf("imgsmith-probe %s\nkernels: %s\n", kVersion, embedded_kernels().c_str());
      return 0;
    } else {
      std::fprintf(stderr, "imgsmith-probe: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return kExitUsage;
    }
  }
  if (!(bench_timeout > 0)) bench_timeout = 60;
  if (check && (command != nullptr || bench)) {
    std::fprintf(stderr, "imgsmith-probe: --check runs no COMMAND and no --bench\n");
    usage(stderr);
    return kExitUsage;
  }

  std::string mode = env("IMGSMITH_PROBE");
  if (mode.empty()) mode = "warn";
  if (mode != "warn" && mode != "require" && mode != "off") {
    std::fprintf(stderr,
                 "imgsmith-probe: IMGSMITH_PROBE='%s' is not off, warn or require; using warn\n",
                 mode.c_str());
    mode = "warn";
  }
  if (check) mode = "require";  // --check checks, whatever the image's mode
  // Unbounded by the user: 10 s where the application starts anyway (warn),
  // 60 s where it waits on the verdict (require): a cold multi-GPU node
  // without persistence mode can spend more than 10 s in cuInit, and
  // refusing a GPU that works would be worse than waiting for it.
  if (!(timeout > 0)) timeout = mode == "require" && !check ? 60 : 10;
  if (mode == "off") {
    if (command != nullptr) exec_command(command);
    return 0;
  }

  // The checks (and the benchmark) run in a child process, killed when it
  // overruns: a driver that hangs in cuInit is reported, and in warn mode
  // the application still starts.
  const auto start = std::chrono::steady_clock::now();
  const CheckTime when = check ? CheckTime::BesideApp : CheckTime::BeforeApp;
  ChecksOutcome outcome = run_checks_in_child(bench, timeout, bench_timeout, when);
  Report& report = outcome.report;
  const bool timed_out = outcome.checks_timed_out;
  check_model_vram(report, when);
  check_kernels(report, command != nullptr ? command[0] : nullptr);
  const std::string& bench_lines = outcome.bench_lines;
  if (outcome.bench_wrong_results)
    fail(report, Status::Error, "GPU 0 " + outcome.bench_wrong_reason,
         "do not trust this GPU: check it on the host (nvidia-smi -q -d ECC; dmesg for Xid "
         "errors) and take it out of service until it passes");
  report.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  print_human(report);
  for (std::size_t at = 0; at < bench_lines.size();) {
    const auto end = bench_lines.find('\n', at);
    std::fprintf(stderr, "imgsmith-probe: %s\n", bench_lines.substr(at, end - at).c_str());
    at = end == std::string::npos ? bench_lines.size() : end + 1;
  }
  const std::string doc = to_json(report);
  if (json) std::printf("%s\n", doc.c_str());
  std::fflush(stdout);
  if (const std::string path = env("IMGSMITH_PROBE_JSON"); !path.empty()) {
    if (FILE* f = std::fopen(path.c_str(), "w")) {
      std::fprintf(f, "%s\n", doc.c_str());
      std::fclose(f);
    } else {
      std::fprintf(stderr, "imgsmith-probe: cannot write %s: %s\n", path.c_str(),
                   std::strerror(errno));
    }
  }
  std::fflush(stderr);
  const bool usable = report.status == Status::Ok;
  if (check) {
    // _exit: a thread still blocked in the driver is not waited for.
    if (timed_out) ::_exit(kExitTimedOut);
    if (report.status == Status::NoGpu) ::_exit(kExitNoGpu);
    if (report.status == Status::DriverTooOld) ::_exit(kExitDriverTooOld);
    if (report.status == Status::NoKernel) ::_exit(kExitNoKernel);
    if (!usable) ::_exit(kExitGpuError);
    ::_exit(report.vram.checked && !report.vram.fits ? kExitModelTooBig : 0);
  }
  if (mode == "require" && report.status == Status::NoKernel) ::_exit(kExitNoKernel);
  if (mode == "require" && !usable) ::_exit(kExitNoGpu);
  if (mode == "require" && report.vram.checked && !report.vram.fits) ::_exit(kExitModelTooBig);
  if (command != nullptr) exec_command(command);
  ::_exit(usable ? 0 : report.status == Status::NoKernel ? kExitNoKernel : kExitNoGpu);
}
