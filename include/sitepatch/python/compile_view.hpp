#pragma once
// What the environment's Python needs to compile to judge an edit: the statements it
// changed, not the whole module.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sitepatch::python {

/// `text` with every line of the top-level statements (`statements`, as
/// Module::top_level_rows gives them) that no row of `changed` falls in emptied, so that Python compiles only
/// the statements an edit touched, on the lines they stand on (its messages keep their
/// line numbers). A statement that shares a line with a kept one is kept, and so are
/// `from __future__` imports, which change how the rest compiles. Syntax errors and
/// what the compiler's symbol table refuses stay inside a top-level statement, so an
/// edit's new errors are all in the kept text.
std::string compile_view(std::string_view text, const std::vector<std::pair<size_t, size_t>>& statements,
                         const std::vector<std::pair<size_t, size_t>>& changed);

}  // namespace sitepatch::python
