// The value-flow audit on modules held in memory: what it says of calls it cannot follow,
// cycles, bases read through imports, abstract methods, star imports, missing entries.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "sitepatch/audit/flow.hpp"
#include "sitepatch/util/error.hpp"

namespace {

using sitepatch::audit::CallGraph;
using sitepatch::audit::RuleSet;
using sitepatch::audit::WalkOptions;
using sitepatch::audit::flow::ModuleText;

class FlowTexts : public sitepatch::audit::flow::ModuleTexts {
 public:
  explicit FlowTexts(std::map<std::string, std::string> files) : files_(std::move(files)) {}
  std::optional<ModuleText> text(const std::string& module) override {
    std::string path = module;
    std::replace(path.begin(), path.end(), '.', '/');
    for (bool package : {true, false}) {
      auto it = files_.find(path + (package ? "/__init__.py" : ".py"));
      if (it != files_.end()) return ModuleText{it->second, it->first, "/site", package, false, ""};
    }
    return std::nullopt;
  }
  std::vector<std::string> siblings(const std::string&) override { return {"pkg.api", "pkg.jit"}; }

 private:
  std::map<std::string, std::string> files_;
};

CallGraph flow_walk(std::map<std::string, std::string> files, const std::string& module, const std::string& function,
                    int line = 0) {
  FlowTexts texts(std::move(files));
  RuleSet rules;
  rules.add(sitepatch::audit::builtin_rules());
  WalkOptions o;
  o.module = module;
  o.function = function;
  o.line = line;
  return sitepatch::audit::flow::walk(texts, rules, o);
}

std::vector<std::string> flow_chains(const CallGraph& g) {
  std::vector<std::string> out;
  for (auto& c : g.chains) out.push_back(c.operation + " <- " + c.steps.back().name() + ":" + std::to_string(c.steps.back().line));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("flow audit: a call no value reaches is said, with where its callee came from", "[audit][flow]") {
  auto g = flow_walk({{"pkg/__init__.py", ""},
                 {"pkg/m.py",
                  "def make(kind):\n"
                  "    return kind\n"
                  "\n"
                  "def f(handlers, name, kind):\n"
                  "    handlers[name]()\n"
                  "    obj = make(kind)\n"
                  "    getattr(obj, name)()\n"
                  "    kind.run()\n"}},
                "pkg.m", "f");
  std::vector<std::string> why;
  for (auto& u : g.unresolved) why.push_back(std::to_string(u.line) + " " + u.call + ": " + u.why);
  std::sort(why.begin(), why.end());
  CHECK(why == std::vector<std::string>{"5 handlers[name]: an item whose value is not known",
                                        "7 getattr(obj, name): getattr with a name known only at run time",
                                        "8 kind.run: attribute `run` of parameter `kind`, whose value is not known"});
}

TEST_CASE("flow audit: of a function defined in each arm of an if, the walk starts from the one a line names",
          "[audit][flow]") {
  std::map<std::string, std::string> files = {{"pkg/__init__.py", ""},
                                              {"pkg/train.py",
                                               "import os, subprocess, sys\n"
                                               "\n"
                                               "if sys.argv[1] == 'fast':\n"
                                               "    def step(x):\n"
                                               "        return os.path.exists('/opt/fast')\n"
                                               "else:\n"
                                               "    def step(x):\n"
                                               "        return subprocess.run(['nvcc', '--version'])\n"}};
  // A traceback's line inside the second definition: only what that one reaches.
  auto second = flow_chains(flow_walk(files, "pkg.train", "step", 8));
  REQUIRE(second.size() == 1);
  CHECK(second[0].rfind("subprocess.run <- pkg.train:step:8", 0) == 0);
  auto first = flow_chains(flow_walk(files, "pkg.train", "step", 5));
  REQUIRE(first.size() == 1);
  CHECK(first[0].rfind("os.path.exists <- pkg.train:step:5", 0) == 0);
  // No line: the top level's binding decides, and here either may be bound.
  CHECK(flow_chains(flow_walk(files, "pkg.train", "step")).size() >= 1);
}

TEST_CASE("flow audit: cycles of the call graph, and --depth", "[audit][flow]") {
  std::map<std::string, std::string> files{{"pkg/__init__.py", ""},
                                           {"pkg/m.py",
                                            "import os\n"
                                            "def a(n):\n"
                                            "    return b(n)\n"
                                            "def b(n):\n"
                                            "    os.listdir('.')\n"
                                            "    return a(n - 1)\n"
                                            "def entry():\n"
                                            "    a(3)\n"}};
  auto g = flow_walk(files, "pkg.m", "entry");
  CHECK(g.cycles == std::vector<std::vector<std::string>>{{"pkg.m:a", "pkg.m:b"}});
  CHECK(flow_chains(g) == std::vector<std::string>{"os.listdir <- pkg.m:b:5"});
  FlowTexts texts(files);
  RuleSet rules;
  rules.add(sitepatch::audit::builtin_rules());
  WalkOptions o{"pkg.m", "entry", 2};
  auto shallow = sitepatch::audit::flow::walk(texts, rules, o);
  CHECK(shallow.chains.empty());
  CHECK(shallow.beyond_depth == 1);
}

TEST_CASE("flow audit: a base class imported from another module gives its methods", "[audit][flow]") {
  auto g = flow_walk({{"pkg/__init__.py", ""},
                 {"pkg/_api.py",
                  "class Base:\n"
                  "    def __init__(self, path):\n"
                  "        self.path = path\n"
                  "    def acquire(self):\n"
                  "        self._acquire()\n"
                  "    def _acquire(self):\n"
                  "        raise NotImplementedError\n"},
                 {"pkg/unix.py",
                  "import os\n"
                  "from ._api import Base\n"
                  "class Unix(Base):\n"
                  "    def _acquire(self):\n"
                  "        os.makedirs(self.path)\n"
                  "def load(path):\n"
                  "    Unix(path).acquire()\n"}},
                "pkg.unix", "load");
  CHECK(flow_chains(g) == std::vector<std::string>{"os.makedirs <- pkg.unix:Unix._acquire:5"});
  REQUIRE(g.chains.size() == 1);
  CHECK(g.chains[0].steps.back().via == "via subclass pkg.unix.Unix");
}

TEST_CASE("flow audit: an abstract method of an annotated receiver runs the overrides of the subclasses made",
          "[audit][flow]") {
  std::map<std::string, std::string> files{
      {"pkg/__init__.py", "from ._api import Base\nfrom ._soft import Soft\nfrom ._hard import Hard\n"},
      {"pkg/_api.py",
       "class Base:\n"
       "    def acquire(self):\n"
       "        self._acquire()\n"
       "    def _acquire(self):\n"
       "        raise NotImplementedError\n"},
      {"pkg/_soft.py", "import time\nfrom ._api import Base\nclass Soft(Base):\n    def _acquire(self):\n        time.sleep(1)\n"},
      {"pkg/_hard.py", "import os\nfrom ._api import Base\nclass Hard(Base):\n    def _acquire(self):\n        os.makedirs('x')\n"},
      {"user.py",
       "from pkg import Base, Soft\n"
       "def any_lock(lock: Base):\n"
       "    lock.acquire()\n"
       "def soft():\n"
       "    any_lock(Soft())\n"}};
  auto made = flow_walk(files, "user", "soft");
  CHECK(flow_chains(made) == std::vector<std::string>{"time.sleep <- pkg._soft:Soft._acquire:5"});
  // Nothing made: the override that runs is not known, and said so.
  auto none = flow_walk(files, "user", "any_lock");
  CHECK(none.chains.empty());
  REQUIRE(none.unresolved.size() == 1);
  CHECK(none.unresolved[0].call == "self._acquire");
  CHECK(none.unresolved[0].why == "abstract method pkg._api.Base._acquire: no subclass the walk read overrides it");
}

TEST_CASE("flow audit: a star import binds __all__'s names, and a compiled one's names are said", "[audit][flow]") {
  auto g = flow_walk({{"pkg/__init__.py",
                  "from pkg._impl import *\n"
                  "from pkg._native import *\n"
                  "def __getattr__(name):\n"
                  "    import importlib\n"
                  "    return importlib.import_module('pkg.' + name)\n"},
                 {"pkg/_impl.py",
                  "import subprocess\n__all__ = ['public_run']\n"
                  "def public_run():\n    subprocess.run(['true'])\n"
                  "def also_public():\n    subprocess.check_output(['true'])\n"},
                 {"user.py", "import pkg\ndef f():\n    pkg.public_run()\n    pkg.also_public()\n    return open('x')\n"}},
                "user", "f");
  CHECK(flow_chains(g) == std::vector<std::string>{"open <- user:f:5", "subprocess.run <- pkg._impl:public_run:4"});
  REQUIRE(g.unresolved.size() == 1);
  CHECK(g.unresolved[0].call == "pkg.also_public");
  CHECK(g.unresolved[0].why == "made by the compiled module pkg._native (a star import binds it), which the walk cannot read");
}

TEST_CASE("flow audit: a missing entry names the nearest names", "[audit][flow]") {
  std::map<std::string, std::string> files{{"pkg/__init__.py", ""},
                                           {"pkg/api.py", "class Spec:\n    pass\nLIMIT = 3\ndef quantize():\n    pass\n"}};
  auto message = [&](const std::string& module, const std::string& function) {
    try {
      flow_walk(files, module, function);
    } catch (const sitepatch::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("pkg.api", "quantise") ==
        "function `quantise` is not defined in module pkg.api (pkg/api.py); did you mean quantize?");
  CHECK(message("pkg.api", "Spec") == "`Spec` in module pkg.api (pkg/api.py) is a class; name one of its methods "
                                      "(Spec.__init__, ...)");
  CHECK(message("pkg.api", "LIMIT") == "`LIMIT` in module pkg.api (pkg/api.py) is a variable, not a function defined with def");
  CHECK(message("pkg.apy", "quantize") == "module `pkg.apy` not found in the environment; did you mean pkg.api, pkg.jit?");
}

TEST_CASE("flow audit: a comparison of two literals decides a branch, and lru_cache(N) is a decorator",
          "[audit][flow]") {
  std::map<std::string, std::string> files{{"pkg/__init__.py", ""},
                                           {"pkg/m.py",
                                            "import functools\n"
                                            "import subprocess\n"
                                            "import sys\n"
                                            "IS_WINDOWS = sys.platform == 'win32'\n"
                                            "IS_LINUX = sys.platform != 'win32'\n"
                                            "\n"
                                            "@functools.lru_cache(1)\n"
                                            "def search(s):\n"
                                            "    return subprocess.check_output(s)\n"
                                            "\n"
                                            "def f():\n"
                                            "    if IS_WINDOWS:\n"
                                            "        subprocess.run(['where', 'cl'])\n"
                                            "    if IS_LINUX:\n"
                                            "        return search(('cc',))\n"}};
  CHECK(flow_chains(flow_walk(files, "pkg.m", "f")) ==
        std::vector<std::string>{"subprocess.check_output <- pkg.m:search:9"});
}

TEST_CASE("flow audit: the callers' literal arguments close a branch, said as left out, and so do the entry's "
          "own defaults",
          "[audit][flow]") {
  std::map<std::string, std::string> files{{"pkg/__init__.py", ""},
                                           {"pkg/m.py",
                                            "import os\n"
                                            "\n"
                                            "def build(name, verbose=False):\n"
                                            "    if not verbose:\n"
                                            "        return name\n"
                                            "    os.listdir(name)\n"
                                            "    return name\n"
                                            "\n"
                                            "def quiet():\n"
                                            "    return build('x')\n"}};
  auto q = flow_walk(files, "pkg.m", "quiet");
  CHECK(q.chains.empty());
  REQUIRE(q.ruled_out.size() == 1);
  CHECK(q.ruled_out[0].call == "os.listdir");
  CHECK(q.ruled_out[0].line == 6);
  CHECK(q.ruled_out[0].why == "runs only if verbose; every call passes verbose=False");
  // The entry called with its defaults: the arm only verbose=True opens is listed, not walked.
  auto b = flow_walk(files, "pkg.m", "build");
  CHECK(b.chains.empty());
  REQUIRE(b.ruled_out.size() == 1);
  CHECK(b.ruled_out[0].call == "os.listdir");
  CHECK(b.ruled_out[0].why == "runs only if verbose; the entry's default is verbose=False");
}

TEST_CASE("flow audit: getattr over a small module runs each of its functions, and is not complete",
          "[audit][flow]") {
  std::map<std::string, std::string> files{{"pkg/__init__.py", ""},
                                           {"pkg/acts.py",
                                            "import os\n"
                                            "def relu():\n"
                                            "    os.listdir('.')\n"
                                            "def gelu():\n"
                                            "    os.getcwd()\n"},
                                           {"pkg/m.py",
                                            "from pkg import acts\n"
                                            "def f(name):\n"
                                            "    return getattr(acts, name)()\n"}};
  auto g = flow_walk(files, "pkg.m", "f");
  std::vector<std::string> ops;
  for (auto& c : g.chains) ops.push_back(c.operation);
  std::sort(ops.begin(), ops.end());
  CHECK(std::find(ops.begin(), ops.end(), "os.listdir") != ops.end());
  REQUIRE(g.unresolved.size() == 1);
  CHECK(g.unresolved[0].why == "an attribute of pkg.acts named only at run time: each function and class it binds "
                               "is followed, but which one runs is the run's choice");
}

TEST_CASE("flow audit: a parameter given back as it was given is each call's own result", "[audit][flow]") {
  // An identity decorator (typing_extensions.override) and a method returning self: with
  // one return variable per function, A.run would be B.run too, and P().chain() a Q.
  std::map<std::string, std::string> files{{"pkg/__init__.py", ""},
                                           {"pkg/m.py",
                                            "import os\n"
                                            "import subprocess\n"
                                            "def override(f):\n"
                                            "    f.__override__ = True\n"
                                            "    return f\n"
                                            "class A:\n"
                                            "    @override\n"
                                            "    def run(self):\n"
                                            "        subprocess.run(['a'])\n"
                                            "class B:\n"
                                            "    @override\n"
                                            "    def run(self):\n"
                                            "        os.system('b')\n"
                                            "class Builder:\n"
                                            "    def chain(self, flag=None):\n"
                                            "        out = self if flag is None else self\n"
                                            "        return out\n"
                                            "class P(Builder):\n"
                                            "    def go(self):\n"
                                            "        subprocess.check_output(['p'])\n"
                                            "class Q(Builder):\n"
                                            "    def go(self):\n"
                                            "        os.remove('q')\n"
                                            "def f():\n"
                                            "    A().run()\n"
                                            "    Q().chain()\n"
                                            "    P().chain().go()\n"}};
  CHECK(flow_chains(flow_walk(files, "pkg.m", "f")) ==
        std::vector<std::string>{"subprocess.check_output <- pkg.m:P.go:20", "subprocess.run <- pkg.m:A.run:9"});
}

TEST_CASE("flow audit: a registry a decorator factory fills keeps each key's own function", "[audit][flow]") {
  // The factory's parameter and the decorated function are each call's own (a clone per
  // call site), so the slot "fast" holds only the function registered under it. A script
  // and the modules beside it are the program: their import-time calls run.
  auto g = flow_walk({{"plugins.py",
                       "HANDLERS = {}\n"
                       "def handler(kind):\n"
                       "    def add(f):\n"
                       "        HANDLERS[kind] = f\n"
                       "        return f\n"
                       "    return add\n"
                       "def lookup(kind):\n"
                       "    return HANDLERS[kind]\n"},
                      {"impls.py",
                       "import os, shutil\n"
                       "from plugins import handler, lookup\n"
                       "@handler('fast')\n"
                       "def fast(p):\n"
                       "    os.remove(p)\n"
                       "@handler('slow')\n"
                       "def slow(p):\n"
                       "    shutil.rmtree(p)\n"},
                      {"app.py",
                       "import impls\n"
                       "def go(p):\n"
                       "    impls.lookup('fast')(p)\n"}},
                     "app", "go");
  std::vector<std::string> called;
  for (auto& e : g.edges)
    if (e.from == "app:go") called.push_back(e.to);
  std::sort(called.begin(), called.end());
  CHECK(called == std::vector<std::string>{"impls:fast", "plugins:lookup"});
  CHECK(flow_chains(g) == std::vector<std::string>{"os.remove <- impls:fast:5"});
}

TEST_CASE("flow audit: a test joined by `or` or `and` closes an arm when no alternative can pass, inner tests included",
          "[audit][flow]") {
  std::map<std::string, std::string> files{{"pkg/__init__.py", ""},
                                           {"pkg/m.py",
                                            "import os, subprocess\n"
                                            "def check(mode, known):\n"
                                            "    if (mode is False) or (mode == 'ask' and not known):\n"
                                            "        if known:\n"
                                            "            os.listdir('.')\n"  // 5: needs known and not known
                                            "        subprocess.run(['x'])\n"  // 6: mode 'ask', known False
                                            "    if mode == 'never' or mode is None:\n"
                                            "        os.getcwd()\n"  // 8: no alternative passes
                                            "def entry(known):\n"
                                            "    check('ask', known)\n"}};
  auto g = flow_walk(files, "pkg.m", "entry");
  CHECK(flow_chains(g) == std::vector<std::string>{"subprocess.run <- pkg.m:check:6"});
}

TEST_CASE("flow audit: a dataclass made with no __init__ of its own runs each field's default factory",
          "[audit][flow]") {
  std::map<std::string, std::string> files{{"pkg/__init__.py", ""},
                                           {"pkg/cfg.py",
                                            "import dataclasses, subprocess\n"
                                            "def probe_arch():\n"
                                            "    return subprocess.check_output(['nvidia-smi'])\n"
                                            "@dataclasses.dataclass\n"
                                            "class Settings:\n"
                                            "    name: str = 'x'\n"
                                            "    arch: bytes = dataclasses.field(default_factory=probe_arch)\n"},
                                           {"pkg/m.py",
                                            "from pkg.cfg import Settings\n"
                                            "def load():\n"
                                            "    return Settings()\n"}};
  auto g = flow_walk(files, "pkg.m", "load");
  CHECK(flow_chains(g) == std::vector<std::string>{"subprocess.check_output <- pkg.cfg:probe_arch:3"});
}

// torch 2.13's Tensor.__init__ ends up holding the class Tensor itself (what setattr loops
// over its methods store): making a Tensor ran __init__, which made a Tensor, which ran
// __init__... until the stack ran out (sitepatch audit crashed on any function under
// @torch.compiler.disable there). A class whose __init__ or __new__ is a class, itself or
// through another, is made once per call.
TEST_CASE("flow audit: a class whose __init__ is a class (itself or one that comes back) is made once per call",
          "[audit][flow]") {
  std::map<std::string, std::string> files{{"pkg/__init__.py", ""},
                                           {"pkg/m.py",
                                            "import subprocess\n"
                                            "class A:\n"
                                            "    pass\n"
                                            "class B:\n"
                                            "    def __new__(cls, *args):\n"
                                            "        subprocess.check_output(['y'])\n"
                                            "        return object.__new__(cls)\n"
                                            "A.__init__ = A\n"
                                            "B.__init__ = A\n"
                                            "A.__new__ = B\n"
                                            "def make():\n"
                                            "    subprocess.run(['x'])\n"
                                            "    return A()\n"}};
  auto g = flow_walk(files, "pkg.m", "make");
  CHECK(flow_chains(g) == std::vector<std::string>{"subprocess.check_output <- pkg.m:B.__new__:6",
                                                  "subprocess.run <- pkg.m:make:12"});
}
