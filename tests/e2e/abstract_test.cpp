// An edit of an abstract method changes code that never runs: plan and apply warn, and
// name the overrides that do run (issue 39, item 7).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

testsupport::WheelSpec specs() {
  return {"abspkg", "1.0",
          {{"abspkg/__init__.py", ""},
           {"abspkg/base.py",
            "import abc\n\n\nclass Spec(abc.ABC):\n    @abc.abstractmethod\n    def build(self):\n"
            "        \"\"\"Build it.\"\"\"\n\n\nclass Legacy:\n    def run(self):\n"
            "        raise NotImplementedError(\"subclasses run\")\n\n    def name(self):\n        return 'legacy'\n"},
           {"abspkg/nvcc.py",
            "from .base import Legacy, Spec\n\n\nclass NvccSpec(Spec):\n    def build(self):\n        return 'nvcc'\n\n\n"
            "class Sub(NvccSpec):\n    def build(self):\n        return 'sub'\n\n\n"
            "class LegacyImpl(Legacy):\n    def run(self):\n        return 1\n"}}};
}

}  // namespace

TEST_CASE("an edit of an abstract method is warned about, naming the overrides that run", "[e2e][plan]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  venv.install(testsupport::build_wheel(specs(), tmp.path + "/wheels"));
  std::string recipe = tmp.path + "/r.yaml";
  testsupport::spit(recipe,
                    "id: abs\nedits:\n  - module: abspkg.base\n    function: Spec.build\n    prepend-body: x = 1\n"
                    "  - module: abspkg.base\n    function: Legacy.run\n    prepend-body: y = 2\n"
                    "  - module: abspkg.base\n    function: Legacy.name\n    prepend-body: z = 3\n");
  auto r = testsupport::run_sitepatch({"--venv", venv.root, "plan", recipe});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("warning: Spec.build is abstract (@abstractmethod): what runs is an override, which this edit "
                   "leaves as it is: NvccSpec.build (abspkg/nvcc.py:5), Sub.build (abspkg/nvcc.py:10); target those "
                   "instead\n") != std::string::npos);
  CHECK(r.err.find("warning: Legacy.run is abstract (its body only raises NotImplementedError): what runs is an "
                   "override, which this edit leaves as it is: LegacyImpl.run (abspkg/nvcc.py:15); target those "
                   "instead\n") != std::string::npos);
  CHECK(r.err.find("Legacy.name is abstract") == std::string::npos);
  auto j = testsupport::run_sitepatch({"--venv", venv.root, "--json", "plan", recipe});
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["edits"][0]["warning"].get<std::string>().find("NvccSpec.build (abspkg/nvcc.py:5)") != std::string::npos);
  CHECK(doc["edits"][2]["warning"].is_null());
}

TEST_CASE("after an upgrade added a decorator, reapply says which side of it the new one went",
          "[e2e][upgrade]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  auto version = [&](const std::string& v, const std::string& above) {
    return testsupport::build_wheel({"deckern", v,
                                     {{"deckern/__init__.py", "import functools\n\n\ndef api(f):\n    return f\n\n\n" +
                                                                  above + "def quantize(x):\n    return x\n"}}},
                                    tmp.path + "/wheels");
  };
  venv.install(version("1.0", ""));
  std::string recipe = tmp.path + "/r.yaml";
  testsupport::spit(recipe, "id: r\nedits:\n  - module: deckern\n    function: quantize\n    add-decorator: "
                            "functools.cache\n");
  auto first = testsupport::run_sitepatch({"--venv", venv.root, "apply", recipe});
  INFO(first.err);
  REQUIRE(first.status == 0);
  // Alone on the def: nothing to say where it went.
  CHECK(first.err.find("add-decorator  (deckern/__init__.py:8)\n") != std::string::npos);
  venv.upgrade(version("1.1", "@api\n"));
  auto again = testsupport::run_sitepatch({"--venv", venv.root, "reapply", "r"});
  INFO(again.err);
  REQUIRE(again.status == 0);
  CHECK(again.err.find("will apply  r  deckern:quantize  add-decorator  (deckern/__init__.py:9, outermost: above "
                       "@api)\n") != std::string::npos);
  CHECK(testsupport::slurp(venv.site_packages + "/deckern/__init__.py").find("@functools.cache\n@api\ndef quantize") !=
        std::string::npos);
}
