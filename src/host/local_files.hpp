#pragma once
// LocalHost's writes and locks, apart from the rest of the host: the two places where
// a root process meets folders other users may write to.
#include <memory>
#include <string>
#include <vector>

#include "sitepatch/host/host.hpp"

namespace sitepatch::host {

/// Host::write on this machine (all or nothing; see host.hpp).
void write_local(const std::vector<WriteRequest>& files);

/// Host::lock on this machine.
std::unique_ptr<Lock> lock_local(const std::string& path, int timeout_ms, LockMode mode);

/// The exact message both hosts give when a write would leave `within`.
std::string outside_message(const std::string& path, const std::string& real_dir, const std::string& within);

}  // namespace sitepatch::host
