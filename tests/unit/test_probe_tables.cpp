// The probe carries its driver table, GPU peaks and known GPUs as C++ generated from
// data/ at build time (cmake/probe_tables.cmake): they must say what the
// data files say, row for row, so gen, analyze and the probe never disagree.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "probe_tables.hpp"

namespace {

nlohmann::json data_file(const std::string& name) {
  std::ifstream in(std::string(IMGSMITH_SOURCE_DIR) + "/data/" + name);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("probe tables: the minimum drivers are data/cuda-drivers.json's") {
  const auto drivers = data_file("cuda-drivers.json").at("minimum_driver");
  using imgsmith::probe_tables::kMinimumDrivers;
  REQUIRE(std::size(kMinimumDrivers) == drivers.size());
  for (const auto& row : kMinimumDrivers) {
    INFO("CUDA " << row.cuda_major);
    const auto it = drivers.find(std::to_string(row.cuda_major));
    REQUIRE(it != drivers.end());
    CHECK(row.driver == it->get<int>());
  }
}

TEST_CASE("probe tables: the GPU peaks are data/gpu-peaks.json's, in its order") {
  const auto peaks = data_file("gpu-peaks.json").at("peaks");
  using imgsmith::probe_tables::kPeaks;
  REQUIRE(std::size(kPeaks) == peaks.size());
  for (std::size_t i = 0; i < peaks.size(); ++i) {
    INFO(peaks[i].dump());
    CHECK(std::string(kPeaks[i].name) == peaks[i].at("name").get<std::string>());
    CHECK(kPeaks[i].memory_gbps == peaks[i].at("memory_gbps").get<double>());
    CHECK(kPeaks[i].fp32_tflops == peaks[i].at("fp32_tflops").get<double>());
    CHECK(kPeaks[i].link_gbps == peaks[i].at("link_gbps").get<double>());
  }
  // Matched by substring in this order: a name must come before any name it contains.
  for (std::size_t i = 0; i < peaks.size(); ++i)
    for (std::size_t j = i + 1; j < peaks.size(); ++j)
      CHECK(peaks[j].at("name").get<std::string>().find(peaks[i].at("name").get<std::string>()) ==
            std::string::npos);
}

TEST_CASE("probe tables: the known GPUs are data/gpus.json's, in its order") {
  const auto gpus = data_file("gpus.json").at("gpus");
  using imgsmith::probe_tables::kKnownGpus;
  REQUIRE(std::size(kKnownGpus) == gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    INFO(gpus[i].dump());
    CHECK(std::string(kKnownGpus[i].name) == gpus[i].at("name").get<std::string>());
    CHECK(kKnownGpus[i].memory_gb == gpus[i].at("memory_gb").get<double>());
  }
}
