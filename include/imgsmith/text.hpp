// Small string helpers shared by the parsers (sizes, .dive-ci, Python
// requirements, HTTP headers).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace imgsmith {

// Without leading and trailing whitespace: a view into `s`, so keep `s` alive.
std::string_view trim(std::string_view s);
// ASCII lower case.
std::string to_lower(std::string_view s);
// The pieces between each `sep` ("a,,b" -> {"a", "", "b"}).
std::vector<std::string> split(const std::string& s, const std::string& sep);
std::string join(const std::vector<std::string>& parts, const std::string& sep);

}  // namespace imgsmith
