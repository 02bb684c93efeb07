#include "kernel_sections.hpp"

#include <algorithm>
#include <map>

#include "format.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::render_detail {
namespace {

using nlohmann::json;

const char* kind_name(KernelKind k) {
  return k == KernelKind::Sass  ? "sass"
         : k == KernelKind::Ptx ? "ptx"
         : k == KernelKind::Ir  ? "ir"
                                : "other";
}

const char* verdict_name(KernelVerdict v) {
  return v == KernelVerdict::Sass ? "sass" : v == KernelVerdict::Jit ? "jit" : "none";
}

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// "SASS sm_75 sm_80 sm_90a; PTX compute_120 (ISA 9.0)".
std::string code_line(const CudaBinary& b) {
  std::string sass, ptx, ir, other;
  for (const KernelCode& c : b.code) {
    if (c.kind == KernelKind::Sass)
      sass += " " + c.name() + (c.empty_entries == c.entries ? " (no kernels)" : "");
    else if (c.kind == KernelKind::Ir)
      ir += " " + c.name();
    else if (c.kind == KernelKind::Ptx)
      ptx += " " + c.name() + " (ISA " + ptx_isa_text(c.version) + ")";
    else
      other += " " + c.name();
  }
  std::string out;
  if (!sass.empty()) out += "SASS" + sass;
  if (!ptx.empty()) out += (out.empty() ? "" : "; ") + std::string("PTX") + ptx;
  if (!ir.empty()) out += (out.empty() ? "" : "; ") + std::string("NVVM IR") + ir;
  if (!other.empty()) out += (out.empty() ? "" : "; ") + std::string("other") + other;
  return out.empty() ? "no GPU code" : out;
}

// "PTX ISA 9.0 needs a CUDA 13.0 driver (580 or newer)".
std::string ptx_driver_text(unsigned isa) {
  const std::string cuda = cuda_for_ptx_isa(isa);
  if (cuda.empty()) return "PTX ISA " + ptx_isa_text(isa) + " (a driver that knows it)";
  const unsigned driver = driver_for_cuda(cuda);
  return "PTX ISA " + ptx_isa_text(isa) + " needs a CUDA " + cuda + " driver" +
         (driver > 0 ? " (" + std::to_string(driver) + " or newer)" : "");
}

std::string names_of(const std::vector<std::string>& paths, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < paths.size() && i < most; ++i)
    out += (i == 0 ? "" : ", ") + base_name(paths[i]);
  if (paths.size() > most) out += " and " + std::to_string(paths.size() - most) + " more";
  return out;
}

json replaced(const std::vector<std::string>& paths) {
  json out = json::array();
  for (const auto& p : paths) out.push_back(utf8_replaced(p));
  return out;
}

KernelKind kind_named(const std::string& name) {
  return name == "sass"  ? KernelKind::Sass
         : name == "ptx" ? KernelKind::Ptx
         : name == "ir"  ? KernelKind::Ir
                         : KernelKind::Other;
}

}  // namespace

KernelInventory kernels_from_json(const json& section) {
  KernelInventory out;
  for (const auto& item : section.at("binaries")) {
    CudaBinaryAt b;
    b.path = path_of(item);
    b.binary.containers = item.at("containers").get<std::uint64_t>();
    b.binary.fatbin_bytes = item.at("fatbin_bytes").get<std::uint64_t>();
    b.binary.cudart = item.at("cudart").get<std::string>();
    for (const auto& c : item.at("code")) {
      const std::string variant = c.at("variant").get<std::string>();
      b.binary.code.push_back(
          KernelCode{kind_named(c.at("kind").get<std::string>()), c.at("arch").get<unsigned>(),
                     variant.empty() ? ' ' : variant[0], c.at("version").get<unsigned>(),
                     c.at("entries").get<std::uint64_t>(), c.at("bytes").get<std::uint64_t>(),
                     c.at("compressed_entries").get<std::uint64_t>()});
    }
    b.binary.warnings = item.at("warnings").get<std::vector<std::string>>();
    out.binaries.push_back(std::move(b));
  }
  out.require_cuda = section.value("require_cuda", std::string());
  return out;
}

json kernels_to_json(const KernelInventory& kernels) {
  json out = json::object();
  out["sass_bytes"] = kernels.sass_bytes();
  out["ptx_bytes"] = kernels.ptx_bytes();
  json binaries = json::array();
  for (const auto& [path, b] : kernels.binaries) {
    json code = json::array();
    for (const KernelCode& c : b.code)
      code.push_back(json{{"name", c.name()},
                          {"kind", kind_name(c.kind)},
                          {"arch", c.arch},
                          {"variant", c.variant == ' ' ? std::string() : std::string(1, c.variant)},
                          {"version", c.version},
                          {"entries", c.entries},
                          {"bytes", c.bytes},
                          {"compressed_entries", c.compressed_entries},
                          {"empty_entries", c.empty_entries}});
    json gpus = json::object();
    for (const Gpu& gpu : known_gpus()) {
      const BinaryOnGpu on = binary_on_gpu(b, gpu.compute_capability);
      gpus[gpu.name] = json{
          {"verdict", verdict_name(on.verdict)}, {"code", on.code}, {"jit_bytes", on.jit_bytes}};
    }
    json item{{"containers", b.containers}, {"fatbin_bytes", b.fatbin_bytes},
              {"cudart", b.cudart},         {"code", std::move(code)},
              {"gpus", std::move(gpus)},    {"warnings", json::array()}};
    for (const auto& w : b.warnings) item["warnings"].push_back(utf8_replaced(w));
    put_path(item, path);
    binaries.push_back(std::move(item));
  }
  out["binaries"] = std::move(binaries);
  json per_gpu = json::array();
  for (const GpuKernelVerdict& v : verdicts_per_gpu(kernels, known_gpus()))
    per_gpu.push_back(
        json{{"gpu", v.gpu.name},
             {"compute_capability", compute_capability_text(v.gpu.compute_capability)},
             {"runs", v.runs()},
             {"none", replaced(v.none)},
             {"jit", replaced(v.jit)},
             {"jit_bytes", v.jit_bytes}});
  out["gpus"] = std::move(per_gpu);
  out["require_cuda"] = utf8_replaced(kernels.require_cuda);
  const DriverNeed need = driver_need(kernels);
  out["driver"] = json{{"needs", need.driver},
                       {"cudart", need.cudart},
                       {"named_by", utf8_replaced(need.path)},
                       {"require_cuda_release", utf8_replaced(need.require_cuda)},
                       {"require_driver", need.require_driver}};
  return out;
}

void render_kernels_text(const KernelInventory& kernels, std::size_t top, std::ostream& out) {
  if (kernels.binaries.empty()) return;
  out << "\nCUDA KERNELS (" << kernels.binaries.size() << " binar"
      << (kernels.binaries.size() == 1 ? "y" : "ies") << ": " << format_size(kernels.sass_bytes())
      << " SASS, " << format_size(kernels.ptx_bytes()) << " PTX)\n";
  // GPUs by compute capability; those with the same answer on one line.
  std::vector<Gpu> gpus = known_gpus();
  std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
    return a.compute_capability < b.compute_capability;
  });
  std::string runs;
  std::vector<std::pair<std::string, std::string>> jit_lines, fail_lines;  // answer, GPUs
  const auto add = [](std::vector<std::pair<std::string, std::string>>& lines,
                      const std::string& answer, const std::string& gpu) {
    for (auto& [a, names] : lines)
      if (a == answer) {
        names += ", " + gpu;
        return;
      }
    lines.emplace_back(answer, gpu);
  };
  for (const GpuKernelVerdict& v : verdicts_per_gpu(kernels, gpus)) {
    const std::string name =
        v.gpu.name + " (" + compute_capability_text(v.gpu.compute_capability) + ")";
    if (!v.runs())
      add(fail_lines, names_of(v.none, 4), name);
    else if (!v.jit.empty())
      add(jit_lines,
          names_of(v.jit, 4) + ", " + format_size(v.jit_bytes) +
              " of PTX to compile at first load; " + ptx_driver_text(v.jit_ptx_isa),
          name);
    else
      runs += (runs.empty() ? "" : ", ") + name;
  }
  out << "  runs on:   " << (runs.empty() ? "none of data/gpus.json" : runs) << "\n";
  for (const auto& [answer, names] : jit_lines)
    out << "  JIT only:  " << names << ": " << visible(answer) << "\n";
  for (const auto& [answer, names] : fail_lines)
    out << "  fails on:  " << names << ": " << visible(answer) << " (no kernel image for it)\n";
  if (const DriverNeed need = driver_need(kernels); need.driver > 0 || !need.require_cuda.empty()) {
    out << "  driver:    ";
    if (need.driver > 0)
      out << need.driver << " or newer (" << need.cudart << ", named by " << base_name(need.path)
          << ")";
    else
      out << "no shared CUDA runtime named";
    if (need.require_driver > 0)
      out << "; the image requires cuda>=" << visible(need.require_cuda) << " ("
          << need.require_driver << " or newer)"
          << (need.driver > need.require_driver ? ": too old, see the warning" : "");
    else if (!need.require_cuda.empty())
      out << "; the image requires cuda>=" << visible(need.require_cuda)
          << " (a release data/cuda-drivers.json does not list)";
    out << "\n";
  }
  std::vector<const CudaBinaryAt*> order;
  for (const auto& b : kernels.binaries) order.push_back(&b);
  std::stable_sort(order.begin(), order.end(), [](const CudaBinaryAt* a, const CudaBinaryAt* b) {
    return a->binary.sass_bytes() + a->binary.ptx_bytes() >
           b->binary.sass_bytes() + b->binary.ptx_bytes();
  });
  for (std::size_t i = 0; i < order.size() && i < top; ++i) {
    const auto& [path, b] = *order[i];
    out << fmt("  %10s  ", format_size(b.sass_bytes() + b.ptx_bytes()).c_str()) << visible(path)
        << "\n              " << code_line(b) << (b.cudart.empty() ? "" : "; needs " + b.cudart)
        << "\n";
    for (const auto& w : b.warnings) out << "              warning: " << visible(w) << "\n";
  }
  if (order.size() > top)
    out << "  ... and " << order.size() - top << " more (--top N, or --format json for all)\n";
}

void render_kernels_markdown(const KernelInventory& kernels, std::ostream& out) {
  if (kernels.binaries.empty()) return;
  out << "| GPU | compute capability | runs | JIT only | no kernels |\n"
         "| --- | --- | --- | --- | --- |\n";
  for (const GpuKernelVerdict& v : verdicts_per_gpu(kernels, known_gpus()))
    out << "| " << cell(v.gpu.name) << " | " << compute_capability_text(v.gpu.compute_capability)
        << " | " << (v.runs() ? (v.jit.empty() ? "yes" : "JIT") : "**no**") << " | "
        << cell(names_of(v.jit, 4)) << " | " << cell(names_of(v.none, 4)) << " |\n";
  out << "\n";
}

}  // namespace imgsmith::render_detail
