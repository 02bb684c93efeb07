// Will the application's CUDA code run on this GPU? The CUDA binaries it
// will load (the shared libraries under the image's Python site-packages,
// LD_LIBRARY_PATH and the CUDA paths) carry GPU code for some architectures
// only: one with no code for the device fails at its first kernel with "no
// kernel image is available for execution on the device", after the
// container has started and passed torch.cuda.is_available(). The probe
// reads each binary's fatbin headers (fatbin_format.hpp, the rules analyze
// uses) and says so before the application starts.
//
// Reading every library of a large image at each start costs time, so the
// image can carry an inventory written when it was built
// (`imgsmith-probe --write-kernel-inventory`, which gen's Dockerfiles run):
// at start the probe reads it and re-reads only the files whose size or
// modification time changed since.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "imgsmith/kernels/fatbin_format.hpp"
#include "probe_report.hpp"

namespace probe {

// One kind of code for one architecture in a binary, summed over its
// entries (the fields fatbin::code_on_gpu reads).
struct KernelCode {
  imgsmith::KernelKind kind = imgsmith::KernelKind::Sass;
  unsigned arch = 0;
  char variant = ' ';
  unsigned version = 0;  // the highest: ELF ABI of SASS, ISA of PTX
  std::uint64_t entries = 0, bytes = 0, empty_entries = 0;
};

struct BinaryKernels {
  std::string path;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::vector<KernelCode> code;  // sorted by kind, arch, variant
};

// Where the CUDA binaries the application loads are: IMGSMITH_PROBE_KERNEL_PATHS
// (colon-separated) when set; else LD_LIBRARY_PATH's directories, the CUDA
// toolkit's library directories, and the Python site-packages of each
// PATH entry's prefix (a venv's bin/ is on PATH) and of the usual
// prefixes. Only those that exist.
std::vector<std::string> kernel_search_roots();

// The GPU code of the ELF shared library at `path`, from its section
// headers and its fatbin containers' headers; none when it carries none or
// cannot be read.
std::optional<BinaryKernels> read_binary_kernels(const std::string& path);

// Where the application's own programs are: the bin/ directories of PATH
// that are not the system's (/usr/bin, /bin, the CUDA toolkit's): a
// compiled CUDA program in /opt/app/bin carries its kernels itself.
std::vector<std::string> kernel_program_dirs();

// Every CUDA binary under `roots` (files named *.so or *.so.N, searched
// recursively) and in `program_dirs` (every executable file, not
// recursively), each file once, sorted by path.
std::vector<BinaryKernels> scan_kernel_binaries(const std::vector<std::string>& roots,
                                                const std::vector<std::string>& program_dirs);

// The non-empty pieces of `text` between `by`s (PATH, the inventory's lines).
std::vector<std::string> split_list(const std::string& text, char by);

// The inventory file's text, and back (false: not an inventory).
std::string inventory_text(const std::vector<BinaryKernels>& binaries);
bool parse_inventory(const std::string& text, std::vector<BinaryKernels>& out);

// Where the inventory is: IMGSMITH_PROBE_KERNEL_INVENTORY, or
// /etc/imgsmith/kernels.tsv.
std::string kernel_inventory_path();

// `imgsmith-probe --write-kernel-inventory [PATH]`: scans and writes the
// inventory (atomically), says what it found on stderr; the exit status.
int write_kernel_inventory(const std::string& path);

// After run_checks, when they found GPU 0 usable: its compute capability
// against every CUDA binary the application loads, and `command` (the
// program about to run, found through PATH; null: none). A binary with no
// code for it fails the report (Status::NoKernel); one that runs only by
// compiling PTX is a note, and a failure when the driver is older than the
// PTX. With an inventory, its list is the one checked: a library added at
// run time (a volume, a pip install) is not seen, one changed since is
// read again. IMGSMITH_PROBE_KERNEL_CHECK=off skips it.
void check_kernels(Report& r, const char* command);

}  // namespace probe
