#pragma once
// The private folders a command works in (sitepatch-<kind>-<pid>-XXXXXX): made 0700 at a
// name nobody chose, and named after their maker so that a later command can take back
// what a killed one left. Utility tier: no Python, no git.
#include <string>

namespace sitepatch::util {

/// $TMPDIR (else /tmp).
std::string temp_root();

/// Makes a new private folder for `kind` ("history") in temp_root() and returns its
/// path; first removes the folders of that kind that a process of this user left and
/// that is gone (killed: it could not remove them), also in a sticky folder such as /tmp
/// itself. Throws naming the folder when it cannot make one.
std::string make_temp_folder(const std::string& kind);

/// The caller's cache folder: $XDG_CACHE_HOME, else $HOME/.cache, else the account's
/// home's .cache.
std::string cache_root();

/// Makes a new private folder for a command's run files inside cache_root()/sitepatch/run
/// (made 0700 where missing) and returns its path. A folder a command's environment names
/// (PYTHONPATH, SITEPATCH_TRY) must never be a name another user can claim once it is
/// removed, as one in /tmp is: inside a private folder of the caller's, nobody else can
/// make it again. Throws, with the remedy, when another user can change that folder.
std::string make_run_folder();

}  // namespace sitepatch::util
