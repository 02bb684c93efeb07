// gen's walk over the project: how deep it looks. A project's own sources
// sit a few directories down; a tree nested deeper (vendored code, data,
// a checkout inside the project) is not read, so a walk stays bounded.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "image_builder.hpp"
#include "imgsmith/gen/gen.hpp"

using namespace imgsmith;
namespace fs = std::filesystem;

namespace {

// A Python app with one CUDA source `levels` directories below the project.
bool cuda_source_found_at(int levels) {
  testing::TempDir tmp;
  const fs::path dir = fs::path(tmp.path()) / "app";
  fs::create_directories(dir);
  std::ofstream(dir / "requirements.txt") << "numpy\n";
  std::ofstream(dir / "main.py") << "print('hello')\n";
  fs::path nested = dir;
  for (int i = 0; i < levels; ++i) nested /= "level" + std::to_string(i);
  fs::create_directories(nested);
  std::ofstream(nested / "kernel.cu") << "__global__ void k() {}\n";
  return gen::detect_project(dir).has_cuda_sources;
}

}  // namespace

TEST_CASE("gen walk: sources 8 directories down are read, deeper ones are not") {
  CHECK(cuda_source_found_at(0));
  CHECK(cuda_source_found_at(8));
  CHECK_FALSE(cuda_source_found_at(9));
  CHECK_FALSE(cuda_source_found_at(40));
}
