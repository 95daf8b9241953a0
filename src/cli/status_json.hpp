#pragma once
#include "context.hpp"

namespace sitepatch::cli {

/// verify's and list's per-patch status as JSON.
nlohmann::json status_json(const engine::PatchStatus& s);
Paint paint_for(engine::FileState s);

}  // namespace sitepatch::cli
