#include <catch2/catch.hpp>

#include "sitepatch/site/wheel.hpp"
#include "sitepatch/util/error.hpp"

using namespace sitepatch::site;

TEST_CASE("wheel names: the parts PEP 427 gives, a build tag only when it starts with a digit") {
  auto w = parse_wheel_name("flashinfer_python-0.5.3-py3-none-any.whl");
  REQUIRE(w);
  CHECK(w->name == "flashinfer_python");
  CHECK(w->version == "0.5.3");
  CHECK(w->build.empty());
  CHECK(w->python == "py3");
  CHECK(w->file() == "flashinfer_python-0.5.3-py3-none-any.whl");

  auto built = parse_wheel_name("torch-2.1.0+cu121-1local-cp311-cp311-linux_x86_64.whl");
  REQUIRE(built);
  CHECK(built->version == "2.1.0+cu121");
  CHECK(built->build == "1local");
  CHECK(built->platform == "linux_x86_64");
  w->version = "0.5.3+sitepatch.0123abcd";
  CHECK(w->file() == "flashinfer_python-0.5.3+sitepatch.0123abcd-py3-none-any.whl");

  CHECK_FALSE(parse_wheel_name("flashinfer-python-0.5.3-py3-none-any.whl"));  // '-' in the name
  CHECK_FALSE(parse_wheel_name("pkg-1.0.tar.gz"));
  CHECK_FALSE(parse_wheel_name("pkg-1.0-py3-none.whl"));
  CHECK_FALSE(parse_wheel_name("pkg--py3-none-any.whl"));
}

TEST_CASE("wheel members: what installs into site-packages, and compiled modules' suffixes") {
  CHECK(installed_rel("pkg/mod.py") == "pkg/mod.py");
  CHECK(installed_rel("pkg-1.0.data/purelib/pkg/mod.py") == "pkg/mod.py");
  CHECK(installed_rel("pkg-1.0.data/platlib/pkg/_c.so") == "pkg/_c.so");
  CHECK(installed_rel("pkg-1.0.data/scripts/tool") == "");
  CHECK(installed_rel("pkg-1.0.data/headers/x.h") == "");
  CHECK(installed_rel("pkg/x.data/purelib/y.py") == "pkg/x.data/purelib/y.py");  // not the first folder

  CHECK(extension_suffix("pkg/_c.cpython-311-x86_64-linux-gnu.so") == ".cpython-311-x86_64-linux-gnu.so");
  CHECK(extension_suffix("pkg/_c.abi3.so") == ".abi3.so");
  CHECK(extension_suffix("_c.so") == ".so");
  CHECK(extension_suffix("pkg/mod.py") == "");
  CHECK(extension_suffix("pkg/.so") == "");
}

TEST_CASE("wheel versions: the local label is added or extended") {
  CHECK(with_local_label("1.2.3", "sitepatch.0123abcd") == "1.2.3+sitepatch.0123abcd");
  CHECK(with_local_label("2.1.0+cu121", "sitepatch.0123abcd") == "2.1.0+cu121.sitepatch.0123abcd");
}

TEST_CASE("wheel METADATA: only the Version header changes, the body's lines stay") {
  std::string meta = "Metadata-Version: 2.1\r\nName: x\r\nVersion: 1.0\r\n\r\nVersion: body text\r\n";
  CHECK(with_metadata_version(meta, "1.0+sitepatch.1") ==
        "Metadata-Version: 2.1\r\nName: x\r\nVersion: 1.0+sitepatch.1\r\n\r\nVersion: body text\r\n");
  CHECK_THROWS_WITH(with_metadata_version("Name: x\n\nVersion: 1\n", "2"), "the wheel's METADATA has no Version header");
  // As parse_metadata reads it: the key in any case, a continuation line is no header.
  CHECK(with_metadata_version("Name: x\nSummary: a\n Version: no\nversion:  1.0\n\n", "1.0+s.1") ==
        "Name: x\nSummary: a\n Version: no\nVersion: 1.0+s.1\n\n");
}

TEST_CASE("wheel RECORD: rows written as Python's csv module writes them, read back the same") {
  std::vector<RecordEntry> rows = {{"pkg/a.py", "sha256=abc", "12"},
                                   {"pkg/with,comma.py", "sha256=def", "3"},
                                   {"pkg/\"quoted\".py", "", ""},
                                   {"pkg-1.0.dist-info/RECORD", "", ""}};
  std::string text = format_record(rows);
  CHECK(text ==
        "pkg/a.py,sha256=abc,12\n\"pkg/with,comma.py\",sha256=def,3\n\"pkg/\"\"quoted\"\".py\",,\n"
        "pkg-1.0.dist-info/RECORD,,\n");
  auto back = parse_record(text);
  REQUIRE(back.size() == rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(back[i].path == rows[i].path);
    CHECK(back[i].hash == rows[i].hash);
    CHECK(back[i].size == rows[i].size);
  }
}
