// PEP 440 specifiers: parsing, checking, and which versions satisfy them.
#include <catch2/catch.hpp>

#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/recipe/version.hpp"

using namespace sitepatch::recipe;

// True when version `v` satisfies specifier `spec` (both must be valid).
static bool ok(const char* spec, const char* v) {
  std::string error;
  auto clauses = parse_specifier(spec, &error);
  INFO(spec << ": " << error);
  REQUIRE(clauses);
  auto version = Version::parse(v);
  REQUIRE(version);
  return satisfies(*version, *clauses);
}

static std::string error_of(const char* spec) {
  std::string error;
  if (parse_specifier(spec, &error)) return "(accepted)";
  return error;
}

TEST_CASE("specifiers parse into clauses", "[recipe]") {
  std::string error;
  auto c = parse_specifier(" >= 0.4 , <0.7,!=0.5.*,===1.0-foo,~=1.4.2 ", &error);
  REQUIRE(c);
  REQUIRE(c->size() == 5);
  CHECK((*c)[0].op == ">=");
  CHECK((*c)[0].version == "0.4");
  CHECK((*c)[1].op == "<");
  CHECK((*c)[2].op == "!=");
  CHECK((*c)[2].version == "0.5.*");
  CHECK((*c)[3].op == "===");
  CHECK((*c)[3].version == "1.0-foo");
  CHECK((*c)[4].op == "~=");
  CHECK(parse_specifier("", &error)->empty());
}

TEST_CASE("malformed specifiers say what is wrong", "[recipe]") {
  CHECK(error_of("0.4") == "`0.4` does not start with an operator (==, !=, <=, >=, <, >, ~=, ===)");
  CHECK(error_of("=0.4") == "`=0.4` does not start with an operator (==, !=, <=, >=, <, >, ~=, ===)");
  CHECK(error_of(">=0.4,,<1") == "empty clause in `>=0.4,,<1`");
  CHECK(error_of(">=") == "`>=` needs a version after it");
  CHECK(error_of(">=abc") == "`abc` in `>=abc` is not a PEP 440 version");
  CHECK(error_of("<1.*") == "`.*` goes only with == and !=, not in `<1.*`");
  CHECK(error_of("==1.0rc1.*") == "`.*` follows release numbers only (as in ==1.2.*), not `==1.0rc1.*`");
  CHECK(error_of("~=1") == "`~=1` needs at least two release numbers (as in ~=1.4)");
  CHECK(error_of(">=1.0+cu121") == "a local version (`+cu121`) goes only with == and !=, not in `>=1.0+cu121`");
  CHECK(error_of("=== a b") == "`===` takes a version without spaces, not `=== a b`");
}

TEST_CASE("a range: >=0.4,<0.7", "[recipe]") {
  CHECK(ok(">=0.4,<0.7", "0.5.3"));
  CHECK(ok(">=0.4,<0.7", "0.4"));
  CHECK(ok(">=0.4,<0.7", "0.6.99"));
  CHECK_FALSE(ok(">=0.4,<0.7", "0.7.0"));
  CHECK_FALSE(ok(">=0.4,<0.7", "0.4.0rc1"));  // a pre-release of 0.4 is before 0.4
  CHECK_FALSE(ok(">=0.4,<0.7", "0.7.0rc1"));  // <0.7 excludes 0.7's own pre-releases
  CHECK_FALSE(ok(">=0.4,<0.7", "0.7.0.dev3"));
  CHECK(ok(">=0.4,<0.7", "0.6.0rc1"));         // pre-releases are not excluded as such
  CHECK(ok(">=0.4,<0.7", "0.5.0+cu121"));      // a local build of an allowed version
}

TEST_CASE("compatible release: ~=", "[recipe]") {
  CHECK(ok("~=1.4.2", "1.4.2"));
  CHECK(ok("~=1.4.2", "1.4.9"));
  CHECK_FALSE(ok("~=1.4.2", "1.5.0"));
  CHECK_FALSE(ok("~=1.4.2", "1.4.1"));
  CHECK(ok("~=1.4", "1.9"));
  CHECK_FALSE(ok("~=1.4", "2.0"));
}

TEST_CASE("equality, wildcards, locals, ===", "[recipe]") {
  CHECK(ok("==1.2.*", "1.2"));
  CHECK(ok("==1.2.*", "1.2.0"));
  CHECK(ok("==1.2.*", "1.2.7.post1"));
  CHECK(ok("==1.2.*", "1.2.0rc1"));
  CHECK_FALSE(ok("==1.2.*", "1.3"));
  CHECK_FALSE(ok("==1.2.*", "1.20"));
  CHECK(ok("!=1.2.*", "1.3"));
  CHECK_FALSE(ok("!=1.2.*", "1.2.5"));
  CHECK(ok("==1.0", "1.0.0"));
  CHECK(ok("==1.0", "1.0+cu121"));  // no local in the specifier: any local build matches
  CHECK_FALSE(ok("==1.0+cu118", "1.0+cu121"));
  CHECK(ok("==1.0+cu121", "1.0+cu121"));
  CHECK_FALSE(ok("==1.0", "1.0.post1"));
  CHECK(ok("!=1.0", "1.0.1"));
  CHECK(ok("===1.0-1", "1.0-1"));          // === compares the text (case aside)
  CHECK(ok("===1.0RC1", "1.0rc1"));
  CHECK_FALSE(ok("===1.0-1", "1.0.post1"));
  CHECK_FALSE(ok("===1.0", "1.0.0"));
}

TEST_CASE("ordered comparisons", "[recipe]") {
  CHECK(ok("<=1.0", "1.0+local"));
  CHECK(ok(">1.0", "1.0.1"));
  CHECK_FALSE(ok(">1.0", "1.0.post1"));  // >V excludes V's post-releases
  CHECK(ok(">1.0.post1", "1.0.post2"));
  CHECK_FALSE(ok(">1.0", "1.0+local"));
  CHECK(ok("<1.0rc2", "1.0rc1"));        // a pre-release bound admits pre-releases
  CHECK(ok(">=1!0.1", "1!0.2"));
  CHECK_FALSE(ok(">=1!0.1", "5.0"));
}

TEST_CASE("requirements split the name from the specifier", "[recipe]") {
  std::string error;
  auto r = parse_requirement("flashinfer-python>=0.4,<0.7", &error);
  REQUIRE(r);
  CHECK(r->name == "flashinfer-python");
  CHECK(r->specifier == ">=0.4,<0.7");
  CHECK(r->clauses.size() == 2);
  CHECK_FALSE(parse_requirement("[x]>=1", &error));
  CHECK(error == "`[x]>=1` does not start with a distribution name");
  CHECK_FALSE(parse_requirement("torch[cuda>=1", &error));
  CHECK(error == "`[` without `]` in `torch[cuda>=1`");
}

TEST_CASE("up_to_next_minor: the floor is the public version, so a local build (+cpu) satisfies it", "[recipe]") {
  CHECK(up_to_next_minor("torch", "2.13.0+cpu") == "torch>=2.13.0,<2.14");
  CHECK(up_to_next_minor("flashinfer-python", "0.5.3") == "flashinfer-python>=0.5.3,<0.6");
  std::string error;
  auto r = parse_requirement(up_to_next_minor("torch", "2.13.0+cpu"), &error);
  REQUIRE(r);
  CHECK(satisfies(*Version::parse("2.13.0+cpu"), r->clauses));
  CHECK_FALSE(satisfies(*Version::parse("2.14.0+cpu"), r->clauses));
}
