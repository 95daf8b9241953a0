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

/// One answer per edit, in order. All candidate files are read in one batch.
std::vector<Located> locate(Session& s, const std::vector<const recipe::Edit*>& edits);

}  // namespace sitepatch::engine::detail
