#pragma once
// Real torch for the tests of try, apply --check and explain --run: PyPI's torch 2.13.0
// (a CPU build this machine keeps on disk: no download) in one venv made on first use
// and reused by every test and run after it; each test gets its own small venv that
// sees it through a .pth file, so what a test writes never reaches the shared one.
#include <string>

#include "fixture.hpp"

namespace testsupport {

/// The site-packages of the shared torch venv, made (pip install torch==2.13.0) the
/// first time, under a lock so parallel tests make it once. Its folder:
/// $SITEPATCH_TEST_TORCH_VENV, else ~/.cache/sitepatch-tests/torch-2.13.0-<python>.
const std::string& torch_site_packages();

/// A fresh venv at `dir` in which `import torch` works (the shared venv, by a .pth).
Venv torch_venv(const std::string& dir);

}  // namespace testsupport
