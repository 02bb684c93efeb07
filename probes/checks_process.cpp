#include "checks_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "bench.hpp"

namespace probe {
namespace {

using Clock = std::chrono::steady_clock;

// ----- the wire: "key=value\n", \ and newlines escaped -------------------

std::string escape(const std::string& v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out.push_back(c);
  }
  return out;
}

std::string unescape(const std::string& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) {
      out.push_back(v[i + 1] == 'n' ? '\n' : v[i + 1]);
      ++i;
    } else {
      out.push_back(v[i]);
    }
  }
  return out;
}

void put(std::string& out, const char* key, const std::string& value) {
  out += key;
  out += '=';
  out += escape(value);
  out += '\n';
}

// A field's value as wire text, and back.
std::string text_of(const std::string& v) { return v; }
std::string text_of(bool v) { return v ? "1" : "0"; }
template <typename Number>
std::string text_of(Number v) {
  return std::to_string(v);
}
void read_into(std::string& field, const std::string& v) { field = v; }
void read_into(bool& field, const std::string& v) { field = v == "1"; }
template <typename Number>
void read_into(Number& field, const std::string& v) {
  field = static_cast<Number>(std::strtoull(v.c_str(), nullptr, 10));
}

// Every field that crosses the pipe, named once for both directions.
template <typename R, typename Visit>
void report_fields(R& r, Visit&& visit) {
  visit("reason", r.reason);
  visit("fix", r.fix);
  visit("driver_version", r.driver_version);
  visit("driver_cuda", r.driver_cuda);
  visit("image_cuda", r.image_cuda);
  visit("visible_nvidia", r.visible_nvidia);
  visit("visible_cuda", r.visible_cuda);
}
template <typename D, typename Visit>
void device_fields(D& d, Visit&& visit) {
  visit("device.name", d.name);
  visit("device.uuid", d.uuid);
  visit("device.compute_capability", d.compute_capability);
  visit("device.memory_total", d.memory_total);
  visit("device.memory_used", d.memory_used);
  visit("device.memory_free", d.memory_free);
  visit("device.has_free", d.has_free);
  visit("device.has_utilization", d.has_utilization);
  visit("device.has_temperature", d.has_temperature);
  visit("device.utilization", d.utilization);
  visit("device.temperature", d.temperature);
  visit("device.compute_mode", d.compute_mode);
  visit("device.mig", d.mig);
}

std::string encode_report(const Report& r) {
  std::string o;
  const auto write = [&](const char* key, const auto& value) { put(o, key, text_of(value)); };
  write("status", static_cast<int>(r.status));
  report_fields(r, write);
  for (const auto& n : r.notes) put(o, "note", n);
  for (const auto& d : r.devices) {
    write("device", d.index);  // starts a device
    device_fields(d, write);
  }
  return o;
}

void decode_report_line(const std::string& key, const std::string& value, Report& r) {
  const auto read = [&](const char* name, auto& field) {
    if (key == name) read_into(field, value);
  };
  if (key == "status") {
    int status = 0;
    read_into(status, value);
    r.status = static_cast<Status>(status);
  } else if (key == "note") {
    r.notes.push_back(value);
  } else if (key == "device") {
    r.devices.emplace_back();
    read_into(r.devices.back().index, value);
  } else if (key.starts_with("device.")) {
    if (!r.devices.empty()) device_fields(r.devices.back(), read);
  } else {
    report_fields(r, read);
  }
}

void write_all(int fd, const std::string& data) {
  for (std::size_t at = 0; at < data.size();) {
    const ssize_t n = ::write(fd, data.data() + at, data.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nothing to tell
    at += static_cast<std::size_t>(n);
  }
}

// The child: the checks, then the benchmark, each followed by its marker.
[[noreturn]] void child(int fd, bool bench, CheckTime when) {
  Report r;
  run_checks(r, when);
  write_all(fd, encode_report(r) + "end=checks\n");
  if (bench) {
    const bool usable = r.status == Status::Ok && !r.devices.empty();
    CudaDriver cu;
    const bool driver = usable && open_driver(cu);
    BenchDevice device;
    if (usable) device = {r.devices[0].name, r.devices[0].mig, r.driver_cuda};
    const BenchOutput b = run_bench(driver ? &cu : nullptr, device);
    std::string o;
    put(o, "bench_json", b.json);
    put(o, "bench_lines", b.lines);
    put(o, "bench_wrong", text_of(b.wrong_results));
    put(o, "bench_wrong_reason", b.wrong_reason);
    write_all(fd, o + "end=bench\n");
  }
  ::_exit(0);
}

// Reads lines from `fd` into `on_line` until a line "end=<marker>", the
// end of the stream, or `seconds`. Returns 1 at the marker, 0 at the end of
// the stream (the child died), -1 at the deadline.
template <typename OnLine>
int read_until(int fd, std::string& pending, const std::string& marker, double seconds,
               OnLine on_line) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (line == "end=" + marker) return 1;
      const auto eq = line.find('=');
      if (eq != std::string::npos) on_line(line.substr(0, eq), unescape(line.substr(eq + 1)));
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return -1;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    pending.append(buf, static_cast<std::size_t>(n));
  }
}

// How the child ended, for a report of one that died: "signal 11".
std::string ending(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 100; ++i) {  // up to a second for it to finish dying
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
      return "exit status " + std::to_string(WEXITSTATUS(status));
    }
    ::usleep(10000);
  }
  return "no exit seen";
}

// Stops the child and reaps it if it dies in time; a child blocked in the
// kernel driver dies when the driver lets go, and is not waited for.
void stop(pid_t pid) {
  ::kill(pid, SIGKILL);
  for (int i = 0; i < 50; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
    ::usleep(10000);
  }
}

}  // namespace

ChecksOutcome run_checks_in_child(bool bench, double timeout, double bench_timeout,
                                  CheckTime when) {
  ChecksOutcome out;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    fail(out.report, Status::Error,
         std::string("cannot start the GPU checks: pipe: ") + std::strerror(errno),
         "the container has run out of file descriptors or memory");
    return out;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    fail(out.report, Status::Error,
         std::string("cannot start the GPU checks: fork: ") + std::strerror(errno),
         "the container has reached its process or memory limit");
    ::close(fds[0]);
    ::close(fds[1]);
    return out;
  }
  if (pid == 0) {
    // The checks die with the probe: a probe killed by its caller (a
    // kubelet's probe timeout, docker stop) leaves no child holding the GPU.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // it died before prctl took effect
    ::close(fds[0]);
    child(fds[1], bench, when);
  }
  ::close(fds[1]);
  std::string pending;
  Report& r = out.report;
  const int checks =
      read_until(fds[0], pending, "checks", timeout,
                 [&](const std::string& k, const std::string& v) { decode_report_line(k, v, r); });
  if (checks != 1) {
    r = Report();
    if (checks < 0) {
      out.checks_timed_out = true;
      stop(pid);
      fail(r, Status::Error,
           "the GPU checks did not finish within " + std::to_string(static_cast<int>(timeout)) +
               " s: the driver is slow to start the GPU (a cold GPU without persistence mode "
               "can take longer than that) or hangs",
           "give it longer (--timeout or IMGSMITH_PROBE_TIMEOUT, e.g. 60); persistence mode on "
           "the host (nvidia-smi -pm 1) shortens driver start-up; if it never finishes, check "
           "the host: nvidia-smi, dmesg");
    } else {
      fail(r, Status::Error, "the GPU checks died inside the driver (" + ending(pid) + ")",
           "check the host: nvidia-smi, dmesg (Xid errors); the driver library mounted into the "
           "container may not match the host's");
    }
    ::close(fds[0]);
    return out;
  }
  if (bench) {
    std::string bench_json;
    const int done = read_until(fds[0], pending, "bench", bench_timeout,
                                [&](const std::string& k, const std::string& v) {
                                  if (k == "bench_json")
                                    bench_json = v;
                                  else if (k == "bench_lines")
                                    out.bench_lines = v;
                                  else if (k == "bench_wrong")
                                    out.bench_wrong_results = v == "1";
                                  else if (k == "bench_wrong_reason")
                                    out.bench_wrong_reason = v;
                                });
    if (done == 1) {
      r.bench_json = bench_json;
    } else {
      const std::string why = done < 0 ? "did not finish within " +
                                             std::to_string(static_cast<int>(bench_timeout)) +
                                             " s (IMGSMITH_PROBE_BENCH_TIMEOUT)"
                                       : "died (" + ending(pid) + ")";
      if (done < 0) stop(pid);
      r.bench_json = "{\"cpu\":null,\"gpu\":{\"error\":\"the benchmark " + why +
                     "\"},\"verdict\":\"the benchmark " + why + "\"}";
      out.bench_lines = "bench: the benchmark " + why + "\n";
      ::close(fds[0]);
      return out;
    }
  }
  ::close(fds[0]);
  // The child ends with what it wrote; its driver state goes with it.
  int status = 0;
  const auto start = Clock::now();
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() - start > std::chrono::seconds(2)) {
      stop(pid);
      break;
    }
    ::usleep(1000);
  }
  return out;
}

}  // namespace probe
