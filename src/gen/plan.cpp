// The decisions: which image, which CUDA, which Python, how to install. The
// facts come from the embedded tables; this file holds only the rules, and
// records each decision with its reason for `--explain` and the summary.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "gen_internal.hpp"
#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/size.hpp"

namespace imgsmith::gen {
namespace {

// How much of a CUDA image a project needs, in increasing order.
enum class Need { None = 0, Bundled = 1, System = 2, SystemCudnn = 3 };

Need need_from(const std::string& text) {
  if (text == "bundled") return Need::Bundled;
  if (text == "system") return Need::System;
  if (text == "system-cudnn") return Need::SystemCudnn;
  return Need::None;
}

std::string flavor_for(Need need) { return need >= Need::System ? "runtime" : "base"; }

std::string requirement_label(const Requirement& r) {
  return r.name + (r.extras.empty() ? "" : "[" + join(r.extras, ",") + "]") + r.specifier;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string shell_quote(const std::string& word) {
  static const std::regex kPlain(R"([A-Za-z0-9_.,:/=+@%^-]+)");
  if (std::regex_match(word, kPlain)) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Rewrites an image reference to come from a mirror: PREFIX replaces the
// registry, and Docker Hub's official images gain their "library/" path.
std::string mirrored(const std::string& ref, const std::string& mirror) {
  if (mirror.empty()) return ref;
  std::string prefix = mirror;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  std::string path = ref;
  const auto slash = ref.find('/');
  const std::string first = slash == std::string::npos ? "" : ref.substr(0, slash);
  if (first.find('.') != std::string::npos || first.find(':') != std::string::npos ||
      first == "localhost")
    path = ref.substr(slash + 1);  // ghcr.io/astral-sh/uv -> astral-sh/uv
  else if (slash == std::string::npos)
    path = "library/" + ref;  // python:3.12 -> library/python:3.12
  return prefix + "/" + path;
}

// /dev/shm for projects whose framework needs it: room for a few DataLoader
// workers' batches, as PyTorch's own Docker instructions suggest raising it.
constexpr const char* kSharedMemory = "8g";

std::string size_text(double bytes) { return format_size(static_cast<std::uint64_t>(bytes)); }

struct Decider {
  const Project& project;
  const Options& o;
  const Tables& t = builtin_tables();
  Plan p;

  void decide(const std::string& source, const std::string& text) {
    p.explain.push_back({source, text});
  }

  // ----- CUDA release and OS ---------------------------------------------

  // "12" -> gen's default when it is a 12.x, else the newest 12.x release.
  std::string cuda_for_major(const std::string& spec) {
    if (spec.find('.') != std::string::npos) return spec;
    if (t.default_cuda.rfind(spec + ".", 0) == 0) return t.default_cuda;
    std::string newest;
    for (const auto& r : t.releases)
      if (r.cuda.rfind(spec + ".", 0) == 0) newest = major_minor(r.cuda);
    return newest.empty() ? spec : newest;
  }

  std::string lowest_of_major(const std::string& major) {
    for (const auto& r : t.releases)
      if (r.cuda.rfind(major + ".", 0) == 0) return major_minor(r.cuda);
    return cuda_for_major(major);
  }

  const CudaRelease& release_for(const std::string& wanted, const std::string& why) {
    for (const auto& r : t.releases)
      if (r.cuda == wanted || r.cuda.rfind(wanted + ".", 0) == 0) return r;
    std::vector<std::string> all;
    for (const auto& r : t.releases) all.push_back(r.cuda);
    throw InputError("CUDA " + wanted + " (" + why + ") has no " + t.repository +
                     " image in gen's table; choose one of " + join(all, ", ") + " with --cuda");
  }

  // A release whose cuDNN images carry the cuDNN major a framework loads: a
  // cuDNN 8 build cannot load cuDNN 9, and the reverse. NVIDIA did not publish
  // every CUDA release with every cuDNN, so the nearest older release of the
  // same CUDA major stands in (its libraries load by major version, the same
  // sonames), with a warning; an explicit --cuda is never changed.
  const CudaRelease& release_with_cudnn(const std::string& wanted, const std::string& why,
                                        int cudnn, const std::string& framework, bool asked) {
    const CudaRelease& exact = release_for(wanted, why);
    if (exact.cudnn_major == cudnn) return exact;
    std::vector<const CudaRelease*> same_major;
    std::vector<std::string> names;
    for (const auto& r : t.releases)
      if (r.cudnn_major == cudnn) {
        names.push_back(r.cuda);
        if (std::stoi(r.cuda) == std::stoi(wanted)) same_major.push_back(&r);
      }
    const std::string need = framework + " loads cuDNN " + std::to_string(cudnn);
    if (asked || same_major.empty())
      throw InputError((asked ? "--cuda " + wanted : "CUDA " + wanted + " (" + why + ")") + ": " +
                       need + ", and " + t.repository + "'s " + exact.cuda +
                       " cuDNN images carry cuDNN " + std::to_string(exact.cudnn_major) + "; " +
                       (names.empty() ? "gen's table has no image with it"
                                      : "choose one of " + join(names, ", ") + " with --cuda") +
                       ", or pin a release of the framework built for cuDNN " +
                       std::to_string(exact.cudnn_major));
    const CudaRelease* chosen = same_major.front();
    for (const auto* r : same_major)
      if (!version_less(wanted, major_minor(r->cuda)))
        chosen = r;  // the newest not above the wanted release
    p.warnings.push_back(
        need + " and was built for CUDA " + wanted + ", but NVIDIA publishes no cuDNN " +
        std::to_string(cudnn) + " image for it; gen uses " + chosen->cuda + " (" +
        chosen->cudnn_tag + "), the nearest CUDA " + std::to_string(std::stoi(wanted)) +
        " release with cuDNN " + std::to_string(cudnn) + ". Test the image, or pass --cuda");
    decide("data/cuda-images.json",
           "CUDA " + chosen->cuda + ": the nearest release whose cuDNN images carry cuDNN " +
               std::to_string(cudnn) + " (" + framework + " asked for " + wanted + ")");
    return *chosen;
  }

  std::string choose_os(const CudaRelease& release) {
    if (!o.os.empty()) {
      if (!contains(release.os, o.os))
        throw InputError("--os " + o.os + ": CUDA " + release.cuda + " images exist for " +
                         join(release.os, " and ") + " only");
      return o.os;
    }
    for (const auto& os : t.os_preference)
      if (contains(release.os, os)) return os;
    return release.os.front();
  }

  std::string tag(const CudaRelease& release, const std::string& flavor, bool cudnn,
                  const std::string& os) {
    return t.repository + ":" + release.cuda + "-" + (cudnn ? release.cudnn_tag + "-" : "") +
           flavor + "-" + os;
  }

  // NVIDIA's images set NVIDIA_REQUIRE_CUDA=cuda>=X.Y, and the container
  // toolkit refuses a host whose driver supports less: the image's X.Y
  // decides, not the CUDA major's minor-version compatibility floor.
  int min_driver(const std::string& cuda) {
    if (const auto it = t.require_cuda_driver.find(major_minor(cuda));
        it != t.require_cuda_driver.end())
      return it->second;
    const auto it = t.minimum_driver.find(std::stoi(cuda));
    return it == t.minimum_driver.end() ? 0 : it->second;
  }

  // ----- Python -------------------------------------------------------------

  std::string python_for_cpu(const PythonProject& py) {
    if (!o.python.empty()) return o.python;
    if (py.python_constraint.empty()) return t.preferred_python;
    if (python_satisfies(t.preferred_python, py.python_constraint)) return t.preferred_python;
    for (auto it = t.known_python.rbegin(); it != t.known_python.rend(); ++it)
      if (python_satisfies(*it, py.python_constraint)) return *it;
    throw InputError(py.python_constraint_source + " asks for Python " + py.python_constraint +
                     ", which matches none gen knows (" + join(t.known_python, ", ") +
                     "); pass --python 3.X");
  }

  // Picks the OS and the Python together: the OS's own Python when it fits,
  // since it costs nothing extra, else uv's managed build of the one asked for.
  void choose_gpu_python(const PythonProject& py, const CudaRelease& release) {
    auto fits = [&](const std::string& version) {
      if (!o.python.empty()) return version == o.python;
      return py.python_constraint.empty() || python_satisfies(version, py.python_constraint);
    };
    std::vector<std::string> candidates;
    if (!o.os.empty())
      candidates.push_back(choose_os(release));
    else
      for (const auto& os : t.os_preference)
        if (contains(release.os, os)) candidates.push_back(os);
    if (o.base.empty())
      for (const auto& os : candidates)
        if (fits(t.os.at(os).python)) {
          p.os = os;
          p.python = t.os.at(os).python;
          decide(p.os, "Python " + p.python + ": the OS's own, installed with apt");
          return;
        }
    p.os = candidates.empty() ? choose_os(release) : candidates.front();
    p.managed_python = true;
    if (!o.python.empty()) {
      p.python = o.python;
    } else if (py.python_constraint.empty()) {
      p.python = t.os.at(p.os).python;
    } else if (python_satisfies(t.preferred_python, py.python_constraint)) {
      // The newest Python is not the safest: frameworks publish wheels for
      // it last. The preferred one first, when the project accepts it.
      p.python = t.preferred_python;
    } else {
      for (auto it = t.known_python.rbegin(); it != t.known_python.rend() && p.python.empty(); ++it)
        if (python_satisfies(*it, py.python_constraint)) p.python = *it;
      if (p.python.empty())
        throw InputError(py.python_constraint_source + " asks for Python " + py.python_constraint +
                         ", which matches none gen knows (" + join(t.known_python, ", ") +
                         "); pass --python 3.X");
    }
    decide(p.os, "Python " + p.python + ": uv's managed build in /opt/python" +
                     (o.base.empty() ? ", since " + p.os + " ships " + t.os.at(p.os).python
                                     : ", since the --base image's own Python is unknown"));
  }

  // ----- what the dependencies need from CUDA -----------------------------

  struct GpuNeeds {
    Need need = Need::None;
    std::vector<std::string> reasons;
    const Requirement* torch = nullptr;
    bool cpu_torch = false;
    std::string cuda;         // what a framework's build expects, when it says
    std::string cuda_source;  // which requirement said it
    int cudnn = 0;            // the cuDNN major a framework's build loads; 0 when none says
    std::string cudnn_source;
    std::string runtime_compiler;         // why something compiles code when the app runs (Triton)
    std::string runtime_compiler_source;  // which requirement
  };

  // The torch a framework pins (vllm==0.8.5 installs torch==2.6.0), so that
  // torch's CUDA build decides the image, as if the project had listed it.
  Requirement implied_torch;

  void torch_pinned_by(const Requirement& r, const FrameworkNeed& f) {
    if (f.torch_pins.empty() || !implied_torch.name.empty()) return;
    const std::pair<std::string, std::string>* row = nullptr;
    if (exact_pin(r.specifier)) {
      std::string version = r.specifier.substr(2);
      version = version.substr(0, version.find('+'));
      for (const auto& pin : f.torch_pins)
        if (!version_less(version, pin.first)) row = &pin;
    } else {
      // pip installs the newest release the specifier allows.
      for (const auto& pin : f.torch_pins)
        if (r.specifier.empty() || python_satisfies(major_minor(pin.first), r.specifier))
          row = &pin;
    }
    if (row == nullptr) {
      p.warnings.push_back(r.name + r.specifier + " (" + r.source +
                           ") is older than gen's table of the torch it pins; "
                           "list torch==X in the requirements so that gen can choose its CUDA");
      return;
    }
    implied_torch.name = "torch";
    implied_torch.specifier = "==" + row->second;
    implied_torch.text = "torch" + implied_torch.specifier;
    implied_torch.source = r.source;
    decide(r.source, r.name + (r.specifier.empty() ? " unpinned" : r.specifier) +
                         " installs torch==" + row->second + " (it pins torch from " + r.name +
                         " " + row->first + " on; " + f.torch_pins_source +
                         "): torch's CUDA build decides the image");
  }

  // The newest of `releases` (X.Y) that `specifier` allows: what pip would
  // install today, as far as a table knows. "" when none does.
  static std::string newest_allowed(const std::vector<std::string>& releases,
                                    const std::string& specifier) {
    std::string best;
    for (const auto& r : releases)
      if (python_satisfies(r, specifier) && (best.empty() || version_less(best, r))) best = r;
    return best;
  }

  static bool exact_pin(const std::string& specifier) {
    return specifier.rfind("==", 0) == 0 && specifier.find(',') == std::string::npos;
  }

  // A framework loading the system's CUDA: its release range decides the
  // CUDA and cuDNN it was built for (data/framework-cuda.json).
  void framework_build(const Requirement& r, GpuNeeds& g) {
    std::vector<const FrameworkBuild*> rows;
    std::vector<std::string> releases;
    for (const auto& b : t.framework_builds)
      if (b.package == r.name) {
        rows.push_back(&b);
        releases.insert(releases.end(), b.releases.begin(), b.releases.end());
      }
    if (rows.empty()) return;
    const std::string release = newest_allowed(releases, r.specifier);
    if (release.empty()) {
      p.warnings.push_back(r.name + r.specifier + " (" + r.source +
                           ") is not in gen's table "
                           "(data/framework-cuda.json, " +
                           releases.front() + " to " + releases.back() +
                           "), so gen cannot tell which CUDA and cuDNN it was built for; check its "
                           "documentation and pass --cuda");
      return;
    }
    const FrameworkBuild* row = nullptr;
    for (const auto* b : rows)
      if (contains(b->releases, release)) row = b;
    const std::string cuda_text =
        row->cuda.find('.') == std::string::npos ? row->cuda + ".x" : row->cuda;
    decide(r.source,
           std::string(exact_pin(r.specifier)
                           ? ""
                           : r.name + (r.specifier.empty() ? " unpinned" : r.specifier) +
                                 ": pip installs the newest it allows, " + release + "; ") +
               r.name + " " + release + " is built for CUDA " + cuda_text + " and cuDNN " +
               std::to_string(row->cudnn) + " (" + row->source + ")");
    if (g.cuda.empty()) {
      g.cuda = row->cuda;
      g.cuda_source = r.source + " (" + r.name + " " + release + ")";
    }
    if (g.cudnn == 0) {
      g.cudnn = row->cudnn;
      g.cudnn_source = r.name + " " + release;
    }
  }

  GpuNeeds python_needs(const PythonProject& py) {
    GpuNeeds g;
    bool cpu_index = false;
    for (const auto& opt : py.index_options)
      if (opt.find("/whl/cpu") != std::string::npos) cpu_index = true;
    for (const auto& r : py.requirements) {
      std::string need_text;
      std::string why;
      std::string size;
      std::string cuda;
      bool from_extra = false;  // an extra, not the package itself, decided the need
      if (const auto it = t.frameworks.find(r.name); it != t.frameworks.end()) {
        // Docker gives a container 64 MB of /dev/shm; PyTorch's DataLoader
        // workers and NCCL die with "Bus error" in it. CPU builds too.
        if (!it->second.shared_memory.empty() && p.shm_size.empty()) {
          p.shm_size = kSharedMemory;
          decide(r.source, r.name + ": " + it->second.shared_memory +
                               ", and Docker's default is 64 MB: the run "
                               "command gives --shm-size=" +
                               kSharedMemory + " (or run it with --ipc=host)");
        }
        if (!it->second.runtime_compiler.empty() && g.runtime_compiler.empty()) {
          g.runtime_compiler = it->second.runtime_compiler;
          g.runtime_compiler_source = r.source + " (" + r.name + ")";
        }
        torch_pinned_by(r, it->second);
        need_text = it->second.need;
        why = it->second.why;
        size = it->second.size;
        cuda = it->second.cuda;
        for (const auto& extra : r.extras)
          if (const auto e = it->second.extras.find(extra); e != it->second.extras.end()) {
            need_text = e->second;
            from_extra = true;
            why = "the [" + extra + "] extra: " +
                  (e->second == "bundled" ? "brings its own CUDA libraries as pip wheels"
                                          : "uses the system's CUDA and cuDNN libraries");
            if (const auto c = it->second.extra_cuda.find(extra); c != it->second.extra_cuda.end())
              cuda = c->second;
          }
      } else {
        for (const auto& pat : t.patterns)
          if (r.name.rfind(pat.prefix, 0) == 0 && r.name.size() > pat.suffix.size() &&
              r.name.compare(r.name.size() - pat.suffix.size(), pat.suffix.size(), pat.suffix) ==
                  0) {
            need_text = pat.need;
            why = pat.why;
            cuda = pat.cuda;
          }
      }
      if (need_text.empty()) continue;
      Need need = need_from(need_text);
      const bool torch_family =
          r.name == "torch" || r.name == "torchvision" || r.name == "torchaudio";
      if (torch_family && (local_label(r.specifier) == "cpu" || cpu_index)) {
        need = Need::None;
        why = "the CPU build (" + (cpu_index ? std::string("the /whl/cpu index") : "+cpu") + ")";
        if (r.name == "torch") g.cpu_torch = true;
        // "+cpu" builds live only on PyTorch's index.
        const std::string cpu_url = "--extra-index-url " + t.torch_index_url + "cpu";
        if (!cpu_index && py.lock.empty() && !contains(p.pip_index_args, cpu_url))
          p.pip_index_args.push_back(cpu_url);
      }
      if (r.name == "torch" && need != Need::None) g.torch = &r;
      // Only a build that loads the system's libraries cares which the image
      // carries; an extra such as tensorflow[and-cuda] brings its own.
      if (need >= Need::System && !from_extra) framework_build(r, g);
      if (need != Need::None && !cuda.empty() && g.cuda.empty()) {
        g.cuda = cuda;
        g.cuda_source = r.source + " (" + r.name + ")";
      }
      // A lock lists every package; its CPU-only ones are not worth a line.
      if (need != Need::None || r.source != py.lock)
        decide(r.source, requirement_label(r) + ": " + (need == Need::None ? "CPU: " : "GPU: ") +
                             why + (size.empty() || need == Need::None ? "" : " (" + size + ")"));
      if (need > g.need) g.reasons.clear();
      if (need >= g.need && need != Need::None && !contains(g.reasons, r.name))
        g.reasons.push_back(r.name);
      g.need = std::max(g.need, need);
    }
    if (g.torch == nullptr && g.need != Need::None && !implied_torch.name.empty())
      g.torch = &implied_torch;
    return g;
  }

  // torch's CUDA build: the user's --cuda, a +cuXYZ pin, an index the
  // requirements already name, the plain PyPI wheel's, or the newest 12.x.
  std::string torch_cuda(const PythonProject& py, const Requirement& torch) {
    const std::string label = local_label(torch.specifier);
    // pip installs the newest torch the specifier allows, so ">=2.4" means
    // the newest release in the table, not 2.4.
    std::vector<std::string> known;
    for (const auto& r : t.torch) known.push_back(r.torch);
    std::string version = newest_allowed(known, torch.specifier);
    const TorchRelease* row = nullptr;
    for (const auto& r : t.torch)
      if (r.torch == version) row = &r;
    if (row == nullptr) version = major_minor(lower_bound_release(torch.specifier));
    if (torch.specifier.empty()) {
      p.warnings.push_back("torch is not pinned (" + torch.source +
                           "): pip installs the newest; gen assumed torch " + row->torch +
                           ". Pin it for a reproducible image.");
    } else if (row != nullptr && !exact_pin(torch.specifier)) {
      decide(torch.source, "torch" + torch.specifier + ": pip installs the newest it allows; per " +
                               "data/torch-cuda.json that is torch " + row->torch);
    }
    auto cu = [](const std::string& build) {
      std::string s = "cu";
      for (char c : build)
        if (c != '.') s += c;
      return s;
    };
    for (const auto& opt : py.index_options) {
      static const std::regex kIndex(R"(/whl/cu(\d+)(\d))");
      std::smatch m;
      if (std::regex_search(opt, m, kIndex)) {
        const std::string build = m[1].str() + "." + m[2].str();
        if (!o.cuda.empty() && major_minor(o.cuda) != build)
          throw InputError("--cuda " + o.cuda + ": the requirements install torch from the CUDA " +
                           build + " index (" + opt + "); change that index, or drop --cuda");
        decide(torch.source,
               "torch's CUDA " + build + " build, from the index the requirements name");
        return build;
      }
    }
    if (!label.empty() && label.rfind("cu", 0) == 0 && label.size() >= 4) {
      const std::string build =
          label.substr(2, label.size() - 3) + "." + label.substr(label.size() - 1);
      if (py.lock.empty())
        p.pip_index_args.push_back("--extra-index-url " + t.torch_index_url + label);
      decide(torch.source, "torch's CUDA " + build + " build, from its +" + label + " pin");
      return build;
    }
    if (row == nullptr) {
      const std::string cuda = o.cuda.empty() ? t.default_cuda : major_minor(o.cuda);
      p.warnings.push_back("torch " + (version.empty() ? torch.specifier : version) +
                           " is not in gen's table (data/torch-cuda.json): the image uses CUDA " +
                           cuda + "; check that torch's wheels match it, or pass --cuda");
      return cuda;
    }
    if (!o.cuda.empty()) {
      const std::string want = major_minor(o.cuda);
      if (!contains(row->builds, want))
        throw InputError("--cuda " + o.cuda + ": torch " + row->torch + " is built for CUDA " +
                         join(row->builds, ", ") + " only; choose one of those");
      if (want != row->pypi && py.lock.empty())
        p.pip_index_args.push_back("--extra-index-url " + t.torch_index_url + cu(want));
      decide("--cuda", "torch " + row->torch + "'s CUDA " + want + " build" +
                           (want != row->pypi ? ", from " + t.torch_index_url + cu(want)
                                              : ", the PyPI wheel"));
      return want;
    }
    if (!row->pypi.empty()) {
      decide("data/torch-cuda.json",
             "torch " + row->torch + "'s PyPI wheel is built for CUDA " + row->pypi);
      return row->pypi;
    }
    std::string build = row->builds.back();
    for (const auto& b : row->builds)
      if (b.rfind("12.", 0) == 0) build = b;
    if (py.lock.empty()) {
      p.pip_index_args.push_back("--extra-index-url " + t.torch_index_url + cu(build));
      decide("data/torch-cuda.json", "torch " + row->torch + ": its CUDA " + build +
                                         " build, the newest 12.x (oldest driver), from " +
                                         t.torch_index_url + cu(build));
    } else {
      decide(py.lock,
             "torch " + row->torch + ": the lock decides its build; gen assumed CUDA " + build);
    }
    return build;
  }

  // ----- the final image ----------------------------------------------------

  void choose_flavor(Need need, const std::vector<std::string>& reasons, bool bundled_torch) {
    p.cudnn = need == Need::SystemCudnn || o.cudnn;
    const std::string needed = flavor_for(need);
    p.flavor = o.flavor == "auto" ? needed : o.flavor;
    if (p.flavor == "base" && o.cudnn)
      throw InputError(
          "--cudnn: NVIDIA publishes no cuDNN image of the base flavour; use --flavor runtime "
          "--cudnn");
    const Flavour& base = t.flavours.at("base");
    const Flavour& runtime = t.flavours.at("runtime");
    const Flavour& devel = t.flavours.at("devel");
    if (o.flavor == "auto") {
      p.why_base.push_back(
          std::string(p.cudnn ? "runtime flavour with cuDNN: " : p.flavor + " flavour: ") +
          join(reasons, "; ") + ".");
    } else {
      p.why_base.push_back(p.flavor + " flavour, as asked (--flavor).");
    }
    if (o.flavor == "devel") {
      p.warnings.push_back(
          "--flavor devel ships nvcc, headers and static libraries (" + devel.size +
          ") that no built program uses; the builder stage already has them. --flavor " + needed +
          " is " + t.flavours.at(needed).size + ".");
    }
    if (o.flavor == "runtime" && need == Need::Bundled) {
      const double saved =
          runtime.approx_bytes - base.approx_bytes + (p.cudnn ? t.cudnn_extra.approx_bytes : 0);
      p.warnings.push_back(
          std::string(bundled_torch ? "torch" : "the framework") +
          " ships its own CUDA libraries as pip wheels, so runtime's copies are a second set "
          "that nothing loads: --flavor base saves about " +
          size_text(saved) + " (runtime " + runtime.size + " against base " + base.size + ").");
    }
    if (o.flavor == "base" && need >= Need::System) {
      p.warnings.push_back(
          "--flavor base lacks the CUDA libraries this project loads from the system (" +
          join(reasons, "; ") + "); expect it to fail at run time. --flavor runtime" +
          (need == Need::SystemCudnn ? " --cudnn" : "") + " has them.");
    }
  }

  void set_images(const CudaRelease& release, bool builder_devel) {
    p.cuda = release.cuda;
    p.min_driver = min_driver(release.cuda);
    // No cuDNN image of the base flavour exists; the builder still gets
    // cuDNN's headers when the code needs them.
    std::string final_image = tag(release, p.flavor, p.cudnn && p.flavor != "base", p.os);
    if (!o.base.empty()) {
      final_image = o.base;
      p.nvidia_env = true;
      p.why_base.push_back("final stage on " + o.base + " (--base); the builder uses " +
                           t.repository + ".");
    }
    p.final_image = mirrored(final_image, o.registry_mirror);
    // A Python builder installs into a venv on the same image as the final
    // stage, so compiled wheels see the same libraries; compiling CUDA code
    // needs devel.
    const std::string builder = builder_devel
                                    ? tag(release, "devel", p.cudnn, p.os)
                                    : tag(release, p.flavor, p.cudnn && p.flavor != "base", p.os);
    p.builder_image = mirrored(builder, o.registry_mirror);
    decide(p.os, "final image " + p.final_image + "; builder " + p.builder_image);
    decide("data/cuda-drivers.json",
           "the image sets NVIDIA_REQUIRE_CUDA=cuda>=" + major_minor(release.cuda) +
               ", so the host driver must be >= " + std::to_string(p.min_driver) + " (" +
               t.require_cuda_source + ")");
  }

  void size_class(const std::string& extra) {
    std::string s;
    if (!o.base.empty())
      s = o.base;
    else if (p.flavor.empty())
      s = "no CUDA: " + p.final_image;
    else
      s = p.flavor + " " + t.flavours.at(p.flavor).size +
          (p.cudnn && p.flavor != "base" ? ", cuDNN " + t.cudnn_extra.size : "");
    p.size_class = s + extra;
  }

  // ----- Python projects ----------------------------------------------------

  void python_install(const PythonProject& py) {
    p.install_project = py.installable;
    if (py.lock == "uv.lock") {
      p.install_mode = "uv";
    } else if (py.lock == "poetry.lock") {
      p.install_mode = "poetry";
      p.poetry_packages = t.poetry;
    } else if (!py.install_files.empty()) {
      p.install_mode = "requirements";
      p.requirement_files = py.requirement_files;
      p.requirement_files_top = py.install_files;
    } else if (!py.requirements.empty()) {
      p.install_mode = "pyproject";
      for (const auto& r : py.requirements) {
        const auto local = py.outside_path_sources.find(r.name);
        if (local == py.outside_path_sources.end()) {
          p.pyproject_deps.push_back(shell_quote(r.text));
          continue;
        }
        // pip reads no [tool.uv.sources]: it is given the directory, where
        // the build context's layout puts it beside the project.
        const std::string in_image = std::filesystem::path(p.app_dir + "/" + local->second)
                                         .lexically_normal()
                                         .generic_string();
        p.pyproject_deps.push_back(
            shell_quote(r.name + (r.extras.empty() ? "" : "[" + join(r.extras, ",") + "]") +
                        "@file://" + in_image));
        decide(r.source, r.name + " is installed from " + in_image + " (" + local->second +
                             " from the project)");
      }
      for (const auto& index : py.pyproject_indexes)
        if (!contains(p.pip_index_args, index)) p.pip_index_args.push_back(index);
    } else {
      p.install_mode = "none";
    }
    p.source_before_deps =
        py.requirements_need_source || (p.install_mode == "none" && py.installable);
    // The project's own dependencies come with it unless a layer before
    // already installed them (setup.py projects list theirs only there).
    p.project_install_args = p.install_mode == "none" ? "." : "--no-deps .";
    if (p.install_mode == "none" && !py.installable)
      decide(".", "no dependencies to install: the code runs on the bare interpreter");
    const bool uv = p.install_mode == "uv" || p.managed_python;
    p.uv_image = uv ? mirrored(t.uv_image, o.registry_mirror) : "";
    const std::string mm = p.python;
    if (p.kind == "python-cpu") {
      p.venv_command = "python -m venv";
      p.uv_python = "/usr/local/bin/python" + mm;
    } else if (p.managed_python) {
      p.venv_command = "uv venv --seed --python " + mm;
      p.uv_python = mm;
    } else {
      p.venv_command = "python" + mm + " -m venv";
      p.uv_python = "/usr/bin/python" + mm;
      const OsPackages& pk = t.os.at(p.os);
      p.builder_apt = pk.python_build;
      if (project.has_cuda_sources) p.builder_apt.push_back("python" + mm + "-dev=" + mm + ".*");
      p.final_apt = pk.python_runtime;
    }
    decide(p.install_mode == "none"
               ? "."
               : (py.lock.empty()
                      ? (py.install_files.empty() ? "pyproject.toml" : py.install_files.front())
                      : py.lock),
           "installs with " +
               (p.install_mode == "uv"       ? std::string("uv sync --frozen")
                : p.install_mode == "poetry" ? std::string("poetry export, then pip")
                : p.install_mode == "none"   ? std::string("nothing")
                                             : std::string("pip")) +
               " into /opt/venv, in the builder stage" +
               (p.source_before_deps ? "" : "; dependencies in their own layer before the code"));
  }

  // A torch CUDA extension compiles in the builder, where no GPU is
  // visible: torch cannot ask the GPU for its architecture, so
  // TORCH_CUDA_ARCH_LIST comes from gen's table; and build isolation would
  // install a second torch (maybe another CUDA build) to compile against,
  // so the extension builds against the venv's.
  void cuda_extension(const PythonProject& py) {
    if (!p.gpu) return;  // the CPU image's warning says why nothing compiles
    const auto a = t.cuda_architectures.find(std::to_string(std::stoi(p.cuda)));
    std::vector<std::string> list;
    if (a != t.cuda_architectures.end())
      for (const auto& sm : a->second)
        list.push_back(sm.substr(0, sm.size() - 1) + "." + sm.substr(sm.size() - 1));
    if (!list.empty()) list.back() += "+PTX";
    p.torch_cuda_arch_list = join(list, ";");
    if (!p.install_project) {
      p.warnings.push_back(py.cuda_extension_source +
                           ": a CUDA extension, but nothing installs the project (no "
                           "[build-system] or setup.py); the image will not have it");
      return;
    }
    p.project_install_args = "--no-build-isolation " + p.project_install_args;
    // The compiler setuptools calls, and Python's headers; devel has nvcc.
    if (const std::string gxx = os_package(p.os, "g++");
        !gxx.empty() && !contains(p.builder_apt, gxx))
      p.builder_apt.push_back(gxx);
    if (!p.managed_python) {
      const std::string dev = "python" + p.python + "-dev=" + p.python + ".*";
      if (!contains(p.builder_apt, dev)) p.builder_apt.push_back(dev);
    }
    // setuptools leaves its build tree and objects beside the code, which
    // the final stage copies: only the venv may carry the result.
    p.cleanup_paths.push_back(p.app_dir + "/build");
    decide(py.cuda_extension_source,
           "a torch CUDA extension: built on " + p.builder_image + " with TORCH_CUDA_ARCH_LIST=\"" +
               p.torch_cuda_arch_list +
               "\" (data/cuda-images.json) and pip "
               "--no-build-isolation after torch is installed; build/ and object files "
               "are removed before the final stage copies /app");
    if (py.requirements.empty())
      p.warnings.push_back(py.cuda_extension_source +
                           ": the extension builds without build isolation, so torch must "
                           "be installed first: list it in requirements.txt");
  }

  // Triton (vLLM, SGLang, torch.compile) compiles kernels when the app
  // starts, with the C compiler and Python's headers: without them the
  // server dies with "Failed to find C compiler" (vllm #2997, sglang #1067).
  // This is the one case where a compiler belongs in the final stage.
  void runtime_compiler(const GpuNeeds& g) {
    if (g.runtime_compiler.empty()) return;
    if (!o.runtime_compiler) {
      decide("--no-runtime-compiler", "no C compiler in the final image, as asked, although " +
                                          g.runtime_compiler_source + ": " + g.runtime_compiler);
      p.warnings.push_back(g.runtime_compiler_source + ": " + g.runtime_compiler +
                           "; --no-runtime-compiler left gcc and the Python headers out, so it "
                           "fails at start unless "
                           "the kernels are cached or compiled ahead of time");
      return;
    }
    std::vector<std::string> packages;
    if (p.kind == "python-cpu") {
      packages = t.cpu_runtime_compiler;  // Docker's python images carry the headers
    } else {
      for (const auto& pkg : t.os.at(p.os).runtime_compiler)
        // uv's managed Python carries its headers; the OS's needs its -dev.
        if (!p.managed_python || pkg.rfind("gcc", 0) == 0) packages.push_back(pkg);
    }
    for (const auto& pkg : packages)
      if (!contains(p.final_apt, pkg)) p.final_apt.push_back(pkg);
    p.runtime_compiler = true;
    std::vector<std::string> names;
    for (const auto& pkg : packages) names.push_back(pkg.substr(0, pkg.find('=')));
    decide(g.runtime_compiler_source, g.runtime_compiler + ": the final image gets " +
                                          join(names, " and ") + " (" + t.runtime_compiler_size +
                                          ")");
    p.notes.push_back(g.runtime_compiler_source + ": " + g.runtime_compiler +
                      ", so the final image gets " + join(names, " and ") + ", " +
                      t.runtime_compiler_size +
                      "; --no-runtime-compiler leaves them "
                      "out");
  }

  // --wheelhouse and --index-url replace where pip looks, for air-gapped
  // builds and private mirrors; a lock names its own sources.
  void package_sources(const PythonProject& py) {
    if (o.wheelhouse.empty() && o.index_url.empty()) return;
    if (!py.lock.empty())
      throw InputError(
          std::string(o.wheelhouse.empty() ? "--index-url" : "--wheelhouse") + ": " + py.lock +
          " decides where packages come from; configure the index in pyproject.toml instead");
    if (!o.wheelhouse.empty()) {
      const std::filesystem::path rel = std::filesystem::path(o.wheelhouse).lexically_normal();
      if (rel.is_absolute() || rel.empty() || *rel.begin() == "..")
        throw InputError("--wheelhouse " + o.wheelhouse +
                         ": give a directory inside the project (it is part of "
                         "the build context)");
      if (!std::filesystem::is_directory(project.dir / rel))
        throw InputError("--wheelhouse " + o.wheelhouse + ": no such directory in " +
                         project.dir.string());
      p.wheelhouse = rel.generic_string();
      while (p.wheelhouse.size() > 1 && p.wheelhouse.back() == '/') p.wheelhouse.pop_back();
      // A bind mount, not a COPY: the wheels (gigabytes with torch) reach
      // no layer, and COPY . . brings a second copy that is removed from
      // /app before the final stage copies it.
      p.pip_index_args = {"--no-index", "--find-links /wheels"};
      p.cleanup_paths.push_back(shell_quote(p.app_dir + "/" + p.wheelhouse));
      if (p.install_project)
        p.project_install_args = "--no-index --find-links /wheels " + p.project_install_args;
      decide("--wheelhouse", "pip installs only from " + p.wheelhouse +
                                 " (bind-mounted at /wheels), with no index; "
                                 "the wheels never reach the final image");
    } else {
      p.pip_index_args.erase(
          std::remove_if(p.pip_index_args.begin(), p.pip_index_args.end(),
                         [](const std::string& a) { return a.rfind("--index-url", 0) == 0; }),
          p.pip_index_args.end());
      // A private index or mirror is the only source: the public PyTorch
      // indexes gen would add for torch's CUDA build go; the mirror must
      // carry that build.
      std::vector<std::string> dropped;
      p.pip_index_args.erase(std::remove_if(p.pip_index_args.begin(), p.pip_index_args.end(),
                                            [&](const std::string& a) {
                                              if (a.find(t.torch_index_url) == std::string::npos)
                                                return false;
                                              dropped.push_back(a.substr(a.find(' ') + 1));
                                              return true;
                                            }),
                             p.pip_index_args.end());
      p.pip_index_args.insert(p.pip_index_args.begin(), "--index-url " + o.index_url);
      if (p.install_project)
        p.project_install_args = "--index-url " + o.index_url + " " + p.project_install_args;
      if (!dropped.empty())
        p.warnings.push_back("--index-url " + o.index_url + ": gen left out " +
                             join(dropped, ", ") +
                             "; your index must carry those builds (torch's CUDA wheels)");
      for (const auto& opt : py.index_options)
        p.warnings.push_back(
            "--index-url " + o.index_url + ": a requirements file still names '" + opt +
            "', which pip reads at build time; remove it for a build that uses your index alone");
      decide("--index-url", "pip's index is " + o.index_url + ", and no public index is named");
    }
  }

  void python(const PythonProject& py) {
    GpuNeeds g = python_needs(py);
    // Detection's doubts that would stop the container are warnings, not
    // only --explain lines.
    for (const auto& e : project.evidence)
      if (e.text.rfind("warning: ", 0) == 0)
        p.warnings.push_back(e.source + ": " + e.text.substr(9));
    const bool forced = o.flavor != "auto" || !o.base.empty();
    if (g.need == Need::None && !forced) {
      p.kind = "python-cpu";
      p.template_name = "cpu-python";
      p.python = python_for_cpu(py);
      if (!contains(t.known_python, p.python))
        throw InputError("--python " + p.python + ": gen knows " + join(t.known_python, ", "));
      const std::string image =
          std::regex_replace(t.cpu_image, std::regex(R"(\{version\})"), p.python);
      p.final_image = p.builder_image = mirrored(image, o.registry_mirror);
      p.why_base.push_back(std::string("No GPU: nothing in this project uses one") +
                           (g.cpu_torch ? " (torch is the CPU build)" : "") +
                           ", so the image has no CUDA at all.");
      p.why_base.push_back("Final stage on " + p.final_image + ".");
      if (!o.cuda.empty() || o.cudnn)
        p.warnings.push_back(
            "--cuda/--cudnn ignored: nothing in this project uses a GPU; pass "
            "--flavor base or runtime to build on CUDA anyway.");
      decide(".", "CPU image: no dependency needs a GPU");
      if (project.has_cuda_sources)
        p.warnings.push_back(
            "the project has CUDA sources, but no dependency needs a GPU, so the CPU image has "
            "no nvcc to build them; pass --flavor base or runtime to build on CUDA");
      if (o.probe) decide(".", "no probe: the image uses no GPU, so there is nothing to check");
      size_class(" plus the dependencies");
    } else {
      p.kind = "python-gpu";
      p.gpu = true;
      if (g.need == Need::None) {
        p.warnings.push_back(
            "nothing in this project uses a GPU, yet a CUDA image was asked for; the CPU image "
            "would be smaller (run gen without --flavor/--base).");
        g.need = Need::Bundled;
      }
      std::string cuda;
      std::string why;
      if (g.torch != nullptr) {
        cuda = torch_cuda(py, *g.torch);
        why = "torch's CUDA build";
      } else if (!o.cuda.empty()) {
        cuda = o.cuda;
        why = "--cuda";
        decide("--cuda", "CUDA " + o.cuda + ", as asked");
      } else if (!g.cuda.empty() && g.need == Need::Bundled &&
                 g.cuda.find('.') == std::string::npos) {
        // The wheels bring their own CUDA libraries and need only a driver
        // of their major (minor-version compatibility); the image's
        // NVIDIA_REQUIRE_CUDA is the only other demand, so the lowest
        // release of that major runs on the most hosts.
        cuda = lowest_of_major(g.cuda);
        why = g.cuda_source;
        decide(g.cuda_source, "CUDA " + cuda + ": its wheels bring their own CUDA " + g.cuda +
                                  " libraries, so the "
                                  "lowest CUDA " +
                                  g.cuda + " image (the oldest driver) is enough");
      } else if (!g.cuda.empty()) {
        cuda = cuda_for_major(g.cuda);
        why = g.cuda_source;
        decide(g.cuda_source, "CUDA " + cuda + ": what its build expects");
      } else {
        cuda = t.default_cuda;
        why = "gen's default";
        decide("data/cuda-images.json",
               "CUDA " + cuda + ": gen's default; set --cuda to match your framework's build");
      }
      const bool cudnn_wanted = g.need == Need::SystemCudnn || o.cudnn;
      const CudaRelease& release =
          cudnn_wanted && g.cudnn != 0
              ? release_with_cudnn(cuda, why, g.cudnn, g.cudnn_source, why == "--cuda")
              : release_for(cuda, why);
      const std::string names = join(g.reasons, ", ");
      const bool plural = g.reasons.size() > 1;
      std::vector<std::string> reasons;
      if (g.need == Need::Bundled)
        reasons.push_back(names + (plural ? " bring their" : " brings its") +
                          " own CUDA libraries as pip wheels, so runtime's would go unused");
      else if (g.need == Need::System)
        reasons.push_back(names + (plural ? " load" : " loads") +
                          " CUDA libraries (cuBLAS and others) from the system");
      else
        reasons.push_back(names + (plural ? " load" : " loads") +
                          " CUDA and cuDNN libraries from the system");
      choose_flavor(g.need, reasons, g.torch != nullptr);
      choose_gpu_python(py, release);
      set_images(release, project.has_cuda_sources || py.cuda_extension);
      p.probe = o.probe;
      std::string extra = " plus the dependencies";
      if (g.torch != nullptr)
        extra = " plus torch with its CUDA wheels (" + t.frameworks.at("torch").size + ")";
      size_class(extra);
    }
    python_install(py);
    if (!extras_.empty() && p.install_mode == "requirements" && p.install_project) {
      // -r files do not name the extras: pip resolves them with the project.
      p.project_install_args = "'.[" + join(extras_, ",") + "]'";
      decide(o.policy_source + " extras",
             "installs the project with its extras " + join(extras_, ", "));
    } else if (!extras_.empty()) {
      decide(o.policy_source + " extras",
             "the extras " + join(extras_, ", ") + " are installed with the dependencies");
    }
    if (py.cuda_extension) cuda_extension(py);
    package_sources(py);
    runtime_compiler(g);
    if (!o.cmd.empty()) {
      p.cmd = o.cmd;
      decide("--cmd", "runs " + join(o.cmd, " "));
    } else if (!py.cmd.empty()) {
      p.cmd = py.cmd;
    } else {
      throw InputError(
          project.dir.string() +
          ": found no entrypoint. gen looked for [project.scripts], app/main.py, main.py, app.py, "
          "server.py, serve.py, streamlit_app.py, demo.py, train.py, a package with __main__.py "
          "and notebooks; pass the command with --cmd 'python -m yourpackage'");
    }
    p.port = py.port;
    p.env = py.env;
    if (o.port != 0) use_port(o.cmd.empty());
  }

  // ----- CUDA C/C++ projects ------------------------------------------------

  void cuda_cpp(const CudaCppProject& cpp) {
    p.kind = "cuda-cpp";
    p.gpu = true;
    Need need = Need::Bundled;
    std::vector<std::string> reasons;
    std::vector<std::string> system_libs;
    for (const auto& lib : cpp.cuda_libs) {
      if (lib == "cudart" || lib == "cudart_static" || lib == "cuda_driver" || lib == "cuda")
        continue;
      system_libs.push_back(lib);
      need = std::max(need, lib.rfind("cudnn", 0) == 0 ? Need::SystemCudnn : Need::System);
    }
    if (contains(cpp.cuda_libs, "nccl"))
      decide("CMakeLists.txt",
             "NCCL: runtime carries libnccl2 and the devel builder libnccl-dev (its headers)");
    if (system_libs.empty())
      reasons.push_back(
          "the program links only the CUDA runtime, so runtime's libraries would go unused");
    else
      reasons.push_back("the program links " + join(system_libs, ", ") +
                        ", which runtime carries and base does not");
    std::string cuda = t.default_cuda;
    std::string why = "gen's default";
    if (!o.cuda.empty() && !cpp.min_cuda.empty() &&
        version_less(major_minor(o.cuda), major_minor(cpp.min_cuda)))
      throw InputError(
          "--cuda " + o.cuda + ": " + cpp.min_cuda_source + " asks for find_package(CUDAToolkit " +
          cpp.min_cuda + "), so CMake would stop at configure with an older toolkit; pass --cuda " +
          major_minor(cpp.min_cuda) + " or newer, or lower the version in CMakeLists.txt");
    if (!o.cuda.empty()) {
      cuda = o.cuda;
      why = "--cuda";
    } else if (!cpp.min_cuda.empty() && version_less(cuda, cpp.min_cuda)) {
      cuda = major_minor(cpp.min_cuda);
      why = "find_package(CUDAToolkit " + cpp.min_cuda + ")";
    }
    decide(why == "--cuda" ? "--cuda" : "data/cuda-images.json", "CUDA " + cuda + " (" + why + ")");
    const CudaRelease& release = release_for(cuda, why);
    choose_flavor(need, reasons, false);
    p.os = choose_os(release);
    if (cpp.cmake) cmake_version(cpp, release);
    set_images(release, true);
    if (cpp.cmake)
      for (const auto& pkg : t.os.at(p.os).cmake_build)
        if (p.cmake_from_pypi.empty() || pkg.rfind("cmake=", 0) != 0) p.builder_apt.push_back(pkg);
    // nvcc alone compiles host code with the system's g++ ("Failed to
    // preprocess host compiler properties" without one): installed by name,
    // not assumed to come with devel.
    if (!cpp.cmake) {
      p.builder_apt.clear();
      if (const std::string gxx = os_package(p.os, "g++"); !gxx.empty())
        p.builder_apt.push_back(gxx);
    }
    p.probe = o.probe;
    p.cmake = cpp.cmake;
    p.cmake_install = cpp.cmake_install;
    std::vector<std::string> archs;
    const auto a = t.cuda_architectures.find(std::to_string(std::stoi(release.cuda)));
    if (a != t.cuda_architectures.end()) archs = a->second;
    std::vector<std::string> cmake_archs;
    std::vector<std::string> gencode;
    for (std::size_t i = 0; i < archs.size(); ++i) {
      const bool last = i + 1 == archs.size();
      cmake_archs.push_back(last ? archs[i] : archs[i] + "-real");
      gencode.push_back("-gencode arch=compute_" + archs[i] + ",code=sm_" + archs[i]);
      if (last)
        gencode.push_back("-gencode arch=compute_" + archs[i] + ",code=compute_" + archs[i]);
    }
    // The project's CMAKE_CUDA_ARCHITECTURES wins: a -D on the command line
    // would override its default, against what --explain says.
    if (!cpp.sets_architectures || !cpp.cmake) p.cuda_architectures = join(cmake_archs, ";");
    p.nvcc_arch_flags = join(gencode, " ");
    decide(cpp.sets_architectures ? "CMakeLists.txt" : "data/cuda-images.json",
           cpp.sets_architectures
               ? "the project's own CUDA architectures win over gen's default"
               : "compiles SASS for sm_" + join(archs, ", sm_") + " and PTX for the newest");
    if (cpp.cmake) {
      p.targets = cpp.targets;
      decide("CMakeLists.txt",
             cpp.cmake_install ? "installs with cmake --install into /opt/app"
                               : "copies the executables into /opt/app/bin (no install() rules)");
    } else {
      p.targets = {project.name};
      for (const auto& source : cpp.sources) p.nvcc_sources.push_back(shell_quote(source));
      for (const auto& lib : cpp.cuda_libs) p.nvcc_libs.push_back("-l" + lib);
    }
    if (!o.cmd.empty()) {
      p.cmd = o.cmd;
    } else {
      const std::string& first = p.targets.front();
      const auto slash = first.rfind('/');
      p.cmd = {"/opt/app/bin/" + (slash == std::string::npos ? first : first.substr(slash + 1))};
      if (p.targets.size() > 1)
        decide("CMakeLists.txt", "runs " + p.cmd.front() + ", the first of " +
                                     std::to_string(p.targets.size()) +
                                     " executables (--cmd picks another)");
    }
    if (o.port != 0) use_port(false);
    size_class(" plus the program");
  }

  // A package of the OS's C++ build set as apt pins it ("g++=4:13.*"),
  // or "" when the table has none.
  std::string os_package(const std::string& os, const std::string& name) {
    for (const auto& pkg : t.os.at(os).cmake_build)
      if (pkg.rfind(name + "=", 0) == 0) return pkg;
    return "";
  }

  // The OS's CMake (its apt series, "cmake=3.22.*"), as X.Y.
  std::string os_cmake(const std::string& os) {
    const std::string pkg = os_package(os, "cmake");
    return pkg.empty() ? "" : major_minor(pkg.substr(6));
  }

  // cmake_minimum_required above the builder OS's CMake stops the build at
  // its first line: another OS of the release whose CMake suffices, else
  // CMake's own wheels from PyPI, installed by uv (they are self-contained).
  void cmake_version(const CudaCppProject& cpp, const CudaRelease& release) {
    if (cpp.min_cmake.empty()) return;
    const std::string need = major_minor(cpp.min_cmake);
    const std::string have = os_cmake(p.os);
    if (have.empty() || !version_less(have, need)) return;
    if (o.os.empty())
      for (const auto& os : release.os)
        if (const std::string c = os_cmake(os); !c.empty() && !version_less(c, need)) {
          decide(cpp.min_cmake_source, "cmake_minimum_required(VERSION " + cpp.min_cmake +
                                           "): " + p.os + "'s CMake is " + have + ", " + os +
                                           "'s " + c + ", so the images are on " + os);
          p.os = os;
          return;
        }
    p.cmake_from_pypi = need;
    p.uv_image = mirrored(t.uv_image, o.registry_mirror);
    decide(cpp.min_cmake_source, "cmake_minimum_required(VERSION " + cpp.min_cmake + "): " + p.os +
                                     "'s CMake is " + have + ", so the builder installs CMake " +
                                     need + ".* from PyPI with uv");
  }

  // --port: the detected server is told to listen there (its --port
  // argument, its bind address, its environment); a command gen did not
  // write only gets the port published, and a warning.
  void use_port(bool detected_command) {
    const std::string from = std::to_string(p.port);
    const std::string to = std::to_string(o.port);
    bool changed = false;
    auto rewrite = [&](std::string& word) {
      for (const std::string& lead : {std::string(), std::string(":"), std::string("=")}) {
        const std::string old_tail = lead + from;
        if (p.port != 0 && word.size() >= old_tail.size() &&
            word.compare(word.size() - old_tail.size(), old_tail.size(), old_tail) == 0 &&
            (!lead.empty() || word == from)) {
          word.replace(word.size() - from.size(), from.size(), to);
          changed = true;
          return;
        }
      }
    };
    if (detected_command) {
      for (auto& w : p.cmd) rewrite(w);
      for (auto& e : p.env) rewrite(e);
    }
    if (!changed)
      p.warnings.push_back("--port " + to + ": gen publishes the port but cannot tell " +
                           join(p.cmd, " ") +
                           " to listen on it; make sure the app does, on 0.0.0.0");
    decide("--port", "the app listens on port " + to + (changed ? ", in place of " + from : ""));
    p.port = o.port;
  }

  // What the project declares outside pip (apt.txt, [gen] system_packages):
  // run-time packages into the final stage; -dev packages, which are for
  // compiling, into the builder only.
  void system_packages() {
    std::vector<Evidence> all = project.system_packages;
    for (const auto& s : o.system_packages)
      all.push_back({o.policy_source + " system_packages", s});
    std::vector<std::string> unpinned;
    for (const auto& [source, spec] : all) {
      const std::string name = spec.substr(0, spec.find('='));
      const bool dev = name.size() > 4 && name.compare(name.size() - 4, 4, "-dev") == 0;
      auto& list = dev ? p.builder_apt : p.final_apt;
      if (!contains(list, spec)) list.push_back(spec);
      p.declared_apt.push_back(spec);
      if (spec.find('=') == std::string::npos) unpinned.push_back(name);
      decide(source, spec + ": installed with apt in the " +
                         (dev ? "builder (headers, for compiling)" : "final stage"));
    }
    if (!unpinned.empty())
      p.notes.push_back(
          join(unpinned, ", ") + (unpinned.size() > 1 ? " are" : " is") +
          " installed unpinned, as "
          "declared (hadolint DL3008): write NAME=VERSION* (such as ffmpeg=7:5.1.*) to pin");
  }

  // [gen] extras: the project's optional dependency groups, installed with it
  // and seen by every decision (an extra may bring torch).
  PythonProject with_extras(const PythonProject& given) {
    PythonProject py = given;
    if (o.extras.empty()) return py;
    const std::string where =
        (o.policy_source.empty() ? std::string("extras") : o.policy_source + " extras");
    std::vector<std::string> names;
    for (const auto& [name, reqs] : py.optional_dependencies) names.push_back(name);
    std::vector<std::string> wanted;
    for (const auto& e : o.extras) {
      const std::string n = normalise_name(e);
      const auto it = py.optional_dependencies.find(n);
      if (it == py.optional_dependencies.end())
        throw InputError(where + ": '" + e + "' is not an extra of this project; pyproject.toml " +
                         (names.empty()
                              ? std::string("has no [project.optional-dependencies]")
                              : "[project.optional-dependencies] has " + join(names, ", ")));
      py.requirements.insert(py.requirements.end(), it->second.begin(), it->second.end());
      wanted.push_back(n);
    }
    if (!py.lock.empty() || (!py.install_files.empty() && !py.installable))
      throw InputError(where + ": extras are installed with the project from pyproject.toml, but " +
                       (py.lock.empty() ? std::string("it has no [build-system] to install it with")
                                        : py.lock + " decides what is installed") +
                       "; list those packages in the requirements instead");
    extras_ = wanted;
    return py;
  }
  std::vector<std::string> extras_;

  // --context above the project: the Dockerfile names its sources from the
  // context, and the image keeps the context's layout (the project's code
  // under /app/services/api, a shared file at /app/shared/...), so that every
  // relative path the project names resolves in the image as in the checkout.
  void build_context(const Project& project) {
    p.context_path = project.context_path;
    p.context_dir = project.context;
    std::vector<std::string> up;
    for ([[maybe_unused]] const auto& part : std::filesystem::path(project.context_path))
      up.push_back("..");
    p.context_up = join(up, "/");
    std::vector<std::string> copied;
    for (const auto& o : project.outside_paths) {
      p.outside_paths.push_back(o.directory && o.path != "." ? o.path + "/" : o.path);
      copied.push_back(o.path);
    }
    const bool python = project.python.has_value();
    if (python) p.app_dir = "/app/" + project.context_path;
    decide("--context", "the build context is " + project.context.string() + " (" + p.context_up +
                            " from the project): COPY names paths from there, the project is " +
                            project.context_path + " in it and " +
                            (python ? p.app_dir + " in the image"
                                    : "/src/" + project.context_path + " in the builder") +
                            (copied.empty() ? "" : ", beside " + join(copied, ", ")) +
                            "; Dockerfile.dockerignore, which BuildKit reads in place of the "
                            "context's .dockerignore, "
                            "leaves out the rest of the context");
  }

  void validate() {
    if (o.port < 0 || o.port > 65535)
      throw InputError("--port " + std::to_string(o.port) + ": give a TCP port from 1 to 65535");
    static const std::regex kCuda(R"(\d+\.\d+(\.\d+)?)");
    static const std::regex kPython(R"(3\.\d+)");
    if (o.flavor != "auto" && o.flavor != "base" && o.flavor != "runtime" && o.flavor != "devel")
      throw InputError("--flavor " + o.flavor + ": choose auto, base, runtime or devel");
    if (!o.cuda.empty() && !std::regex_match(o.cuda, kCuda))
      throw InputError("--cuda " + o.cuda + ": give a CUDA release as X.Y or X.Y.Z, e.g. 12.8");
    if (!o.os.empty() && t.os.find(o.os) == t.os.end())
      throw InputError("--os " + o.os + ": choose ubuntu22.04 or ubuntu24.04");
    if (!o.python.empty() && !std::regex_match(o.python, kPython))
      throw InputError("--python " + o.python + ": give a Python release as 3.X, e.g. 3.12");
    if (!o.python.empty() && !contains(t.known_python, o.python))
      throw InputError("--python " + o.python + ": gen knows " + join(t.known_python, ", "));
  }
};

}  // namespace

Plan make_plan(const Project& project, const Options& options) {
  Decider d{project, options, builtin_tables(), {}, {}, {}};
  d.validate();
  d.p.project_name = project.name;
  d.p.explain = project.evidence;
  d.p.syntax = options.syntax;
  d.p.compose = options.compose;
  if (!project.context_path.empty()) d.build_context(project);
  if (project.python)
    d.python(d.with_extras(*project.python));
  else if (project.cuda_cpp)
    d.cuda_cpp(*project.cuda_cpp);
  else
    throw InputError(project.dir.string() + ": nothing to build");
  d.system_packages();
  if (d.p.template_name.empty()) d.p.template_name = d.p.flavor;
  if (!options.probe && d.p.gpu) d.decide("--no-probe", "no probe: the app is the entrypoint");
  return d.p;
}

// The exec form of CMD is a JSON array: a word holding a tab or a newline
// must be escaped, or Docker, failing to parse it, silently runs the line
// as a shell command instead.
std::string command_json(const std::vector<std::string>& words) {
  std::vector<std::string> quoted;
  for (const auto& w : words) {
    try {
      quoted.push_back(nlohmann::json(w).dump());
    } catch (const nlohmann::json::exception&) {
      throw InputError("the command word '" + visible(w) +
                       "' is not valid UTF-8, which a Dockerfile's exec form (JSON) cannot hold");
    }
  }
  return "[" + join(quoted, ", ") + "]";
}

}  // namespace imgsmith::gen
