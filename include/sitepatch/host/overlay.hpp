#pragma once
// A read-only view of a host in which some files hold other text: what a plan would
// write. explain --run reads the log of a run made under try's hook with it, so the
// log's frames meet the lines that ran.
#include <map>
#include <memory>
#include <string>

#include "sitepatch/host/host.hpp"

namespace sitepatch::host {

/// `inner` with the files at the paths of `texts` (absolute) reading as their text.
/// Reads, lists and searches pass through; anything that writes throws.
std::unique_ptr<Host> overlay_host(Host& inner, std::map<std::string, std::string> texts);

}  // namespace sitepatch::host
