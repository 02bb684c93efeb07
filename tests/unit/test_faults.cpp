// Faults that come from outside imgsmith while it works: a save truncated or
// rewritten by another process during the read, a thread the system will
// not start. Each is reported by name or worked around, never a crash and
// never a silent partial result.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <vector>

#include "fixtures.hpp"
#include "image_builder.hpp"
#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/source/byte_stream.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/shared_library.hpp"
#include "imgsmith/util/worker_threads.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;
using Catch::Contains;

namespace {

Image layers_of(std::size_t layers, std::uint64_t bytes_each) {
  Image image;
  for (std::size_t i = 0; i < layers; ++i)
    image.layers.push_back(
        Layer{{file("layer" + std::to_string(i) + "/data", bytes_each, static_cast<char>('a' + i))},
              Encoding::None});
  return image;
}

void shrink(const std::string& path, std::uint64_t size) {
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(size)) == 0);
}

// Lifts the thread limit however the test ends.
struct ThreadLimit {
  explicit ThreadLimit(std::size_t allowed) { limit_thread_starts_for_testing(allowed); }
  ~ThreadLimit() { limit_thread_starts_for_testing(std::nullopt); }
};

}  // namespace

TEST_CASE("faults: a mapped file truncated under the reader reads zeros, then says it changed") {
  TempDir tmp;
  const std::string path = tmp / "save.tar";
  write_file(path, std::string(1 << 20, 'x'));
  SharedFile file(path);
  const char* bytes = file.mapped();
  REQUIRE(bytes != nullptr);
  CHECK(bytes[700000] == 'x');
  file.check_unchanged();  // nothing happened yet
  shrink(path, 4096);
  // Past the new end: without the handler this load is SIGBUS.
  CHECK(bytes[900000] == '\0');
  CHECK_THROWS_AS(file.check_unchanged(), InputError);
  CHECK_THROWS_WITH(file.check_unchanged(), Contains(path) &&
                                                Contains("changed while it was read") &&
                                                Contains("1048576 bytes and is now 4096"));
}

TEST_CASE("faults: a short read inside the size the file had is a change, not an end") {
  TempDir tmp;
  const std::string path = tmp / "save.tar";
  write_file(path, std::string(100000, 'y'));
  SharedFile file(path);
  std::vector<char> buffer(8192);
  CHECK(file.pread(buffer.data(), buffer.size(), 0) == buffer.size());
  // The end of the file as it was: short, and nothing changed.
  CHECK(file.pread(buffer.data(), buffer.size(), 100000 - 100) == 100);
  shrink(path, 50000);
  CHECK_THROWS_WITH(file.pread(buffer.data(), buffer.size(), 48000),
                    Contains("changed while it was read"));
}

TEST_CASE("faults: a file rewritten at the same size is a change") {
  TempDir tmp;
  const std::string path = tmp / "save.tar";
  write_file(path, std::string(5000, 'a'));
  SharedFile file(path);
  // A modification time that differs from the one at open.
  std::filesystem::last_write_time(
      path, std::filesystem::last_write_time(path) + std::chrono::seconds(5));
  CHECK_THROWS_WITH(file.check_unchanged(), Contains("it was rewritten"));
}

TEST_CASE("faults: a save truncated after its index and before its layers is reported, by name") {
  TempDir tmp;
  const std::string path = tmp / "image.tar";
  write_file(path, docker25_save(layers_of(3, 3 << 20)));
  const auto full = std::filesystem::file_size(path);
  for (const bool fed_to_merge : {false, true}) {
    // The first layer is still there whole: the scan reads real entries,
    // then meets the new end (through the mapping: zeros; pread: short).
    write_file(path, docker25_save(layers_of(3, 3 << 20)));
    AnalyzeOptions options;
    options.threads = 1;
    if (!fed_to_merge) options.merge_while_reading_from = UINT64_MAX;
    bool truncated = false;
    options.progress = [&](const std::string&) {
      if (!truncated) shrink(path, full / 3);  // another process, as far as the reader knows
      truncated = true;
    };
    CHECK_THROWS_AS(analyze_image(path, options), InputError);
    truncated = false;
    write_file(path, docker25_save(layers_of(3, 3 << 20)));
    CHECK_THROWS_WITH(analyze_image(path, options),
                      Contains(path) && Contains("changed while it was read"));
  }
}

TEST_CASE("faults: threads the system will not start leave the work to fewer, same result") {
  AnalyzeOptions options;
  options.threads = 4;
  options.merge_while_reading_from = UINT64_MAX;  // every layer read by the pool
  const Analysis all = analyze_image(fixture("test-docker-image.tar"), options);
  for (const std::size_t allowed : {0, 1, 2}) {
    const ThreadLimit limit(allowed);
    const Analysis fewer = analyze_image(fixture("test-docker-image.tar"), options);
    CHECK(fewer.final_bytes == all.final_bytes);
    CHECK(fewer.layers.size() == all.layers.size());
    CHECK(fewer.wasted_bytes == all.wasted_bytes);
  }
  // The pool itself: asked for four, it starts what it may, and the work
  // shared through a counter is all done.
  const ThreadLimit limit(2);
  std::atomic<int> next{0}, done{0};
  const auto work = [&] {
    for (int i = next++; i < 1000; i = next++) ++done;
  };
  WorkerThreads pool;
  CHECK(pool.start(4, work) == 2);
  work();
  pool.join();
  CHECK(done == 1000);
}

TEST_CASE("faults: a first layer merged while read needs one thread, and none is an error, named") {
  AnalyzeOptions options;
  options.threads = 2;
  options.merge_while_reading_from = 0;  // the first layer is fed to the merge
  const ThreadLimit none(0);
  CHECK_THROWS_AS(analyze_image(fixture("test-docker-image.tar"), options), EnvironmentError);
  CHECK_THROWS_WITH(analyze_image(fixture("test-docker-image.tar"), options),
                    Contains("cannot start a thread"));
}

TEST_CASE("faults: a library the machine lacks is the machine's error (exit 2), named") {
  // Not an internal error: main maps EnvironmentError to exit 2 and says
  // what to install.
  try {
    const SharedLibrary missing("libimgsmith-none.so.99", "to test this", "imgsmith-none");
    FAIL("a library that does not exist was loaded");
  } catch (const EnvironmentError& e) {
    CHECK_THAT(e.what(), Catch::Contains("cannot load libimgsmith-none.so.99") &&
                             Catch::Contains("install Debian's imgsmith-none"));
  }
  const SharedLibrary c("libc.so.6", "to test this", "libc6");
  void (*fn)() = nullptr;
  CHECK_THROWS_AS(c.bind(fn, "imgsmith_no_such_symbol"), EnvironmentError);
}
