// The shared torch venv (support/torch_env.hpp) as a test of its own, hidden from the
// discovered sets: ctest runs it first (FIXTURES_SETUP), so a fresh clone's pip install of
// torch takes one slot while the other runs the slow tests that need no torch, and no
// torch test holds a slot waiting on the venv's lock.
#include <catch2/catch.hpp>

#include <filesystem>

#include "support/torch_env.hpp"

TEST_CASE("setup: the shared torch venv is made, once, before the tests that import torch", "[.][torch-venv]") {
  const std::string& site = testsupport::torch_site_packages();
  CHECK(std::filesystem::exists(site + "/torch/__init__.py"));
}
