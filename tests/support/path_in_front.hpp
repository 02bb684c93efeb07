// PATH with a directory in front for as long as the object lives: how a
// test puts its own programs (a fake credential helper) before the system's.
#pragma once

#include <cstdlib>
#include <string>

namespace imgsmith::testing {

class PathInFront {
 public:
  explicit PathInFront(const std::string& dir) {
    const char* old = std::getenv("PATH");
    old_ = old == nullptr ? "" : old;
    ::setenv("PATH", (dir + ":" + old_).c_str(), 1);
  }
  ~PathInFront() { ::setenv("PATH", old_.c_str(), 1); }
  PathInFront(const PathInFront&) = delete;
  PathInFront& operator=(const PathInFront&) = delete;

 private:
  std::string old_;
};

}  // namespace imgsmith::testing
