#pragma once
// Long diffs on a terminal go through the user's pager, as git sends them.
#include "context.hpp"

namespace sitepatch::cli {

/// The pager command for this run: $SITEPATCH_PAGER, else $PAGER, else "less"; "" when
/// the chosen one is empty or "cat" (no pager), as git reads GIT_PAGER and PAGER.
std::string pager_command();

/// From here on stdout (and stderr, when it is a terminal too) goes to the pager, run
/// by /bin/sh -c with LESS=FRX when LESS is unset; only when stdout is a terminal and
/// neither --json nor --no-pager says no. Idempotent. Call it once the command's
/// writes are done: a user quitting the pager early then loses only output.
void start_pager(const GlobalOptions& g);

/// Closes the pager's input and waits for the user to leave it; a no-op without one.
void end_pager();

}  // namespace sitepatch::cli
