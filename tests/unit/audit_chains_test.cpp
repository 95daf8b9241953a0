// What a value holds, through parameter defaults and chains of attributes
// (tests/data/packages/rp-layouts-1.0/rp/chains.py): each function reaches its flagged
// operation only through what the code says an attribute holds, or says it cannot.
#include <catch2/catch.hpp>

#include "audit_support.hpp"

using namespace auditsupport;

namespace {

using V = std::vector<std::string>;
const std::string kBuild = "rp.jit.spec:JitSpec.build_and_load:11 > subprocess.run";

CallGraph from(MemorySource& src, const std::string& function) { return walk(src, dynamo(), {"rp.chains", function, 0}); }

V walked(MemorySource& src, const std::string& function) {
  auto g = from(src, function);
  INFO(function);
  CHECK(unresolved(g) == V{});
  return chains(g);
}

}  // namespace

TEST_CASE("a parameter's default says what it holds when the caller passes nothing", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  // `root: Path = Path("kernels")`: the annotation.
  CHECK(walked(src, "default_annotated") == V{"rp.chains:default_annotated:9 > pathlib.Path.exists"});
  // `root=Path.home()`: Path.home() makes a Path (the default runs at import, not here).
  CHECK(walked(src, "default_call") == V{"rp.chains:default_call:13 > pathlib.Path.mkdir"});
  // `home = Path.home()` in the body: the call is flagged, and so is the method of its result.
  CHECK(walked(src, "via_path_home") ==
        V{"rp.chains:via_path_home:78 > pathlib.Path.home", "rp.chains:via_path_home:79 > pathlib.Path.exists"});
}

TEST_CASE("self.a.b.m(): each attribute through what its class says it holds", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  // Owner.__init__ sets self.cache = Cache(); Cache.__init__ sets self.spec = JitSpec().
  CHECK(walked(src, "Owner.via_init_chain") == V{"rp.chains:Owner.via_init_chain:53 > " + kBuild});
  // `spec: JitSpec` in Annotated's class body.
  CHECK(walked(src, "Owner.via_class_annotation") == V{"rp.chains:Owner.via_class_annotation:56 > " + kBuild});
  // Given.__init__(self, spec: JitSpec) keeps its parameter: self.spec = spec.
  CHECK(walked(src, "Owner.via_parameter_attribute") ==
        V{"rp.chains:Owner.via_parameter_attribute:59 > " + kBuild});
  // Derived says nothing of `cache`; its base's __init__ does.
  CHECK(walked(src, "Owner.via_base_init") == V{"rp.chains:Owner.via_base_init:62 > " + kBuild});
}

TEST_CASE("obj.a.m() where obj's class is known: a local, a parameter through a property, a module instance",
          "[audit]") {
  MemorySource src("rp-layouts-1.0");
  CHECK(walked(src, "via_object_attribute") == V{"rp.chains:via_object_attribute:70 > " + kBuild});
  // WithProperty.cache is a property returning Cache: reading it runs it, so it is walked.
  auto g = from(src, "via_property_chain");
  CHECK(chains(g) == V{"rp.chains:via_property_chain:74 > " + kBuild});
  CHECK(g.functions == 4);  // via_property_chain, WithProperty.cache, Cache.__init__, JitSpec.build_and_load
  CHECK(walked(src, "via_module_instance_chain") == V{"rp.chains:via_module_instance_chain:86 > " + kBuild});
}

TEST_CASE("an attribute no code gives a value to is a call not followed, saying which", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  auto g = from(src, "Owner.unknown_attribute");
  CHECK(g.chains.empty());
  CHECK(unresolved(g) == V{"rp/chains.py:65 rp.chains:Owner.unknown_attribute self.cache.missing.build_and_load "
                           "(attribute `missing`: nothing this analysis follows assigns it)"});
}

TEST_CASE("a Path's own methods and attributes that make a Path", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  // `path = Path(root).resolve()`: resolve() is flagged, and so is the method of its result.
  CHECK(walked(src, "via_resolved_path") == V{"rp.chains:via_resolved_path:90 > pathlib.Path.resolve",
                                              "rp.chains:via_resolved_path:91 > pathlib.Path.exists"});
  // `Path(root).parent.mkdir()`: used to be a dynamic call.
  CHECK(walked(src, "via_path_parent") == V{"rp.chains:via_path_parent:95 > pathlib.Path.mkdir"});
  // Each call of `Path(root).resolve().with_suffix(".so").exists()` that touches the file
  // system: with_suffix, a pure method, is none.
  CHECK(walked(src, "via_method_chain") == V{"rp.chains:via_method_chain:99 > pathlib.Path.exists",
                                             "rp.chains:via_method_chain:99 > pathlib.Path.resolve"});
  // `self.paths.root.parent.mkdir()`: the class annotation `paths: Paths` makes a Paths, but
  // no code the walk follows runs its __init__ (where `self.root = Path(...)`): said.
  auto g = from(src, "Layout.cache_dir");
  CHECK(g.chains.empty());
  CHECK(unresolved(g) == V{"rp/chains.py:111 rp.chains:Layout.cache_dir self.paths.root.parent.mkdir (attribute "
                           "`root`: nothing this analysis follows assigns it)"});
}

TEST_CASE("an attribute the code gives two classes: the method of each", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  // Either.__init__ sets self.spec = JitSpec() or AotSpec(); which runs is not known.
  CHECK(walked(src, "Either.build") ==
        V{"rp.chains:Either.build:122 > " + kBuild,
          "rp.chains:Either.build:122 > rp.jit.spec:AotSpec.build_and_load:66 > open"});
}

TEST_CASE("a local made by a literal has the builtin's methods, one assigned twice is not guessed", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  // `flags = []; flags.append(...)`, an f-string's upper(), `{}`'s get(): builtins, followed.
  auto g = from(src, "via_literals");
  CHECK(g.chains.empty());
  CHECK(unresolved(g).empty());
  // `out = []` then `out = make()`, `make` a parameter of the entry: neither call is known.
  CHECK(unresolved(from(src, "literal_then_call")) ==
        V{"rp/chains.py:135 rp.chains:literal_then_call make (parameter `make`: what its callers pass is not known)",
          "rp/chains.py:136 rp.chains:literal_then_call out.build_and_load (what make() returns is not known)"});
}

TEST_CASE("what a function outside the environment returns: known for a few, else not followed", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  // os.getcwd() is a str and re.search() a re.Match; what urlopen() returns is an object
  // of the standard library (not in this environment's modules): its read() is a call out
  // of the program, as the urlopen itself is (the network rule's).
  auto g = from(src, "via_stdlib_results");
  REQUIRE(g.chains.size() == 1);
  CHECK(g.chains[0].rule.id == "network");
  CHECK(g.chains[0].operation == "urllib.request.urlopen");
  CHECK(unresolved(g) == V{});
}
