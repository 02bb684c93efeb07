// A model's shape as JSON, for the reports' models section: written, and
// read back from a saved report.
#pragma once

#include <nlohmann/json.hpp>

#include "imgsmith/models/model_file.hpp"

namespace imgsmith {

nlohmann::json shape_to_json(const ModelShape& shape);
// Throws nlohmann::json::exception on a missing key or a value of the wrong type.
ModelShape shape_from_json(const nlohmann::json& json);

}  // namespace imgsmith
