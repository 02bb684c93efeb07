// The files a repository hands imgsmith: imgsmith.toml (with its [gen]
// table) and dive's .dive-ci YAML. Bad files end in InputError naming the
// file, never a crash.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_support.hpp"
#include "imgsmith/gate/gate.hpp"
#include "imgsmith/util/error.hpp"
#include "policy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const bool toml = in.ConsumeBool();
  const std::string text = in.ConsumeRemainingBytesAsString();
  const auto dir = fuzz::scratch();
  try {
    if (toml) {
      fuzz::write_file(dir / "imgsmith.toml", text);
      imgsmith::load_policy((dir / "imgsmith.toml").string());
      imgsmith::load_gen_policy(dir.string());
    } else {
      fuzz::write_file(dir / ".dive-ci", text);
      imgsmith::GateConfig gate;
      imgsmith::load_dive_ci((dir / ".dive-ci").string(), gate);
    }
  } catch (const imgsmith::InputError&) {
  }
  return 0;
}
