// What a Python project's dependencies need from CUDA: how much of a CUDA
// image (none, bundled, system, system with cuDNN), which CUDA and cuDNN
// their builds expect, and torch's CUDA build.
#include <algorithm>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "imgsmith/util/error.hpp"
#include "plan_internal.hpp"

namespace imgsmith::gen {
namespace {

Need need_from(const std::string& text) {
  if (text == "bundled") return Need::Bundled;
  if (text == "system") return Need::System;
  if (text == "system-cudnn") return Need::SystemCudnn;
  return Need::None;
}

std::string requirement_label(const Requirement& r) {
  return r.name + (r.extras.empty() ? "" : "[" + join(r.extras, ",") + "]") + r.specifier;
}

// /dev/shm for projects whose framework needs it: room for a few DataLoader
// workers' batches, as PyTorch's own Docker instructions suggest raising it.
constexpr const char* kSharedMemory = "8g";

// The newest of `releases` (X.Y) that `specifier` allows: what pip would
// install today, as far as a table knows. "" when none does.
std::string newest_allowed(const std::vector<std::string>& releases, const std::string& specifier) {
  std::string best;
  for (const auto& r : releases)
    if (python_satisfies(r, specifier) && (best.empty() || version_less(best, r))) best = r;
  return best;
}

}  // namespace

void Decider::torch_pinned_by(const Requirement& r, const FrameworkNeed& f) {
  if (f.torch_pins.empty() || !implied_torch_.name.empty()) return;
  const std::pair<std::string, std::string>* row = nullptr;
  if (exact_pin(r.specifier)) {
    std::string version = r.specifier.substr(2);
    version = version.substr(0, version.find('+'));
    for (const auto& pin : f.torch_pins)
      if (!version_less(version, pin.first)) row = &pin;
  } else {
    // pip installs the newest release the specifier allows.
    for (const auto& pin : f.torch_pins)
      if (r.specifier.empty() || python_satisfies(major_minor(pin.first), r.specifier)) row = &pin;
  }
  if (row == nullptr) {
    plan_.warnings.push_back(r.name + r.specifier + " (" + r.source +
                             ") is older than gen's table of the torch it pins; "
                             "list torch==X in the requirements so that gen can choose its CUDA");
    return;
  }
  implied_torch_.name = "torch";
  implied_torch_.specifier = "==" + row->second;
  implied_torch_.text = "torch" + implied_torch_.specifier;
  implied_torch_.source = r.source;
  decide(r.source, r.name + (r.specifier.empty() ? " unpinned" : r.specifier) +
                       " installs torch==" + row->second + " (it pins torch from " + r.name + " " +
                       row->first + " on; " + f.torch_pins_source +
                       "): torch's CUDA build decides the image");
}

// A framework loading the system's CUDA: its release range decides the
// CUDA and cuDNN it was built for (data/framework-cuda.json).
void Decider::framework_build(const Requirement& r, GpuNeeds& g) {
  std::vector<const FrameworkBuild*> rows;
  std::vector<std::string> releases;
  for (const auto& b : tables_.framework_builds)
    if (b.package == r.name) {
      rows.push_back(&b);
      releases.insert(releases.end(), b.releases.begin(), b.releases.end());
    }
  if (rows.empty()) return;
  const std::string release = newest_allowed(releases, r.specifier);
  if (release.empty()) {
    plan_.warnings.push_back(
        r.name + r.specifier + " (" + r.source +
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
  decide(r.source, std::string(exact_pin(r.specifier)
                                   ? ""
                                   : r.name + (r.specifier.empty() ? " unpinned" : r.specifier) +
                                         ": pip installs the newest it allows, " + release + "; ") +
                       r.name + " " + release + " is built for CUDA " + cuda_text + " and cuDNN " +
                       std::to_string(row->cudnn) + " (" + row->source + ")");
  if (g.cuda.empty() || !g.cuda_loaded_from_system) {
    g.cuda = row->cuda;
    g.cuda_source = r.source + " (" + r.name + " " + release + ")";
    g.cuda_loaded_from_system = true;
  }
  if (g.cudnn == 0) {
    g.cudnn = row->cudnn;
    g.cudnn_source = r.name + " " + release;
  }
}

Decider::GpuNeeds Decider::python_needs(const PythonProject& py) {
  GpuNeeds g;
  bool cpu_index = false;
  for (const auto& opt : py.index_options)
    if (opt.find("/whl/cpu") != std::string::npos) cpu_index = true;
  // What each requirement needs was classified once (classify_packages);
  // here it becomes the image's needs, with what only the frameworks table
  // adds: shared memory, a run-time compiler, the torch a framework pins.
  for (std::size_t i = 0; i < py.requirements.size(); ++i) {
    const Requirement& r = py.requirements[i];
    const PackageVerdict& verdict = verdicts_.at(i);
    const std::string& need_text = verdict.need;
    std::string why = verdict.why;
    std::string size;
    const std::string& cuda = verdict.cuda;
    const bool from_extra = verdict.from_extra;  // an extra, not the package itself, decided
    if (verdict.basis == Basis::Table) why += " (" + verdict.citation + ")";
    if (verdict.basis == Basis::Framework) {
      const FrameworkNeed& f = tables_.frameworks.at(r.name);
      // Docker gives a container 64 MB of /dev/shm; PyTorch's DataLoader
      // workers and NCCL die with "Bus error" in it. CPU builds too.
      if (!f.shared_memory.empty() && plan_.shm_size.empty()) {
        plan_.shm_size = kSharedMemory;
        decide(r.source, r.name + ": " + f.shared_memory +
                             ", and Docker's default is 64 MB: the run "
                             "command gives --shm-size=" +
                             kSharedMemory + " (or run it with --ipc=host)");
      }
      if (!f.runtime_compiler.empty() && g.runtime_compiler.empty()) {
        g.runtime_compiler = f.runtime_compiler;
        g.runtime_compiler_source = r.source + " (" + r.name + ")";
      }
      torch_pinned_by(r, f);
      size = f.size;
    }
    if (need_text.empty()) {
      // Not a CPU package: one gen cannot tell. Said in --explain, and
      // warned about once for all (apply_unknown_packages).
      if (!verdict.from_lock || verdict.basis == Basis::NameHint)
        decide(r.source, requirement_label(r) + ": unknown: " + verdict.why);
      continue;
    }
    Need need = need_from(need_text);
    const bool torch_family =
        r.name == "torch" || r.name == "torchvision" || r.name == "torchaudio";
    if (torch_family && (local_label(r.specifier) == "cpu" || cpu_index)) {
      need = Need::None;
      why = "the CPU build (" + (cpu_index ? std::string("the /whl/cpu index") : "+cpu") + ")";
      if (r.name == "torch") g.cpu_torch = true;
      // "+cpu" builds live only on PyTorch's index.
      const std::string cpu_url = "--extra-index-url " + tables_.torch_index_url + "cpu";
      if (!cpu_index && py.lock.empty() && !contains(plan_.pip_index_args, cpu_url))
        plan_.pip_index_args.push_back(cpu_url);
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
  if (g.torch == nullptr && g.need != Need::None && !implied_torch_.name.empty())
    g.torch = &implied_torch_;
  return g;
}

// torch's CUDA build: the user's --cuda, a +cuXYZ pin, an index the
// requirements already name, the plain PyPI wheel's, or the newest 12.x.
std::string Decider::torch_cuda(const PythonProject& py, const Requirement& torch) {
  const std::string label = local_label(torch.specifier);
  // pip installs the newest torch the specifier allows, so ">=2.4" means
  // the newest release in the table, not 2.4.
  std::vector<std::string> known;
  for (const auto& r : tables_.torch) known.push_back(r.torch);
  std::string version = newest_allowed(known, torch.specifier);
  const TorchRelease* row = nullptr;
  for (const auto& r : tables_.torch)
    if (r.torch == version) row = &r;
  if (row == nullptr) version = major_minor(lower_bound_release(torch.specifier));
  if (torch.specifier.empty()) {
    plan_.warnings.push_back("torch is not pinned (" + torch.source +
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
      if (!options_.cuda.empty() && major_minor(options_.cuda) != build)
        throw InputError("--cuda " + options_.cuda +
                         ": the requirements install torch from the CUDA " + build + " index (" +
                         opt + "); change that index, or drop --cuda");
      decide(torch.source,
             "torch's CUDA " + build + " build, from the index the requirements name");
      return build;
    }
  }
  if (!label.empty() && label.rfind("cu", 0) == 0 && label.size() >= 4) {
    const std::string build =
        label.substr(2, label.size() - 3) + "." + label.substr(label.size() - 1);
    if (!options_.cuda.empty() && major_minor(options_.cuda) != build)
      throw InputError("--cuda " + options_.cuda + ": the requirements pin torch's CUDA " + build +
                       " build (torch" + torch.specifier + ", " + torch.source +
                       "); change that pin, or drop --cuda");
    if (py.lock.empty())
      plan_.pip_index_args.push_back("--extra-index-url " + tables_.torch_index_url + label);
    decide(torch.source, "torch's CUDA " + build + " build, from its +" + label + " pin");
    return build;
  }
  if (row == nullptr) {
    const std::string cuda =
        options_.cuda.empty() ? tables_.default_cuda : major_minor(options_.cuda);
    plan_.warnings.push_back("torch " + (version.empty() ? torch.specifier : version) +
                             " is not in gen's table (data/torch-cuda.json): the image uses CUDA " +
                             cuda + "; check that torch's wheels match it, or pass --cuda");
    return cuda;
  }
  if (!options_.cuda.empty()) {
    const std::string want = major_minor(options_.cuda);
    if (!contains(row->builds, want))
      throw InputError("--cuda " + options_.cuda + ": torch " + row->torch + " is built for CUDA " +
                       join(row->builds, ", ") + " only; choose one of those");
    if (want != row->pypi && py.lock.empty())
      plan_.pip_index_args.push_back("--extra-index-url " + tables_.torch_index_url + cu(want));
    decide("--cuda", "torch " + row->torch + "'s CUDA " + want + " build" +
                         (want != row->pypi ? ", from " + tables_.torch_index_url + cu(want)
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
    plan_.pip_index_args.push_back("--extra-index-url " + tables_.torch_index_url + cu(build));
    decide("data/torch-cuda.json", "torch " + row->torch + ": its CUDA " + build +
                                       " build, the newest 12.x (oldest driver), from " +
                                       tables_.torch_index_url + cu(build));
  } else {
    decide(py.lock,
           "torch " + row->torch + ": the lock decides its build; gen assumed CUDA " + build);
  }
  return build;
}

}  // namespace imgsmith::gen
