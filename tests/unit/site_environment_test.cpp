#include <catch2/catch.hpp>

#include "sitepatch/site/environment.hpp"

using namespace sitepatch::site;

TEST_CASE("unsafe_relative_path accepts plain relative paths only", "[site]") {
  CHECK_FALSE(unsafe_relative_path("flashinfer/jit/cpp_ext.py"));
  CHECK_FALSE(unsafe_relative_path("a.py"));
  CHECK_FALSE(unsafe_relative_path("a/..b/c..py"));  // dots inside a name are fine

  // Each way out of site-packages, or an ambiguous spelling, is refused with a reason.
  CHECK(unsafe_relative_path("").value() == "the path is empty");
  CHECK(unsafe_relative_path("/etc/passwd").value().find("absolute") != std::string::npos);
  CHECK(unsafe_relative_path("../x.py").value().find("'..'") != std::string::npos);
  CHECK(unsafe_relative_path("a/../../x.py"));
  CHECK(unsafe_relative_path("a/..").value().find("'..'") != std::string::npos);
  CHECK(unsafe_relative_path("./a.py").value().find("'.'") != std::string::npos);
  CHECK(unsafe_relative_path("a//b.py").value().find("empty segment") != std::string::npos);
  CHECK(unsafe_relative_path("a/").value().find("empty segment") != std::string::npos);
  CHECK(unsafe_relative_path("a\\..\\b.py").value().find("backslash") != std::string::npos);
  CHECK(unsafe_relative_path(std::string_view("a\0b", 3)).value().find("NUL") != std::string::npos);
}

TEST_CASE("module_candidates gives the module file, then the package __init__", "[site]") {
  CHECK(module_candidates("flashinfer.jit.cpp_ext") ==
        std::vector<std::string>{"flashinfer/jit/cpp_ext.py", "flashinfer/jit/cpp_ext/__init__.py"});
  CHECK(module_candidates("torch") == std::vector<std::string>{"torch.py", "torch/__init__.py"});
  CHECK(module_candidates("_private2.x_1") ==
        std::vector<std::string>{"_private2/x_1.py", "_private2/x_1/__init__.py"});
  // Not dotted names: nothing.
  CHECK(module_candidates("").empty());
  CHECK(module_candidates("a..b").empty());
  CHECK(module_candidates(".a").empty());
  CHECK(module_candidates("a.").empty());
  CHECK(module_candidates("1abc").empty());
  CHECK(module_candidates("a/b").empty());
  CHECK(module_candidates("a-b").empty());
  CHECK(module_candidates("../etc").empty());
}

TEST_CASE("module_for_file is the inverse of module_candidates", "[site]") {
  CHECK(module_for_file("a/b.py") == "a.b");
  CHECK(module_for_file("a/b/__init__.py") == "a.b");
  CHECK(module_for_file("top.py") == "top");
  CHECK(module_for_file("a/b.txt") == "");
}

TEST_CASE("is_pyc_of matches bytecode of exactly that stem", "[site]") {
  CHECK(is_pyc_of("cpp_ext.cpython-311.pyc", "cpp_ext"));
  CHECK(is_pyc_of("cpp_ext.cpython-311.opt-1.pyc", "cpp_ext"));
  CHECK(is_pyc_of("cpp_ext.cpython-312.opt-2.pyc", "cpp_ext"));
  CHECK(is_pyc_of("__init__.pypy39.pyc", "__init__"));
  // Another module whose name starts the same, other files, malformed names.
  CHECK_FALSE(is_pyc_of("cpp_ext2.cpython-311.pyc", "cpp_ext"));
  CHECK_FALSE(is_pyc_of("cpp.cpython-311.pyc", "cpp_ext"));
  CHECK_FALSE(is_pyc_of("cpp_ext.pyc", "cpp_ext"));
  CHECK_FALSE(is_pyc_of("cpp_ext..pyc", "cpp_ext"));
  CHECK_FALSE(is_pyc_of("cpp_ext.cpython-311.py", "cpp_ext"));
  CHECK_FALSE(is_pyc_of("cpp_ext.x.cpython-311.pyc", "cpp_ext"));
  CHECK_FALSE(is_pyc_of("cpp_ext.cpython-311.opt-.pyc", "cpp_ext"));
  CHECK_FALSE(is_pyc_of("cpp_ext.cpython-311.foo.pyc", "cpp_ext"));
  CHECK_FALSE(is_pyc_of("x.cpython-311.pyc", ""));
}

TEST_CASE("is_within compares whole path segments", "[site]") {
  CHECK(is_within("/v/lib/site-packages/a.py", "/v/lib/site-packages"));
  CHECK(is_within("/v/lib/site-packages/a.py", "/v/lib/site-packages/"));
  CHECK(is_within("/v/lib/site-packages", "/v/lib/site-packages"));
  CHECK(is_within("/anything", "/"));
  CHECK_FALSE(is_within("/v/lib/site-packages2/a.py", "/v/lib/site-packages"));
  CHECK_FALSE(is_within("/v/lib", "/v/lib/site-packages"));
  CHECK_FALSE(is_within("relative/a.py", "/"));
}

TEST_CASE("a shared folder's history lives with its owner", "[site]") {
  sitepatch::site::Environment venv;
  venv.prefix = "/srv/venv";
  venv.base_prefix = "/opt/py";
  venv.site_dirs = {"/srv/venv/lib/python3.11/site-packages", "/srv/extra", "/opt/py/lib/python3.11/site-packages",
                    "/usr/lib/python3/dist-packages", "/usr/local/lib/python3.11/dist-packages"};
  venv.pth_dirs = {"/srv/extra"};
  venv.dpkg = true;

  // The environment's own folder has no other home.
  CHECK(!sitepatch::site::history_home(venv, "/srv/venv/lib/python3.11/site-packages"));
  // A base interpreter's folder: the base's own default history.
  auto base = sitepatch::site::history_home(venv, "/opt/py/lib/python3.11/site-packages");
  REQUIRE(base);
  CHECK(base->prefix == "/opt/py");
  CHECK(base->state_dir == "/opt/py/.sitepatch");
  CHECK(base->owner == "the base interpreter at /opt/py");
  // A .pth folder keeps its history inside itself, so it travels with the folder.
  auto pth = sitepatch::site::history_home(venv, "/srv/extra");
  REQUIRE(pth);
  CHECK(pth->prefix == "/srv/extra");
  CHECK(pth->state_dir == "/srv/extra/.sitepatch");
  // Both of the system Python's folders share one history, outside /usr (dpkg's).
  auto sys = sitepatch::site::history_home(venv, "/usr/lib/python3/dist-packages");
  auto local = sitepatch::site::history_home(venv, "/usr/local/lib/python3.11/dist-packages");
  REQUIRE(sys);
  REQUIRE(local);
  CHECK(sys->prefix == "/usr");
  CHECK(sys->state_dir == "/var/lib/sitepatch/usr");
  CHECK(local->state_dir == "/var/lib/sitepatch/usr");
}

TEST_CASE("the system Python's own history is under /var/lib/sitepatch, every other one in its prefix", "[site]") {
  CHECK(sitepatch::site::default_state_dir("/usr") == "/var/lib/sitepatch/usr");
  CHECK(sitepatch::site::default_state_dir("/usr/local") == "/var/lib/sitepatch/usr/local");
  CHECK(sitepatch::site::default_state_dir("/srv/venv") == "/srv/venv/.sitepatch");
  CHECK(sitepatch::site::default_state_dir("/usr/lib/venvs/x") == "/usr/lib/venvs/x/.sitepatch");
}
