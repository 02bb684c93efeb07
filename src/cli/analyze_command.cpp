#include "analyze_command.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "forgiving_cli.hpp"
#include "imgsmith/api/analyze.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/render/renderers.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"
#include "limit_option.hpp"
#include "output_file.hpp"
#include "policy.hpp"
#include "progress_line.hpp"

namespace imgsmith {
namespace {

struct AnalyzeArgs {
  std::string image;
  std::vector<std::string> limits;  // --limit NAME=VALUE
  std::string platform;
  std::string image_name;
  std::string format = "text";
  std::string output = "-";
  std::vector<std::string> reports;  // --report FORMAT=FILE
  std::size_t top = 10;
  unsigned threads = 0;
  bool quiet = false;
  std::string progress = "auto";
  bool hash = false;
  std::string max_size, max_wasted, dive_ci, rules;
  std::string finding_floor = "1MB,0.5%";
  std::optional<std::size_t> base_layers;
  std::vector<std::string> budgets, deny, ignore;
  std::string policy;
  bool no_policy = false;
  std::optional<double> min_efficiency, max_user_wasted_percent;
  // Registry references
  std::vector<std::string> insecure;
  bool manifest_only = false;
  long registry_timeout = 30;
  std::string docker_read = "auto";
  // Models: the VRAM gates and what the estimate assumes.
  std::string max_vram, fits, precision;  // precision "": stored
  std::optional<std::uint64_t> context;
  std::uint64_t batch = 1;
  std::string engine, kv_dtype;  // "": the model's format decides; auto
  std::optional<double> gpu_memory_utilization;
  std::optional<std::uint64_t> max_num_batched_tokens, max_num_seqs;
  bool no_models = false;
  // Kernels: the GPUs every CUDA binary must run on.
  std::vector<std::string> gpus;
  bool no_kernels = false;
};

// --engine, --gpu-memory-utilization, --kv-dtype and vLLM's batch.
ServingSettings serving_settings(const AnalyzeArgs& a) {
  ServingSettings s;
  if (!a.engine.empty()) {
    s.engine = parse_engine(a.engine);
    if (!s.engine)
      throw InputError("--engine '" + a.engine + "': one of vllm, llama.cpp, transformers");
  }
  const bool vllm_only_flags = a.gpu_memory_utilization || a.max_num_batched_tokens ||
                               a.max_num_seqs || (!a.kv_dtype.empty() && a.kv_dtype != "auto");
  if (vllm_only_flags && s.engine && *s.engine != Engine::Vllm)
    throw InputError(
        "--gpu-memory-utilization, --kv-dtype fp8, --max-num-batched-tokens and "
        "--max-num-seqs are vLLM's; --engine " +
        std::string(engine_name(*s.engine)) + " takes none of them");
  s.gpu_memory_utilization = a.gpu_memory_utilization;
  if (a.kv_dtype == "fp8" || a.kv_dtype == "fp8_e4m3" || a.kv_dtype == "fp8_e5m2")
    s.kv_fp8 = true;
  else if (!a.kv_dtype.empty() && a.kv_dtype != "auto")
    throw InputError("--kv-dtype '" + a.kv_dtype +
                     "': auto (the model's 16 bits) or fp8 (vLLM's --kv-cache-dtype fp8, "
                     "fp8_e4m3, fp8_e5m2)");
  s.max_num_batched_tokens = a.max_num_batched_tokens;
  s.max_num_seqs = a.max_num_seqs;
  return s;
}

bool has_gate_flags(const AnalyzeArgs& a) {
  return !a.max_size.empty() || !a.max_wasted.empty() || !a.dive_ci.empty() || !a.budgets.empty() ||
         !a.deny.empty() || a.min_efficiency || a.max_user_wasted_percent || !a.max_vram.empty() ||
         !a.fits.empty() || !a.gpus.empty();
}

// --manifest-only: the manifest and config, no layer; no gates apply.
int run_manifest_only(const AnalyzeArgs& args, const AnalyzeOptions& options,
                      const RegistryOptions& registry) {
  if (has_gate_flags(args))
    throw InputError(
        "--manifest-only reads no layer, so the size gates cannot be checked; drop the gate "
        "flags, or --manifest-only");
  if (args.format != "text" && args.format != "json")
    throw InputError("--manifest-only reports as text or json, not " + args.format);
  ProgressLine progress(args.quiet ? ProgressMode::Never : parse_progress_mode(args.progress));
  AnalyzeOptions o = options;
  o.progress = [&progress](const std::string& s) { progress.show(s); };
  const ManifestReport r = inspect_manifest(args.image, o, registry);
  progress.clear();
  if (!args.quiet)
    for (const auto& w : r.warnings) std::cerr << "imgsmith: warning: " << w << "\n";
  std::ostringstream text;
  if (args.format == "json")
    text << manifest_to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
         << "\n";
  else
    render_manifest_text(r, text);
  write_output(args.output, text.str());
  return kExitOk;
}

std::uint64_t size_flag(const std::string& flag, const std::string& value) {
  const auto bytes = parse_size(value);
  if (!bytes)
    throw InputError(flag + " '" + value +
                     "': not a size; use bytes or a unit, e.g. 2GB, 500MiB, 1.5GiB");
  return *bytes;
}

double ratio_flag(const std::string& flag, double value) {
  if (!(value >= 0.0 && value <= 1.0))
    throw InputError(flag + " " + std::to_string(value) +
                     ": a ratio between 0 and 1 is expected (0.9 means 90%)");
  return value;
}

GateConfig gate_from(const AnalyzeArgs& args, const RuleSet& rules) {
  GateConfig g;
  for (const auto& b : args.budgets) {
    auto budget = parse_budget(b, rules.categories);
    // A later budget for the same name (a flag after the policy) replaces it.
    std::erase_if(g.budgets, [&](const auto& x) { return x.first == budget.first; });
    g.budgets.push_back(std::move(budget));
  }
  for (const auto& id : args.deny) {
    const auto& ids = finding_ids();
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
      std::string list;
      for (const auto& known : ids) list += (list.empty() ? "" : ", ") + known;
      throw InputError("--deny '" + id + "': unknown finding (one of: " + list + ")");
    }
    g.deny.push_back(id);
  }
  if (!args.dive_ci.empty()) load_dive_ci(args.dive_ci, g);
  if (!args.max_size.empty()) g.max_size = size_flag("--max-size", args.max_size);
  if (!args.max_wasted.empty()) {
    if (const auto pct = parse_percent(args.max_wasted)) {
      g.max_wasted_percent = *pct;
    } else if (args.max_wasted.find('%') != std::string::npos) {
      throw InputError("--max-wasted '" + args.max_wasted + "': a percentage is 0% to 100%");
    } else {
      g.max_wasted = size_flag("--max-wasted", args.max_wasted);
    }
  }
  if (!args.max_vram.empty()) g.max_vram = size_flag("--max-vram", args.max_vram);
  if (!args.fits.empty()) g.fits = parse_gpu_target(args.fits);
  if (!args.gpus.empty()) g.gpus = parse_gpu_list(args.gpus);
  if (const auto p = parse_precision(args.precision.empty() ? "stored" : args.precision))
    g.precision = *p;
  else
    throw InputError("--precision '" + args.precision + "': one of stored, bf16, fp16, int8, int4");
  if (args.min_efficiency) g.min_efficiency = ratio_flag("--min-efficiency", *args.min_efficiency);
  if (args.max_user_wasted_percent)
    g.max_user_wasted_percent =
        ratio_flag("--max-user-wasted-percent", *args.max_user_wasted_percent);
  return g;
}

// Settings from imgsmith.toml fill in what no flag gave; budgets merge, a
// flag's budget replacing the policy's for the same category.
AnalyzeArgs with_policy(AnalyzeArgs args) {
  const auto policy = command_policy(args.policy, args.no_policy);
  if (!policy) return args;
  const Policy& p = *policy;
  if (args.max_size.empty() && p.max_size) args.max_size = *p.max_size;
  if (args.max_wasted.empty() && p.max_wasted) args.max_wasted = *p.max_wasted;
  // --no-models reads no model: the policy's VRAM gates do not apply.
  if (!args.no_models) {
    if (args.max_vram.empty() && p.max_vram) args.max_vram = *p.max_vram;
    if (args.fits.empty() && p.fits) args.fits = *p.fits;
  }
  if (args.precision.empty() && p.precision) args.precision = *p.precision;
  if (!args.no_kernels && args.gpus.empty() && p.gpus) args.gpus = *p.gpus;
  if (args.dive_ci.empty() && p.dive_ci) args.dive_ci = *p.dive_ci;
  if (args.rules.empty() && p.rules) args.rules = *p.rules;
  if (!args.min_efficiency) args.min_efficiency = p.min_efficiency;
  if (!args.max_user_wasted_percent) args.max_user_wasted_percent = p.max_user_wasted_percent;
  if (args.deny.empty() && p.deny) args.deny = *p.deny;
  if (args.ignore.empty() && p.ignore) args.ignore = *p.ignore;
  std::vector<std::string> budgets;
  for (const auto& [name, size] : p.budgets) budgets.push_back(name + "=" + size);
  budgets.insert(budgets.end(), args.budgets.begin(), args.budgets.end());
  args.budgets = std::move(budgets);
  if (!args.quiet) std::cerr << "imgsmith: using the policy in " << p.path << "\n";
  return args;
}

RegistryOptions registry_options(const AnalyzeArgs& args) {
  RegistryOptions r;
  r.insecure = args.insecure;
  r.stall_timeout_s = args.registry_timeout;
  r.connect_timeout_s = std::min(args.registry_timeout, 15L);
  r.docker_read = args.docker_read;
  if (args.threads != 0) r.parallel = args.threads;
  return r;
}

// --finding-floor "1MB,0.5%": a finding saving less than both is info.
// One figure sets that figure alone; "0" makes every finding significant.
FindingFloor finding_floor(const std::string& text) {
  FindingFloor floor{0, 0.0};
  bool size_given = false, percent_given = false;
  for (const std::string& raw : split(text, ",")) {
    const std::string part(trim(raw));
    if (part.ends_with('%')) {
      char* end = nullptr;
      const std::string number = part.substr(0, part.size() - 1);
      floor.min_percent = std::strtod(number.c_str(), &end);
      if (number.empty() || *end != '\0' || floor.min_percent < 0 || floor.min_percent > 100)
        throw InputError("--finding-floor '" + text + "': a percentage is 0% to 100%");
      percent_given = true;
    } else {
      floor.min_bytes = size_flag("--finding-floor", part);
      size_given = true;
    }
  }
  if (!size_given && !percent_given)
    throw InputError("--finding-floor '" + text + "': give SIZE, PCT% or both");
  // One figure alone: the other does not make a finding significant.
  if (!size_given) floor.min_bytes = UINT64_MAX;
  if (!percent_given) floor.min_percent = 101.0;
  if ((size_given && floor.min_bytes == 0) || (percent_given && floor.min_percent == 0.0))
    floor = {0, 0.0};
  return floor;
}

int run_analyze(const AnalyzeArgs& given) {
  apply_limit_options(given.limits);
  if (given.manifest_only) {
    AnalyzeOptions options;
    if (!given.platform.empty()) options.selector.platform = Platform::parse(given.platform);
    return run_manifest_only(given, options, registry_options(given));
  }
  const AnalyzeArgs args = with_policy(given);
  AnalyzeRequest request;
  request.image = args.image;
  request.rules = rules_with(args.rules);
  request.gates = gate_from(args, request.rules);
  for (const auto& g : args.ignore) request.ignore.emplace_back(g);
  AnalyzeOptions& options = request.options;
  if (!args.platform.empty()) options.selector.platform = Platform::parse(args.platform);
  options.selector.image = args.image_name;
  options.top = args.top;
  options.threads = args.threads;
  options.hash_duplicates = args.hash;
  options.base_layers = args.base_layers;
  ProgressLine progress(args.quiet ? ProgressMode::Never : parse_progress_mode(args.progress));
  request.progress = [&progress](const std::string& s) { progress.show(s); };
  const std::vector<ExtraReport> extras = extra_reports(args.reports);
  request.registry = registry_options(args);
  request.floor = finding_floor(args.finding_floor);
  if (args.no_models)
    request.vram.reset();
  else
    request.vram = VramSettings{args.context, args.batch, serving_settings(args)};
  request.read_kernels = !args.no_kernels;
  request.keep_files = renderer_needs_files(args.format) ||
                       std::any_of(extras.begin(), extras.end(), [](const ExtraReport& e) {
                         return renderer_needs_files(e.format);
                       });

  const AnalyzeResult result = analyze(request);
  progress.clear();
  const Analysis& analysis = result.analysis;
  const GateConfig& gate_config = request.gates;
  const GateResult& gate = result.gate;
  const Report full = result.report();

  if (!args.quiet) {
    for (const auto& w : analysis.warnings) std::cerr << "imgsmith: warning: " << w << "\n";
    if ((gate_config.max_vram || gate_config.fits) && result.models.empty())
      std::cerr << "imgsmith: warning: no model files (safetensors, GGUF, PyTorch, ONNX) in the "
                   "image: --max-vram and --fits have nothing to check\n";
  }

  std::ostringstream report;
  render_analysis(args.format, full, report);
  write_output(args.output, report.str());
  for (const ExtraReport& extra : extras) {
    std::ostringstream more;
    render_analysis(extra.format, full, more);
    write_output(extra.path, more.str());
  }
  if (!gate.passed) {
    for (const auto& c : gate.checks)
      if (!c.passed) std::cerr << "imgsmith: gate failed: " << c.rule << ": " << c.message << "\n";
    return kExitGateFailed;
  }
  return kExitOk;
}

}  // namespace

void register_analyze_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Measure a saved image: layer sizes, the merged filesystem, wasted bytes,\n"
      "dive-compatible efficiency, the largest files; gate it for CI.");
  cmd->alias("analyse");  // British spelling, as README readers type it
  cmd->footer(
      "IMAGE is detected from its content:\n"
      "  docker save output (legacy, Docker >= 25, containerd store), an OCI archive,\n"
      "  an OCI layout directory, any of those tars compressed with gzip or zstd,\n"
      "  or - for a tar on standard input.\n"
      "Or docker://NAME[:TAG], an image of the Docker daemon (DOCKER_HOST honoured): read in\n"
      "  place from its overlay2 storage when this user can read it (root, usually), else\n"
      "  streamed as `docker save` sends it; the progress line says which (--docker-read).\n"
      "Or podman://NAME[:TAG], an image of Podman, streamed from its API service as\n"
      "  `podman save` writes it (CONTAINER_HOST, else /run/podman/podman.sock for root,\n"
      "  $XDG_RUNTIME_DIR/podman/podman.sock otherwise); `podman save` files are read too.\n"
      "Or a registry reference, read over the OCI distribution API with no daemon:\n"
      "  ghcr.io/org/app:tag, registry:5000/app@sha256:..., ubuntu "
      "(docker.io/library/ubuntu:latest).\n"
      "  Credentials come from ~/.docker/config.json (DOCKER_CONFIG honoured); layers stream\n"
      "  through their sha256 check into the analysis, several at a time, with no temporary "
      "files.\n"
      "\n"
      "Sizes: 1234, 20MB, 20Mb, 1.5GiB. K/KB/M/MB/G/GB/T/TB are powers of 1000,\n"
      "Ki/KiB/Mi/MiB/Gi/GiB/Ti/TiB powers of 1024; a trailing b or B is bytes.\n"
      "\n"
      "Exit status: 0 every gate passed; 1 a gate failed (each violation is printed\n"
      "with its limit and actual value); 2 bad usage, bad input or a refusal by the\n"
      "machine (memory, threads); 70 a bug in imgsmith (please report it); 74 the\n"
      "report could not be written (a full disk, /dev/full).");
  cmd->add_option("IMAGE", args->image, "Image file, directory, registry reference, or - for stdin")
      ->required();
  cmd->add_flag("--manifest-only", args->manifest_only,
                "Registry images: report the compressed layer sizes, history and config from the\n"
                "manifest, downloading no layer (seconds, whatever the image's size)");
  cmd->add_option("--insecure-registry", args->insecure,
                  "Reach HOST[:PORT] over plain HTTP or unverified TLS (repeatable; loopback\n"
                  "registries are always so, as in Docker)");
  cmd->add_option("--registry-timeout", args->registry_timeout,
                  "Seconds a registry may stay silent before the transfer fails (default 30)")
      ->check(CLI::Range(1L, 3600L));
  cmd->add_option("--docker-read", args->docker_read,
                  "docker://: auto (in place when the daemon's storage is readable, else docker\n"
                  "save), storage (in place or fail), walk (in place, walking every layer\n"
                  "directory instead of its tar-split record), save (always stream docker save)")
      ->check(CLI::IsMember({"auto", "storage", "walk", "save"}));
  add_limit_option(*cmd, args->limits);
  cmd->add_option("--platform", args->platform,
                  "Platform to pick from a multi-platform index: os/arch[/variant]\n"
                  "(default linux/amd64)");
  cmd->add_option("--image", args->image_name,
                  "Image to pick when the archive holds several (a tag or ref name)");
  add_format_option(*cmd, args->format, false);
  cmd->add_option("-o,--output", args->output, "Write the report to FILE (default stdout)")
      ->check(output_is_a_file());
  add_report_option(*cmd, args->reports, false);
  cmd->add_option("--top", args->top,
                  "How many entries each list holds: largest files, waste, dive's inefficient\n"
                  "paths, each finding's paths (the totals count everything)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--threads", args->threads,
                  "Layers read in parallel (default: one per core; 4 downloads for a registry)")
      ->check(CLI::Range(1, 256));
  cmd->add_flag("-q,--quiet", args->quiet, "No progress line and no warnings on stderr");
  cmd->add_option("--progress", args->progress, kProgressHelp)
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_flag("--hash", args->hash,
                "Find identical files at different paths (duplicate-content): files whose sizes\n"
                "collide are read and digested with SHA-256");
  auto* gate = "Gate";
  cmd->add_option("--max-size", args->max_size, "Fail when the final size exceeds SIZE")
      ->group(gate);
  cmd->add_option("--max-wasted", args->max_wasted,
                  "Fail when wasted bytes exceed SIZE, or PCT% of the layers' bytes")
      ->group(gate);
  cmd->add_option("--min-efficiency", args->min_efficiency,
                  "Fail when dive's efficiency is below F (0..1)")
      ->group(gate);
  cmd->add_option("--max-user-wasted-percent", args->max_user_wasted_percent,
                  "Fail when dive's user-wasted ratio is above F (0..1)")
      ->group(gate);
  cmd->add_option("--budget", args->budgets,
                  "Fail when a category exceeds SIZE: CATEGORY=SIZE or CATEGORY/CHILD=SIZE,\n"
                  "e.g. cuda=3GiB, cuda/cudnn=1GiB (repeatable)")
      ->group(gate);
  cmd->add_option("--deny", args->deny,
                  "Fail when this finding is present, e.g. devel-in-final (repeatable)")
      ->group(gate);
  const auto* models = "Models (VRAM)";
  cmd->add_option(
         "--max-vram", args->max_vram,
         "Fail when a model in the image needs more GPU memory than SIZE (at --precision,\n"
         "--context, --batch)")
      ->group(models);
  cmd->add_option("--fits", args->fits,
                  "Fail when a model does not fit GPU, or N of them: L4, A100-80GB, H100x2, ...\n"
                  "(data/gpus.json), in its engine's budget (--engine); the message gives the\n"
                  "engine's figures and what would fit")
      ->group(models);
  cmd->add_option("--precision", args->precision,
                  "The precision the VRAM gates check: stored (as the files hold it, default),\n"
                  "bf16/fp16, int8, int4")
      ->group(models);
  cmd->add_option("--context", args->context,
                  "Tokens of context the KV cache is sized for (default: the model's maximum)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}))
      ->group(models);
  cmd->add_option("--batch", args->batch, "Sequences served at once (default 1)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}))
      ->group(models);
  cmd->add_option("--engine", args->engine,
                  "The engine whose memory budget the VRAM figures follow: vllm (its\n"
                  "--gpu-memory-utilization of the board, non-torch memory, profile run),\n"
                  "llama.cpp (KV cache whole, compute buffer), transformers (no preallocation).\n"
                  "Default: llama.cpp for GGUF, vllm for safetensors, transformers otherwise")
      ->group(models);
  cmd->add_option("--gpu-memory-utilization", args->gpu_memory_utilization,
                  "vLLM's share of each GPU (default 0.9, vLLM's own)")
      ->check(CLI::Range(0.01, 1.0))
      ->group(models);
  cmd->add_option("--kv-dtype", args->kv_dtype,
                  "The KV cache's type: auto (16 bits) or fp8 (vLLM's --kv-cache-dtype fp8:\n"
                  "one byte an element)")
      ->group(models);
  cmd->add_option("--max-num-batched-tokens", args->max_num_batched_tokens,
                  "vLLM's profile-run tokens (default: vllm serve's, 8192 on 70 GiB boards\n"
                  "but A100s, else 2048)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{10'000'000}))
      ->group(models);
  cmd->add_option("--max-num-seqs", args->max_num_seqs,
                  "vLLM's sequences at once, whose logits the sampler holds (default: vllm\n"
                  "serve's, 1024 on 70 GiB boards but A100s, else 256)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}))
      ->group(models);
  cmd->add_flag("--no-models", args->no_models,
                "Read no model headers: no MODELS section, no VRAM gates")
      ->group(models)
      ->excludes(cmd->get_option("--max-vram"))
      ->excludes(cmd->get_option("--fits"));
  const auto* kernels = "CUDA kernels";
  cmd->add_option("--gpu", args->gpus,
                  "Fail when a CUDA binary in the image has no code that runs on this GPU:\n"
                  "H100,B200 (data/gpus.json; repeatable); SASS for it, or PTX the driver compiles")
      ->group(kernels);
  cmd->add_flag("--no-kernels", args->no_kernels,
                "Read no CUDA binary's GPU code: no KERNELS section, no --gpu gates")
      ->group(kernels)
      ->excludes(cmd->get_option("--gpu"));
  cmd->add_option("--base-layers", args->base_layers,
                  "The first N layers are the base image's (default: read from the history, where\n"
                  "the base's CMD/ENTRYPOINT ends it); findings and attribution tell them apart")
      ->type_name("N");
  cmd->add_option("--finding-floor", args->finding_floor,
                  "Findings saving less than SIZE and less than PCT% of the final image are\n"
                  "info: listed, not counted, never matched by --deny (default 1MB,0.5%; 0 = none)")
      ->type_name("SIZE,PCT%");
  cmd->add_option(
         "--ignore", args->ignore,
         "Keep paths matching GLOB out of findings, the waste list and the --max-wasted gates,\n"
         "e.g. '/opt/models/**' (repeatable); the size figures stay")
      ->group(gate);
  cmd->add_option(
      "--rules", args->rules,
      "Attribution rules (JSON) tried before the built-in ones; see data/attribution-rules.json");
  cmd->add_option("--policy", args->policy,
                  "Read gates from this imgsmith.toml (default: the nearest one from the working\n"
                  "directory up; flags override it)");
  cmd->add_flag("--no-policy", args->no_policy, "Ignore any imgsmith.toml");
  cmd->add_option("--dive-ci", args->dive_ci,
                  "Apply the rules of a dive .dive-ci file (dive's defaults for missing rules)")
      ->group(gate);
  cmd->callback([args, &exit_code] { exit_code = run_analyze(*args); });
}

}  // namespace imgsmith
