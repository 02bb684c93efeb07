#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

#include "imgsmith/render/renderers.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {
namespace {

void write_all(int fd, const std::string& content, const std::string& label) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw OutputError(label + ": cannot write: " + std::strerror(errno) +
                        "; check where it goes (a full disk, a closed pipe)" +
                        (fd == STDOUT_FILENO ? " or write it with -o FILE" : ""));
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

void check_standard_output() {
  errno = 0;
  std::cout.flush();
  if (std::cout) return;
  const int error = errno;
  throw OutputError(std::string("standard output: cannot write the report") +
                    (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) +
                    "; check where it goes (a full disk, a closed pipe) or write it with -o FILE");
}

void write_output(const std::string& path, const std::string& content) {
  if (path == "-") {
    // Straight to the descriptor, after whatever the stream holds: a
    // failed write keeps its errno to report.
    check_standard_output();
    write_all(STDOUT_FILENO, content, "standard output");
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(path + ": cannot open for writing: " + std::strerror(errno));
    try {
      write_all(fd, content, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    return;
  }
  std::string tmp = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    throw InputError(path + ": cannot create the output file: " + std::strerror(errno) +
                     "; check that its directory exists and is writable");
  try {
    write_all(fd, content, path);
    if (::fsync(fd) != 0) throw OutputError(path + ": cannot write: " + std::strerror(errno));
    ::fchmod(fd, 0644);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw OutputError(path + ": cannot write: " + why);
  }
}

CLI::Option* add_format_option(CLI::App& command, std::string& format, bool for_diff) {
  return command.add_option("--format", format, "Report format:" + format_help(for_diff))
      ->type_name("FORMAT")
      ->check(CLI::Validator(
          [for_diff](const std::string& name) { return format_error(name, for_diff); }, ""));
}

namespace {

// FORMAT=FILE, both parts non-empty.
std::optional<ExtraReport> split_report(const std::string& value) {
  const auto eq = value.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) return std::nullopt;
  return ExtraReport{value.substr(0, eq), value.substr(eq + 1)};
}

std::string report_usage(const std::string& value) {
  return "--report '" + value + "': give FORMAT=FILE, e.g. html=report.html";
}

}  // namespace

CLI::Option* add_report_option(CLI::App& command, std::vector<std::string>& reports,
                               bool for_diff) {
  return command
      .add_option("--report", reports,
                  "Also write the report as FORMAT to FILE (repeatable: --report\n"
                  "markdown=comment.md --report html=report.html), from the same run")
      ->type_name("FORMAT=FILE")
      ->check(CLI::Validator(
          [for_diff](const std::string& value) {
            const auto report = split_report(value);
            return report ? format_error(report->format, for_diff) : report_usage(value);
          },
          ""));
}

std::vector<ExtraReport> extra_reports(const std::vector<std::string>& reports) {
  std::vector<ExtraReport> out;
  for (const auto& value : reports) {
    auto report = split_report(value);
    if (!report) throw InputError(report_usage(value));
    out.push_back(std::move(*report));
  }
  return out;
}

}  // namespace imgsmith
