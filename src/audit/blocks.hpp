#pragma once
// Private to src/audit: a module's text cut into its top-level statements without
// parsing it, so a scan parses only the blocks that can hold a flagged name (and each
// block's tree lives alone: memory follows the largest block, not the largest file).
#include <cstdint>
#include <string_view>
#include <vector>

#include "sitepatch/audit/facts.hpp"
#include "sitepatch/util/budget.hpp"

namespace sitepatch::audit::detail {

/// One top-level statement (a compound one with its `else`/`except` arms, a
/// definition with its decorators): bytes [begin, end), starting at column 0 of `row`.
struct Block {
  uint32_t begin = 0, end = 0;
  uint32_t row = 0;      // 0-based line of `begin`
  uint32_t end_row = 0;  // the point of `end`, as tree-sitter counts it
  uint32_t end_column = 0;
};

/// The top-level statements of `text`, in order. A line starts a statement when it is
/// at column 0 outside any bracket, string or continued line, and is no `else:`,
/// `elif`, `except`, `finally` and follows no decorator. Text the scanner misreads
/// (a syntax error, a nested f-string quote) at worst joins or cuts statements: the
/// caller parses the blocks and falls back to the whole file when one has errors.
std::vector<Block> top_level_blocks(std::string_view text);

/// As extract(), reading only `blocks` of `source` (in order), each parsed alone and
/// freed before the next, while `budget` (if any) grants its bytes. `damaged`: a
/// block's tree has an error or a missing node (the cut may be wrong); the blocks after
/// it are not parsed and the facts are not to be used.
ModuleFacts extract_blocks(std::string_view source, const std::string& module, bool is_package,
                           const std::vector<Block>& blocks, util::ByteBudget* budget, bool& damaged,
                           bool types);

}  // namespace sitepatch::audit::detail
