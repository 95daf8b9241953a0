#pragma once
// Where a calibration of an environment is kept on this machine
// ($XDG_CACHE_HOME/sitepatch/calibration/): rules --calibrate's answer and the probe of
// what dynamo holds as a constant (calibrate_guards.cpp).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine::detail {

/// The torch version installed in the environment ("" when none).
std::string torch_version(Session& s);

/// $XDG_CACHE_HOME/sitepatch/calibration/<environment>-: what every kept calibration of
/// this environment's file name starts with; "" when there is no home to keep it in.
std::string cache_prefix(Session& s);

/// <prefix><what><torch version>.json ("" when there is no home or no torch).
std::string cache_file(Session& s, const std::string& version, const std::string& what = "");

/// Writes `j` to `file` atomically, only in a folder nobody else can swap or write; a
/// warning (and nothing kept) otherwise. Nothing for "".
void keep(const std::string& file, const nlohmann::json& j);

/// What `file` keeps, when it is safe to read and holds a JSON object.
std::optional<nlohmann::json> read_kept(const std::string& file);

}  // namespace sitepatch::engine::detail
