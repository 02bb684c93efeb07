// The probe's report: one line a device for people (stderr), and JSON
// (imgsmith.probe/v1) for programs.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "probe_report.hpp"

namespace probe {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

namespace {

// Which machine the report is from, for `imgsmith probe --summarize` over a
// cluster's reports: IMGSMITH_NODE_NAME (a DaemonSet sets it to the node's
// name from the downward API), else the host name.
std::string node_name() {
  if (const char* node = std::getenv("IMGSMITH_NODE_NAME"); node && *node) return node;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "";
  return host;
}

}  // namespace

const char* status_name(Status status) {
  // In the order of Status's values.
  static constexpr const char* kNames[] = {"ok", "no-gpu", "driver-too-old", "error", "no-kernel"};
  return kNames[static_cast<int>(status)];
}

std::string to_json(const Report& r) {
  std::string o = "{\"schema\":\"imgsmith.probe/v1\",\"node\":" + json_string(node_name()) +
                  ",\"status\":" + json_string(status_name(r.status));
  o += ",\"reason\":" + json_string(r.reason) + ",\"fix\":" + json_string(r.fix);
  if (r.driver_cuda != 0 || !r.driver_version.empty())
    o += ",\"driver\":{\"version\":" + json_string(r.driver_version) +
         ",\"cuda\":" + json_string(r.driver_cuda != 0 ? cuda_text(r.driver_cuda) : "") + "}";
  else
    o += ",\"driver\":null";
  o +=
      ",\"image_cuda\":" + (r.image_cuda.empty() ? std::string("null") : json_string(r.image_cuda));
  o += ",\"visible_devices\":{\"NVIDIA_VISIBLE_DEVICES\":" + json_string(r.visible_nvidia) +
       ",\"CUDA_VISIBLE_DEVICES\":" + json_string(r.visible_cuda) + "}";
  o += ",\"devices\":[";
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    const Device& d = r.devices[i];
    o += (i ? "," : "") + std::string("{\"index\":") + std::to_string(d.index) +
         ",\"name\":" + json_string(d.name) + ",\"uuid\":" + json_string(d.uuid) +
         ",\"compute_capability\":" + json_string(d.compute_capability) +
         ",\"memory_total_bytes\":" + std::to_string(d.memory_total) +
         ",\"memory_used_bytes\":" + std::to_string(d.memory_used) + ",\"utilization_percent\":" +
         (d.has_utilization ? std::to_string(d.utilization) : "null") +
         ",\"temperature_c\":" + (d.has_temperature ? std::to_string(d.temperature) : "null") +
         ",\"compute_mode\":" + json_string(d.compute_mode) +
         ",\"mig\":" + (d.mig ? "true" : "false") + "}";
  }
  o += "],\"notes\":[";
  for (std::size_t i = 0; i < r.notes.size(); ++i) o += (i ? "," : "") + json_string(r.notes[i]);
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f", r.elapsed_ms);
  if (r.vram.need > 0)
    o += "],\"vram\":{\"need_bytes\":" + std::to_string(r.vram.need) + ",\"free_bytes\":" +
         (r.vram.checked && r.vram.free > 0 ? std::to_string(r.vram.free) : "null") +
         ",\"checked\":" + (r.vram.checked ? "true" : "false") +
         ",\"fits\":" + (r.vram.fits ? "true" : "false") + ",\"line\":" + json_string(r.vram.line) +
         "}";
  else
    o += "],\"vram\":null";
  const Report::Kernels& k = r.kernels;
  if (k.checked) {
    char kms[32];
    std::snprintf(kms, sizeof kms, "%.1f", k.ms);
    auto paths = [](const std::vector<std::string>& list) {
      std::string a = "[";
      for (std::size_t i = 0; i < list.size(); ++i) a += (i ? "," : "") + json_string(list[i]);
      return a + "]";
    };
    o += ",\"kernels\":{\"source\":" + json_string(k.source) +
         ",\"binaries\":" + std::to_string(k.binaries) +
         ",\"rescanned\":" + std::to_string(k.rescanned) + ",\"none\":" + paths(k.none) +
         ",\"jit\":" + paths(k.jit) + ",\"jit_bytes\":" + std::to_string(k.jit_bytes) +
         ",\"elapsed_ms\":" + kms + "}";
  } else {
    o += ",\"kernels\":null";
  }
  o += ",\"bench\":" + r.bench_json + ",\"elapsed_ms\":" + std::string(ms) + "}";
  return o;
}

void print_human(const Report& r) {
  if (r.status == Status::Ok) {
    std::fprintf(stderr, "imgsmith-probe: ok: %zu GPU%s, driver %s (CUDA %s)%s\n", r.devices.size(),
                 r.devices.size() == 1 ? "" : "s",
                 r.driver_version.empty() ? "?" : r.driver_version.c_str(),
                 cuda_text(r.driver_cuda).c_str(),
                 r.image_cuda.empty() ? "" : (", image CUDA " + r.image_cuda).c_str());
  } else {
    std::fprintf(stderr, "imgsmith-probe: %s: %s\nimgsmith-probe: fix: %s\n", status_name(r.status),
                 r.reason.c_str(), r.fix.c_str());
  }
  for (const auto& d : r.devices) {
    std::fprintf(stderr, "imgsmith-probe:   GPU %d %s, %s, sm %s, memory %.1f/%.1f GiB", d.index,
                 d.name.c_str(), d.uuid.c_str(), d.compute_capability.c_str(),
                 static_cast<double>(d.memory_used) / (1 << 30),
                 static_cast<double>(d.memory_total) / (1 << 30));
    if (d.has_utilization) std::fprintf(stderr, ", %u%% busy", d.utilization);
    if (d.has_temperature) std::fprintf(stderr, ", %u C", d.temperature);
    if (d.mig) std::fprintf(stderr, ", a MIG slice");
    if (d.compute_mode != "default")
      std::fprintf(stderr, ", compute mode %s", d.compute_mode.c_str());
    std::fprintf(stderr, "\n");
  }
  if (r.kernels.checked && r.kernels.none.empty())
    std::fprintf(
        stderr, "imgsmith-probe:   kernels: %u CUDA librar%s checked against GPU 0 (%s, %.1f ms)\n",
        r.kernels.binaries, r.kernels.binaries == 1 ? "y" : "ies",
        r.kernels.source == "inventory" ? "the image's inventory" : "read at start", r.kernels.ms);
  if (!r.vram.line.empty())
    std::fprintf(stderr, "imgsmith-probe: %s%s\n",
                 r.vram.fits ? "" : "vram: ", r.vram.line.c_str());
  for (const auto& n : r.notes) std::fprintf(stderr, "imgsmith-probe: note: %s\n", n.c_str());
}

}  // namespace probe
