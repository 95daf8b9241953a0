#pragma once
// The guides the binary carries, for `sitepatch help --guide TOPIC` (guides.cpp).
#include <string>
#include <vector>

#include "context.hpp"

namespace sitepatch::cli {

/// The topics: each guide's file name without .md ("upgrades", "explain", ...).
std::vector<std::string> guide_names();

/// Prints guide `topic` (through the pager on a terminal), or the list of topics for "";
/// throws a usage error naming the nearest topic for an unknown one.
int show_guide(const GlobalOptions& g, const std::string& topic);

}  // namespace sitepatch::cli
