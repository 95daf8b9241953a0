// PEP 440 versions: every spelling parses, and they sort as pip sorts them.
#include <catch2/catch.hpp>

#include "sitepatch/recipe/version.hpp"

using namespace sitepatch::recipe;

static Version V(const char* s) {
  auto v = Version::parse(s);
  INFO("version " << s);
  REQUIRE(v);
  return *v;
}

TEST_CASE("versions parse into their parts", "[recipe]") {
  Version v = V("1!2.3.4rc5.post6.dev7+ubuntu.1");
  CHECK(v.epoch == 1);
  CHECK(v.release == std::vector<long>{2, 3, 4});
  CHECK(v.pre == std::make_pair('c', 5L));
  CHECK(v.post == 6);
  CHECK(v.dev == 7);
  CHECK(v.local == "ubuntu.1");
  CHECK(v.text == "1!2.3.4rc5.post6.dev7+ubuntu.1");

  Version plain = V("0.4");
  CHECK(plain.epoch == 0);
  CHECK_FALSE(plain.pre);
  CHECK_FALSE(plain.post);
  CHECK_FALSE(plain.dev);
  CHECK(plain.local.empty());
}

TEST_CASE("the other spellings PEP 440 normalizes", "[recipe]") {
  // Each pair is the same version.
  const std::vector<std::pair<const char*, const char*>> same = {
      {"1.0alpha1", "1.0a1"},  {"1.0-beta.2", "1.0b2"}, {"1.0c1", "1.0rc1"},      {"1.0pre1", "1.0rc1"},
      {"1.0preview1", "1.0rc1"}, {"1.0RC1", "1.0rc1"},  {"1.0a", "1.0a0"},        {"1.0-1", "1.0.post1"},
      {"1.0.post1", "1.0post1"}, {"1.0rev1", "1.0.post1"}, {"1.0r1", "1.0.post1"}, {"1.0.post", "1.0.post0"},
      {"1.0-dev1", "1.0.dev1"}, {"1.0dev", "1.0.dev0"}, {"v1.0", "1.0"},          {"V1.0", "1.0"},
      {" 1.0 ", "1.0"},        {"1.0+Ubuntu-1", "1.0+ubuntu.1"}, {"01.02", "1.2"}, {"1.0_a_1", "1.0a1"},
  };
  for (auto& [a, b] : same) {
    INFO(a << " vs " << b);
    CHECK(V(a).compare(V(b)) == 0);
  }
  CHECK(V("1.0-beta.2").pre == std::make_pair('b', 2L));
  CHECK(V("1.0-1").post == 1);
}

TEST_CASE("a version's normal form, as PEP 440 writes it", "[recipe]") {
  const std::vector<std::pair<const char*, const char*>> normal = {
      {"1.0-1", "1.0.post1"},       {"v2.0", "2.0"},           {" 1.0 ", "1.0"},         {"1.0.POST1", "1.0.post1"},
      {"1.0+A_B", "1.0+a.b"},       {"1.0+a-b", "1.0+a.b"},    {"1!2.0rc1", "1!2.0rc1"}, {"1.0c1", "1.0rc1"},
      {"1.0alpha1.dev2", "1.0a1.dev2"}, {"01.02", "1.2"},       {"2.1.0+cu121", "2.1.0+cu121"},
  };
  for (auto& [given, want] : normal) {
    INFO(given);
    CHECK(V(given).normalized() == want);
  }
}

TEST_CASE("not versions", "[recipe]") {
  for (const char* s : {"", "abc", "1.0x", "1..0", "1.0+", "1.0+a..b", "=1.0", "1.0 rc1 x", "1!", "1.*"}) {
    INFO("'" << s << "'");
    CHECK_FALSE(Version::parse(s));
  }
}

TEST_CASE("PEP 440 ordering", "[recipe]") {
  // Each version is strictly greater than the one before it.
  const std::vector<const char*> ascending = {
      "1.0.dev1", "1.0a1.dev1", "1.0a1", "1.0a2", "1.0b2", "1.0rc1", "1.0", "1.0+local", "1.0.post1.dev1",
      "1.0.post1", "1.0.post2", "1.0.1", "1.1.dev0", "1.1", "2.0", "10.0", "1!0.1"};
  for (size_t i = 0; i + 1 < ascending.size(); ++i) {
    INFO(ascending[i] << " < " << ascending[i + 1]);
    CHECK(V(ascending[i]).compare(V(ascending[i + 1])) < 0);
    CHECK(V(ascending[i + 1]).compare(V(ascending[i])) > 0);
  }
}

TEST_CASE("trailing zeros do not matter, epochs and locals do", "[recipe]") {
  CHECK(V("1.0").compare(V("1.0.0")) == 0);
  CHECK(V("1").compare(V("1.0.0.0")) == 0);
  CHECK(V("0!1.0").compare(V("1.0")) == 0);
  CHECK(V("1!1.0").compare(V("2.0")) > 0);
  // Local labels: none < any; numbers beat letters; more segments win a tie.
  CHECK(V("1.0").compare(V("1.0+abc")) < 0);
  CHECK(V("1.0+abc").compare(V("1.0+1")) < 0);
  CHECK(V("1.0+2").compare(V("1.0+10")) < 0);
  CHECK(V("1.0+cu121").compare(V("1.0+cu121.1")) < 0);
  CHECK(V("1.0+abc").compare(V("1.0+abd")) < 0);
}

TEST_CASE("PEP 503 names", "[recipe]") {
  CHECK(normalize_name("FlashInfer_Python") == "flashinfer-python");
  CHECK(normalize_name("flashinfer.python") == "flashinfer-python");
  CHECK(normalize_name("Foo__-.Bar") == "foo-bar");
  CHECK(normalize_name("torch") == "torch");
}
