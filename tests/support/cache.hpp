#pragma once
// Results keyed by their content, shared by every test process of a run and by the runs
// after it: what tests make the same way again and again (a wheel from a spec, a fresh
// venv's site-packages after pip installs the same wheels) is made once, by the same
// tools, and copied. Each test is a process of its own, so a per-process cache would
// keep nothing (issue 52: the suite in 10 minutes).
#include <functional>
#include <string>

namespace testsupport {

/// $SITEPATCH_TEST_CACHE, else $XDG_CACHE_HOME/sitepatch-tests, else
/// ~/.cache/sitepatch-tests (where the shared torch venv lives too).
std::string cache_root();

/// The folder <cache_root>/<kind>/<key>, made by `make(folder)` into a fresh folder the
/// first time. Makers that race each publish by an atomic rename: the first one's stays,
/// and no reader ever sees a folder half made.
std::string cached_folder(const std::string& kind, const std::string& key,
                          const std::function<void(const std::string&)>& make);

/// Copies what is in `from` into the folder `to`, as `cp -a` does: modes and times kept
/// (a .pyc is only valid beside a source of the time it records).
void copy_tree(const std::string& from, const std::string& to);

}  // namespace testsupport
