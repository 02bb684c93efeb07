#include "imgsmith/source/entry_listing.hpp"

#include <cstring>

namespace imgsmith {
namespace {

// SplitMix64's finaliser: a bijection that spreads every input bit over the
// output (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", 2014).
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The bytes as little-endian 64-bit words, each folded in after the last
// (the length first, so that "ab" + "" and "a" + "b" differ).
void fold(std::uint64_t& h, std::string_view bytes) {
  h = mix(h ^ bytes.size());
  std::size_t at = 0;
  for (; at + 8 <= bytes.size(); at += 8) {
    std::uint64_t word = 0;
    for (std::size_t i = 0; i < 8; ++i)
      word |= std::uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
    h = mix(h ^ word);
  }
  std::uint64_t tail = 0;
  for (std::size_t i = 0; at + i < bytes.size(); ++i)
    tail |= std::uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  h = mix(h ^ tail ^ 0x80);
}

constexpr std::uint64_t kSeeds[2] = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL};

}  // namespace

void EntryListing::add(std::uint8_t type, std::string_view path, std::uint64_t size,
                       std::string_view link) {
  for (int lane = 0; lane < 2; ++lane) {
    std::uint64_t h = mix(kSeeds[lane] ^ type);
    fold(h, path);
    h = mix(h ^ size);
    fold(h, link);
    sums_[lane] += h;
  }
  ++count_;
}

std::string EntryListing::digest() const {
  if (count_ == 0) return {};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "listing:";
  for (const std::uint64_t word : {mix(sums_[0] ^ count_), mix(sums_[1] ^ mix(count_))})
    for (int shift = 60; shift >= 0; shift -= 4) out.push_back(kHex[(word >> shift) & 0xf]);
  return out;
}

}  // namespace imgsmith
