// The models section of a report (the model files found, their parameters
// and the GPU memory each needs), as every format shows it (internal to
// src/render).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "imgsmith/models/vram.hpp"

namespace imgsmith::render_detail {

nlohmann::json models_to_json(const std::vector<ModelReport>& models);
// Throws nlohmann::json::exception on a value of the wrong type.
std::vector<ModelReport> models_from_json(const nlohmann::json& list);
void render_models_text(const std::vector<ModelReport>& models, std::ostream& out);
void render_models_markdown(const std::vector<ModelReport>& models, std::ostream& out);

}  // namespace imgsmith::render_detail
