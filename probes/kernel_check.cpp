// The start-up check: where the app's CUDA libraries are, the inventory or
// a scan of them (kernel_reader.cpp reads each), and the verdict against
// GPU 0 in the report.
#include "kernel_check.hpp"

#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>

#include "cuda_tables.hpp"
#include "probe_tables.hpp"

namespace probe {
namespace {

using imgsmith::KernelKind;
namespace fatbin = imgsmith::fatbin;

constexpr const char* kDefaultInventory = "/etc/imgsmith/kernels.tsv";
constexpr int kMaxDepth = 24;  // site-packages trees are a few levels deep
constexpr std::size_t kNamedInLine = 3;

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void glob_dirs(const std::string& pattern, std::vector<std::string>& out) {
  glob_t g{};
  if (::glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &g) == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  ::globfree(&g);
}

// A shared library's name: NAME.so or NAME.so.N...; the driver's own
// (libcuda, libnvidia-*), which the container toolkit mounts from the host
// for the host's GPUs, are not the application's.
bool library_name(const char* name) {
  const std::string_view n = name;
  if (n.starts_with("libcuda.so") || n.starts_with("libnvidia-") || n.starts_with("libnvcuvid") ||
      n.starts_with("libnvoptix"))
    return false;
  return n.ends_with(".so") || n.find(".so.") != std::string_view::npos;
}

struct Walk {
  std::set<std::pair<dev_t, ino_t>> seen_files, seen_dirs;
  std::vector<BinaryKernels> found;

  // A file, once (by device and inode: libcublas.so.13 and its link are one).
  void file(const std::string& path) {
    struct stat fs;
    if (::stat(path.c_str(), &fs) != 0 || !S_ISREG(fs.st_mode) ||
        !seen_files.insert({fs.st_dev, fs.st_ino}).second)
      return;
    if (auto b = read_binary_kernels(path)) found.push_back(std::move(*b));
  }

  // A directory of programs: each executable file in it, not below.
  void programs(const std::string& path) {
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) return;
    while (const dirent* e = ::readdir(d)) {
      const std::string child = path + "/" + e->d_name;
      if (e->d_name[0] != '.' && ::access(child.c_str(), X_OK) == 0) file(child);
    }
    ::closedir(d);
  }

  void dir(const std::string& path, int depth) {
    struct stat st;
    if (depth > kMaxDepth || ::stat(path.c_str(), &st) != 0 ||
        !seen_dirs.insert({st.st_dev, st.st_ino}).second)
      return;
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) return;
    std::vector<std::string> subdirs;
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || std::strcmp(e->d_name, "..") == 0))
        continue;
      const std::string child = path + "/" + e->d_name;
      // Directories are entered as they are, never through a link (which
      // can loop); files are read through links (libcublas.so.13 ->
      // libcublas.so.13.1.0), each once.
      if (e->d_type == DT_DIR) {
        subdirs.push_back(child);
        continue;
      }
      if (e->d_type == DT_UNKNOWN) {
        struct stat cs;
        if (::lstat(child.c_str(), &cs) == 0 && S_ISDIR(cs.st_mode)) {
          subdirs.push_back(child);
          continue;
        }
      }
      if (library_name(e->d_name)) file(child);
    }
    ::closedir(d);
    for (const auto& s : subdirs) dir(s, depth + 1);
  }
};

// "compute_120" of a code.
std::string code_name(const KernelCode& c) {
  const char* prefix = c.kind == KernelKind::Sass  ? "sm_"
                       : c.kind == KernelKind::Ptx ? "compute_"
                       : c.kind == KernelKind::Ir  ? "ir_"
                                                   : "other_";
  std::string text = prefix + std::to_string(c.arch);
  if (c.variant != ' ') text += c.variant;
  return text;
}

// What a binary carries, for the line: "SASS sm_75, sm_80, sm_90 and PTX
// compute_90".
std::string carried(const BinaryKernels& b) {
  std::string sass, ptx;
  for (const auto& c : b.code) {
    if (c.kind == KernelKind::Sass && c.empty_entries < c.entries)
      sass += (sass.empty() ? "" : ", ") + code_name(c);
    else if (c.kind == KernelKind::Ptx)
      ptx += (ptx.empty() ? "" : ", ") + code_name(c);
  }
  if (sass.empty() && ptx.empty()) return "no SASS or PTX";
  if (ptx.empty()) return "SASS " + sass + " and no PTX";
  if (sass.empty()) return "PTX " + ptx + " alone";
  return "SASS " + sass + " and PTX " + ptx;
}

// The package that brought a file: site-packages' first directory (two for
// NVIDIA's wheels, nvidia/cublas), a module's name for an extension module
// directly in site-packages, else the file's name.
std::string package_of(const std::string& path) {
  for (const char* marker : {"/site-packages/", "/dist-packages/"}) {
    const std::size_t at = path.find(marker);
    if (at == std::string::npos) continue;
    const std::string rest = path.substr(at + std::strlen(marker));
    const std::size_t slash = rest.find('/');
    if (slash == std::string::npos) return rest.substr(0, rest.find('.'));
    std::string top = rest.substr(0, slash);
    if (top == "nvidia") {
      const std::size_t next = rest.find('/', slash + 1);
      if (next != std::string::npos) top = rest.substr(0, next);
    }
    return top;
  }
  return path.substr(path.rfind('/') + 1);
}

std::string file_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string mb(unsigned long long bytes) {
  char buf[32];
  if (bytes < 1000000)
    std::snprintf(buf, sizeof buf, "%.1f kB", static_cast<double>(bytes) / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

std::uint64_t code_bytes(const BinaryKernels& b) {
  std::uint64_t n = 0;
  for (const auto& c : b.code) n += c.bytes;
  return n;
}

// The newest PTX ISA a driver of CUDA `driver_cuda` compiles; 0 unknown,
// as for a driver newer than every release of the table (data/cuda-drivers.json
// is older than it): no PTX is then taken to be too new for it.
int newest_isa_for(int driver_cuda) {
  int isa = 0, newest_cuda = 0;
  for (const auto& row : imgsmith::probe_tables::kPtxVersions) {
    if (row.cuda <= driver_cuda) isa = std::max(isa, row.isa);
    newest_cuda = std::max(newest_cuda, row.cuda);
  }
  return driver_cuda > newest_cuda ? 0 : isa;
}

// The fix for binaries without code for `cc`: the CUDA release that first
// compiles for it, and for torch the first release with a wheel built on
// that CUDA or later.
std::string no_kernel_fix(const std::vector<std::string>& paths, unsigned cc) {
  int first_cuda = 0;
  for (const auto& row : imgsmith::probe_tables::kArchitectureFirstCudas)
    if (row.arch == static_cast<int>(cc)) first_cuda = row.cuda;
  const std::string arch = std::to_string(cc);
  const std::string dotted = std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  std::string fix;
  for (const auto& p : paths)
    if (package_of(p) == "torch" && first_cuda > 0)
      for (const auto& row : imgsmith::probe_tables::kTorchBuilds)
        if (row.cuda >= first_cuda) {
          const std::string tag =
              "cu" + std::to_string(row.cuda / 1000) + std::to_string((row.cuda % 1000) / 10);
          fix = "use torch >= " + std::string(row.torch) + " built on CUDA " + cuda_text(row.cuda) +
                " or newer (pip install --index-url " + "https://download.pytorch.org/whl/" + tag +
                " torch), the first with kernels " + "for sm_" + arch + "; ";
          break;
        }
  fix += "rebuild what has no code for sm_" + arch + " with " +
         (first_cuda > 0 ? "CUDA " + cuda_text(first_cuda) + " or newer"
                         : std::string("a CUDA release that compiles for it")) +
         " for this GPU (TORCH_CUDA_ARCH_LIST=\"" + dotted +
         "\", CMAKE_CUDA_ARCHITECTURES=" + arch + " or -gencode arch=compute_" + arch +
         ",code=sm_" + arch +
         "), or take a release of the package that has it; `imgsmith analyze IMAGE --gpu` "
         "checks an image before it is deployed";
  return fix;
}

}  // namespace

std::vector<std::string> kernel_search_roots() {
  std::vector<std::string> candidates;
  if (const std::string paths = env("IMGSMITH_PROBE_KERNEL_PATHS"); !paths.empty()) {
    candidates = split_list(paths, ':');
  } else {
    for (const auto& d : split_list(env("LD_LIBRARY_PATH"), ':')) candidates.push_back(d);
    candidates.push_back("/usr/local/cuda/lib64");
    glob_dirs("/usr/local/cuda/targets/*/lib", candidates);
    // A venv's or conda's bin/ is on PATH; the usual prefixes besides.
    std::vector<std::string> prefixes;
    for (const auto& d : split_list(env("PATH"), ':'))
      if (d.size() > 4 && d.ends_with("/bin")) prefixes.push_back(d.substr(0, d.size() - 4));
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
      if (const std::string p = env(var); !p.empty()) prefixes.push_back(p);
    for (const char* p : {"/usr/local", "/usr", "/opt/conda"}) prefixes.push_back(p);
    for (const auto& p : prefixes) {
      glob_dirs(p + "/lib/python3*/site-packages", candidates);
      glob_dirs(p + "/lib/python3/dist-packages", candidates);
      // An app installed under its own prefix (/opt/app/bin on PATH) keeps
      // its libraries in its lib/; /usr/lib is the system's.
      if (p != "/usr" && p != "") candidates.push_back(p + "/lib");
    }
  }
  std::vector<std::string> roots;
  std::set<std::string> seen;
  for (const auto& c : candidates) {
    char resolved[PATH_MAX];
    if (c.empty() || c[0] != '/' || ::realpath(c.c_str(), resolved) == nullptr ||
        !is_dir(resolved) || !seen.insert(resolved).second)
      continue;
    roots.push_back(c);
  }
  return roots;
}

std::vector<std::string> kernel_program_dirs() {
  std::vector<std::string> dirs;
  std::set<std::string> seen;
  for (const auto& d : split_list(env("PATH"), ':')) {
    char resolved[PATH_MAX];
    if (d.empty() || d[0] != '/' || ::realpath(d.c_str(), resolved) == nullptr) continue;
    const std::string_view r = resolved;
    // The system's programs and the toolkit's tools are no app's kernels.
    if (r == "/bin" || r == "/sbin" || r == "/usr/bin" || r == "/usr/sbin" ||
        r.starts_with("/usr/local/cuda") || r.starts_with("/usr/local/nvidia") ||
        !is_dir(resolved) || !seen.insert(resolved).second)
      continue;
    dirs.push_back(d);
  }
  return dirs;
}

std::vector<BinaryKernels> scan_kernel_binaries(const std::vector<std::string>& roots,
                                                const std::vector<std::string>& program_dirs) {
  Walk walk;
  for (const auto& root : roots) walk.dir(root, 0);
  for (const auto& dir : program_dirs) walk.programs(dir);
  std::sort(walk.found.begin(), walk.found.end(),
            [](const BinaryKernels& a, const BinaryKernels& b) { return a.path < b.path; });
  return walk.found;
}

std::string kernel_inventory_path() {
  const std::string p = env("IMGSMITH_PROBE_KERNEL_INVENTORY");
  return p.empty() ? kDefaultInventory : p;
}

int write_kernel_inventory(const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> roots = kernel_search_roots();
  const std::vector<std::string> programs = kernel_program_dirs();
  const std::vector<BinaryKernels> binaries = scan_kernel_binaries(roots, programs);
  const std::string text = inventory_text(binaries);
  // Written beside and renamed over: a reader never sees half a file.
  // Its directories first (/etc/imgsmith in an image).
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      std::fprintf(stderr, "imgsmith-probe: cannot create %s: %s\n", dir.c_str(),
                   std::strerror(errno));
      return 1;
    }
  }
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() ||
      std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "imgsmith-probe: cannot write the kernel inventory %s: %s\n", path.c_str(),
                 std::strerror(errno));
    std::remove(tmp.c_str());
    return 1;
  }
  unsigned long long sass = 0, ptx = 0;
  for (const auto& b : binaries)
    for (const auto& c : b.code) {
      if (c.kind == KernelKind::Sass) sass += c.bytes;
      if (c.kind == KernelKind::Ptx) ptx += c.bytes;
    }
  std::string where;
  for (const auto& r : roots) where += (where.empty() ? "" : ", ") + r;
  for (const auto& r : programs) where += (where.empty() ? "" : ", ") + r + " (programs)";
  std::fprintf(
      stderr,
      "imgsmith-probe: kernel inventory %s: %zu CUDA binar%s (%s of SASS, %s of PTX) "
      "under %s, in %.0f ms\n",
      path.c_str(), binaries.size(), binaries.size() == 1 ? "y" : "ies", mb(sass).c_str(),
      mb(ptx).c_str(), where.empty() ? "no directory that exists" : where.c_str(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

void check_kernels(Report& r, const char* command) {
  // A GPU that cannot be used is the answer already.
  if (env("IMGSMITH_PROBE_KERNEL_CHECK") == "off" || r.devices.empty() || r.status != Status::Ok)
    return;
  const Device& gpu = r.devices.front();
  unsigned major = 0, minor = 0;
  if (std::sscanf(gpu.compute_capability.c_str(), "%u.%u", &major, &minor) != 2 || minor > 9)
    return;
  const unsigned cc = major * 10 + minor;
  const auto start = std::chrono::steady_clock::now();
  Report::Kernels& k = r.kernels;

  std::vector<BinaryKernels> binaries;
  const std::string inventory = kernel_inventory_path();
  std::string text;
  if (FILE* f = std::fopen(inventory.c_str(), "r")) {
    char buf[1 << 16];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
    if (parse_inventory(text, binaries)) {
      k.source = "inventory";
      // A listed library changed since the image was built (a volume over
      // its directory, a pip install at run time) is read again. Times are
      // compared to the second: image layers keep no finer ones (a pulled
      // image's files have whole seconds where the build's had more).
      std::vector<BinaryKernels> current;
      for (auto& b : binaries) {
        struct stat st;
        if (::stat(b.path.c_str(), &st) != 0) continue;
        if (static_cast<std::uint64_t>(st.st_size) == b.size &&
            st.st_mtim.tv_sec == b.mtime_ns / 1000000000) {
          current.push_back(std::move(b));
        } else {
          ++k.rescanned;
          if (auto again = read_binary_kernels(b.path)) current.push_back(std::move(*again));
        }
      }
      binaries = std::move(current);
    } else {
      k.inventory_problem = inventory + " is not a kernel inventory of this probe's";
    }
  }
  if (k.source.empty()) {
    k.source = "scan";
    binaries = scan_kernel_binaries(kernel_search_roots(), kernel_program_dirs());
  }
  // The program about to run, where neither list has it (/usr/bin/app).
  if (command != nullptr && *command != '\0') {
    std::string program = command;
    if (program.find('/') == std::string::npos)
      for (const auto& d : split_list(env("PATH"), ':'))
        if (::access((d + "/" + program).c_str(), X_OK) == 0) {
          program = d + "/" + program;
          break;
        }
    // Listed already (under another name, through a link): not read twice.
    char resolved[PATH_MAX], other[PATH_MAX];
    const bool listed =
        ::realpath(program.c_str(), resolved) == nullptr ||
        std::any_of(binaries.begin(), binaries.end(), [&](const BinaryKernels& b) {
          return ::realpath(b.path.c_str(), other) != nullptr && std::strcmp(resolved, other) == 0;
        });
    // (A name without a slash that PATH does not have is not run from here.)
    if (!listed && program.find('/') != std::string::npos)
      if (auto b = read_binary_kernels(program)) binaries.push_back(std::move(*b));
  }
  k.checked = true;
  k.binaries = static_cast<unsigned>(binaries.size());

  const int driver_isa = r.driver_cuda > 0 ? newest_isa_for(r.driver_cuda) : 0;
  // The largest first: the framework's library, not a small helper, is
  // the one the line names.
  std::vector<const BinaryKernels*> order;
  for (const auto& b : binaries) order.push_back(&b);
  std::stable_sort(order.begin(), order.end(), [](const BinaryKernels* a, const BinaryKernels* b) {
    return code_bytes(*a) > code_bytes(*b);
  });
  std::vector<const BinaryKernels*> none, jit;
  std::vector<std::string> none_why;
  // The newest CUDA that binaries whose PTX is too new for the driver need.
  int ptx_needs_cuda = 0;
  std::vector<std::string> no_code;  // the others: neither SASS nor PTX for it
  unsigned newest_jit_isa = 0;
  for (const BinaryKernels* bp : order) {
    const BinaryKernels& b = *bp;
    const auto on = fatbin::code_on_gpu<KernelCode>(b.code, cc);
    if (!on.any_kernel || on.sass != nullptr) continue;
    if (on.ptx == nullptr) {
      none.push_back(&b);
      none_why.push_back(carried(b));
      no_code.push_back(b.path);
    } else if (const int needs = cuda_for_ptx_isa(static_cast<int>(on.ptx->version));
               driver_isa > 0 && needs > 0 && static_cast<int>(on.ptx->version) > driver_isa) {
      // CUDA's minor-version compatibility does not cover PTX: the driver
      // refuses PTX newer than itself (CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
      // (An ISA the table does not know is not judged.)
      none.push_back(&b);
      ptx_needs_cuda = std::max(ptx_needs_cuda, needs);
      none_why.push_back(carried(b) + "; its " + code_name(*on.ptx) + " is PTX ISA " +
                         std::to_string(on.ptx->version / 10) + "." +
                         std::to_string(on.ptx->version % 10) + ", which this driver (CUDA " +
                         cuda_text(r.driver_cuda) + ") cannot compile" +
                         (needs > 0 ? ": it needs CUDA " + cuda_text(needs) + "'s" : ""));
    } else {
      jit.push_back(&b);
      k.jit_bytes += on.jit_bytes;
      newest_jit_isa = std::max(newest_jit_isa, on.ptx->version);
    }
  }
  for (const auto* b : none) k.none.push_back(b->path);
  for (const auto* b : jit) k.jit.push_back(b->path);
  const std::string device = "this " + gpu.name + " (sm_" + std::to_string(cc) + ")";
  if (!none.empty()) {
    // "torch (libtorch_cuda.so)"; a library outside site-packages is its name alone.
    const std::string package = package_of(none[0]->path), file = file_name(none[0]->path);
    std::string reason = (package == file ? file : package + " (" + file + ")") +
                         " has no kernels for " + device + ": it carries " + none_why[0];
    if (none.size() > 1) {
      reason += "; so have " + std::to_string(none.size() - 1) + " more: ";
      for (std::size_t i = 1; i < none.size() && i <= kNamedInLine; ++i)
        reason += (i > 1 ? ", " : "") + file_name(none[i]->path);
      if (none.size() - 1 > kNamedInLine) reason += ", ...";
    }
    reason +=
        ". Its first kernel will fail with \"no kernel image is available for execution "
        "on the device\"";
    // PTX too new for the driver: the driver is the fix (or SASS, which any
    // driver of its CUDA major loads); no code at all: a build that has it.
    std::string fix;
    if (ptx_needs_cuda > 0) {
      const int driver = driver_for_cuda(ptx_needs_cuda);
      fix = "update the host's driver to CUDA " + cuda_text(ptx_needs_cuda) + "'s" +
            (driver > 0 ? " (" + std::to_string(driver) + " or newer)" : std::string()) +
            ", which compiles that PTX, or use a build with SASS for sm_" + std::to_string(cc);
    }
    if (!no_code.empty())
      fix += (fix.empty() ? "" : "; for the rest: ") + no_kernel_fix(no_code, cc);
    fail(r, Status::NoKernel, reason, fix);
  }
  if (!jit.empty()) {
    std::string names;
    for (std::size_t i = 0; i < jit.size() && i < kNamedInLine; ++i)
      names += (i ? ", " : "") + file_name(jit[i]->path);
    if (jit.size() > kNamedInLine) names += ", ...";
    r.notes.push_back(std::to_string(jit.size()) + " CUDA binar" +
                      (jit.size() == 1 ? "y runs" : "ies run") + " on " + device +
                      " only by compiling PTX when " + (jit.size() == 1 ? "it is" : "they are") +
                      " first loaded (" + mb(k.jit_bytes) + " of PTX: " + names +
                      "): the first start can take minutes; keep the compiled code across "
                      "starts with CUDA_CACHE_PATH on a volume (and CUDA_CACHE_MAXSIZE above "
                      "its 1 GiB default), or use a build with SASS for sm_" +
                      std::to_string(cc));
  }
  if (!k.inventory_problem.empty())
    r.notes.push_back(k.inventory_problem + ": every library was read instead (" +
                      "imgsmith-probe --write-kernel-inventory writes one)");
  k.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace probe
