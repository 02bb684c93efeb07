// The data files the model readers and the VRAM estimate carry
// (data/model-dtypes.json, data/vram.json, data/gpus.json), embedded at
// build time by cmake/embed_text.cmake: file name -> text.
#pragma once

#include <map>
#include <string>

namespace imgsmith {

const std::map<std::string, std::string>& models_data();

}  // namespace imgsmith
