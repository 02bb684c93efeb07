#pragma once

#include <cstdlib>
#include <string>

// dive's fixture images (../shared/fixtures/dive), IMGSMITH_FIXTURES first.
inline std::string fixture(const std::string& name) {
  const char* dir = std::getenv("IMGSMITH_FIXTURES");
  return std::string(dir != nullptr ? dir : IMGSMITH_FIXTURES) + "/" + name;
}
