#pragma once
// Names new code uses that the patched module never binds: plan warns, apply refuses
// them unless --force (they would fail only at run time, with NameError).
#include <map>
#include <string>
#include <vector>

#include "engine/edits/result_check.hpp"
#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine::detail {

/// The free names in what each edit wrote into `result` (its spans), by flattened edit
/// index. Empty (and said at -v) when the module's names cannot be known (a star import).
std::map<size_t, std::vector<python::FreeName>> free_names_by_edit(const python::Module& result, const std::string& rel,
                                                              const std::vector<EditSpan>& spans,
                                                              const std::vector<std::string>& builtins);

/// Records `names` on the edits they belong to, with the warning users read.
void note_unbound(Plan& p, const std::string& rel, const std::map<size_t, std::vector<python::FreeName>>& names);

/// Fails every edit that still uses an unbound name (apply without --force).
void refuse_unbound(Plan& p);

/// The top-level modules an `ensure-import:` statement imports ("import a.b as c, d" ->
/// a, d; "from x.y import z" -> x; relative imports: none).
std::vector<std::string> imported_modules(const std::string& statement);

/// Edits still to apply whose `ensure-import:` names a module the environment's Python
/// cannot find: the patched module would fail to import. Warned like a name nothing
/// binds, so refuse_unbound refuses them (apply --force writes them anyway).
void note_unimportable(Plan& p, const std::vector<const recipe::Edit*>& edits, host::Host& host);

}  // namespace sitepatch::engine::detail
