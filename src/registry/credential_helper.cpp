// Docker's credential helpers: `docker-credential-NAME get`, the server's
// address on standard input, a JSON answer {"ServerURL", "Username",
// "Secret"} on standard output, as docker/docker-credential-helpers'
// protocol describes. A helper may ask the user or a keychain, so it runs
// only when a registry asks for credentials, and at most once per image.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "client.hpp"
#include "imgsmith/util/error.hpp"

extern char** environ;

namespace imgsmith::registry {
namespace {

constexpr std::size_t kMaxAnswerBytes = 1 << 20;

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0)
      throw EnvironmentError(std::string("cannot make a pipe for a credential helper: ") +
                             std::strerror(errno));
  }
  ~Pipe() { close_both(); }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  void close_both() {
    close_end(0);
    close_end(1);
  }
};

// Writes all of `text` to `fd`, or what the reader takes before it goes
// (EPIPE), without the SIGPIPE that would end imgsmith.
void write_quietly(int fd, const std::string& text) {
  sigset_t pipe_signal, old;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
  bool ok = true;
  for (std::size_t sent = 0; sent < text.size();) {
    const ssize_t n = ::write(fd, text.data() + sent, text.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    sent += static_cast<std::size_t>(n);
  }
  if (!ok && errno == EPIPE) {
    // Take the pending SIGPIPE before the mask is restored.
    const timespec now{0, 0};
    while (sigtimedwait(&pipe_signal, nullptr, &now) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

std::string first_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  if (const auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  return text;
}

}  // namespace

std::string credential_helper_server(const std::string& registry) {
  // Docker keeps Docker Hub's credentials under its v1 address.
  if (registry == "docker.io" || registry == "index.docker.io" ||
      registry == "registry-1.docker.io")
    return "https://index.docker.io/v1/";
  return registry;
}

HelperAnswer ask_credential_helper(const std::string& helper, const std::string& server,
                                   std::chrono::seconds timeout) {
  const std::string program = "docker-credential-" + helper;
  const std::string said = "the credential helper " + program;
  // The name comes from config.json: a path or an option is no helper's name.
  if (helper.empty() || helper.find('/') != std::string::npos || helper.front() == '-')
    throw InputError("config.json names the credential helper '" + helper +
                     "', which is not a helper's name (docker-credential-NAME on PATH)");
  Pipe in, out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
  std::string name = program;
  char get[] = "get";
  char* argv[] = {name.data(), get, nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == ENOENT)
    throw EnvironmentError(said + " is not on PATH (config.json names it for " + server +
                           "); install it, or log in with no helper (docker login stores the "
                           "credentials in config.json's auths then)");
  if (spawned != 0) throw EnvironmentError("cannot run " + said + ": " + std::strerror(spawned));
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  // A helper that exits before it reads says why on its own.
  write_quietly(in.fd[1], server);
  in.close_end(1);

  std::string answer, errors;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fds[i].fd = -1;
        continue;
      }
      // Read to the end, so the helper never blocks on a full pipe; keep
      // no more than an answer can be.
      std::string& into = i == 0 ? answer : errors;
      if (into.size() < kMaxAnswerBytes) into.append(buffer, static_cast<std::size_t>(n));
    }
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    throw InputError(said + " gave no answer for " + server + " in " +
                     std::to_string(timeout.count()) +
                     " s (does it wait for a password or a keychain prompt?); run `" + program +
                     " get` by hand to see");
  const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!exited_ok) {
    // The protocol's "credentials not found" is an answer, not a failure.
    if (answer.find("credentials not found") != std::string::npos ||
        errors.find("credentials not found") != std::string::npos)
      return HelperAnswer{};
    const std::string why = first_line(errors.empty() ? answer : errors);
    throw InputError(said + " failed for " + server + " (" +
                     (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                        : "killed by signal " + std::to_string(WTERMSIG(status))) +
                     (why.empty() ? "" : ": " + why) + "); log in again (docker login " + server +
                     ")");
  }
  nlohmann::json doc = nlohmann::json::parse(answer, nullptr, false);
  if (!doc.is_object() || !doc.contains("Secret") || !doc["Secret"].is_string() ||
      (doc.contains("Username") && !doc["Username"].is_string()))
    throw InputError(said + " answered for " + server +
                     " with something that is not its JSON ({\"Username\", \"Secret\"}); run `" +
                     program + " get` by hand to see");
  HelperAnswer a;
  a.username = doc.value("Username", "");
  a.secret = doc["Secret"].get<std::string>();
  a.found = true;
  return a;
}

}  // namespace imgsmith::registry
