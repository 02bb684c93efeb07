#include "imgsmith/api/analyze.hpp"

#include <algorithm>
#include <any>
#include <utility>

#include "imgsmith/attribution/binary_modules.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/models/model_file.hpp"
#include "imgsmith/util/size.hpp"
#include "kernel_findings.hpp"

namespace imgsmith {
namespace {

// What the read keeps of the files it streams: attribution's package
// databases and file heads; when models are read, their headers (as typed
// records, read while the weights stream past) and configs; when kernels
// are read, the GPU code of CUDA binaries (fatbin entries' headers); and the
// module information of Go and Rust programs, always (attribution's).
CaptureFn capture_for(bool read_models, bool read_kernels) {
  if (!read_models && !read_kernels) return attribution_capture_inspected();
  return CaptureFn(
      [=](std::string_view path, std::uint64_t size) {
        std::uint64_t keep = attribution_capture(path, size);
        if (read_models) keep = std::max(keep, model_capture(path, size));
        if (read_kernels) keep = std::max(keep, kernel_capture(path, size));
        return keep;
      },
      [=](std::string_view, std::uint64_t size, std::string_view head,
          ForwardReader& rest) -> std::any {
        // The model reader reads on only from a model's head: a file it
        // passes over is still at its first byte after the head.
        const std::uint64_t after_head = rest.position();
        if (read_models)
          if (auto model = inspect_model_content(head, rest, size)) return std::move(*model);
        // A Go or Rust program's module information: read at offsets, or,
        // front to back, only in a file whose head shows Go's note (CUDA
        // code in such a program goes unread; none is known to carry any).
        if (rest.position() == after_head)
          if (auto module = inspect_binary_module(head, rest, size)) return std::move(*module);
        if (read_kernels && rest.position() == after_head)
          if (auto binary = inspect_cuda_binary(head, rest, size)) return std::move(*binary);
        return {};
      },
      read_models ? CaptureFn::KeepLink(hf_cache_link) : CaptureFn::KeepLink());
}

// 1. Read: the image's layers, merged and measured.
Analysis read_image(const AnalyzeRequest& request) {
  AnalyzeOptions options = request.options;
  options.capture = capture_for(request.vram.has_value(), request.read_kernels);
  options.progress = request.progress;
  return analyze_image(request.image, options, request.registry);
}

// 2. Models: the model files among the read's captured files, with their
// VRAM estimates.
std::vector<ModelReport> read_models(const Analysis& analysis,
                                     const std::optional<VramSettings>& settings) {
  if (!settings) return {};
  std::vector<ModelFileAt> files;
  for (const auto* kept : {&analysis.file_heads, &analysis.metadata})
    for (const auto& file : *kept)
      if (const auto* model = std::any_cast<ModelFile>(&file.inspected))
        files.push_back(ModelFileAt{"/" + file.path, *model});
  std::vector<TextFileAt> texts;
  for (const auto& file : analysis.metadata)
    if (file.path.ends_with("config.json") || file.path.ends_with(".index.json") ||
        hf_cache_text(file.path, file.content.size()))
      texts.push_back(TextFileAt{"/" + file.path, file.content});
  std::vector<LinkAt> links;
  for (const auto& link : analysis.links) links.push_back(LinkAt{"/" + link.path, link.content});
  std::vector<ModelReport> reports;
  for (auto& model : collect_models(resolve_hf_caches(std::move(files), std::move(texts), links))) {
    VramEstimate vram = estimate_vram(model, *settings);
    // A context past the model's maximum is sized as asked, and said: vLLM
    // refuses a max_model_len above it (unless VLLM_ALLOW_LONG_MAX_MODEL_LEN
    // is set), and the model was not trained for it.
    if (settings->context && model.shape.context_length > 0 &&
        *settings->context > model.shape.context_length)
      model.warnings.push_back("--context " + format_count(*settings->context) +
                               " is above its maximum of " +
                               format_count(model.shape.context_length) +
                               " tokens (config.json max_position_embeddings, GGUF "
                               "context_length); vLLM refuses it unless "
                               "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1; sized as asked");
    reports.push_back(ModelReport{std::move(model), std::move(vram)});
  }
  return reports;
}

// 2b. Kernels: the CUDA binaries among the read's captured files.
KernelInventory read_kernels(const Analysis& analysis) {
  KernelInventory inventory;
  for (const auto* kept : {&analysis.file_heads, &analysis.metadata})
    for (const auto& file : *kept)
      if (const auto* binary = std::any_cast<CudaBinary>(&file.inspected))
        inventory.binaries.push_back(CudaBinaryAt{"/" + file.path, *binary});
  std::sort(inventory.binaries.begin(), inventory.binaries.end(),
            [](const CudaBinaryAt& a, const CudaBinaryAt& b) { return a.path < b.path; });
  constexpr std::string_view require = "NVIDIA_REQUIRE_CUDA=";
  for (const auto& kv : analysis.env)
    if (kv.starts_with(require)) inventory.require_cuda = kv.substr(require.size());
  return inventory;
}

// 3. --ignore keeps paths out of the waste list, and their bytes out of the
// waste the gates count; the size figures stay.
void leave_out_ignored(Analysis& analysis, const std::vector<Glob>& ignore) {
  std::erase_if(analysis.waste, [&](const WasteGroup& w) {
    if (!matches_any(ignore, w.path)) return false;
    analysis.ignored_waste_bytes += w.bytes;
    return true;
  });
}

struct Attributed {
  Attribution attribution;
  std::vector<Finding> findings;
  std::vector<ReportFile> files;
};

// 4. Attribution and findings: the files go straight from attribution to
// the findings, so no list of every file is kept unless the request asks
// for one.
// With target GPUs (--gpu), the owners of the CUDA binaries are kept on the
// way, for the kernels' finding.
Attributed attribute_and_find(const Analysis& analysis, const AnalyzeRequest& request,
                              const KernelInventory* kernels) {
  Attributed out;
  WasteFinder findings(analysis, request.ignore);
  const bool judge_kernels =
      kernels != nullptr && !kernels->binaries.empty() && !request.gates.gpus.empty();
  api_detail::BinaryOwners owners;
  if (judge_kernels) owners = api_detail::owners_to_find(*kernels);
  out.attribution = attribute(
      analysis, request.rules, [&](const AttributedFile& file, const std::string& category) {
        findings.add(file, category);
        // (An --ignore'd binary keeps no owner, and so no finding.)
        if (judge_kernels)
          if (const auto it = owners.find(file.path);
              it != owners.end() && !matches_any(request.ignore, file.path))
            it->second = api_detail::BinaryOwner{category, file.layer};
        if (request.keep_files)
          out.files.push_back(ReportFile{std::string(file.path), file.bytes, file.layer, category,
                                         file.child, file.origin});
      });
  out.findings = findings.finish(out.attribution, request.floor);
  if (judge_kernels) {
    Finding f = api_detail::sass_for_other_gpus(*kernels, request.gates.gpus, owners, analysis);
    if (f.bytes > 0)
      insert_finding(out.findings, std::move(f), analysis.final_bytes, request.floor);
  }
  // The GPUs the image must run on: the targets, else every GPU of the
  // table (the finding says which).
  if (kernels != nullptr && !kernels->binaries.empty()) {
    const bool targets = !request.gates.gpus.empty();
    const std::vector<Gpu>& judged = targets ? request.gates.gpus : known_gpus();
    for (Finding f :
         {api_detail::no_kernel_for_gpu(*kernels, judged, targets, request.ignore, analysis.top),
          api_detail::ptx_jit_only(*kernels, judged, targets, request.ignore, analysis.top)})
      if (!f.paths.empty())
        insert_finding(out.findings, std::move(f), analysis.final_bytes, request.floor);
  }
  return out;
}

}  // namespace

AnalyzeResult analyze(const AnalyzeRequest& request) {
  AnalyzeResult r;
  r.analysis = read_image(request);
  r.models = read_models(r.analysis, request.vram);
  if (request.read_kernels) {
    r.kernels = read_kernels(r.analysis);
    if (std::string w = driver_need_warning(driver_need(*r.kernels)); !w.empty())
      r.analysis.warnings.push_back(std::move(w));
  }
  leave_out_ignored(r.analysis, request.ignore);
  if (request.progress) request.progress("attributing bytes");
  Attributed attributed =
      attribute_and_find(r.analysis, request, r.kernels ? &*r.kernels : nullptr);
  r.attribution = std::move(attributed.attribution);
  r.findings = std::move(attributed.findings);
  r.files = std::move(attributed.files);
  r.gate = evaluate_gate(r.analysis, request.gates, &r.attribution, &r.findings, &r.models,
                         r.kernels ? &*r.kernels : nullptr);
  return r;
}

RuleSet rules_with(const std::string& user_rules_file) {
  return user_rules_file.empty() ? builtin_rules()
                                 : with_user_rules(builtin_rules(), user_rules_file);
}

}  // namespace imgsmith
