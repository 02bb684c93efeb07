#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "imgsmith/util/byte_list.hpp"

using imgsmith::ByteList;

namespace {

// Deterministic bytes, in pieces of varying length that straddle blocks.
std::string filled(ByteList& list, std::size_t total) {
  std::string expected;
  std::uint32_t state = 12345;
  while (expected.size() < total) {
    state = state * 1103515245u + 12345u;
    std::string piece((state >> 16) % 300 + 1, '\0');
    for (auto& c : piece) c = static_cast<char>((state = state * 1103515245u + 12345u) >> 24);
    list.append(piece);
    expected += piece;
  }
  return expected;
}

std::string read_back(const ByteList& list) {
  ByteList::Reader read(list);
  std::string out;
  // Bytes one at a time and runs, alternately, as the lists' readers do.
  while (!read.at_end()) {
    out.push_back(read.byte());
    const std::size_t run = std::min<std::size_t>(257, list.size() - out.size());
    read.read(run, out);
  }
  return out;
}

struct TmpdirScope {
  explicit TmpdirScope(const char* value) {
    if (const char* old = std::getenv("TMPDIR")) saved = old, had = true;
    ::setenv("TMPDIR", value, 1);
  }
  ~TmpdirScope() {
    if (had)
      ::setenv("TMPDIR", saved.c_str(), 1);
    else
      ::unsetenv("TMPDIR");
  }
  std::string saved;
  bool had = false;
};

}  // namespace

TEST_CASE("byte list: a short list stays in memory and reads back whole") {
  ByteList list;
  const std::string expected = filled(list, 100000);
  CHECK(list.spilled() == 0);
  CHECK(list.size() == expected.size());
  CHECK(read_back(list) == expected);
}

TEST_CASE(
    "byte list: a long list goes to a temporary file, keeps one block, and reads back whole") {
  ByteList list;
  const std::string expected = filled(list, ByteList::kSpillAt * 3 + 12345);
  CHECK(list.spilled() > ByteList::kSpillAt);
  CHECK(list.size() - list.spilled() <= ByteList::kBlock);
  CHECK(read_back(list) == expected);
  // Moved, it is the same list.
  ByteList moved = std::move(list);
  CHECK(read_back(moved) == expected);
}

TEST_CASE("byte list: where no temporary file can be made, the list stays in memory") {
  TmpdirScope scope("/nonexistent/imgsmith-test");
  ByteList list;
  const std::string expected = filled(list, ByteList::kSpillAt * 2 + 7);
  CHECK(list.spilled() == 0);
  CHECK(read_back(list) == expected);
}
