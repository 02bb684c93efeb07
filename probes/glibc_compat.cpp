// GCC 12's static libstdc++ reaches arc4random (new in glibc 2.36) through
// std::random_device, which its exception classes drag in although the
// probe never uses it. Defining it here resolves that reference inside the
// binary, so the probe loads on glibc 2.34 (Ubuntu 22.04, Rocky/UBI 9).
// getrandom has been in glibc since 2.25.
#include <sys/random.h>

#include <cstdint>

extern "C" std::uint32_t arc4random() noexcept {
  std::uint32_t value = 0;
  while (getrandom(&value, sizeof value, 0) != static_cast<long>(sizeof value)) {
  }
  return value;
}
