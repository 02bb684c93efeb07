// The probe carries its driver table, GPU peaks and known GPUs as C++ generated from
// data/ at build time (cmake/probe_tables.cmake): they must say what the
// data files say, row for row, so gen, analyze and the probe never disagree.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "peak_match.hpp"
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

TEST_CASE("probe tables: a device's peaks are found by its CUDA name, as a whole token") {
  using imgsmith::probe_tables::peak_for;
  // Names as CUDA reports them (cuDeviceGetName), and the row each must get.
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA H200", "H200"},
      {"NVIDIA H200 NVL", "H200 NVL"},
      {"NVIDIA GH200 480GB", "GH200"},
      {"NVIDIA GH200 144G HBM3e", "GH200 144G HBM3e"},
      {"NVIDIA H100 80GB HBM3", "H100"},
      {"NVIDIA H100 PCIe", "H100 PCIe"},
      {"NVIDIA H100 NVL", "H100 NVL"},
      {"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"},
      {"NVIDIA A100-SXM4-80GB", "A100"},
      {"NVIDIA A100-PCIE-40GB", "A100-PCIE-40GB"},
      {"NVIDIA A100 80GB PCIe", "A100 80GB PCIe"},
      {"NVIDIA L40S", "L40S"},
      {"NVIDIA L40", "L40"},
      {"NVIDIA L4", "L4"},
      {"NVIDIA GeForce RTX 4090", "RTX 4090"},
      {"NVIDIA A10G", "A10G"},
      {"NVIDIA A10", "A10"},
      {"Tesla T4", "T4"},
      {"NVIDIA H200 (stand-in)", "H200"},
  };
  for (const auto& [device, row] : cases) {
    INFO(device);
    const auto* peak = peak_for(device);
    REQUIRE(peak != nullptr);
    CHECK(std::string(peak->name) == row);
  }
  // Not in the table: no peak, never a neighbour's.
  for (const char* device :
       {"NVIDIA RTX A6000", "NVIDIA L20", "NVIDIA A40", "NVIDIA T400", "NVIDIA H20"}) {
    INFO(device);
    CHECK(peak_for(device) == nullptr);
  }
  CHECK(peak_for("NVIDIA A100-SXM4-40GB")->memory_gbps == 1555);
  CHECK(peak_for("NVIDIA A100 80GB PCIe")->memory_gbps == 1935);
  CHECK(peak_for("NVIDIA H100 NVL")->memory_gbps == 3900);
  CHECK(peak_for("NVIDIA GH200 480GB")->link_gbps == 450);
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

TEST_CASE(
    "probe tables: CUDA releases' drivers and PTX ISA versions are data/cuda-drivers.json's") {
  const auto doc = data_file("cuda-drivers.json");
  const auto number = [](const std::string& x_y, int major_scale, int minor_scale) {
    const auto dot = x_y.find('.');
    return std::stoi(x_y.substr(0, dot)) * major_scale +
           std::stoi(x_y.substr(dot + 1)) * minor_scale;
  };
  using imgsmith::probe_tables::kCudaReleases;
  using imgsmith::probe_tables::kPtxVersions;
  REQUIRE(std::size(kCudaReleases) == doc.at("require_cuda").size());
  std::size_t i = 0;
  for (const auto& [cuda, driver] : doc.at("require_cuda").items()) {
    INFO("CUDA " << cuda);
    CHECK(kCudaReleases[i].cuda == number(cuda, 1000, 10));
    CHECK(kCudaReleases[i++].driver == driver.get<int>());
  }
  REQUIRE(std::size(kPtxVersions) == doc.at("ptx_isa").size());
  i = 0;
  for (const auto& [isa, cuda] : doc.at("ptx_isa").items()) {
    INFO("PTX ISA " << isa);
    CHECK(kPtxVersions[i].isa == number(isa, 10, 1));
    CHECK(kPtxVersions[i++].cuda == number(cuda.get<std::string>(), 1000, 10));
  }
}
