#pragma once

namespace imgsmith {
inline constexpr const char* kVersion = "0.1.0";
}
