#pragma once
// LocalHost's writes and locks, apart from the rest of the host: the two places where
// a root process meets folders other users may write to.
#include <cerrno>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/host/host.hpp"

namespace sitepatch::host {

/// Host::write on this machine (all or nothing; see host.hpp); `tag` begins every
/// temp's random name.
void write_local(const std::vector<WriteRequest>& files, const std::string& tag);

/// Host::lock on this machine; a writer's lock file names `tag` until it is released.
std::unique_ptr<Lock> lock_local(const std::string& path, int timeout_ms, LockMode mode, const std::string& tag);

/// errno `e` says the path is not there (ENOENT, ENOTDIR): nothing to read or remove.
inline bool missing(int e) { return e == ENOENT || e == ENOTDIR; }

/// The folder `path` is in ("." for a bare name, "/" for a file at the root).
std::string folder_of(const std::string& path);

/// The exact message both hosts give for a write into a folder another user controls
/// (`why` from util::unsafe_path).
std::string unsafe_write_message(const std::string& path, const std::string& why);

/// The exact message both hosts give for a state folder another user controls.
std::string unsafe_state_message(const std::string& folder, const std::string& why);

/// A writer's lock file: "<pid> <tag>" and, a line each, the tags of writers before it
/// that never released the lock (so not yet cleaned up after). The agent writes the same.
std::string lock_text(long pid, const std::string& tag, const std::vector<std::string>& earlier);

/// The tags a lock file's text names (at most 32; anything not a tag is ignored).
std::vector<std::string> lock_tags(std::string_view text);

/// The exact message both hosts give when a write would leave `within`.
std::string outside_message(const std::string& path, const std::string& real_dir, const std::string& within);

/// Host::run_command for a command run on this machine (local_command.cpp).
CommandResult run_local_command(const CommandRun& run);

/// Host::run_commands here: each in a thread of its own, `jobs` at once.
std::vector<CommandResult> run_local_commands(const std::vector<CommandRun>& runs, int jobs);

}  // namespace sitepatch::host
