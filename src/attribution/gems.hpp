// Ruby gems as RubyGems and Bundler lay them out in a gem home
// (data/binary-packages.json "gems"): which gem a path under a home is part
// of, by its place there alone (no file is read), and which files are the
// download cache.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace imgsmith::attribution_detail {

// A gem's full name split: "nokogiri-1.15.4-x86_64-linux" is nokogiri,
// 1.15.4 and x86_64-linux. The version is the first segment after the
// name's first that starts with a digit; none: the whole is the name.
struct GemName {
  std::string_view name, version, platform;
};
GemName split_gem_name(std::string_view full_name);

// The subdirectories a directory must hold to be a gem home
// ("specifications", "gems").
const std::vector<std::string>& gem_home_holds();

// What a path inside a gem home is, given the part after "HOME/": the full
// name of the gem whose file it is ("gems/rack-3.0.8/lib/rack.rb" ->
// "rack-3.0.8", "specifications/rack-3.0.8.gemspec" -> "rack-3.0.8"), or ""
// for a file of no gem (a cached archive among them).
std::string_view gem_of(std::string_view in_home);
// Whether it is a downloaded archive in the home's cache ("cache/rack-3.0.8.gem").
bool is_gem_cache(std::string_view in_home);
// The directory of a home that holds the cache ("cache").
const std::string& gem_cache_dir();
// Who installs gems ("gem").
const std::string& gem_installer();

}  // namespace imgsmith::attribution_detail
