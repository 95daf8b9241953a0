#pragma once
// The private folders a command works in ($TMPDIR/sitepatch-<kind>-<pid>-XXXXXX): made
// 0700 at a name nobody chose, and named after their maker so that a later command can
// take back what a killed one left. Utility tier: no Python, no git.
#include <string>

namespace sitepatch::util {

/// $TMPDIR (else /tmp).
std::string temp_root();

/// Makes a new private folder for `kind` ("run", "history") in temp_root() and returns
/// its path; first removes the folders of that kind that a process of this user left
/// and that is gone (killed: it could not remove them). Throws naming the folder when it
/// cannot make one.
std::string make_temp_folder(const std::string& kind);

}  // namespace sitepatch::util
