#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "image_builder.hpp"
#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/source/layer_scan.hpp"
#include "piece_stream.hpp"

namespace imgsmith::testing {

class StringStream : public ByteStream {
 public:
  explicit StringStream(std::string s) : s_(std::move(s)) {}
  std::size_t read(void* buf, std::size_t size) override {
    const std::size_t n = std::min(size, s_.size() - pos_);
    std::memcpy(buf, s_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string s_;
  std::size_t pos_ = 0;
};

// `data` in pieces of random size, 1 to `max_piece` bytes, as a network
// stream might hand it out: every boundary lands somewhere new. With
// `in_memory` the pieces are lent (read in place, as from a mapped file),
// so every way the tar reader can straddle a lent piece and its own
// buffer is met. `data` must outlive the stream.
inline PieceStream random_pieces(std::string_view data, unsigned seed, std::size_t max_piece,
                                 bool in_memory) {
  return PieceStream(
      data,
      [random = std::mt19937(seed), max_piece]() mutable {
        return std::uniform_int_distribution<std::size_t>(1, max_piece)(random);
      },
      in_memory);
}

inline LayerScan scanned(const Layer& layer) {
  StringStream in(layer_tar(layer));
  return scan_layer(in, 0, "test-layer");
}

// Layers scanned, with an image that lists them, for analyze_layers.
struct ScannedStack {
  ResolvedImage image;
  std::vector<std::shared_ptr<const LayerScan>> scans;
};

inline ScannedStack scanned_stack(const std::vector<Layer>& layers) {
  ScannedStack s;
  s.image.format = "test";
  for (const auto& l : layers) {
    s.scans.push_back(std::make_shared<LayerScan>(scanned(l)));
    s.image.layers.push_back(LayerRef{});
  }
  return s;
}

// Merges layers as the analyzer does, without an archive around them.
inline Analysis analyze_stack(const std::vector<Layer>& layers) {
  const ScannedStack s = scanned_stack(layers);
  return analyze_layers(s.image, s.scans, 50);
}

}  // namespace imgsmith::testing
