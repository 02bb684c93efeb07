// `imgsmith probe --summarize REPORT...`: a cluster's imgsmith-probe reports
// (imgsmith.probe/v1, as `imgsmith-probe --bench --json` prints them; the
// DaemonSet of `gen --k8s-validator` leaves one in each GPU node's log) as
// one table, a node a row, so that a bad node stands out.
#pragma once

#include <string>
#include <vector>

namespace imgsmith {

struct NodeReport {
  std::string source;  // the file it was read from
  std::string node;    // the report's node, else the file's name
  std::string status;  // the probe's: ok, no-gpu, driver-too-old, error
  std::string reason;
  std::string gpu;  // the first device's name, "xN" for more
  std::string driver, cuda;
  bool has_bench = false;
  std::string bench_error;  // the GPU half did not run
  double h2d_gbps = 0, d2h_gbps = 0, device_copy_gbps = 0, fp32_tflops = 0;
  double h2d_peak_percent = -1, device_copy_peak_percent = -1,
         fp32_peak_percent = -1;  // -1: no peak known
  // Filled by summarize_nodes: "ok", or what is wrong.
  std::string verdict;
  bool ok = false;
};

// The last imgsmith.probe/v1 report in `text` (a file of its own, or a
// `kubectl logs` with the probe's stderr lines around it). Throws InputError
// naming `source` when there is none.
NodeReport read_node_report(const std::string& text, const std::string& source);

// Each node's verdict: the probe's status; then the benchmark against the
// GPU's peak (device copy under 75%) and against the other nodes with the
// same GPU (any bandwidth or FP32 figure under 80% of their median).
void summarize_nodes(std::vector<NodeReport>& nodes);

std::string node_table_text(const std::vector<NodeReport>& nodes);
std::string node_table_json(const std::vector<NodeReport>& nodes);

// The command: reads FILES (a directory stands for the files in it), prints
// the table (format "text" or "json") to stdout. Exit status 0 every node
// ok, 1 a node is not, 2 bad input.
int summarize_main(const std::vector<std::string>& args);

}  // namespace imgsmith
