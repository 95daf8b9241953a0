#pragma once
// Who else can change where a path leads. sitepatch runs as root on servers other users
// log into: a folder another user can write is one where that user can swap a name for a
// link between our check and our use. Utility tier: no Python, no git.
#include <optional>
#include <string>

namespace sitepatch::util {

/// Why a user other than the caller (and root) could change what `path` leads to: the
/// first place on it, from `/` down, through every symbolic link, that such a user owns
/// or may write to (a group-writable folder counts unless its group is root's; a sticky
/// folder such as /tmp counts only for the entry below it, which must be the caller's or
/// root's), as one line naming that folder. nullopt when nobody else can. A tail of
/// `path` that does not exist is judged by the folder it would be created in.
std::optional<std::string> unsafe_path(const std::string& path);

/// Creates the folders of `path` that are missing (mode 0700), then answers as
/// unsafe_path; a folder someone else made first is judged like any other.
std::optional<std::string> make_safe_folder(const std::string& path);

}  // namespace sitepatch::util
