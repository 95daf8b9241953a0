// Rollback is computed from the history, whatever the order: random sequences of apply,
// reinstall, upgrade, downgrade, reapply and rollback over four recipes that share two
// files, each step checked against pip's bytes and pip's RECORD. Each recipe leaves a
// token (SPX_rN) in the files it edits, so what is in a file can be read off it.
//
// The seed is printed; SITEPATCH_PROPERTY_SEED replays one, SITEPATCH_PROPERTY_RUNS
// sets how many sequences (CI runs the default, 60; a different seed each run).
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>
#include <random>
#include <set>

#include "e2e_support.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace fs = std::filesystem;

namespace {

// Four functions per file; version 1.1 adds a helper on top and changes a body, so an
// upgrade moves every edit's lines.
std::string module_text(const std::string& file, bool newer) {
  std::string t = "import os\n\n";
  if (newer) t += "\ndef helper():\n    return os.sep\n\n";
  for (int k = 0; k < 4; ++k) {
    t += "\ndef f" + std::to_string(k) + "(x):\n";
    t += "    y = x + " + std::to_string(k) + "\n";
    if (newer && k == 2) t += "    y = y * 2\n";
    t += "    return y  # " + file + "\n\n";
  }
  return t;
}

testsupport::WheelSpec package(bool newer) {
  return {"stackpkg", newer ? "1.1" : "1.0",
          {{"stackpkg/__init__.py", ""}, {"stackpkg/a.py", module_text("a", newer)},
           {"stackpkg/b.py", module_text("b", newer)}}};
}

// r0..r3, each touching both files; r3 also decorates a function r0 replaces the body of
// (lines next to each other: some orders of rollback must refuse rather than guess).
const std::vector<std::pair<std::string, std::string>> kRecipes = {
    {"r0",
     "id: r0\nedits:\n  - module: stackpkg.a\n    function: f0\n    replace-body: |\n      return 'SPX_r0'\n"
     "  - module: stackpkg.b\n    function: f1\n    prepend-body: |\n      _t = 'SPX_r0'\n"},
    {"r1",
     "id: r1\nedits:\n  - module: stackpkg.a\n    function: f1\n    replace-body: |\n      return 'SPX_r1'\n"
     "  - module: stackpkg.b\n    function: f0\n    replace-body: |\n      return 'SPX_r1'\n"},
    {"r2",
     "id: r2\nedits:\n  - module: stackpkg.a\n    function: f2\n    prepend-body: |\n      _t = 'SPX_r2'\n"
     "  - module: stackpkg.b\n    function: f2\n    replace-body: |\n      return 'SPX_r2'\n"},
    {"r3",
     "id: r3\nedits:\n  - module: stackpkg.a\n    function: f3\n    prepend-body: |\n      _t = 'SPX_r3'\n"
     "  - module: stackpkg.a\n    function: f0\n    add-decorator: functools.lru_cache(maxsize=None)\n"
     "    ensure-import: import functools\n"
     "  - module: stackpkg.b\n    function: f3\n    replace-body: |\n      return 'SPX_r3'\n"},
};

using Tree = std::map<std::string, std::string>;

struct Stack {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::map<std::string, std::string> wheel;  // version -> wheel
  std::map<std::string, Tree> pip_state;     // version -> the package and its dist-info as pip left them
  std::map<std::string, std::string> recipe_path;
  std::string version;

  Stack() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    for (bool newer : {false, true}) {
      auto spec = package(newer);
      wheel[spec.version] = testsupport::build_wheel(spec, tmp.path + "/wheels");
    }
    venv.install(wheel["1.1"]);
    pip_state["1.1"] = state();
    venv.upgrade(wheel["1.0"]);
    pip_state["1.0"] = state();
    version = "1.0";
    for (auto& [id, text] : kRecipes) {
      recipe_path[id] = tmp.path + "/" + id + ".yaml";
      testsupport::spit(recipe_path[id], text);
    }
  }

  // The package's files and its dist-info's, by path in site-packages.
  Tree state() const {
    Tree out;
    for (auto& e : fs::directory_iterator(venv.site_packages)) {
      std::string name = e.path().filename().string();
      if (name != "stackpkg" && !sitepatch::util::starts_with(name, "stackpkg-")) continue;
      for (auto& [rel, bytes] : e2e::read_tree(e.path().string())) out[name + "/" + rel] = bytes;
    }
    return out;
  }

  // What pip does to the files (--force-reinstall, or another version): the package's
  // folders replaced by pip's bytes of `v`. Real pip where `real`.
  void install(const std::string& v, bool real) {
    if (real) {
      if (v == version)
        venv.install(std::vector<std::string>{"--force-reinstall", "--no-deps", wheel[v]});
      else
        venv.upgrade(wheel[v]);
    } else {
      for (auto& e : fs::directory_iterator(venv.site_packages)) {
        std::string name = e.path().filename().string();
        if (name == "stackpkg" || sitepatch::util::starts_with(name, "stackpkg-")) fs::remove_all(e.path());
      }
      for (auto& [rel, bytes] : pip_state[v]) testsupport::spit(venv.site_packages + "/" + rel, bytes);
    }
    version = v;
  }

  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
};

std::set<std::string> tokens_in(const Tree& t) {
  std::set<std::string> out;
  for (auto& [rel, bytes] : t)
    for (auto& [id, _] : kRecipes)
      if (bytes.find("SPX_" + id) != std::string::npos) out.insert(id);
  return out;
}

// Every RECORD row of a .py file of the package names the bytes in it.
std::string record_mismatch(const Tree& t) {
  for (auto& [rel, bytes] : t) {
    if (!sitepatch::util::ends_with(rel, ".dist-info/RECORD")) continue;
    for (auto& line : sitepatch::util::split(bytes, '\n')) {
      auto fields = sitepatch::util::split(line, ',');
      if (fields.size() < 3 || !sitepatch::util::ends_with(fields[0], ".py")) continue;
      auto it = t.find(fields[0]);
      if (it == t.end()) return "RECORD lists " + fields[0] + ", which is missing";
      if (fields[1] != "sha256=" + sitepatch::util::sha256_record(it->second))
        return "RECORD's row for " + fields[0] + " does not match its bytes";
    }
  }
  return "";
}

std::string join_ids(const std::vector<std::string>& ids) { return sitepatch::util::join(ids, " "); }

}  // namespace

TEST_CASE("rollback of any subset in any order, after any reinstall, upgrade and reapply, ends at pip's bytes",
          "[e2e][property][rollback]") {
  const char* seed_env = std::getenv("SITEPATCH_PROPERTY_SEED");
  const char* runs_env = std::getenv("SITEPATCH_PROPERTY_RUNS");
  uint64_t seed = seed_env && *seed_env ? std::stoull(seed_env) : std::random_device{}();
  int runs = runs_env && *runs_env ? std::stoi(runs_env) : 60;  // a new seed each run covers more over time
  std::cout << "rollback property: seed " << seed << ", " << runs
            << " sequences (SITEPATCH_PROPERTY_SEED=" << seed << " replays it)" << std::endl;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t n) { return size_t(rng() % n); };

  Stack st;
  std::vector<std::string> ids;
  for (auto& [id, _] : kRecipes) ids.push_back(id);
  int refusals = 0, steps = 0;

  for (int run = 0; run < runs; ++run) {
    std::set<std::string> applied;  // what the history holds
    std::string trail;              // the steps of this sequence, for the failure message
    bool after_pip = false;         // a reapply is likelier right after pip changed the files
    auto step_count = 4 + pick(7);
    for (size_t k = 0; k <= step_count; ++k) {
      bool last = k == step_count;
      Tree before = st.state();
      std::string what;
      sitepatch::util::RunResult r{};
      bool ran = true;
      std::vector<std::string> chosen;
      auto op = last ? 99 : after_pip && pick(2) == 0 ? 3 : pick(6);
      after_pip = op == 1 || op == 2;
      if (op == 0 || ((op == 4 || op == 5) && applied.empty())) {  // apply 1-2 recipes, any order
        auto shuffled = ids;
        std::shuffle(shuffled.begin(), shuffled.end(), rng);
        chosen.assign(shuffled.begin(), shuffled.begin() + 1 + long(pick(3)));
        what = "apply " + join_ids(chosen);
        std::vector<std::string> args{"apply"};
        for (auto& id : chosen) args.push_back(st.recipe_path[id]);
        r = st.sp(args);
      } else if (op == 1 || op == 2) {  // pip: reinstall, or the other version
        std::string v = op == 1 ? st.version : (st.version == "1.0" ? "1.1" : "1.0");
        bool real = run == 0;  // the first sequence with real pip, the rest with its bytes
        what = (op == 1 ? "reinstall " : "install ") + v + (real ? " (pip)" : "");
        st.install(v, real);
        ran = false;
      } else if (op == 3) {
        what = "reapply --all";
        r = st.sp({"reapply", "--all"});
      } else if (op == 4 || op == 5) {  // rollback a subset, in an order of the dice
        std::vector<std::string> have(applied.begin(), applied.end());
        std::shuffle(have.begin(), have.end(), rng);
        chosen.assign(have.begin(), have.begin() + 1 + long(pick(have.size())));
        what = "rollback " + join_ids(chosen);
        std::vector<std::string> args{"rollback"};
        args.insert(args.end(), chosen.begin(), chosen.end());
        r = st.sp(args);
      } else {
        what = "rollback --all";
        r = st.sp({"rollback", "--all"});
      }
      ++steps;
      trail += "\n  " + what + (ran ? " -> " + std::to_string(r.status) : "");
      INFO("sequence " << run << ":" << trail << "\n" << r.err);
      Tree now = st.state();
      if (!ran) continue;
      if (r.status != 0) {
        // Refused: before anything was written, and says so.
        ++refusals;
        CHECK(now == before);
        CHECK(r.status != 4);  // the distinct code of a half-done write
        if (now != before) FAIL("a refused command changed files");
        continue;
      }
      CHECK(record_mismatch(now) == "");
      auto present = tokens_in(now);
      if (what.rfind("apply", 0) == 0) {
        applied.insert(chosen.begin(), chosen.end());
        for (auto& id : chosen) CHECK(present.count(id) == 1);
      } else if (what == "reapply --all") {
        for (auto& id : applied) CHECK(present.count(id) == 1);
      } else if (what == "rollback --all") {
        applied.clear();
      } else {
        for (auto& id : chosen) {
          applied.erase(id);
          CHECK(present.count(id) == 0);
        }
        // What stays is left as it was.
        auto had = tokens_in(before);
        for (auto& id : applied) CHECK(present.count(id) == had.count(id));
      }
      for (auto& id : present) CHECK(applied.count(id) == 1);
      if (applied.empty()) {
        // Nothing of ours left: pip's bytes, and pip's RECORD, byte for byte.
        CHECK(now == st.pip_state[st.version]);
        if (now != st.pip_state[st.version]) FAIL("not pip's bytes once every patch is rolled back");
      }
    }
    auto list = st.sp({"list"});
    INFO("list said: " << list.out << list.err);
    CHECK(list.out.find("no patches applied") != std::string::npos);
  }
  std::cout << "rollback property: " << runs << " sequences, " << steps << " steps, " << refusals << " refused"
            << std::endl;
}

TEST_CASE("apply A B, a reinstall, reapply --all, then rollback A B: pip's bytes, or a refusal before writing",
          "[e2e][rollback][reapply]") {
  // The order reapply chose once left A's record claiming B's original: the rollback said
  // "restored", kept A's edits and rewrote RECORD to match them.
  for (auto order : {std::vector<std::string>{"r0", "r1"}, std::vector<std::string>{"r1", "r0"}}) {
    Stack st;
    INFO("apply " << join_ids(order));
    REQUIRE(st.sp({"apply", st.recipe_path[order[0]], st.recipe_path[order[1]]}).status == 0);
    st.install("1.0", true);
    REQUIRE(st.state() == st.pip_state["1.0"]);
    auto re = st.sp({"reapply", "--all"});
    INFO(re.err);
    REQUIRE(re.status == 0);
    REQUIRE(tokens_in(st.state()) == std::set<std::string>{"r0", "r1"});
    for (auto rollback : {order, std::vector<std::string>{order[1], order[0]}}) {
      auto r = st.sp({"rollback", rollback[0], rollback[1]});
      INFO("rollback " << join_ids(rollback) << "\n" << r.err);
      CHECK(r.status == 0);
      CHECK(st.state() == st.pip_state["1.0"]);
      REQUIRE(st.sp({"apply", st.recipe_path[order[0]], st.recipe_path[order[1]]}).status == 0);
      st.install("1.0", false);
      REQUIRE(st.sp({"reapply", "--all"}).status == 0);
    }
  }
}

TEST_CASE("a recipe pip dropped still needs reapplying after another recipe's rollback rewrote its files",
          "[e2e][rollback][reapply]") {
  // The rollback of r1 and r3 writes the files it undid and keeps them as "what sitepatch
  // last left"; r2's edit was already gone (the reinstall), so that text is not r2's.
  Stack st;
  REQUIRE(st.sp({"apply", st.recipe_path["r3"], st.recipe_path["r2"], st.recipe_path["r0"]}).status == 0);
  st.install("1.0", false);
  REQUIRE(st.sp({"rollback", "r0"}).status == 0);
  REQUIRE(st.sp({"apply", st.recipe_path["r1"], st.recipe_path["r3"]}).status == 0);
  REQUIRE(st.sp({"rollback", "r1", "r3"}).status == 0);
  REQUIRE(tokens_in(st.state()).empty());
  auto status = st.sp({"status"});
  CHECK(status.status == 3);
  CHECK(status.out.find("  r2  needs reapplying\n      stackpkg/a.py: the edit of stackpkg.a:f2 by r2 is no longer "
                        "in it") != std::string::npos);
  auto re = st.sp({"reapply", "--all"});
  INFO(re.err);
  CHECK(re.status == 0);
  CHECK(tokens_in(st.state()) == std::set<std::string>{"r2"});
  CHECK(record_mismatch(st.state()) == "");
}

TEST_CASE("a rollback keeps an import another applied recipe asked for, and refuses to take one it only uses",
          "[e2e][rollback]") {
  Stack st;
  auto recipe = [&](const std::string& id, const std::string& fn, bool asks) {
    std::string path = st.tmp.path + "/" + id + ".yaml";
    testsupport::spit(path, "id: " + id + "\nedits:\n  - module: stackpkg.a\n    function: " + fn +
                                "\n    add-decorator: functools.lru_cache(maxsize=None)\n" +
                                (asks ? "    ensure-import: import functools\n" : ""));
    return path;
  };
  // x adds the import; y, applied after it, asks for it too and finds it there.
  REQUIRE(st.sp({"apply", recipe("x", "f0", true)}).status == 0);
  REQUIRE(st.sp({"apply", recipe("y", "f1", true)}).status == 0);
  std::string a = st.venv.site_packages + "/stackpkg/a.py";
  std::string both = testsupport::slurp(a);
  REQUIRE(both.find("import functools") != std::string::npos);
  // x alone: its decorator goes, the import stays (y's now), and y's rollback takes it.
  auto r = st.sp({"rollback", "x"});
  INFO(r.err);
  CHECK(r.status == 0);
  std::string left = testsupport::slurp(a);
  CHECK(left.find("import functools") != std::string::npos);
  CHECK(st.venv.run_python("import stackpkg.a").status == 0);
  CHECK(st.sp({"verify"}).status == 0);
  REQUIRE(st.sp({"rollback", "y"}).status == 0);
  CHECK(st.state() == st.pip_state["1.0"]);

  // z uses functools without asking for it (x had bound it): x's rollback would break z.
  REQUIRE(st.sp({"apply", recipe("x", "f0", true)}).status == 0);
  REQUIRE(st.sp({"apply", recipe("z", "f1", false)}).status == 0);
  both = testsupport::slurp(a);
  auto refused = st.sp({"rollback", "x"});
  CHECK(refused.status == 1);
  CHECK(refused.err == "sitepatch: error: rolling back x would take what binds functools out of stackpkg/a.py, which z "
                       "(still applied) uses there: the module would raise NameError; roll them back together "
                       "(sitepatch --venv " + st.venv.root + " rollback x z), then apply z again if it should stay\n"
                       "nothing was written\n");
  CHECK(testsupport::slurp(a) == both);
  // Together: pip's bytes.
  auto together = st.sp({"rollback", "x", "z"});
  INFO(together.err);
  CHECK(together.status == 0);
  CHECK(st.state() == st.pip_state["1.0"]);
}

TEST_CASE("status suggests only a reapply that will work: --force, and why, past requires or on-upgrade",
          "[e2e][reapply]") {
  Stack st;
  std::string pinned = st.tmp.path + "/pinned.yaml", careful = st.tmp.path + "/careful.yaml";
  testsupport::spit(pinned, "id: pinned\nrequires: stackpkg<1.1\nedits:\n  - module: stackpkg.a\n    function: f0\n"
                            "    replace-body: return 'SPX_r0'\n");
  testsupport::spit(careful, "id: careful\non-upgrade: warn\nedits:\n  - module: stackpkg.b\n    function: f0\n"
                             "    replace-body: return 'SPX_r1'\n");
  REQUIRE(st.sp({"apply", pinned, careful}).status == 0);
  st.install("1.1", true);
  auto r = st.sp({"status"});
  INFO(r.out << r.err);
  CHECK(r.status == 3);
  std::string cmd = "sitepatch --venv " + st.venv.root;
  CHECK(r.out.find("  " + cmd + " reapply --force pinned    # pinned requires stackpkg<1.1; installed: stackpkg 1.1\n") !=
        std::string::npos);
  CHECK(r.out.find("  " + cmd + " reapply --force careful    # stackpkg 1.0 -> 1.1 replaced stackpkg/b.py and the "
                   "recipe says on-upgrade: warn: review the new version first\n") != std::string::npos);
  // The commands it gives do what they say; the history calls them what they were.
  CHECK(st.sp({"reapply", "--force", "pinned"}).status == 0);
  auto log = st.sp({"log", "-n", "1"});
  CHECK(log.out.find("reapply pinned") != std::string::npos);
  CHECK(st.sp({"reapply", "--force", "careful"}).status == 0);
  CHECK(tokens_in(st.state()) == std::set<std::string>{"r0", "r1"});
  CHECK(st.sp({"status"}).status == 0);
}

TEST_CASE("a patch pip dropped puts no import back when another patch of its file is rolled back",
          "[e2e][rollback]") {
  // Found by the property above (seed 247163603): r3's `import functools` came back with
  // r1's rollback although pip had dropped r3, and no later rollback took it out.
  for (const char* pip_step : {"upgrade to 1.1", "reinstall 1.0"}) {
    INFO(pip_step);
    Stack st;
    REQUIRE(st.sp({"apply", st.recipe_path["r1"], st.recipe_path["r3"]}).status == 0);
    st.install(std::string(pip_step) == "upgrade to 1.1" ? "1.1" : "1.0", false);
    REQUIRE(st.sp({"apply", st.recipe_path["r1"]}).status == 0);
    REQUIRE(tokens_in(st.state()) == std::set<std::string>{"r1"});
    auto r = st.sp({"rollback", "r1"});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(st.state() == st.pip_state[st.version]);
    auto rest = st.sp({"rollback", "--all"});
    INFO(rest.err);
    CHECK(rest.status == 0);
    CHECK(st.state() == st.pip_state[st.version]);
  }
}
