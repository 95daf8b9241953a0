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

/// Checks `p` against `file`: the innermost function holding its line must bear the
/// log's name, and the line must read as the log shows it; sets mapped or stale.
void check_frame(PlacedFrame& p, const ParsedFile& file);

/// What the fixes leave of a chain: removed (through a replaced body), disabled (inside
/// a disabled function), or remains; `by` names the fix.
FollowUp::State left_by(const audit::Chain& c, const std::vector<Fix>& fixes, std::string& by,
                        std::string* by_code = nullptr);

/// Why a library frame's file (`rel`, below a site folder) is not read: it leaves the
/// site folder or is no `.py`; "" when it may be read (explain_sources.cpp).
std::string library_source_problem(const std::string& rel);

/// For each of the user frames' files, why it is not read ("" when it may be): not an
/// absolute `.py` path, or leading to no Python source, or (root, this machine) in a
/// folder another user could change.
std::vector<std::string> user_source_problems(Session& s, const std::vector<std::string>& paths);

/// Walks from each user function the breaks enter a library from, when its file is
/// readable through the host (explain_user.cpp).
void walk_user_code(Session& s, const audit::RuleSet& rules, Explanation& e);

/// A fix for each chain from the user's code that no fix answers yet (the breaks the
/// log does not show): disable on the library function the user's code calls.
void fix_ahead(Session& s, Explanation& e);

/// What torch.compiler.disable on `fn` costs, in words.
std::string disable_cost(const std::string& fn);

/// `@torch.compiler.disable` on `qualified` in `module`, its cost said; `why` is the caller's.
Fix disable_fix(const std::string& module, const std::string& qualified);

/// Marks every chain of every walk by what `e.fixes` leave of it.
void mark_user_chains(Explanation& e);

}  // namespace sitepatch::engine::detail
