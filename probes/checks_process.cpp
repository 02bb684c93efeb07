#include "checks_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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
void put(std::string& out, const char* key, unsigned long long value) {
  put(out, key, std::to_string(value));
}

std::string encode_report(const Report& r) {
  std::string o;
  put(o, "status", static_cast<unsigned long long>(r.status));
  put(o, "reason", r.reason);
  put(o, "fix", r.fix);
  put(o, "driver_version", r.driver_version);
  put(o, "driver_cuda", static_cast<unsigned long long>(r.driver_cuda));
  put(o, "image_cuda", r.image_cuda);
  put(o, "visible_nvidia", r.visible_nvidia);
  put(o, "visible_cuda", r.visible_cuda);
  for (const auto& n : r.notes) put(o, "note", n);
  for (const auto& d : r.devices) {
    put(o, "device", static_cast<unsigned long long>(d.index));  // starts a device
    put(o, "device.name", d.name);
    put(o, "device.uuid", d.uuid);
    put(o, "device.compute_capability", d.compute_capability);
    put(o, "device.memory_total", d.memory_total);
    put(o, "device.memory_used", d.memory_used);
    put(o, "device.memory_free", d.memory_free);
    put(o, "device.has_free", d.has_free ? 1 : 0);
    put(o, "device.has_nvml", d.has_nvml ? 1 : 0);
    put(o, "device.utilization", d.utilization);
    put(o, "device.temperature", d.temperature);
    put(o, "device.compute_mode", d.compute_mode);
    put(o, "device.mig", d.mig ? 1 : 0);
  }
  return o;
}

bool decode_report_line(const std::string& key, const std::string& value, Report& r) {
  const auto number = [&] { return std::strtoull(value.c_str(), nullptr, 10); };
  if (key == "status") {
    r.status = static_cast<Status>(number());
  } else if (key == "reason") {
    r.reason = value;
  } else if (key == "fix") {
    r.fix = value;
  } else if (key == "driver_version") {
    r.driver_version = value;
  } else if (key == "driver_cuda") {
    r.driver_cuda = static_cast<int>(number());
  } else if (key == "image_cuda") {
    r.image_cuda = value;
  } else if (key == "visible_nvidia") {
    r.visible_nvidia = value;
  } else if (key == "visible_cuda") {
    r.visible_cuda = value;
  } else if (key == "note") {
    r.notes.push_back(value);
  } else if (key == "device") {
    r.devices.emplace_back();
    r.devices.back().index = static_cast<int>(number());
  } else if (key.starts_with("device.") && !r.devices.empty()) {
    Device& d = r.devices.back();
    const std::string field = key.substr(7);
    if (field == "name")
      d.name = value;
    else if (field == "uuid")
      d.uuid = value;
    else if (field == "compute_capability")
      d.compute_capability = value;
    else if (field == "memory_total")
      d.memory_total = number();
    else if (field == "memory_used")
      d.memory_used = number();
    else if (field == "memory_free")
      d.memory_free = number();
    else if (field == "has_free")
      d.has_free = number() != 0;
    else if (field == "has_nvml")
      d.has_nvml = number() != 0;
    else if (field == "utilization")
      d.utilization = static_cast<unsigned>(number());
    else if (field == "temperature")
      d.temperature = static_cast<unsigned>(number());
    else if (field == "compute_mode")
      d.compute_mode = value;
    else if (field == "mig")
      d.mig = number() != 0;
    else
      return false;
  } else {
    return false;
  }
  return true;
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
[[noreturn]] void child(int fd, bool bench) {
  Report r;
  run_checks(r);
  write_all(fd, encode_report(r) + "end=checks\n");
  if (bench) {
    const bool usable = r.status == Status::Ok && !r.devices.empty();
    CudaDriver cu;
    const bool driver = usable && open_driver(cu);
    BenchDevice device;
    if (usable) device = {r.devices[0].name, r.devices[0].mig};
    const BenchOutput b = run_bench(driver ? &cu : nullptr, device);
    std::string o;
    put(o, "bench_json", b.json);
    put(o, "bench_lines", b.lines);
    put(o, "bench_wrong", b.wrong_results ? 1 : 0);
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

ChecksOutcome run_checks_in_child(bool bench, double timeout, double bench_timeout) {
  ChecksOutcome out;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    fail(out.report, Status::Error,
         std::string("cannot start the GPU checks: pipe: ") + std::strerror(errno),
         "the container has run out of file descriptors or memory");
    return out;
  }
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
    ::close(fds[0]);
    child(fds[1], bench);
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
               " s (the driver hangs in cuInit)",
           "check the host: nvidia-smi, dmesg; persistence mode (nvidia-smi -pm 1) shortens "
           "driver start-up");
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
      if (done < 0) {
        out.bench_timed_out = true;
        stop(pid);
      }
      r.bench_json = "{\"cpu\":null,\"gpu\":{\"error\":\"the benchmark " + why +
                     "\"},\"verdict\":\"the benchmark " + why + "\"}";
      out.bench_lines = "bench: the benchmark " + why + "\n";
      out.bench_wrong_results = false;
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
