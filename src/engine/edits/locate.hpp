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

/// The compiled twins locate asks about for `edits` (in its realpath round): read ahead.
std::vector<std::string> candidate_twin_paths(const Session& s, const std::vector<const recipe::Edit*>& edits);

/// One answer per edit, in order. All candidate files are read in one batch. A file that
/// `import` would not load (a compiled twin shadows it) is no answer, with why.
std::vector<Located> locate(Session& s, const std::vector<const recipe::Edit*>& edits);

/// The compiled twins to look for, for (site folder, relative .py) pairs: each path, and
/// which pair it is for. Every folder up to the pair's own on sys.path is asked.
struct TwinQuery {
  std::vector<std::string> paths;
  std::vector<size_t> owner;
};
TwinQuery twin_query(const Session& s, const std::vector<std::pair<std::string, std::string>>& files);

/// Per pair, the first twin of `q` that exists (`exists`, in q.paths' order): what Python
/// imports in place of the source; "" when the source is what runs.
std::vector<std::string> twins_found(const TwinQuery& q, const std::vector<bool>& exists, size_t files);

/// twins_found, with the existence asked in one realpath round (read it ahead with
/// twin_query's paths to make it none).
std::vector<std::string> shadowing_twins(Session& s, const std::vector<std::pair<std::string, std::string>>& files);

/// The refusal's words: the file, the module, the twin and what to do.
std::string shadowed_message(const std::string& rel, const std::string& module, const std::string& twin);

}  // namespace sitepatch::engine::detail
