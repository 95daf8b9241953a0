// Issue 27: the walk follows a method call to every override in the subclasses it has
// read, and an abstract method nothing overrides is a call it could not follow, never a
// resolved one.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

const char* kSpec = R"(import abc
import os
import subprocess


class Spec(abc.ABC):
    @abc.abstractmethod
    def build(self):
        ...

    def build_and_load(self):
        self.build()
        return 1


class NinjaSpec(Spec):
    def build(self):
        subprocess.run(["ninja"])


def gen() -> Spec:
    return NinjaSpec()


def entry():
    gen().build_and_load()


class Loader:
    def run(self):
        return self.hook()

    def hook(self):
        return None


class FileLoader(Loader):
    def hook(self):
        return open("/etc/hostname").read()


def load():
    return FileLoader().run()


class A:
    def go(self):
        return 1


class B:
    def go(self):
        return os.listdir(".")


BACKENDS = {"a": A, "b": B}


def pick(name):
    return BACKENDS[name]().go()


class Lonely(abc.ABC):
    def work(self):
        """Subclasses do the work."""
        raise NotImplementedError


def lonely(x: Lonely):
    return x.work()


class Quiet:
    def close(self):
        ...


def closes(q: Quiet):
    q.close()


def make_spec(fast):
    if fast:
        return NinjaSpec()
    return NinjaSpec()


def unannotated():
    make_spec(True).build_and_load()
)";

const char* kProps = R"(import pathlib


class Built:
    @property
    def path(self) -> pathlib.Path:
        return pathlib.Path("/tmp/x")

    @property
    def is_built(self) -> bool:
        return self.path.exists()

    def load(self):
        if self.is_built:
            return 1
        return 0

    def ready(self):
        return not self.is_built and True

    def label(self):
        return f"built={self.is_built}"


def load_built():
    return Built().load()


def ready():
    return Built().ready()


def label():
    return Built().label()
)";

struct DispatchEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  DispatchEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    testsupport::spit(venv.site_packages + "/dispatchy/__init__.py", "");
    testsupport::spit(venv.site_packages + "/dispatchy/spec.py", kSpec);
    testsupport::spit(venv.site_packages + "/dispatchy/props.py", kProps);
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
};

}  // namespace

TEST_CASE("audit follows an abstract method to the subclass that implements it", "[e2e][audit]") {
  DispatchEnv env;
  auto r = env.sp({"audit", "dispatchy.spec:entry"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("[1] subprocess.run (process, error: spawns a process, which dynamo cannot trace)\n"
                   "    dispatchy.spec:entry                dispatchy/spec.py:26\n"
                   "    dispatchy.spec:Spec.build_and_load  dispatchy/spec.py:12\n"
                   "    dispatchy.spec:NinjaSpec.build      dispatchy/spec.py:18  (via subclass "
                   "dispatchy.spec.NinjaSpec)\n") != std::string::npos);
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:entry"}).out);
  REQUIRE(j["chains"].size() == 1);
  CHECK(j["chains"][0]["steps"][2]["via"] == "via subclass dispatchy.spec.NinjaSpec");
  CHECK(j["chains"][0]["steps"][1]["via"].is_null());
  CHECK(j["complete"] == true);
}

TEST_CASE("audit follows a base method's hook to a subclass's override", "[e2e][audit]") {
  DispatchEnv env;
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:load"}).out);
  REQUIRE(j["chains"].size() == 1);
  CHECK(j["chains"][0]["operation"] == "open");
  CHECK(j["chains"][0]["steps"].back()["function"] == "dispatchy.spec:FileLoader.hook");
}

TEST_CASE("audit follows a method of every class in a dict of classes", "[e2e][audit]") {
  DispatchEnv env;
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:pick"}).out);
  REQUIRE(j["chains"].size() == 1);
  CHECK(j["chains"][0]["operation"] == "os.listdir");
  CHECK(j["chains"][0]["steps"].back()["function"] == "dispatchy.spec:B.go");
}

TEST_CASE("an abstract method nothing overrides leaves the answer incomplete, and --strict says so",
          "[e2e][audit]") {
  DispatchEnv env;
  auto r = env.sp({"audit", "dispatchy.spec:lonely"});
  INFO(r.out + r.err);
  CHECK(r.out.find("every call on the way was resolved") == std::string::npos);
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:lonely"}).out);
  CHECK(j["complete"] == false);
  REQUIRE(j["unresolved"].size() == 1);
  CHECK(j["unresolved"][0]["call"] == "x.work");
  CHECK(j["unresolved"][0]["why"] ==
        "abstract method dispatchy.spec.Lonely.work: no subclass the walk read overrides it");
  auto strict = env.sp({"audit", "--strict", "dispatchy.spec:lonely"});
  CHECK(strict.status == 3);
}

TEST_CASE("a property read in a condition, a boolean operator or an f-string runs it", "[e2e][audit]") {
  DispatchEnv env;
  for (std::string entry : {"load_built", "ready", "label"}) {
    INFO(entry);
    auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.props:" + entry}).out);
    REQUIRE(j["chains"].size() == 1);
    CHECK(j["chains"][0]["operation"] == "pathlib.Path.exists");
    CHECK(j["chains"][0]["steps"].back()["function"] == "dispatchy.props:Built.is_built");
  }
}

TEST_CASE("what an unannotated function returns is what all its returns make", "[e2e][audit]") {
  DispatchEnv env;
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:unannotated"}).out);
  REQUIRE(j["chains"].size() == 1);
  CHECK(j["chains"][0]["operation"] == "subprocess.run");
  CHECK(j["chains"][0]["steps"][1]["function"] == "dispatchy.spec:Spec.build_and_load");
  CHECK(j["complete"] == true);
}

TEST_CASE("a method whose body is `...` is abstract only in an ABC or a Protocol", "[e2e][audit]") {
  DispatchEnv env;
  // Quiet.close does nothing: resolved, complete.
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:closes"}).out);
  CHECK(j["complete"] == true);
  CHECK(j["unresolved"].empty());
}
