// Threads for work that any number of them can share (each takes the next
// piece from a common counter), started as far as the system allows: a
// thread that cannot start (pthread_create's EAGAIN under a process or
// memory limit) leaves the work to fewer threads instead of terminating
// the process, which a std::thread left joinable by an exception would.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

namespace imgsmith {

class WorkerThreads {
 public:
  WorkerThreads() = default;
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;
  // Joins whatever still runs, so an exception between start() and join()
  // never leaves a joinable thread behind.
  ~WorkerThreads() { join(); }

  // Starts up to `count` threads, each running `work`. Stops at the first
  // thread the system refuses and returns how many run. The caller then
  // does the work on its own thread too (or throws when it cannot).
  std::size_t start(std::size_t count, const std::function<void()>& work);
  void join();

 private:
  std::vector<std::thread> threads_;
};

// For tests: the next `allowed` thread starts succeed and every later one
// fails as the system's refusal does; nullopt ends the limit. Process-wide.
void limit_thread_starts_for_testing(std::optional<std::size_t> allowed);

}  // namespace imgsmith
