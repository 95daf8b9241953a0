#pragma once
// What the tests of `sitepatch wheel` share: a source wheel of the FlashInfer stand-in,
// the bundled recipe, a wheel's members checked as an installer reads them, and uv.
#include <string>

#include "e2e_support.hpp"

namespace e2e {

struct WheelCase {
  testsupport::TempDir tmp;
  std::string source;  // flashinfer_python-0.5.3-py3-none-any.whl
  std::string recipe;  // the bundled flashinfer-dynamo recipe
  WheelCase();
  /// sitepatch wheel RECIPE... --from SOURCE -o OUT (made) ARGS...
  sitepatch::util::RunResult build(const std::string& out, const std::vector<std::string>& more = {},
                                   const std::map<std::string, std::string>& env = {}) const;
};

/// "" when every RECORD row of the wheel at `path` matches its member's bytes, RECORD
/// is the last member and every member is dated 1980-01-01; else what is wrong.
std::string wheel_problems(const std::string& path);

/// A member's bytes (zipfile, under the outer Python).
std::string wheel_member(const std::string& path, const std::string& member);

/// What docs/schema/wheel.json says is wrong with a --json document ("" when nothing).
std::string wheel_schema_violations(const std::string& document);

/// uv, pinned (uv==0.9.5 from PyPI), installed once into a cached venv.
const std::string& uv_binary();

}  // namespace e2e
