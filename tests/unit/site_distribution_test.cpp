#include <catch2/catch.hpp>

#include "sitepatch/host/distribution_index.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/site/distribution.hpp"
#include "support/fixture.hpp"

using namespace sitepatch::site;
using sitepatch::host::DistributionIndex;
using sitepatch::host::load_distributions;

TEST_CASE("parse_metadata reads Name and Version from the headers only", "[site]") {
  auto [name, version] = parse_metadata(
      "Metadata-Version: 2.1\r\nName: FlashInfer-Python\r\nSummary: a\r\n  continued: Version: 9\r\n"
      "version:  0.2.5 \r\n\r\nName: body-text\r\nVersion: 0\r\n");
  CHECK(name == "FlashInfer-Python");
  CHECK(version == "0.2.5");
  // Headers end at the first blank line; nothing after it counts.
  auto [n2, v2] = parse_metadata("Metadata-Version: 2.1\n\nName: x\nVersion: 1\n");
  CHECK(n2.empty());
  CHECK(v2.empty());
}

TEST_CASE("parse_record reads CSV rows, quoted commas and quotes included", "[site]") {
  auto rows = parse_record(
      "pkg/__init__.py,sha256=abc,12\r\n"
      "\"pkg/data,with,commas.txt\",sha256=def,3\n"
      "\"pkg/say \"\"hi\"\".txt\",,\n"
      "\n"
      "pkg-1.0.dist-info/RECORD,,");
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].path == "pkg/__init__.py");
  CHECK(rows[0].hash == "sha256=abc");
  CHECK(rows[0].size == "12");
  CHECK(rows[1].path == "pkg/data,with,commas.txt");
  CHECK(rows[1].hash == "sha256=def");
  CHECK(rows[1].size == "3");
  CHECK(rows[2].path == "pkg/say \"hi\".txt");
  CHECK(rows[2].hash.empty());
  CHECK(rows[3].path == "pkg-1.0.dist-info/RECORD");
}

TEST_CASE("conda's record names give the package's name and version, dashes in the name kept", "[site]") {
  CHECK(parse_conda_record_name("numpy-1.26.4-py311h64a7726_0.json") == std::make_pair(std::string("numpy"), std::string("1.26.4")));
  CHECK(parse_conda_record_name("flashinfer-python-0.5.3-pypi_0.json") ==
        std::make_pair(std::string("flashinfer-python"), std::string("0.5.3")));
  CHECK(parse_conda_record_name("odd-1.0.json") == std::make_pair(std::string("odd"), std::string("1.0")));
  CHECK(parse_conda_record_name("history") == std::make_pair(std::string("history"), std::string("")));
}

TEST_CASE("normalize_name and normalize_record_path", "[site]") {
  CHECK(sitepatch::site::normalize_name("FlashInfer_Python") == "flashinfer-python");
  CHECK(sitepatch::site::normalize_name("a.-_b") == "a-b");
  CHECK(normalize_record_path("./pkg//a.py") == "pkg/a.py");
  CHECK(normalize_record_path("pkg/sub/../a.py") == "pkg/a.py");
  CHECK(normalize_record_path("../../bin/tool") == "../../bin/tool");
}

TEST_CASE("DistributionIndex finds owners by site dir and RECORD path", "[site]") {
  DistributionIndex index;
  index.add({"Foo_Bar", "1.0", "/sp/", "Foo_Bar-1.0.dist-info", parse_record("foo/a.py,,\n./foo/b.py,,\n")});
  index.add({"other", "2.0", "/sp2", "other-2.0.dist-info", parse_record("foo/a.py,,\n")});
  REQUIRE(index.owner("/sp", "foo/a.py"));
  CHECK(index.owner("/sp", "foo/a.py")->name == "Foo_Bar");
  CHECK(index.owner("/sp/", "foo/b.py")->name == "Foo_Bar");
  CHECK(index.owner("/sp2", "foo/a.py")->name == "other");
  CHECK(index.owner("/sp", "foo/c.py") == nullptr);
  CHECK(index.owner("/sp3", "foo/a.py") == nullptr);
  REQUIRE(index.find("foo-bar"));
  CHECK(index.find("FOO.BAR")->version == "1.0");
  CHECK(index.find("nope") == nullptr);
}

TEST_CASE("load_distributions reads an installed wheel's dist-info from a real venv", "[site]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  venv.install(testsupport::build_wheel(
      {"Demo_Pkg", "1.2.3",
       {{"demo_pkg/__init__.py", "X = 1\n"}, {"demo_pkg/data,1.txt", "d\n"}, {"demo_top.py", "\n"}}},
      tmp.path));
  auto host = sitepatch::host::make_local_host();
  auto env = host->probe(venv.root);

  DistributionIndex index = load_distributions(*host, env.site_dirs);
  REQUIRE(index.all().size() == 1);
  const Distribution& d = *index.all()[0];
  CHECK(d.name == "Demo_Pkg");
  CHECK(d.version == "1.2.3");
  CHECK(d.site_dir == venv.site_packages);
  CHECK(d.dist_info == "Demo_Pkg-1.2.3.dist-info");
  CHECK(index.find("demo-pkg") == &d);

  // Module files, a quoted RECORD row, and the .pyc pip compiled are all owned by it.
  CHECK(index.owner(venv.site_packages, "demo_pkg/__init__.py") == &d);
  CHECK(index.owner(venv.site_packages, "demo_top.py") == &d);
  CHECK(index.owner(venv.site_packages, "demo_pkg/data,1.txt") == &d);
  std::string tag = env.cache_tag;
  CHECK(index.owner(venv.site_packages, "demo_pkg/__pycache__/__init__." + tag + ".pyc") == &d);
  CHECK(index.owner(venv.site_packages, "demo_pkg/missing.py") == nullptr);
}

TEST_CASE("egg-info file lists: installed-files.txt relative to the egg-info, top_level.txt names", "[site]") {
  auto files = parse_installed_files("../jwt/__init__.py\n../jwt/__pycache__/x.pyc\nPKG-INFO\n\n../../escape.py\n",
                                     "PyJWT-2.6.0.egg-info");
  REQUIRE(files.size() == 3);
  CHECK(files[0].path == "jwt/__init__.py");
  CHECK(files[1].path == "jwt/__pycache__/x.pyc");
  CHECK(files[2].path == "PyJWT-2.6.0.egg-info/PKG-INFO");
  CHECK(parse_top_level("jinja2\n\n _yaml \nbad/name\n") == std::vector<std::string>{"jinja2", "_yaml"});
}

TEST_CASE("load_distributions reads egg-info the way importlib.metadata does, Debian's kind included", "[site]") {
  testsupport::TempDir tmp;
  std::string site = tmp.path + "/site";
  // Debian's python3-jwt: PKG-INFO and top_level.txt only.
  testsupport::spit(site + "/PyJWT-2.6.0.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: PyJWT\nVersion: 2.6.0\n");
  testsupport::spit(site + "/PyJWT-2.6.0.egg-info/top_level.txt", "jwt\n");
  testsupport::spit(site + "/jwt/__init__.py", "\n");
  // A setuptools install: installed-files.txt.
  testsupport::spit(site + "/legacy-1.0.egg-info/PKG-INFO", "Name: legacy\nVersion: 1.0\n");
  testsupport::spit(site + "/legacy-1.0.egg-info/installed-files.txt", "../legacy.py\n");
  testsupport::spit(site + "/legacy.py", "\n");
  // A bare PKG-INFO file named *.egg-info (Debian's sympy): its own name is its package.
  testsupport::spit(site + "/sympy-1.11.1.egg-info", "Metadata-Version: 2.1\nName: sympy\nVersion: 1.11.1\n");
  auto host = sitepatch::host::make_local_host();
  DistributionIndex index = load_distributions(*host, {site});
  REQUIRE(index.all().size() == 3);
  const Distribution* jwt = index.find("pyjwt");
  REQUIRE(jwt);
  CHECK(jwt->version == "2.6.0");
  CHECK(index.owner(site, "jwt/__init__.py") == jwt);
  CHECK(index.owner(site, "jwt/algorithms.py") == jwt);
  CHECK(index.owner(site, "jwtx/__init__.py") == nullptr);
  const Distribution* legacy = index.find("legacy");
  REQUIRE(legacy);
  CHECK(index.owner(site, "legacy.py") == legacy);
  const Distribution* sympy = index.find("sympy");
  REQUIRE(sympy);
  CHECK(sympy->version == "1.11.1");
  CHECK(index.owner(site, "sympy/core/basic.py") == sympy);
}
