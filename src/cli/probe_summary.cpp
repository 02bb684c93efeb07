#include "probe_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "imgsmith/source/file_io.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A report of the probe is a few kB; a log around it, a few more.
constexpr std::uint64_t kReportFileLimit = 16u << 20;
// Under this share of the GPU's peak, the device copy says the memory or
// the clocks are wrong (probes/device-check.sh holds the GPU to the same).
constexpr double kPeakFloorPercent = 75;
// Under this share of the median of the nodes with the same GPU, a figure
// marks the node as the odd one out.
constexpr double kFleetFloor = 0.8;

double number_or(const json& j, const char* key, double otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}

std::string string_or(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

NodeReport read_node_report(const std::string& text, const std::string& source) {
  // kubectl logs interleaves the probe's stderr lines with its JSON line:
  // every line that opens an object is tried, and the last report wins (a
  // restarted pod logs more than one).
  std::optional<json> found;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = text.find('\n', at);
    const auto line_end = end == std::string::npos ? text.size() : end;
    const auto open = text.find_first_not_of(" \t", at);
    if (open < line_end && text[open] == '{') {
      auto doc = json::parse(text.begin() + static_cast<std::ptrdiff_t>(open),
                             text.begin() + static_cast<std::ptrdiff_t>(line_end), nullptr, false);
      if (!doc.is_discarded() && doc.is_object() && string_or(doc, "schema") == "imgsmith.probe/v1")
        found = std::move(doc);
    }
    at = line_end + 1;
  }
  if (!found)
    throw InputError(source +
                     ": no imgsmith-probe report in it (a line of JSON with schema "
                     "imgsmith.probe/v1, as `imgsmith-probe --json` prints)");
  const json& d = *found;
  NodeReport n;
  n.source = source;
  n.node = string_or(d, "node");
  if (n.node.empty()) n.node = fs::path(source).stem().string();
  n.status = string_or(d, "status");
  n.reason = string_or(d, "reason");
  if (const auto driver = d.find("driver"); driver != d.end() && driver->is_object()) {
    n.driver = string_or(*driver, "version");
    n.cuda = string_or(*driver, "cuda");
  }
  if (const auto devices = d.find("devices");
      devices != d.end() && devices->is_array() && !devices->empty()) {
    n.gpu = string_or((*devices)[0], "name");
    if (devices->size() > 1) n.gpu += " x" + std::to_string(devices->size());
  }
  if (const auto bench = d.find("bench"); bench != d.end() && bench->is_object()) {
    n.has_bench = true;
    const auto gpu = bench->find("gpu");
    if (gpu == bench->end() || !gpu->is_object()) {
      n.bench_error = "no GPU ran the benchmark";
    } else if (const auto error = string_or(*gpu, "error"); !error.empty()) {
      n.bench_error = error;
    } else {
      n.h2d_gbps = number_or(*gpu, "h2d_gbps", 0);
      n.d2h_gbps = number_or(*gpu, "d2h_gbps", 0);
      n.device_copy_gbps = number_or(*gpu, "device_copy_gbps", 0);
      n.fp32_tflops = number_or(*gpu, "fp32_tflops", 0);
      n.h2d_peak_percent = number_or(*gpu, "h2d_peak_percent", -1);
      n.device_copy_peak_percent = number_or(*gpu, "device_copy_peak_percent", -1);
      n.fp32_peak_percent = number_or(*gpu, "fp32_peak_percent", -1);
    }
  }
  return n;
}

void summarize_nodes(std::vector<NodeReport>& nodes) {
  // The fleet's medians, per GPU model, over the nodes whose benchmark ran.
  struct Figures {
    std::vector<double> h2d, d2h, copy, fp32;
  };
  std::map<std::string, Figures> by_gpu;
  for (const auto& n : nodes) {
    if (n.status != "ok" || !n.has_bench || !n.bench_error.empty()) continue;
    auto& f = by_gpu[n.gpu];
    f.h2d.push_back(n.h2d_gbps);
    f.d2h.push_back(n.d2h_gbps);
    f.copy.push_back(n.device_copy_gbps);
    f.fp32.push_back(n.fp32_tflops);
  }
  for (auto& n : nodes) {
    n.ok = false;
    if (n.status != "ok") {
      n.verdict = "FAIL " + (n.status.empty() ? std::string("unknown status") : n.status) +
                  (n.reason.empty() ? "" : ": " + n.reason);
      continue;
    }
    if (!n.has_bench) {
      n.verdict = "ok (no benchmark: run imgsmith-probe --bench --json)";
      n.ok = true;
      continue;
    }
    if (!n.bench_error.empty()) {
      n.verdict = "FAIL bench: " + n.bench_error;
      continue;
    }
    std::vector<std::string> slow;
    if (n.device_copy_peak_percent >= 0 && n.device_copy_peak_percent < kPeakFloorPercent)
      slow.push_back("device copy at " + fixed(n.device_copy_peak_percent, 0) +
                     "% of the GPU's peak");
    const auto& f = by_gpu[n.gpu];
    if (f.copy.size() >= 2) {
      const auto against = [&](const char* what, double value, const std::vector<double>& all,
                               const char* unit) {
        const double m = median(all);
        if (m > 0 && value < kFleetFloor * m)
          slow.push_back(std::string(what) + " " + fixed(value, 1) + " " + unit + ", " +
                         fixed(100 * value / m, 0) + "% of the median of " +
                         std::to_string(all.size()) + " " + n.gpu + " nodes");
      };
      against("host->device", n.h2d_gbps, f.h2d, "GB/s");
      against("device->host", n.d2h_gbps, f.d2h, "GB/s");
      against("device copy", n.device_copy_gbps, f.copy, "GB/s");
      against("FP32", n.fp32_tflops, f.fp32, "TFLOP/s");
    }
    if (slow.empty()) {
      n.verdict = "ok";
      n.ok = true;
    } else {
      n.verdict = "SLOW";
      for (std::size_t i = 0; i < slow.size(); ++i) n.verdict += (i ? "; " : ": ") + slow[i];
    }
  }
}

std::string node_table_text(const std::vector<NodeReport>& nodes) {
  const std::vector<std::string> head = {"NODE",         "GPU",        "DRIVER",    "CUDA",
                                         "H2D GB/s",     "D2H GB/s",   "COPY GB/s", "COPY %PEAK",
                                         "FP32 TFLOP/s", "FP32 %PEAK", "VERDICT"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& n : nodes) {
    const bool ran = n.has_bench && n.bench_error.empty() && n.status == "ok";
    const auto figure = [&](double v, int d) { return ran ? fixed(v, d) : std::string("-"); };
    const auto percent = [&](double v) {
      return ran && v >= 0 ? fixed(v, 0) + "%" : std::string("-");
    };
    rows.push_back({n.node, n.gpu.empty() ? "-" : n.gpu, n.driver.empty() ? "-" : n.driver,
                    n.cuda.empty() ? "-" : n.cuda, figure(n.h2d_gbps, 1), figure(n.d2h_gbps, 1),
                    figure(n.device_copy_gbps, 0), percent(n.device_copy_peak_percent),
                    figure(n.fp32_tflops, 1), percent(n.fp32_peak_percent), n.verdict});
  }
  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      const bool number = c >= 4 && c <= 9;
      const std::string pad(width[c] - cells[c].size(), ' ');
      l += number ? pad + cells[c] : cells[c] + (last ? "" : pad);
      if (!last) l += "  ";
    }
    out += l + "\n";
  };
  line(head);
  for (const auto& r : rows) line(r);
  std::size_t bad = 0;
  for (const auto& n : nodes) bad += n.ok ? 0 : 1;
  out += std::to_string(nodes.size()) + " node" + (nodes.size() == 1 ? "" : "s") + ", " +
         (bad ? std::to_string(bad) + " not ok" : std::string("all ok")) + "\n";
  return out;
}

std::string node_table_json(const std::vector<NodeReport>& nodes) {
  json out = {{"schema", "imgsmith.probe-summary/v1"}, {"nodes", json::array()}};
  for (const auto& n : nodes) {
    json row = {{"node", n.node}, {"source", n.source},  {"status", n.status},
                {"gpu", n.gpu},   {"driver", n.driver},  {"cuda", n.cuda},
                {"ok", n.ok},     {"verdict", n.verdict}};
    if (n.has_bench && n.bench_error.empty() && n.status == "ok")
      row["bench"] = {
          {"h2d_gbps", n.h2d_gbps},
          {"d2h_gbps", n.d2h_gbps},
          {"device_copy_gbps", n.device_copy_gbps},
          {"fp32_tflops", n.fp32_tflops},
          {"h2d_peak_percent", n.h2d_peak_percent < 0 ? json() : json(n.h2d_peak_percent)},
          {"device_copy_peak_percent",
           n.device_copy_peak_percent < 0 ? json() : json(n.device_copy_peak_percent)},
          {"fp32_peak_percent", n.fp32_peak_percent < 0 ? json() : json(n.fp32_peak_percent)}};
    else
      row["bench"] = nullptr;
    out["nodes"].push_back(std::move(row));
  }
  return out.dump(2) + "\n";
}

int summarize_main(const std::vector<std::string>& args) {
  std::string format = "text";
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--format") {
      if (i + 1 == args.size()) throw InputError("--format needs text or json");
      format = args[++i];
      if (format != "text" && format != "json")
        throw InputError("--format " + format + ": choose text or json");
    } else if (args[i] == "-h" || args[i] == "--help") {
      std::cout
          << "usage: imgsmith probe --summarize [--format text|json] REPORT...\n"
             "\n"
             "One table of imgsmith-probe reports (imgsmith-probe --bench --json), a node a row:\n"
             "GPU, driver, CUDA, host<->device and device-copy bandwidth, FP32 and their share of\n"
             "the GPU's peak, and a verdict: the probe's status, a device copy under 75% of the\n"
             "peak, or a figure under 80% of the median of the nodes with the same GPU.\n"
             "A REPORT is a file holding the JSON line (a `kubectl logs` of the validator\n"
             "DaemonSet that `imgsmith gen --k8s-validator` writes), or a directory of them.\n"
             "\n"
             "Exit status: 0 every node ok; 1 a node is not; 2 bad usage or a file without a "
             "report.\n";
      return 0;
    } else {
      paths.push_back(args[i]);
    }
  }
  if (paths.empty())
    throw InputError("imgsmith probe --summarize needs report files (or a directory of them)");
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : fs::directory_iterator(p, ec))
        if (e.is_regular_file()) in_dir.push_back(e.path().string());
      if (ec) throw InputError(p + ": cannot list it (" + ec.message() + ")");
      std::sort(in_dir.begin(), in_dir.end());
      if (in_dir.empty()) throw InputError(p + ": no report files in it");
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(p);
    }
  }
  std::vector<NodeReport> nodes;
  for (const auto& f : files) {
    std::error_code ec;
    const std::string text = read_small_file(f, kReportFileLimit, ec);
    if (ec) throw InputError(f + ": cannot read it (" + ec.message() + ")");
    nodes.push_back(read_node_report(text, f));
  }
  summarize_nodes(nodes);
  std::cout << (format == "json" ? node_table_json(nodes) : node_table_text(nodes));
  std::cout.flush();
  for (const auto& n : nodes)
    if (!n.ok) return 1;
  return 0;
}

}  // namespace imgsmith
