// Lines typed into a method of a real package become an insert-before of that method,
// placed by the statement below them: the recipe is a few lines, not the method's class,
// and on a fresh install it makes the hand edit again (issue 49 #6).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "e2e_support.hpp"

namespace fs = std::filesystem;

namespace {

// requests 2.32.3 from PyPI (pinned), downloaded once into the tests' cache.
std::string requests_wheel(const testsupport::Venv& venv) {
  const std::string file = "requests-2.32.3-py3-none-any.whl";
  const char* home = std::getenv("HOME");
  std::string dir = std::string(home ? home : "/tmp") + "/.cache/sitepatch-tests/pypi";
  if (!fs::exists(dir + "/" + file))
    venv.pip({"download", "--no-deps", "--only-binary=:all:", "-d", dir, "requests==2.32.3"});
  REQUIRE(fs::exists(dir + "/" + file));
  return dir + "/" + file;
}

std::string put_above(std::string s, const std::string& line, const std::string& lines) {
  size_t at = s.find(line);
  REQUIRE(at != std::string::npos);
  REQUIRE(s.find(line, at + 1) == std::string::npos);
  return s.insert(at, lines);
}

}  // namespace

TEST_CASE("capture on PyPI's requests 2.32.3: lines typed above a statement of a method are an insert-before of "
          "the method, and apply on a fresh install makes them again",
          "[e2e][capture]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  std::string wheel = requests_wheel(venv);
  venv.install(wheel);
  auto sp = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  };
  std::string path = venv.site_packages + "/requests/adapters.py";
  std::string original = testsupport::slurp(path);
  REQUIRE(sp({"edit", "requests"}).status == 0);
  // The line above `timeout = TimeoutSauce(...)` in HTTPAdapter.send (its line
  // above, `else:`, is in the method three times), and a three-line guard, a comment in
  // it, above a statement of several lines in another method.
  std::string edited = put_above(original, "            timeout = TimeoutSauce(connect=timeout, read=timeout)\n",
                                 "            timeout_set = True\n");
  edited = put_above(edited, "            conn = self.poolmanager.connection_from_host(\n",
                     "            if not host_params.get(\"host\"):\n"
                     "                # a pool needs a host\n"
                     "                raise InvalidURL(\"no host\", request=request)\n");
  testsupport::spit(path, edited);

  std::string recipe = tmp.path + "/requests.yaml";
  auto r = sp({"capture", "requests", "-o", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::string text = testsupport::slurp(recipe);
  INFO(text);
  CHECK(text.find("replace-function") == std::string::npos);
  CHECK(text.find("replace-body") == std::string::npos);
  CHECK(text.find("    function: HTTPAdapter.send\n    insert-before: |\n      timeout_set = True\n"
                  "    anchor: timeout = TimeoutSauce(connect=timeout, read=timeout)\n") != std::string::npos);
  CHECK(text.find("    function: HTTPAdapter.get_connection_with_tls_context\n    insert-before: |\n"
                  "      if not host_params.get(\"host\"):\n          # a pool needs a host\n"
                  "          raise InvalidURL(\"no host\", request=request)\n"
                  "    anchor: |-\n      conn = self.poolmanager.connection_from_host(\n"
                  "          **host_params, pool_kwargs=pool_kwargs\n      )\n") != std::string::npos);
  // Small: the header, two edits, their lines.
  CHECK(std::count(text.begin(), text.end(), '\n') < 30);
  CHECK(sp({"verify"}).status == 0);

  // On a fresh install the recipe makes the hand edit byte for byte; again, nothing.
  REQUIRE(sp({"rollback", "requests-local"}).status == 0);
  CHECK(testsupport::slurp(path) == original);
  venv.install(std::vector<std::string>{"--force-reinstall", "--no-deps", wheel});
  auto a = sp({"apply", recipe});
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(testsupport::slurp(path) == edited);
  auto again = sp({"apply", recipe});
  INFO(again.err);
  CHECK(again.status == 0);
  CHECK(testsupport::slurp(path) == edited);
  CHECK(sp({"verify"}).status == 0);
  REQUIRE(sp({"rollback", "requests-local"}).status == 0);
  CHECK(testsupport::slurp(path) == original);
}
