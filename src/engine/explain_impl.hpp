#pragma once
// Private to explain's engine files: the library files a log names, read and parsed once.
#include <map>
#include <string>
#include <vector>

#include "sitepatch/audit/facts.hpp"
#include "sitepatch/engine/explain.hpp"

namespace sitepatch::engine::detail {

struct ParsedFile {
  std::string site_dir;
  std::string text;
  std::vector<std::string> lines;
  audit::ModuleFacts facts;
};

/// Finds, reads (one batch), parses and checks every library frame of `breaks`;
/// returns the files by their path below site-packages.
std::map<std::string, ParsedFile> place_frames(Session& s, std::vector<ExplainedBreak>& breaks);

}  // namespace sitepatch::engine::detail
