// data/cuda-drivers.json, embedded at build time by cmake/embed_text.cmake:
// file name -> text.
#pragma once

#include <map>
#include <string>

namespace imgsmith {

const std::map<std::string, std::string>& kernels_data();

}  // namespace imgsmith
