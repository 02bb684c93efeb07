// gen on a project made of the fuzzer's text: requirements.txt,
// pyproject.toml, environment.yml, CMakeLists.txt, a Python entry point, a
// module it may import (its command-line options are read there too) and
// Cog's cog.yaml.
// A project gen cannot read ends in InputError naming the file and line.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_support.hpp"
#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const auto dir = fuzz::scratch() / "project";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir);
  for (const char* name : {"requirements.txt", "pyproject.toml", "environment.yml",
                           "CMakeLists.txt", "main.py", "cog.yaml", "cli_args.py"})
    if (in.ConsumeBool()) fuzz::write_file(dir / name, in.ConsumeRandomLengthString(4096));
  if (in.ConsumeBool()) fuzz::write_file(dir / "kernel.cu", "__global__ void k() {}\n");
  try {
    (void)imgsmith::gen::detect_project(dir);
  } catch (const imgsmith::InputError&) {
  }
  return 0;
}
