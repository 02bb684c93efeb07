// A project written from {path, content} pairs into a temporary directory
// (DIR/NAME), for gen's tests: each case states the files gen must see.
#pragma once

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>

#include "image_builder.hpp"

namespace imgsmith::testing {

struct ProjectTree {
  TempDir tmp;
  std::filesystem::path dir;
  explicit ProjectTree(std::initializer_list<std::pair<std::string, std::string>> files,
                       const std::string& name = "proj") {
    dir = std::filesystem::path(tmp.path()) / name;
    std::filesystem::create_directories(dir);
    for (const auto& [path, content] : files) {
      std::filesystem::create_directories((dir / path).parent_path());
      std::ofstream(dir / path, std::ios::binary) << content;
    }
  }
};

}  // namespace imgsmith::testing
