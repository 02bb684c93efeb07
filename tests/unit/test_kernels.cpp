// The kernel inventory: CUDA binaries compiled here by nvcc with known
// -gencode sets (tests/kernels/build-fixtures.sh, at build time), the CUDA
// toolkit's own libraries, and hostile bytes. What each fixture must hold is
// stated from its build flags; the toolkit's libraries are checked against
// an independent reading of their .nv_fatbin section through the ELF
// section headers (which the streaming reader never uses).
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "image_builder.hpp"
#include "imgsmith/api/analyze.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/gate/gate.hpp"
#include "imgsmith/kernels/cuda_binary.hpp"
#include "imgsmith/kernels/kernel_inventory.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/error.hpp"
#include "piece_reader.hpp"

using namespace imgsmith;

namespace {

const std::string kFixtures = IMGSMITH_KERNEL_FIXTURES;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// As analyze calls it: the first kKernelHeadBytes, then the rest.
std::optional<CudaBinary> inspect(const std::string& bytes, std::size_t step = 1 << 16,
                                  std::uint64_t claimed_size = 0) {
  const std::size_t head = std::min<std::size_t>(bytes.size(), kKernelHeadBytes);
  testing::PieceReader rest(std::string_view(bytes).substr(head), step);
  return inspect_cuda_binary(std::string_view(bytes).substr(0, head), rest,
                             claimed_size != 0 ? claimed_size : bytes.size());
}

std::optional<CudaBinary> inspect_fixture(const std::string& name) {
  return inspect(read_file(kFixtures + "/" + name));
}

std::set<std::string> names(const CudaBinary& b) {
  std::set<std::string> out;
  for (const auto& c : b.code) out.insert(c.name());
  return out;
}

const KernelCode* code_named(const CudaBinary& b, const std::string& name) {
  for (const auto& c : b.code)
    if (c.name() == name) return &c;
  return nullptr;
}

template <class T>
T read_le(const std::string& d, std::size_t at) {
  T v{};
  if (at + sizeof v <= d.size()) std::memcpy(&v, d.data() + at, sizeof v);
  return v;
}

// The oracle: the sections found by name through the section headers
// (.nv_fatbin by default), their containers walked from each section's first
// 8-aligned offset, each entry's code named as nvcc's -gencode does.
// name -> (entries, bytes).
std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> by_section_headers(
    const std::string& d, const std::set<std::string>& sections = {".nv_fatbin"}) {
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> out;
  const auto shoff = read_le<std::uint64_t>(d, 0x28);
  const auto shentsize = read_le<std::uint16_t>(d, 0x3a);
  const auto shnum = read_le<std::uint16_t>(d, 0x3c);
  const auto shstrndx = read_le<std::uint16_t>(d, 0x3e);
  const auto strtab = read_le<std::uint64_t>(d, shoff + std::size_t{shstrndx} * shentsize + 0x18);
  for (std::size_t i = 0; i < shnum; ++i) {
    const std::size_t sh = shoff + i * shentsize;
    const std::string name(d.c_str() + strtab + read_le<std::uint32_t>(d, sh));
    if (!sections.contains(name)) continue;
    const std::size_t start = read_le<std::uint64_t>(d, sh + 0x18);
    const std::size_t end = start + read_le<std::uint64_t>(d, sh + 0x20);
    std::size_t at = (start + 7) & ~std::size_t{7};
    while (at + 16 <= end) {
      if (read_le<std::uint32_t>(d, at) != 0xBA55ED50) {
        at += 8;  // padding between containers
        continue;
      }
      const std::size_t container_end =
          at + read_le<std::uint16_t>(d, at + 6) + read_le<std::uint64_t>(d, at + 8);
      for (std::size_t e = at + read_le<std::uint16_t>(d, at + 6); e < container_end;) {
        const auto kind = read_le<std::uint16_t>(d, e);
        const auto flags = read_le<std::uint64_t>(d, e + 40);
        std::string code = (kind == 1   ? "compute_"
                            : kind == 2 ? "sm_"
                            : kind == 8 ? "ir_"
                                        : "other_") +
                           std::to_string(read_le<std::uint32_t>(d, e + 28));
        if (flags & 0x100000)
          code += "a";
        else if (flags & 0x200000)
          code += "f";
        auto& [entries, bytes] = out[code];
        ++entries;
        bytes += read_le<std::uint64_t>(d, e + 8);
        e += read_le<std::uint32_t>(d, e + 4) + read_le<std::uint64_t>(d, e + 8);
      }
      at = container_end;
    }
  }
  return out;
}

// Where .nv_fatbin starts (0: nowhere).
std::size_t fatbin_section(const std::string& d) {
  const auto shoff = read_le<std::uint64_t>(d, 0x28);
  const auto shentsize = read_le<std::uint16_t>(d, 0x3a);
  const auto shstrndx = read_le<std::uint16_t>(d, 0x3e);
  const auto strtab = read_le<std::uint64_t>(d, shoff + std::size_t{shstrndx} * shentsize + 0x18);
  for (std::size_t i = 0; i < read_le<std::uint16_t>(d, 0x3c); ++i) {
    const std::size_t sh = shoff + i * shentsize;
    if (std::string(d.c_str() + strtab + read_le<std::uint32_t>(d, sh)) == ".nv_fatbin")
      return read_le<std::uint64_t>(d, sh + 0x18);
  }
  return 0;
}

}  // namespace

TEST_CASE("kernels: each fixture holds the code its build flags asked for", "[kernels]") {
  const std::map<std::string, std::set<std::string>> expected = {
      {"sass.so", {"sm_75", "sm_90"}},
      {"ptx.so", {"compute_80"}},
      {"arch90a.so", {"sm_90a"}},
      {"arch100a.so", {"sm_100a"}},
      {"family100f.so", {"sm_100f"}},
      {"old-torch.so", {"sm_75", "sm_80", "sm_86", "sm_90", "compute_90"}},
      {"new-torch.so", {"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"}},
      {"compressed.so", {"sm_80", "compute_80"}},
      {"plain.so", {"sm_80", "compute_80"}},
      {"ext.cpython-311-x86_64-linux-gnu.so", {"sm_86"}},
      {"app", {"sm_89"}},
      {"kernel.fatbin", {"sm_80", "compute_80"}},
      {"kernel.cubin", {"sm_120"}},
      {"kernel.ptx", {"compute_90"}},
  };
  for (const auto& [file, code] : expected) {
    INFO(file);
    const auto b = inspect_fixture(file);
    REQUIRE(b);
    CHECK(names(*b) == code);
    CHECK(b->warnings == std::vector<std::string>{});
  }
}

TEST_CASE("kernels: forms, compression, PTX ISA and the shared CUDA runtime", "[kernels]") {
  const auto plain = inspect_fixture("plain.so");
  const auto compressed = inspect_fixture("compressed.so");
  REQUIRE(plain);
  REQUIRE(compressed);
  CHECK(plain->form == CudaBinary::Form::Elf);
  CHECK(code_named(*plain, "sm_80")->compressed_entries == 0);
  CHECK(code_named(*plain, "compute_80")->compressed_entries == 0);
  CHECK(code_named(*compressed, "sm_80")->compressed_entries ==
        code_named(*compressed, "sm_80")->entries);
  CHECK(code_named(*compressed, "compute_80")->compressed_entries == 1);
  // The same code, compressed, is stored in fewer bytes.
  CHECK(compressed->sass_bytes() < plain->sass_bytes());
  // nvcc 13 writes PTX ISA 9.0; its SASS is one cubin per module.
  CHECK(plain->newest_ptx_isa() == 90);
  CHECK(cuda_for_ptx_isa(90) == "13.0");
  CHECK(driver_for_cuda("13.0") == 580);
  // -cudart shared names libcudart.so.13; the static runtime names none.
  CHECK(inspect_fixture("ext.cpython-311-x86_64-linux-gnu.so")->cudart == "libcudart.so.13");
  CHECK(driver_for_cudart("libcudart.so.13") == 580);
  CHECK(driver_for_cudart("libcudart.so.12") == 525);
  CHECK(inspect_fixture("app")->cudart.empty());
  CHECK(inspect_fixture("kernel.fatbin")->form == CudaBinary::Form::Fatbin);
  CHECK(inspect_fixture("kernel.cubin")->form == CudaBinary::Form::Cubin);
  CHECK(inspect_fixture("kernel.ptx")->form == CudaBinary::Form::Ptx);
  CHECK(code_named(*inspect_fixture("kernel.ptx"), "compute_90")->version == 90);
}

TEST_CASE("kernels: the stream read equals the section headers' reading, in any piece size",
          "[kernels]") {
  std::vector<std::string> files = {kFixtures + "/old-torch.so", kFixtures + "/compressed.so",
                                    kFixtures + "/app"};
  // The toolkit's own libraries: SASS for several architectures, hundreds
  // of containers, 64-, 80-, 88-, 104- and 112-byte entry headers.
  for (const char* lib : {"libcublas.so.13", "libcudnn_cnn.so.9"}) {
    const std::string path = std::string("/usr/local/cuda/lib64/") + lib;
    if (std::filesystem::exists(path)) files.push_back(path);
  }
  REQUIRE(files.size() == 5);
  for (const auto& path : files) {
    INFO(path);
    const std::string bytes = read_file(path);
    const auto oracle = by_section_headers(bytes);
    REQUIRE(!oracle.empty());
    for (const std::size_t step : {std::size_t{7}, std::size_t{4093}, std::size_t{1} << 20}) {
      if (step == 7 && bytes.size() > 8'000'000) continue;  // a minute for a byte-wise 50 MB
      const auto b = inspect(bytes, step);
      REQUIRE(b);
      std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> read;
      for (const auto& c : b->code) read[c.name()] = {c.entries, c.bytes};
      CHECK(read == oracle);
    }
  }
}

// Read at offsets, as analyze reads an uncompressed layer's entry; what was
// read at offsets in `read_at_bytes`.
std::optional<CudaBinary> inspect_at(const std::string& bytes,
                                     std::uint64_t* read_at_bytes = nullptr,
                                     std::uint64_t claimed_size = 0) {
  const std::size_t head = std::min<std::size_t>(bytes.size(), kKernelHeadBytes);
  testing::AtReader rest(bytes, head, 1 << 16);
  auto b = inspect_cuda_binary(std::string_view(bytes).substr(0, head), rest,
                               claimed_size != 0 ? claimed_size : bytes.size());
  // Nothing is read front to back: the model reader that shares the
  // capture sees the file untouched.
  CHECK(rest.position() == 0);
  if (read_at_bytes != nullptr) *read_at_bytes = rest.bytes_read_at();
  return b;
}

// Everything a reading found, warnings aside, in one comparable text.
std::string summary(const std::optional<CudaBinary>& b) {
  if (!b) return "none";
  std::ostringstream out;
  out << "form " << static_cast<int>(b->form) << ", containers " << b->containers
      << ", fatbin bytes " << b->fatbin_bytes << ", cudart '" << b->cudart << "'\n";
  for (const auto& c : b->code)
    out << c.name() << " v" << c.version << " entries " << c.entries << " bytes " << c.bytes
        << " compressed " << c.compressed_entries << " empty " << c.empty_entries << '\n';
  return out.str();
}

// The two readings of each file agree, and the one at offsets reads less
// than `most` of the file.
void check_both_readings(const std::vector<std::string>& files, double most) {
  for (const auto& path : files) {
    INFO(path);
    const std::string bytes = read_file(path);
    std::uint64_t read_at_bytes = 0;
    const auto at = inspect_at(bytes, &read_at_bytes);
    const auto streamed = inspect(bytes, std::size_t{1} << 20);
    REQUIRE(streamed);
    CHECK(summary(at) == summary(streamed));
    CHECK(static_cast<double>(read_at_bytes) <= most * static_cast<double>(bytes.size()));
  }
}

std::vector<std::string> toolkit_libraries(std::initializer_list<const char*> names) {
  std::vector<std::string> out;
  for (const char* lib : names) {
    const std::string path = std::string("/usr/local/cuda/lib64/") + lib;
    REQUIRE(std::filesystem::exists(path));
    out.push_back(path);
  }
  return out;
}

TEST_CASE(
    "kernels: read at offsets through the section headers, a binary gives what the stream gives",
    "[kernels]") {
  // The fixtures (nvcc's output: a library, a compressed fatbin, an
  // executable, a module without kernels, a shared cudart), then cuBLAS and
  // cuDNN. The reading at offsets steps over the host code: less than half
  // of each toolkit library is read.
  std::vector<std::string> fixtures;
  for (const char* name : {"old-torch.so", "compressed.so", "app", "sass.so", "arch90a.so",
                           "ext.cpython-311-x86_64-linux-gnu.so", "runtime-name.so"})
    fixtures.push_back(kFixtures + "/" + name);
  check_both_readings(fixtures, 1.0);
  // The runtime a library names in its first segment's read-only data (it
  // dlopens it; linked -z noseparate-code, .rodata shares that segment with
  // .dynstr) is the same for both readings.
  const auto named = inspect_at(read_file(kFixtures + "/runtime-name.so"));
  REQUIRE(named);
  CHECK(named->cudart == "libcudart.so.12");
  CHECK(inspect_at(read_file(kFixtures + "/ext.cpython-311-x86_64-linux-gnu.so"))->cudart ==
        "libcudart.so.13");
  check_both_readings(toolkit_libraries({"libcublas.so.13", "libcudnn_cnn.so.9"}), 0.5);
  // A file with no GPU code: its .rodata and .data are searched, its code
  // and tables are not.
  const std::string plain = "/usr/local/cuda/lib64/libcudart.so.13";
  REQUIRE(std::filesystem::exists(plain));
  std::uint64_t read_at_bytes = 0;
  const std::string bytes = read_file(plain);
  CHECK(!inspect_at(bytes, &read_at_bytes));
  CHECK(read_at_bytes < bytes.size() / 2);
}

TEST_CASE("kernels: read at offsets, every section kind that holds containers is found",
          "[kernels][slow]") {
  // [slow]: about a GB of libraries. Containers in cuFFT's .ldata, in
  // cuSPARSE's .rodata (JIT-LTO IR), in cuDNN's .cask_resource and in
  // NCCL's __nv_relfatbin, each found by the rule on what a section is.
  check_both_readings(toolkit_libraries({"libcufft.so.12", "libcusparse.so.12",
                                         "libcudnn_engines_precompiled.so.9", "libnccl.so.2"}),
                      0.9);
}

TEST_CASE("kernels: section headers that are missing or lie: the segments are read instead",
          "[kernels]") {
  const std::string good = read_file(kFixtures + "/old-torch.so");
  const std::string expected = summary(inspect(good));
  REQUIRE(expected != "none");
  // No section table (a stripped one), a table past the end, headers of a
  // size no ELF has, a name table out of range: the program headers stay
  // true, and the segments give the answer.
  for (const auto& [at, value, what] :
       std::vector<std::tuple<std::size_t, std::uint64_t, const char*>>{
           {0x28, 0, "no table"},
           {0x28, 1ull << 40, "table past the end"},
           {0x3a, 8, "8-byte headers"},
           {0x3c, 0, "no headers"},
           {0x3e, 0xfff0, "names out of range"}}) {
    INFO(what);
    std::string bad = good;
    const std::size_t width = at == 0x28 ? 8 : 2;
    std::memcpy(bad.data() + at, &value, width);
    CHECK(summary(inspect_at(bad)) == expected);
  }
  // Cut short anywhere: never a crash.
  for (const std::size_t cut : {std::size_t{64}, good.size() / 3, good.size() - 1}) {
    INFO("cut at " << cut);
    CHECK_NOTHROW(inspect_at(good.substr(0, cut), nullptr, good.size()));
  }
}

TEST_CASE("kernels: NVIDIA's cuBLAS 13 carries what its release notes say", "[kernels]") {
  // CUDA 13.0 dropped Maxwell, Pascal and Volta: cuBLAS ships SASS for
  // Turing to Blackwell and PTX for the newest, compiled by the driver for
  // GPUs after it.
  const std::string path = "/usr/local/cuda/lib64/libcublas.so.13";
  REQUIRE(std::filesystem::exists(path));
  const auto b = inspect(read_file(path));
  REQUIRE(b);
  CHECK(names(*b) == std::set<std::string>{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120",
                                           "compute_120"});
  CHECK(b->containers > 100);
  CHECK(b->fatbin_bytes > 40'000'000);
  CHECK(binary_on_gpu(*b, 89).code == "sm_86");  // L4 runs the Ampere SASS
  CHECK(binary_on_gpu(*b, 103).code == "sm_100");
  CHECK(binary_on_gpu(*b, 121).code == "sm_120");
}

TEST_CASE("kernels: a module without a kernel needs no code on any GPU", "[kernels]") {
  // nvcc's device-link step leaves a module with no kernel beside the real
  // one (the fixtures' first container): counted, marked, never judged.
  const auto sass = inspect_fixture("sass.so");
  REQUIRE(sass);
  CHECK(code_named(*sass, "sm_75")->entries == 2);
  CHECK(code_named(*sass, "sm_75")->empty_entries == 1);
  // cuFFTW's only module is such a stub, built for sm_75: the library runs
  // on every GPU (its FFTs are cuFFT's), and saying it fails on an H100
  // would be a false alarm.
  const std::string path = "/usr/local/cuda/lib64/libcufftw.so.12";
  REQUIRE(std::filesystem::exists(path));
  const auto fftw = inspect(read_file(path));
  REQUIRE(fftw);
  REQUIRE(fftw->code.size() == 1);
  CHECK(fftw->code[0].empty_entries == fftw->code[0].entries);
  for (const unsigned cc : {75u, 90u, 120u}) {
    INFO(cc);
    CHECK(binary_on_gpu(*fftw, cc).verdict == KernelVerdict::Sass);
    CHECK(binary_on_gpu(*fftw, cc).code == "no kernels");
  }
}

TEST_CASE("kernels: NVVM IR for link-time optimisation is named, and runs nowhere as it is",
          "[kernels][slow]") {
  // [slow]: it reads all of cuSPARSE (hundreds of MB). cuSPARSE keeps JIT-LTO fragments (kind 8) in
  // fatbin containers of its .rodata, beside its SASS and PTX.
  const std::string path = "/usr/local/cuda/lib64/libcusparse.so.12";
  REQUIRE(std::filesystem::exists(path));
  const auto b = inspect(read_file(path));
  REQUIRE(b);
  const KernelCode* ir = code_named(*b, "ir_90");
  REQUIRE(ir);
  CHECK(ir->kind == KernelKind::Ir);
  CHECK(b->sass_bytes() + b->ptx_bytes() < b->fatbin_bytes);  // the IR is neither
  CHECK(binary_on_gpu(*b, 90).code == "sm_90");
}

TEST_CASE("kernels: fatbins in a writable segment (the medium code model's .ldata) are read",
          "[kernels][slow]") {
  // [slow]: all of cuFFT (286 MB). Built with the medium code model, cuFFT
  // keeps 24,000 fatbin containers in .ldata, which the linker puts in a
  // writable segment, and one 656-byte container in .nv_fatbin, in the code
  // segment; a separate read-only segment (.lrodata) holds neither.
  const std::string path = "/usr/local/cuda/lib64/libcufft.so.12";
  REQUIRE(std::filesystem::exists(path));
  const std::string bytes = read_file(path);
  const auto oracle = by_section_headers(bytes, {".nv_fatbin", ".ldata"});
  REQUIRE(oracle.contains("sm_90"));
  const auto b = inspect(bytes, std::size_t{1} << 20);
  REQUIRE(b);
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> read;
  for (const auto& c : b->code) read[c.name()] = {c.entries, c.bytes};
  CHECK(read == oracle);
  CHECK(binary_on_gpu(*b, 90).code == "sm_90");
}

TEST_CASE("kernels: the verdict per GPU follows CUDA's compatibility rules", "[kernels]") {
  const auto old_torch = inspect_fixture("old-torch.so");  // SASS 75-90, PTX 90
  const auto new_torch = inspect_fixture("new-torch.so");  // SASS 75-120, PTX 120
  const auto a90 = inspect_fixture("arch90a.so");
  const auto f100 = inspect_fixture("family100f.so");
  const auto ptx80 = inspect_fixture("ptx.so");
  const auto a100 = inspect_fixture("arch100a.so");
  REQUIRE((old_torch && new_torch && a90 && f100 && ptx80 && a100));
  struct Row {
    unsigned cc;
    const char *old_code, *new_code, *a90_code, *f100_code, *ptx_code, *a100_code;
  };
  // By hand: SASS runs on the same major at an equal or higher minor; PTX
  // JITs to anything at or above it; `a` only on its exact GPU.
  const Row rows[] = {
      {75, "sm_75", "sm_75", "", "", "", ""},                                 // T4
      {80, "sm_80", "sm_80", "", "", "compute_80", ""},                       // A100
      {86, "sm_86", "sm_86", "", "", "compute_80", ""},                       // A10
      {87, "sm_86", "sm_86", "", "", "compute_80", ""},                       // Jetson Orin
      {89, "sm_86", "sm_86", "", "", "compute_80", ""},                       // L4, RTX 4090
      {90, "sm_90", "sm_90", "sm_90a", "", "compute_80", ""},                 // H100, H200
      {100, "compute_90", "sm_100", "", "sm_100f", "compute_80", "sm_100a"},  // B200
      {103, "compute_90", "sm_100", "", "sm_100f", "compute_80", ""},         // B300: no sm_100a
      {120, "compute_90", "sm_120", "", "", "compute_80", ""},                // RTX 5090
  };
  for (const Row& r : rows) {
    INFO("compute capability " << r.cc);
    CHECK(binary_on_gpu(*old_torch, r.cc).code == r.old_code);
    CHECK(binary_on_gpu(*new_torch, r.cc).code == r.new_code);
    CHECK(binary_on_gpu(*a90, r.cc).code == r.a90_code);
    CHECK(binary_on_gpu(*f100, r.cc).code == r.f100_code);
    CHECK(binary_on_gpu(*ptx80, r.cc).code == r.ptx_code);
    CHECK(binary_on_gpu(*a100, r.cc).code == r.a100_code);
  }
  const BinaryOnGpu jit = binary_on_gpu(*old_torch, 120);
  CHECK(jit.verdict == KernelVerdict::Jit);
  CHECK(jit.ptx_isa == 90);
  CHECK(jit.jit_bytes == code_named(*old_torch, "compute_90")->bytes);
  // On an H100, the SASS for every other GPU is what a pruned build drops.
  CHECK(binary_on_gpu(*new_torch, 90).other_sass_bytes ==
        new_torch->sass_bytes() - code_named(*new_torch, "sm_90")->bytes);
  CHECK(binary_on_gpu(*a90, 100).verdict == KernelVerdict::None);
}

TEST_CASE("kernels: the image's answer per GPU and the --gpu gate", "[kernels]") {
  KernelInventory inventory;
  inventory.binaries.push_back(
      {"/opt/venv/torch/lib/libtorch_cuda.so", *inspect_fixture("old-torch.so")});
  inventory.binaries.push_back({"/opt/venv/flash_attn_2_cuda.so", *inspect_fixture("arch90a.so")});
  const std::vector<Gpu> gpus = parse_gpu_list({"H100, b200", "RTX-5090,h100"});
  REQUIRE(gpus.size() == 3);
  const auto verdicts = verdicts_per_gpu(inventory, gpus);
  CHECK(verdicts[0].runs());  // H100: SASS for both
  CHECK(verdicts[0].jit.empty());
  CHECK(!verdicts[1].runs());  // B200: torch by JIT, flash-attn's sm_90a not at all
  CHECK(verdicts[1].none == std::vector<std::string>{"/opt/venv/flash_attn_2_cuda.so"});
  CHECK(verdicts[1].jit == std::vector<std::string>{"/opt/venv/torch/lib/libtorch_cuda.so"});
  CHECK(verdicts[1].jit_ptx_isa == 90);

  GateConfig config;
  config.gpus = gpus;
  const Analysis analysis;
  const GateResult gate = evaluate_gate(analysis, config, nullptr, nullptr, nullptr, &inventory);
  REQUIRE(gate.checks.size() == 3);
  CHECK(!gate.passed);
  CHECK(gate.checks[0].passed);
  CHECK(!gate.checks[1].passed);
  CHECK(gate.checks[1].message.find("flash_attn_2_cuda.so") != std::string::npos);
  CHECK(gate.checks[1].message.find("10.0") != std::string::npos);
  // Without the inventory, --gpu cannot pass.
  CHECK(!evaluate_gate(analysis, config).passed);
  CHECK_THROWS_AS(parse_gpu_list({"H100,V100"}), InputError);
  CHECK_THROWS_WITH(parse_gpu_list({" , "}), Catch::Contains("no GPU named"));
}

TEST_CASE("kernels: SASS no target GPU loads is what a build for the targets leaves out",
          "[kernels]") {
  const CudaBinary torch = *inspect_fixture("old-torch.so");  // SASS sm_75 sm_80 sm_86 sm_90
  const auto bytes = [&](const std::string& name) { return code_named(torch, name)->bytes; };
  REQUIRE(torch.sass_bytes() == bytes("sm_75") + bytes("sm_80") + bytes("sm_86") + bytes("sm_90"));
  // H100 (9.0) loads sm_90, and nothing else.
  CHECK(sass_bytes_unused_by(torch, {90}) == bytes("sm_75") + bytes("sm_80") + bytes("sm_86"));
  // L4 (8.9) loads sm_86, the highest of its major at or below it; A100 (8.0) sm_80.
  CHECK(sass_bytes_unused_by(torch, {89, 80}) == bytes("sm_75") + bytes("sm_90"));
  // B200 (10.0) loads none of it (its PTX is compiled instead): all of it goes.
  CHECK(sass_bytes_unused_by(torch, {100}) == torch.sass_bytes());
  const CudaBinary flash = *inspect_fixture("arch90a.so");  // sm_90a: 9.0 alone
  CHECK(sass_bytes_unused_by(flash, {90}) == 0);
  CHECK(sass_bytes_unused_by(flash, {103}) == flash.sass_bytes());
}

TEST_CASE("kernels: with --gpu, the SASS for other GPUs is a finding, NVIDIA's libraries aside",
          "[kernels]") {
  const std::string torch_path = "opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so";
  const std::string ext_path = "app/ext.cpython-311-x86_64-linux-gnu.so";
  const std::string torch = read_file(kFixtures + "/old-torch.so");
  const std::string ext = read_file(kFixtures + "/new-torch.so");
  // NVIDIA's cuBLAS: its SASS for other GPUs is there too, but only NVIDIA
  // can build it again.
  const std::string cublas = read_file("/usr/local/cuda/lib64/libcublas.so.13");
  testing::Image image;
  image.layers.push_back(
      testing::Layer{{testing::file_with(torch_path, torch), testing::file_with(ext_path, ext),
                      testing::file_with("usr/local/cuda/lib64/libcublas.so.13", cublas)}});
  // In a TempDir, so that a failed REQUIRE leaves no 56 MB file behind.
  const testing::TempDir dir;
  const std::string saved = dir / "image.tar";
  testing::write_file(saved, testing::docker_legacy_save(image));
  const auto run = [&](const std::vector<std::string>& gpus, const std::vector<Glob>& ignore) {
    AnalyzeRequest request;
    request.image = saved;
    if (!gpus.empty()) request.gates.gpus = parse_gpu_list(gpus);
    request.ignore = ignore;
    return analyze(request);
  };
  const auto found = [](const AnalyzeResult& r) -> const Finding* {
    for (const Finding& f : r.findings)
      if (f.id == "sass-for-other-gpus") return &f;
    return nullptr;
  };
  const CudaBinary t = *inspect(torch), e = *inspect(ext);
  const auto bytes = [](const CudaBinary& b, const std::string& name) {
    return code_named(b, name)->bytes;
  };
  // H100: torch's sm_75..sm_86; the extension's all but sm_90.
  const AnalyzeResult h100 = run({"H100"}, {});
  const Finding* f = found(h100);
  REQUIRE(f != nullptr);
  const std::uint64_t torch_unused = bytes(t, "sm_75") + bytes(t, "sm_80") + bytes(t, "sm_86");
  const std::uint64_t ext_unused = e.sass_bytes() - bytes(e, "sm_90");
  CHECK(f->bytes == torch_unused + ext_unused);
  REQUIRE(f->paths.size() == 2);
  CHECK(f->paths[0].path == "/" + ext_path);
  CHECK(f->paths[0].bytes == ext_unused);
  CHECK(f->paths[1].path == "/" + torch_path);
  CHECK(f->fix.find("TORCH_CUDA_ARCH_LIST=\"9.0\"") != std::string::npos);
  CHECK(f->fix.find("CMAKE_CUDA_ARCHITECTURES=\"90-real\"") != std::string::npos);
  CHECK(f->info);  // tens of kB beside cuBLAS: for information
  // --ignore of the extension leaves torch alone in it.
  const AnalyzeResult ignored = run({"H100"}, {Glob("/app/**")});
  const Finding* g = found(ignored);
  REQUIRE(g != nullptr);
  CHECK(g->bytes == torch_unused);
  CHECK(g->fix.find("from source") != std::string::npos);  // a framework's wheels
  // No --gpu, no finding.
  const AnalyzeResult no_gpu = run({}, {});
  CHECK(found(no_gpu) == nullptr);
}

TEST_CASE("kernels: no code for a GPU is a defect finding and JIT only another: both name the fix",
          "[kernels]") {
  const std::string torch_path = "opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so";
  const std::string flash_path =
      "opt/venv/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so";
  testing::Image image;
  image.layers.push_back(testing::Layer{
      {testing::file_with(torch_path,
                          read_file(kFixtures + "/old-torch.so")),  // sm_75-90, compute_90
       testing::file_with(flash_path, read_file(kFixtures + "/arch90a.so"))}});  // sm_90a
  const testing::TempDir dir;
  const std::string saved = dir / "image.tar";
  testing::write_file(saved, testing::docker_legacy_save(image));
  const auto run = [&](const std::vector<std::string>& gpus, const std::vector<std::string>& deny,
                       const std::vector<Glob>& ignore) {
    AnalyzeRequest request;
    request.image = saved;
    if (!gpus.empty()) request.gates.gpus = parse_gpu_list(gpus);
    request.gates.deny = deny;
    request.ignore = ignore;
    return analyze(request);
  };
  const auto found = [](const AnalyzeResult& r, const std::string& id) -> const Finding* {
    for (const Finding& f : r.findings)
      if (f.id == id) return &f;
    return nullptr;
  };
  const auto paths = [](const Finding& f) {
    std::vector<std::string> out;
    for (const auto& p : f.paths) out.push_back(p.path);
    return out;
  };
  // No target: every GPU of the table. flash-attn's sm_90a runs on 9.0
  // alone; torch's compute_90 compiles on 10.0, 10.3 and 12.0.
  const AnalyzeResult all = run({}, {}, {});
  const Finding* none = found(all, "no-kernel-for-gpu");
  REQUIRE(none != nullptr);
  CHECK(none->defect);
  CHECK_FALSE(none->info);  // 0 bytes, and still no information-only finding
  CHECK(none->bytes == 0);
  CHECK(paths(*none) == std::vector<std::string>{"/" + flash_path});
  CHECK(none->message.find("RTX-5090 (12.0)") != std::string::npos);
  CHECK(none->message.find("H100 (9.0)") == std::string::npos);
  CHECK(none->message.find("of every GPU in data/gpus.json") != std::string::npos);
  const Finding* jit = found(all, "ptx-jit-only");
  REQUIRE(jit != nullptr);
  CHECK(paths(*jit) == std::vector<std::string>{"/" + torch_path});
  CHECK(jit->message.find("B200 (10.0), B300 (10.3)") != std::string::npos);
  CHECK(jit->message.find("PTX ISA 9.0 (CUDA 13.0, driver 580 or newer)") != std::string::npos);
  // B300's sm_103 is CUDA 12.9's (data/cuda-images.json); torch's first
  // wheels on 12.9 are 2.8's (data/torch-cuda.json).
  CHECK(jit->fix.find("torch >= 2.8 from its CUDA 12.9 wheels") != std::string::npos);

  // H100 alone: every binary has SASS for it.
  const AnalyzeResult h100 = run({"H100"}, {"no-kernel-for-gpu", "ptx-jit-only"}, {});
  CHECK(found(h100, "no-kernel-for-gpu") == nullptr);
  CHECK(found(h100, "ptx-jit-only") == nullptr);
  CHECK(h100.gate.passed);
  // B200: flash-attn fails, torch compiles its PTX.
  const AnalyzeResult b200 = run({"B200"}, {"no-kernel-for-gpu"}, {});
  none = found(b200, "no-kernel-for-gpu");
  REQUIRE(none != nullptr);
  CHECK(none->message.find("for B200 (10.0):") != std::string::npos);
  CHECK(none->message.find("of every GPU") == std::string::npos);
  CHECK(none->fix.find("CUDA 12.8 or newer") != std::string::npos);
  CHECK(none->fix.find("TORCH_CUDA_ARCH_LIST=\"10.0\"") != std::string::npos);
  CHECK(none->fix.find("torch >=") == std::string::npos);  // torch is not the one failing
  jit = found(b200, "ptx-jit-only");
  REQUIRE(jit != nullptr);
  CHECK(jit->fix.find("torch >= 2.7 from its CUDA 12.8 wheels (pip install --index-url "
                      "https://download.pytorch.org/whl/cu128 torch)") != std::string::npos);
  // --deny fails on a defect though it saves no bytes.
  CHECK_FALSE(b200.gate.passed);
  bool denied = false;
  for (const auto& c : b200.gate.checks)
    if (c.rule == "deny:no-kernel-for-gpu")
      denied = !c.passed && c.message.find("no code (SASS or PTX) for B200") != std::string::npos;
  CHECK(denied);
  // --ignore leaves a binary out of it.
  const AnalyzeResult ignored = run({"B200"}, {}, {Glob("**/flash_attn*")});
  CHECK(found(ignored, "no-kernel-for-gpu") == nullptr);
  // A saved report keeps the defect.
  const SavedReport back = report_from_json(report_to_json(b200.report()));
  REQUIRE(back.findings.has_value());
  bool kept = false;
  for (const Finding& f : *back.findings)
    if (f.id == "no-kernel-for-gpu") kept = f.defect && !f.info;
  CHECK(kept);
}

TEST_CASE(
    "kernels: an NVIDIA_REQUIRE_CUDA that admits drivers the image's CUDA runtime "
    "cannot use is a warning",
    "[kernels]") {
  // The extension names libcudart.so.13 (CUDA 13 runs on 580 and newer);
  // the app links its runtime statically and names none.
  const std::string ext_path =
      "opt/venv/lib/python3.11/site-packages/ext.cpython-311-x86_64-linux-gnu.so";
  const std::string ext = read_file(kFixtures + "/ext.cpython-311-x86_64-linux-gnu.so");
  const std::string app = read_file(kFixtures + "/app");
  const auto run = [&](const std::vector<std::string>& env, bool with_ext) {
    testing::Image image;
    image.env = env;
    image.layers.push_back(testing::Layer{{testing::file_with("app/bin/app", app)}});
    if (with_ext) image.layers.push_back(testing::Layer{{testing::file_with(ext_path, ext)}});
    const testing::TempDir dir;
    const std::string saved = dir / "image.tar";
    testing::write_file(saved, testing::docker_legacy_save(image));
    AnalyzeRequest request;
    request.image = saved;
    return analyze(request);
  };
  const auto warned = [](const AnalyzeResult& r) {
    return std::count_if(r.analysis.warnings.begin(), r.analysis.warnings.end(),
                         [](const std::string& w) { return w.starts_with("NVIDIA_REQUIRE_CUDA"); });
  };
  // A CUDA 12.4 base (550 and newer) under a framework of CUDA 13.
  const std::string base_12_4 =
      "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470";
  const AnalyzeResult old_base = run({"PATH=/usr/bin", base_12_4}, true);
  REQUIRE(old_base.kernels);
  const DriverNeed need = driver_need(*old_base.kernels);
  CHECK(need.driver == 580);
  CHECK(need.cudart == "libcudart.so.13");
  CHECK(need.path == "/" + ext_path);
  CHECK(need.require_cuda == "12.4");
  CHECK(need.require_driver == 550);
  REQUIRE(warned(old_base) == 1);
  for (const auto& w : old_base.analysis.warnings)
    if (w.starts_with("NVIDIA_REQUIRE_CUDA"))
      CHECK_THAT(w, Catch::Contains("from 550") && Catch::Contains("580 or newer") &&
                        Catch::Contains("NVIDIA_REQUIRE_CUDA=cuda>=13.0"));
  // The text report says the need, the requirement and where they part.
  std::ostringstream text;
  render_text(old_base.report(), text);
  CHECK_THAT(text.str(), Catch::Contains("driver:    580 or newer (libcudart.so.13") &&
                             Catch::Contains("requires cuda>=12.4 (550 or newer): too old"));
  // The JSON carries both, and reads back.
  const nlohmann::json doc = report_to_json(old_base.report());
  CHECK(doc.at("kernels").at("driver").at("needs") == 580);
  CHECK(doc.at("kernels").at("driver").at("require_driver") == 550);
  const SavedReport saved = report_from_json(doc);
  REQUIRE(saved.kernels);
  CHECK(saved.kernels->require_cuda ==
        base_12_4.substr(std::string("NVIDIA_REQUIRE_CUDA=").size()));
  // Every CUDA 11 minor release has its driver branch (the release notes'
  // table): 11.4 images start on R470, 11.7 on R515.
  for (const auto& [release, driver] :
       std::vector<std::pair<std::string, unsigned>>{{"11.4", 470}, {"11.7", 515}}) {
    INFO(release);
    const AnalyzeResult base = run({"NVIDIA_REQUIRE_CUDA=cuda>=" + release}, true);
    CHECK(driver_need(*base.kernels).require_driver == driver);
    REQUIRE(warned(base) == 1);
    for (const auto& w : base.analysis.warnings)
      if (w.starts_with("NVIDIA_REQUIRE_CUDA"))
        CHECK_THAT(w, Catch::Contains("start on drivers from " + std::to_string(driver)));
  }
  // A CUDA 10.2 base: a release the driver table does not list, of an
  // older major than the runtime's, so still a warning, without a number.
  const AnalyzeResult base_10_2 = run({"NVIDIA_REQUIRE_CUDA=cuda>=10.2"}, true);
  CHECK(driver_need(*base_10_2.kernels).require_driver == 0);
  REQUIRE(warned(base_10_2) == 1);
  for (const auto& w : base_10_2.analysis.warnings)
    if (w.starts_with("NVIDIA_REQUIRE_CUDA"))
      CHECK_THAT(w, Catch::Contains("start on CUDA 10.2 drivers") &&
                        Catch::Contains("NVIDIA_REQUIRE_CUDA=cuda>=13.0"));
  // A CUDA 13.0 base asks for what the code needs: no warning.
  CHECK(warned(run({"NVIDIA_REQUIRE_CUDA=cuda>=13.0"}, true)) == 0);
  // No requirement (a python image with CUDA from wheels): nothing to
  // contradict, and the need is still known.
  const AnalyzeResult no_require = run({"PATH=/usr/bin"}, true);
  CHECK(warned(no_require) == 0);
  CHECK(driver_need(*no_require.kernels).driver == 580);
  // A static runtime alone names no driver: no warning under any base.
  const AnalyzeResult static_only = run({base_12_4}, false);
  CHECK(warned(static_only) == 0);
  CHECK(driver_need(*static_only.kernels).driver == 0);
}

TEST_CASE("kernels: hostile and cut-short binaries are warnings, never a crash", "[kernels]") {
  const std::string good = read_file(kFixtures + "/old-torch.so");
  // Cut anywhere: the file's size as the tar header claims it, its bytes fewer.
  for (const std::size_t cut :
       {std::size_t{10}, std::size_t{64}, std::size_t{600}, good.size() / 2, good.size() - 1}) {
    INFO("cut at " << cut);
    CHECK_NOTHROW(inspect(good.substr(0, cut), 4096, good.size()));
  }
  // A container whose size runs past its segment, and entries that lie.
  const std::size_t magic = fatbin_section(good);
  REQUIRE(magic != 0);
  std::string lying = good;
  const std::uint64_t huge = 1ull << 50;
  std::memcpy(lying.data() + magic + 8, &huge, 8);
  CHECK_NOTHROW(inspect(lying));
  lying = good;
  std::memcpy(lying.data() + magic + 16 + 8, &huge, 8);  // the first entry's payload
  const auto lied = inspect(lying);
  REQUIRE(lied);
  CHECK(!lied->warnings.empty());
  // Program headers pointing outside the file.
  std::string bad_ph = good;
  const std::uint64_t far = 1ull << 40;
  std::memcpy(bad_ph.data() + 32, &far, 8);
  CHECK(!inspect(bad_ph));
  // The magic in data that is no container, and a 32-bit ELF.
  std::string noise(100'000, '\0');
  for (std::size_t i = 0; i + 4 < noise.size(); i += 24)
    std::memcpy(noise.data() + i, "\x50\xed\x55\xba", 4);
  CHECK(!inspect(noise));
  CHECK(!inspect(std::string("\x7f"
                             "ELF\x01\x01\x01",
                             7) +
                 std::string(200, '\0')));
  CHECK(!inspect("not a binary"));
}

TEST_CASE("kernels: which files are read, and every GPU of the table has a compute capability",
          "[kernels]") {
  CHECK(kernel_capture("usr/lib/libcublas.so.13", 50'000'000) == kKernelHeadBytes);
  CHECK(kernel_capture("opt/venv/lib/python3.11/site-packages/x.cpython-311-x86_64-linux-gnu.so",
                       4096) == kKernelHeadBytes);
  CHECK(kernel_capture("app/kernels/k.cubin", 5000) == kKernelHeadBytes);
  CHECK(kernel_capture("app/kernels/k.ptx", 1000) == kKernelHeadBytes);
  CHECK(kernel_capture("app/main.py", 5000) == 0);
  CHECK(kernel_capture("usr/lib/libtiny.so", 10) == 0);
  for (const Gpu& gpu : known_gpus()) {
    INFO(gpu.name);
    CHECK(gpu.compute_capability >= 75);
  }
  CHECK(compute_capability_text(103) == "10.3");
}
