#pragma once
// What must pass util::unsafe_path before an environment's Python starts here: whatever
// that interpreter reads before sitepatch's agent can check anything itself (the agent
// then checks every site folder and .pth file before `site` runs them: agent/trust.py).
#include <string>
#include <vector>

namespace sitepatch::host {

/// The interpreter, the environment's folder, its pyvenv.cfg and site-packages, and the
/// base installation's standard library (its folder, lib-dynload and zip) that the
/// interpreter imports from at start, even with -I -S.
std::vector<std::string> start_paths(const std::string& venv, const std::string& python);

/// Throws, naming the first path of start_paths another user can change and the remedy.
void refuse_unsafe_python(const std::string& venv, const std::string& python);

}  // namespace sitepatch::host
