// gzip layers decoded (internal to src/source): with ISA-L's inflate where
// the build found libisal (igzip decodes the same data 3-4 times as fast as
// zlib, and gzip layers are most of what analyze reads), else with zlib.
// Not through libarchive: its gzip filter never checks a member's trailer.
#pragma once

#include <memory>
#include <string>

#include "imgsmith/source/byte_stream.hpp"

namespace imgsmith::detail {

// The decoded bytes of a gzip stream of one or more members (estargz is a
// series of them), each member's CRC-32 and length checked against its
// trailer. After the last member, bytes that are no gzip header end the
// stream, as gzip and libarchive treat them. Throws InputError naming
// `label` on a corrupt or cut-short stream.
class GzipStream final : public ByteStream {
 public:
  GzipStream(ByteStream& in, std::string label);
  ~GzipStream() override;
  std::size_t read(void* buf, std::size_t size) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace imgsmith::detail
