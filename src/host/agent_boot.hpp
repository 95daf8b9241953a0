#pragma once
// How the agent starts: a short fixed `-c` program reads a bootstrap from stdin, which
// reads the agent's source and runs it from a per-user copy whose bytecode Python
// caches, so a command does not compile the agent's 600 lines again each time (a
// quarter of a local `list`). The same on this machine and over ssh.
#include <string>
#include <vector>

namespace sitepatch::host {

/// The `-c` argument: `import sys;exec(sys.stdin.buffer.read(N))`.
std::string agent_boot_code();
/// What the agent's stdin begins with: the bootstrap, then the agent's digest and size,
/// then its source. The protocol follows.
std::string agent_boot_payload();
/// argv that runs the agent with `python`, reading agent_boot_payload() first.
std::vector<std::string> agent_boot_argv(const std::string& python);

}  // namespace sitepatch::host
