#include "imgsmith/util/worker_threads.hpp"

#include <atomic>
#include <cerrno>
#include <system_error>

namespace imgsmith {
namespace {

// -1: no limit; otherwise how many more starts succeed.
std::atomic<long long> starts_left{-1};

// Whether the test limit refuses this start (and counts it when not).
bool refused_for_testing() {
  long long left = starts_left.load();
  while (left >= 0) {
    if (left == 0) return true;
    if (starts_left.compare_exchange_weak(left, left - 1)) return false;
  }
  return false;
}

}  // namespace

void limit_thread_starts_for_testing(std::optional<std::size_t> allowed) {
  starts_left = allowed ? static_cast<long long>(*allowed) : -1;
}

std::size_t WorkerThreads::start(std::size_t count, const std::function<void()>& work) {
  std::size_t started = 0;
  for (; started < count; ++started) {
    try {
      if (refused_for_testing())
        throw std::system_error(EAGAIN, std::generic_category(), "thread start refused");
      threads_.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // the threads already running share the work
    }
  }
  return started;
}

void WorkerThreads::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

}  // namespace imgsmith
