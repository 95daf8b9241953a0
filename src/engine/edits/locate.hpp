#pragma once
// src/engine/edits/: one edit against its module, asked by plan, apply and verify; none
// of it writes. Where the edit's file is (locate) and where a re-exported target is
// defined (follow), which edit wrote lines that fail to parse or compile (result_check),
// names new code uses that the module never binds (unbound), an edit of code that never
// runs (abstract.cpp), whether an applied edit is still in its file (edit_presence.cpp)
// and whether its module still imports (module_health.cpp).
//
// Where each edit's file is: module or file name -> one file inside site-packages,
// read once. Refuses paths that leave site-packages, by name or by symlink.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine::detail {

struct Located {
  bool ok = false;
  std::string error;     // why not, when !ok
  std::string rel;       // relative to site_dir
  std::string site_dir;
  std::string path;      // absolute
  std::shared_ptr<const std::string> content;  // shared by every edit of the file
};

/// Every file `locate` reads for `edits`: each candidate in each site folder, in order.
std::vector<std::string> candidate_paths(const Session& s, const std::vector<const recipe::Edit*>& edits);

/// One answer per edit, in order. All candidate files are read in one batch. A file that
/// `import` would not load (a compiled twin shadows it) is no answer: refuse_shadowed.
std::vector<Located> locate(Session& s, const std::vector<const recipe::Edit*>& edits);

/// For each (site folder, relative .py) pair, the absolute path of the compiled twin
/// Python would import in its place, from that folder or one before it on sys.path
/// ("" when the source is what runs). One stat round.
std::vector<std::string> shadowing_twins(Session& s, const std::vector<std::pair<std::string, std::string>>& files);

/// Marks each located edit whose file a compiled twin shadows as not ok, saying so.
void refuse_shadowed(Session& s, const std::vector<const recipe::Edit*>& edits, std::vector<Located>& out);

/// The refusal's words: the file, the module, the twin and what to do.
std::string shadowed_message(const std::string& rel, const std::string& module, const std::string& twin);

}  // namespace sitepatch::engine::detail
