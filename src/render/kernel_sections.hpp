// The kernels section of a report (the image's CUDA binaries, the GPU code
// each carries, and which GPUs of data/gpus.json run it), as every format
// shows it (internal to src/render).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "imgsmith/kernels/kernel_inventory.hpp"

namespace imgsmith::render_detail {

nlohmann::json kernels_to_json(const KernelInventory& kernels);
// What kernels_to_json wrote (the answers per GPU are derived again).
// Throws nlohmann::json::exception on a value of the wrong type.
KernelInventory kernels_from_json(const nlohmann::json& section);
// At most `top` binaries, largest code first.
void render_kernels_text(const KernelInventory& kernels, std::size_t top, std::ostream& out);
void render_kernels_markdown(const KernelInventory& kernels, std::ostream& out);

}  // namespace imgsmith::render_detail
