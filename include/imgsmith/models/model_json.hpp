// A model's shape as JSON, one way for the text form a layer scan keeps
// (model_file.hpp) and for the reports' models section.
#pragma once

#include <nlohmann/json.hpp>

#include "imgsmith/models/model_file.hpp"

namespace imgsmith {

nlohmann::json shape_to_json(const ModelShape& shape);
// Throws nlohmann::json::exception on a missing key or a value of the wrong type.
ModelShape shape_from_json(const nlohmann::json& json);

}  // namespace imgsmith
