// The checks and the benchmark run in a child process that the probe kills
// when it overruns its time: a thread cannot be abandoned across execve, and
// a driver blocked in the kernel (a cold multi-GPU node without persistence
// mode can take seconds in cuInit) would otherwise hold the application's
// start. The child sends its findings back through a pipe, line by line.
#pragma once

#include <string>

#include "probe_report.hpp"

namespace probe {

struct ChecksOutcome {
  Report report;  // the checks' findings (and the benchmark's JSON when run)
  bool checks_timed_out = false;
  std::string bench_lines;  // the benchmark's lines for people
  bool bench_wrong_results = false;
  std::string bench_wrong_reason;
};

// Runs run_checks() and, when `bench`, run_bench() on GPU 0 in a child
// process: the checks bounded by `timeout` seconds, the benchmark by
// `bench_timeout` more. Nothing of the GPU stays in this process.
ChecksOutcome run_checks_in_child(bool bench, double timeout, double bench_timeout, CheckTime when);

}  // namespace probe
