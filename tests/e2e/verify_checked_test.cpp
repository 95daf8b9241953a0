// verify, list and status do not parse or compile a patched file whose bytes apply
// already checked (issue 49 #9): apply records, per file, the sha256 of the bytes it
// compiled and found losing no name, with the Python that compiled them
// (FileRecord::checked). Only those bytes under that very Python are taken on trust;
// anything else is checked as before.
#include <catch2/catch.hpp>

#include "e2e_support.hpp"
#include "sitepatch/store/history.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace {

std::string recipe_of(const std::string& body) {
  return "id: helper\n"
         "edits:\n"
         "  - module: flashinfer.jit.cpp_ext\n"
         "    function: get_cuda_version\n"
         "    replace-body: " + body + "\n";
}

std::string python_version(const testsupport::Venv& venv) {
  return sitepatch::util::trim(venv.run_python("import platform; print(platform.python_version())").out);
}

/// The interpreter sitepatch runs in a venv (its bin/python3), and its version.
std::string interpreter(const testsupport::Venv& venv) {
  return venv.root + "/bin/python3 " + python_version(venv);
}

/// The history's record of `helper`, as stored.
sitepatch::store::PatchRecord record(const e2e::DemoEnv& env) {
  auto h = sitepatch::store::History::open(env.venv.root + "/.sitepatch", false);
  REQUIRE(h);
  auto r = h->patch("helper");
  REQUIRE(r);
  REQUIRE(r->files.size() == 1);
  return *r;
}

/// Rewrites the record's `checked` (as a history written elsewhere could hold it).
void set_checked(const e2e::DemoEnv& env, const std::string& checked) {
  auto r = record(env);
  r.files[0].checked = checked;
  sitepatch::store::Transaction tx;
  tx.message = "test: checked";
  tx.put.push_back(r);
  sitepatch::store::History::open(env.venv.root + "/.sitepatch", false)->commit(tx);
}

}  // namespace

TEST_CASE("apply records the bytes it checked, with the Python that compiled them", "[e2e][verify]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", env.recipe("h.yaml", recipe_of("return None"))}).status == 0);
  auto r = record(env);
  CHECK(r.files[0].checked == sitepatch::util::sha256_hex(r.files[0].after) + " " + interpreter(env.venv));
  auto v = env.sp({"verify"});
  CHECK(v.status == 0);
  CHECK(v.out.find("broken") == std::string::npos);

  // A hand edit that breaks the syntax: the bytes are not the checked ones, so Python
  // compiles them again and says why.
  std::string path = env.site("flashinfer/jit/cpp_ext.py");
  testsupport::spit(path, testsupport::slurp(path) + "\ndef broken(:\n");
  auto b = env.sp({"verify"});
  INFO(b.out);
  CHECK(b.status == 3);
  CHECK(b.out.find("  flashinfer/jit/cpp_ext.py  modified") != std::string::npos);
  CHECK(b.out.find("does not compile in " + env.venv.python) != std::string::npos);
}

TEST_CASE("verify checks again bytes checked under another Python, or not checked at all", "[e2e][verify]") {
  e2e::DemoEnv env;
  // A name nothing binds, written with --force: apply does not record the bytes as checked.
  REQUIRE(env.sp({"apply", "--force", env.recipe("h.yaml", recipe_of("return cuda_from_torch()"))}).status == 0);
  CHECK(record(env).files[0].checked.empty());
  std::string lost = "    broken: uses cuda_from_torch, which nothing in flashinfer/jit/cpp_ext.py binds any more";
  auto v = env.sp({"verify"});
  CHECK(v.status == 3);
  CHECK(v.out.find(lost) != std::string::npos);

  // The same bytes recorded as checked by another Python (the environment's was
  // replaced since): verify does not take that on trust.
  std::string sha = sitepatch::util::sha256_hex(record(env).files[0].after);
  set_checked(env, sha + " " + env.venv.root + "/bin/python3 3.0.0");
  auto other = env.sp({"verify"});
  CHECK(other.status == 3);
  CHECK(other.out.find(lost) != std::string::npos);
  set_checked(env, sha + " /other/python3 " + python_version(env.venv));
  CHECK(env.sp({"verify"}).status == 3);

  // Under this very Python the record is what decides (the history is sitepatch's own).
  set_checked(env, sha + " " + interpreter(env.venv));
  auto trusted = env.sp({"verify"});
  INFO(trusted.out);
  CHECK(trusted.status == 0);
  CHECK(trusted.out.find("broken") == std::string::npos);
}
