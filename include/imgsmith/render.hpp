// Renderers: the analysis as a human table or as imgsmith.analysis/v1 JSON.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "imgsmith/analysis.hpp"
#include "imgsmith/gate.hpp"

namespace imgsmith {

nlohmann::json analysis_to_json(const Analysis& analysis, const GateResult& gate);
void render_text(const Analysis& analysis, const GateResult& gate, std::ostream& out);

}  // namespace imgsmith
