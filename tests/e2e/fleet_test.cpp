// Fleets: the Ansible collection in ansible/, built and installed the Ansible way,
// driving sitepatch with Debian's ansible-core across 8 real sshd (each in its own
// network namespace), each machine with its own venv at /srv/venv and its own version
// of a test distribution. One shared collection, one fleet, the steps a team takes:
// preview, waves, again, an upgrade on some, report, roll back, a host lost mid-run.
#include <catch2/catch.hpp>

#include <filesystem>
#include <future>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "support/sshd.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sitepatch::util::RunResult;

constexpr int kHosts = 8;

std::string host_name(int i) { return "host" + std::to_string(i); }

// fleetdemo 1.<i> on host i; its functions name their version, so each host's diff differs.
testsupport::WheelSpec fleetdemo(const std::string& version) {
  return {"fleetdemo",
          version,
          {{"fleetdemo/__init__.py", "__version__ = \"" + version + "\"\n"},
           {"fleetdemo/cuda.py",
            "import subprocess\n\n\ndef cuda_version():\n"
            "    \"\"\"The CUDA version nvcc reports (fleetdemo " + version + ").\"\"\"\n"
            "    out = subprocess.check_output([\"nvcc\", \"--version\"], text=True)\n"
            "    return out.split(\"release \")[1].split(\",\")[0]\n"},
           {"fleetdemo/kernels.py",
            "def build(name):\n    \"\"\"Builds kernel `name` (fleetdemo " + version + ").\"\"\"\n"
            "    return \"built \" + name\n"}}};
}

const char* kFleetRecipe =
    "id: fleet-fix\n"
    "description: no nvcc at import, tidy kernel names\n"
    "requires: fleetdemo>=1.0\n"
    "edits:\n"
    "  - module: fleetdemo.cuda\n"
    "    function: cuda_version\n"
    "    replace-body: |\n"
    "      return \"12.8\"\n"
    "  - module: fleetdemo.kernels\n"
    "    function: build\n"
    "    prepend-body: |\n"
    "      name = name.strip()\n";

// Needs a version host0 does not have: it fails there, and only there.
const char* kNewer =
    "id: fleet-cache\n"
    "requires: fleetdemo>=1.1\n"
    "edits:\n"
    "  - module: fleetdemo.kernels\n"
    "    function: build\n"
    "    add-decorator: functools.cache\n"
    "    ensure-import: import functools\n";

struct Recap {
  int ok = -1, changed = -1, unreachable = -1, failed = -1, skipped = -1;
};

// PLAY RECAP lines, by host.
std::map<std::string, Recap> recap(const std::string& out) {
  std::map<std::string, Recap> r;
  std::regex line(R"((\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+))");
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it)
    r[(*it)[1]] = {std::stoi((*it)[2]), std::stoi((*it)[3]), std::stoi((*it)[4]), std::stoi((*it)[5]),
                   std::stoi((*it)[6])};
  return r;
}

// The result the default callback printed for `host` after "fatal: [host]: WHAT! => ".
json fatal(const std::string& out, const std::string& host, const std::string& what) {
  std::string head = "fatal: [" + host + "]: " + what + "! => ";
  size_t at = out.find(head);
  if (at == std::string::npos) return nullptr;
  size_t end = out.find('\n', at);
  return json::parse(out.substr(at + head.size(), end - at - head.size()), nullptr, false);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The lines of a play's output that say what failed, first: a log shortened in the
// middle keeps them.
std::string play_failures(const RunResult& r) {
  std::string out;
  for (auto& line : sitepatch::util::split(r.out + r.err, '\n'))
    if (line.rfind("fatal: ", 0) == 0 || line.find("ERROR!") != std::string::npos ||
        line.find("[ERROR]") != std::string::npos)
      out += line + "\n";
  return out.empty() ? "no task failed\n" : out;
}

std::string yaml_quote(const std::string& s) { return "\"" + s + "\""; }

struct Fleet {
  testsupport::TempDir tmp;
  std::vector<std::unique_ptr<testsupport::TestSshd>> hosts;
  std::vector<testsupport::Venv> venvs;
  std::vector<std::map<std::string, std::string>> pip_bytes;  // what pip installed, per host
  std::string collections = tmp.path + "/collections", home = tmp.path + "/ansible-home";
  std::string recipe = tmp.path + "/fleet-fix.yaml", newer = tmp.path + "/fleet-cache.yaml";
  std::string rollout = std::string(SITEPATCH_SOURCE_DIR) + "/ansible/playbooks/rollout.yml";

  Fleet() {
    for (int i = 0; i < kHosts; ++i) hosts.push_back(std::make_unique<testsupport::TestSshd>());
    // Small venvs, two at a time (the machine has two cores).
    std::vector<std::string> wheels;
    for (int i = 0; i < kHosts; ++i) wheels.push_back(testsupport::build_wheel(fleetdemo("1." + std::to_string(i)), tmp.path + "/wheels"));
    venvs.resize(kHosts);
    for (int i = 0; i < kHosts; i += 2) {
      auto make = [&](int k) {
        venvs[k] = testsupport::Venv::create(hosts[k]->local("/srv/venv"));
        venvs[k].install(wheels[k]);
      };
      auto other = std::async(std::launch::async, make, i + 1);
      make(i);
      other.get();
    }
    for (auto& v : venvs) pip_bytes.push_back(e2e::read_tree(v.site_packages));
    testsupport::spit(recipe, kFleetRecipe);
    testsupport::spit(newer, kNewer);
    write_inventory();
  }

  ~Fleet() { close_masters(); }

  void write_inventory() const {
    std::string inv = "[fleet]\n";
    for (int i = 0; i < kHosts; ++i)
      inv += host_name(i) + " ansible_host=" + hosts[i]->address() + " ansible_user=root" +
             " ansible_ssh_private_key_file=" + hosts[i]->client_key() +
             " ansible_ssh_common_args=" + yaml_quote(hosts[i]->ssh_options()) + "\n";
    inv += "\n[fleet:vars]\nsitepatch_venv=/srv/venv\nsitepatch_executable=" SITEPATCH_BIN "\n"
           "ansible_python_interpreter=/usr/bin/python3\n";
    testsupport::spit(tmp.path + "/inventory.ini", inv);
    testsupport::spit(tmp.path + "/ansible.cfg",
                      "[defaults]\nhost_key_checking = False\nforks = 8\nretry_files_enabled = False\n"
                      "[ssh_connection]\ncontrol_path_dir = " + tmp.path + "/cp\n");
  }

  RunResult ansible(const std::string& tool, std::vector<std::string> args) const {
    std::vector<std::string> argv = {"env", "ANSIBLE_CONFIG=" + tmp.path + "/ansible.cfg", "ANSIBLE_HOME=" + home,
                                     "ANSIBLE_LOCAL_TEMP=" + home + "/tmp", "ANSIBLE_COLLECTIONS_PATH=" + collections,
                                     "ANSIBLE_NOCOLOR=1", "ANSIBLE_DEPRECATION_WARNINGS=0", tool};
    argv.insert(argv.end(), args.begin(), args.end());
    return sitepatch::util::run(argv);
  }

  RunResult playbook(const std::string& play, std::vector<std::string> args = {}) const {
    args.insert(args.begin(), {"-i", tmp.path + "/inventory.ini", play, "-e",
                               json{{"sitepatch_recipes", {recipe}}, {"sitepatch_hosts", "fleet"}}.dump()});
    return ansible("ansible-playbook", args);
  }

  // Writes a test playbook into the temp folder; returns its path.
  std::string play(const std::string& name, const std::string& text) const {
    testsupport::spit(tmp.path + "/" + name, text);
    return tmp.path + "/" + name;
  }

  RunResult sp(int i, std::vector<std::string> args) const {
    args.insert(args.begin(), {"--host", hosts[i]->target(), "--ssh-command", hosts[i]->ssh_command(), "--venv", "/srv/venv"});
    return testsupport::run_sitepatch(args);
  }

  std::map<std::string, std::string> tree(int i) const { return e2e::read_tree(venvs[i].site_packages); }
  std::string read(int i, const std::string& rel) const { return testsupport::slurp(venvs[i].site_packages + "/" + rel); }
  bool patched(int i) const { return read(i, "fleetdemo/cuda.py").find("    return \"12.8\"\n") != std::string::npos; }

  // Ends every ssh master Ansible's ControlPersist left (so the next step counts handshakes).
  void close_masters() const {
    std::error_code ec;
    for (auto& e : fs::directory_iterator(tmp.path + "/cp", ec))
      sitepatch::util::run({"ssh", "-F", "/dev/null", "-o", "ControlPath=" + e.path().string(), "-O", "exit", "x"});
  }

  std::vector<int> connections() const {
    std::vector<int> n;
    for (auto& h : hosts) n.push_back(h->connections());
    return n;
  }
};

// A task that writes every host's registered `var` to `path`, as one JSON object.
std::string report_task(const std::string& var, const std::string& path) {
  return "    - name: Report\n"
         "      ansible.builtin.copy:\n"
         "        content: \"{{ dict(ansible_play_hosts_all | zip(ansible_play_hosts_all | map('extract', hostvars, '" +
         var + "'))) | to_json }}\"\n"
         "        dest: " + path + "\n"
         "        mode: \"0644\"\n"
         "      delegate_to: localhost\n"
         "      run_once: true\n"
         "      check_mode: false\n"
         "      changed_when: false\n";
}

}  // namespace

TEST_CASE("fleet: preview, waves, idempotence, upgrade report, rollback and a lost host across 8 sshd", "[e2e][fleet]") {
  Fleet f;

  // Installable the Ansible way: build the tarball, install it offline.
  {
    auto build = f.ansible("ansible-galaxy", {"collection", "build", std::string(SITEPATCH_SOURCE_DIR) + "/ansible",
                                              "--output-path", f.tmp.path});
    INFO(build.out + build.err);
    REQUIRE(build.status == 0);
    std::string tarball = f.tmp.path + "/sitepatch-fleet-1.0.0.tar.gz";
    REQUIRE(fs::exists(tarball));
    auto install = f.ansible("ansible-galaxy", {"collection", "install", "--offline", "-p", f.collections, tarball});
    INFO(install.out + install.err);
    REQUIRE(install.status == 0);
    REQUIRE(fs::exists(f.collections + "/ansible_collections/sitepatch/fleet/plugins/action/sitepatch.py"));
  }

  // 1. --check --diff on all: each host's diff is exactly `sitepatch plan` there; nothing is written.
  std::string preview = f.play("preview.yml",
                               "- name: Preview\n  hosts: fleet\n  gather_facts: false\n  tasks:\n"
                               "    - name: Plan\n      sitepatch.fleet.sitepatch:\n        recipes: [" + f.recipe + "]\n"
                               "      register: planned\n" +
                                   report_task("planned", f.tmp.path + "/preview.json"));
  auto check = f.ansible("ansible-playbook", {"-i", f.tmp.path + "/inventory.ini", preview, "--check", "--diff"});
  INFO(play_failures(check) + "\nthe whole output:\n" + check.out + check.err);
  REQUIRE(check.status == 0);
  auto planned = json::parse(testsupport::slurp(f.tmp.path + "/preview.json"));
  auto rc = recap(check.out);
  std::set<std::string> diffs;
  for (int i = 0; i < kHosts; ++i) {
    auto plan = f.sp(i, {"plan", f.recipe});
    REQUIRE(plan.status == 0);
    auto& r = planned[host_name(i)];
    CHECK(r["diff"]["prepared"] == plan.out);
    CHECK(check.out.find(plan.out) != std::string::npos);  // and shown as Ansible shows a diff
    CHECK(r["changed"] == true);
    CHECK(r["files"] == json::array({"fleetdemo/cuda.py", "fleetdemo/kernels.py"}));
    CHECK(rc[host_name(i)].changed == 1);
    CHECK(f.tree(i) == f.pip_bytes[i]);
    CHECK_FALSE(fs::exists(f.hosts[i]->local("/srv/venv/.sitepatch")));
    diffs.insert(plan.out);
  }
  CHECK(diffs.size() == kHosts);  // eight versions, eight different diffs

  // 2. The shipped rollout playbook: preview, then waves of 25% (4 waves of 2), verified.
  auto apply = f.playbook(f.rollout);
  INFO(play_failures(apply) + "\nthe whole output:\n" + apply.out + apply.err);
  REQUIRE(apply.status == 0);
  CHECK(count(apply.out, "PLAY [Apply in waves]") == 4);
  rc = recap(apply.out);
  for (int i = 0; i < kHosts; ++i) {
    CHECK(f.patched(i));
    CHECK(rc[host_name(i)].changed == 2);  // the preview (check mode) and the apply
    CHECK(rc[host_name(i)].failed == 0);
    CHECK(f.sp(i, {"verify"}).status == 0);
  }

  // 3. Again: nothing to do anywhere.
  auto again = f.playbook(f.rollout);
  INFO(play_failures(again) + "\nthe whole output:\n" + again.out + again.err);
  REQUIRE(again.status == 0);
  for (auto& [host, r] : recap(again.out)) {
    INFO(host);
    CHECK(r.changed == 0);
    CHECK(r.failed == 0);
  }
  CHECK(recap(again.out).size() == kHosts);

  // 4. pip install -U on 3 hosts takes the patch away there; sitepatch_info says which,
  // `when:` reapplies there only, at one ssh handshake per host for both tasks.
  std::set<int> upgraded = {1, 4, 6};
  for (int i : upgraded) {
    f.venvs[i].upgrade(testsupport::build_wheel(fleetdemo("2." + std::to_string(i)), f.tmp.path + "/wheels2"));
    f.pip_bytes[i] = f.tree(i);
    // pip's files are its new version's; the marker naming the history is sitepatch's.
    CHECK(f.pip_bytes[i].erase(".sitepatch-patched.json") == 1);
  }
  std::string info = f.play("info.yml",
                            "- name: Report and reapply\n  hosts: fleet\n  gather_facts: false\n  tasks:\n"
                            "    - name: Status\n      sitepatch.fleet.sitepatch_info:\n      register: status\n"
                            "    - name: Reapply where an upgrade took the patch away\n"
                            "      sitepatch.fleet.sitepatch:\n        recipes: [" + f.recipe + "]\n"
                            "      when: status.needs_reapply | length > 0\n" +
                                report_task("status", f.tmp.path + "/status.json"));
  f.close_masters();
  auto before = f.connections();
  auto reported = f.ansible("ansible-playbook", {"-i", f.tmp.path + "/inventory.ini", info});
  INFO(play_failures(reported) + "\nthe whole output:\n" + reported.out + reported.err);
  REQUIRE(reported.status == 0);
  auto after = f.connections();
  auto status = json::parse(testsupport::slurp(f.tmp.path + "/status.json"));
  std::set<std::string> need, expected;
  for (auto& [host, s] : status.items())
    if (!s["needs_reapply"].empty()) need.insert(host);
  for (int i : upgraded) expected.insert(host_name(i));
  CHECK(need == expected);
  rc = recap(reported.out);
  for (int i = 0; i < kHosts; ++i) {
    INFO(host_name(i));
    auto& s = status[host_name(i)];
    bool up = upgraded.count(i) > 0;
    CHECK(s["applied"] == json::array({"fleet-fix"}));
    CHECK(s["intact"] == !up);
    CHECK(s["rc"] == (up ? 3 : 0));
    CHECK(s["changed"] == false);
    if (up) CHECK(s["patches"][0]["advice"] == "needs reapplying");
    CHECK(rc[host_name(i)].changed == (up ? 1 : 0));
    CHECK(rc[host_name(i)].skipped == (up ? 0 : 1));
    CHECK(f.patched(i));
    CHECK(after[i] - before[i] == 1);
  }

  // 5. Roll back on all: pip's bytes everywhere (the upgraded hosts' new version's); again: nothing.
  auto back = f.playbook(f.rollout, {"--tags", "rollback"});
  INFO(play_failures(back) + "\nthe whole output:\n" + back.out + back.err);
  REQUIRE(back.status == 0);
  rc = recap(back.out);
  for (int i = 0; i < kHosts; ++i) {
    INFO(host_name(i));
    CHECK(rc[host_name(i)].changed == 1);
    CHECK(f.tree(i) == f.pip_bytes[i]);
  }
  auto back_again = f.playbook(f.rollout, {"--tags", "rollback"});
  INFO(play_failures(back_again) + "\nthe whole output:\n" + back_again.out + back_again.err);
  REQUIRE(back_again.status == 0);
  for (auto& [host, r] : recap(back_again.out)) CHECK(r.changed == 0);

  // 6. Waves again, with a recipe host0's version does not allow and host7 taken off the
  // network mid-run (when its wave starts): each fails alone, the others apply.
  testsupport::spit(f.tmp.path + "/stop.sh", "ip netns pids " + f.hosts[7]->netns() + " | xargs -r kill -9\n");
  std::string lost = f.play("lost.yml",
                            "- name: Waves with a lost host\n  hosts: fleet\n  gather_facts: false\n  serial: 2\n  tasks:\n"
                            "    - name: Take host7 off the network\n"
                            "      ansible.builtin.command: sh " + f.tmp.path + "/stop.sh\n"
                            "      delegate_to: localhost\n      when: inventory_hostname == 'host7'\n"
                            "      changed_when: true\n"
                            "    - name: Apply\n      sitepatch.fleet.sitepatch:\n"
                            "        recipes: [" + f.recipe + ", " + f.newer + "]\n");
  auto partial = f.ansible("ansible-playbook", {"-i", f.tmp.path + "/inventory.ini", lost});
  INFO(play_failures(partial) + "\nthe whole output:\n" + partial.out + partial.err);
  CHECK(partial.status != 0);
  rc = recap(partial.out);
  CHECK(rc["host0"].failed == 1);
  CHECK(rc["host7"].unreachable == 1);
  auto failed = fatal(partial.out, "host0", "FAILED");
  REQUIRE(failed.is_object());
  CHECK(failed["rc"] == 1);
  CHECK(failed["msg"].get<std::string>().find("fleetdemo") != std::string::npos);
  auto gone = fatal(partial.out, "host7", "UNREACHABLE");
  REQUIRE(gone.is_object());
  CHECK(gone["msg"].get<std::string>().rfind("cannot reach root@" + f.hosts[7]->address() + " over ssh", 0) == 0);
  CHECK(f.tree(0) == f.pip_bytes[0]);
  CHECK(f.tree(7) == f.pip_bytes[7]);
  for (int i = 1; i < 7; ++i) {
    INFO(host_name(i));
    CHECK(rc[host_name(i)].changed == 1);
    CHECK(rc[host_name(i)].failed == 0);
    CHECK(f.patched(i));
    CHECK(f.read(i, "fleetdemo/kernels.py").find("@functools.cache\n") != std::string::npos);
  }

  // 7. state: synced with a folder that holds only the newer recipe, on the hosts that
  // have both: check mode says each would change and writes nothing; then fleet-fix is
  // rolled back everywhere and the newer one stays; again: nothing.
  testsupport::spit(f.tmp.path + "/patches/cache.yaml", testsupport::slurp(f.newer));
  std::string synced = f.play("synced.yml",
                              "- name: Sync\n  hosts: fleet:!host0:!host7\n  gather_facts: false\n  tasks:\n"
                              "    - name: Sync\n      sitepatch.fleet.sitepatch:\n        recipes: [" + f.tmp.path +
                                  "/patches]\n        state: synced\n      register: synced\n" +
                                  report_task("synced", f.tmp.path + "/synced.json"));
  auto dry = f.ansible("ansible-playbook", {"-i", f.tmp.path + "/inventory.ini", synced, "--check"});
  INFO(play_failures(dry) + "\nthe whole output:\n" + dry.out + dry.err);
  REQUIRE(dry.status == 0);
  auto steps = json::parse(testsupport::slurp(f.tmp.path + "/synced.json"));
  for (int i = 1; i < 7; ++i) {
    INFO(host_name(i));
    CHECK(recap(dry.out)[host_name(i)].changed == 1);
    CHECK(steps[host_name(i)]["steps"][0]["step"] == "in sync");
    CHECK(steps[host_name(i)]["steps"][1] == json({{"id", "fleet-fix"}, {"step", "roll back"},
                                                   {"why", "applied, not in the set"}, {"recipe", nullptr}}));
    CHECK(f.patched(i));
  }
  auto sync = f.ansible("ansible-playbook", {"-i", f.tmp.path + "/inventory.ini", synced});
  INFO(play_failures(sync) + "\nthe whole output:\n" + sync.out + sync.err);
  REQUIRE(sync.status == 0);
  for (int i = 1; i < 7; ++i) {
    INFO(host_name(i));
    CHECK(recap(sync.out)[host_name(i)].changed == 1);
    CHECK_FALSE(f.patched(i));
    CHECK(f.read(i, "fleetdemo/kernels.py").find("@functools.cache\n") != std::string::npos);
  }
  auto sync_again = f.ansible("ansible-playbook", {"-i", f.tmp.path + "/inventory.ini", synced});
  REQUIRE(sync_again.status == 0);
  for (auto& [host, r] : recap(sync_again.out)) CHECK(r.changed == 0);
}

TEST_CASE("fleet: the collection is documented for ansible-doc and lint-clean under ansible-lint", "[e2e][fleet]") {
  testsupport::TempDir tmp;
  std::string src = std::string(SITEPATCH_SOURCE_DIR) + "/ansible";
  auto env = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), {"env", "ANSIBLE_HOME=" + tmp.path + "/home", "ANSIBLE_COLLECTIONS_PATH=" + tmp.path + "/c",
                               "ANSIBLE_NOCOLOR=1", "NO_COLOR=1", "HOME=" + tmp.path});
    return sitepatch::util::run(argv);
  };
  REQUIRE(env({"ansible-galaxy", "collection", "build", src, "--output-path", tmp.path}).status == 0);
  REQUIRE(env({"ansible-galaxy", "collection", "install", "--offline", "-p", tmp.path + "/c",
               tmp.path + "/sitepatch-fleet-1.0.0.tar.gz"}).status == 0);
  for (const char* module : {"sitepatch.fleet.sitepatch", "sitepatch.fleet.sitepatch_info"}) {
    auto doc = env({"ansible-doc", "--json", module});
    INFO(doc.err);
    REQUIRE(doc.status == 0);
    auto j = json::parse(doc.out);
    CHECK(j[module]["doc"]["options"].is_object());
    CHECK_FALSE(j[module]["return"].empty());
  }
  auto lint = sitepatch::util::run({"sh", "-c", "cd " + src + " && env HOME=" + tmp.path + " NO_COLOR=1 ANSIBLE_COLLECTIONS_PATH=" +
                                                    tmp.path + "/c ansible-lint -p --nocolor"});
  INFO(lint.out + lint.err);
  CHECK(lint.status == 0);
  CHECK(lint.err.find("Passed with production profile: 0 failure(s), 0 warning(s)") != std::string::npos);
}

TEST_CASE("fleet: rollback --missing-ok skips patches that are not applied", "[e2e][fleet]") {
  e2e::DemoEnv env;
  // Nothing was ever applied: done already.
  auto none = env.sp({"rollback", "--missing-ok", "flashinfer-dynamo"});
  CHECK(none.status == 0);
  CHECK(none.err == "nothing to roll back\n");
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  auto some = env.sp({"--json", "rollback", "--missing-ok", "flashinfer-dynamo", "other"});
  INFO(some.err);
  REQUIRE(some.status == 0);
  auto j = json::parse(some.out);
  CHECK(j["ids"] == json::array({"flashinfer-dynamo"}));
  CHECK(j["written"] == true);
  CHECK(env.pristine());
  auto again = env.sp({"rollback", "--missing-ok", "flashinfer-dynamo"});
  CHECK(again.status == 0);
  CHECK(again.err == "nothing to roll back\n");
  // Without it, an id that is not applied is still an error.
  auto strict = env.sp({"rollback", "flashinfer-dynamo"});
  CHECK(strict.status == 1);
  CHECK(strict.err == "sitepatch: error: no applied patch `flashinfer-dynamo` (nothing is applied)\n");
  auto both = env.sp({"rollback", "--all", "--missing-ok"});
  CHECK(both.status == 2);
  CHECK(both.err == "sitepatch: error: rollback: --missing-ok goes with patch ids; --all never misses one\n");
}

TEST_CASE("fleet: the tasks on the controller's own venv, and the errors they report", "[e2e][fleet]") {
  e2e::DemoEnv env;
  testsupport::TempDir tmp;
  std::string c = tmp.path + "/c";
  auto ansible = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), {"env", "ANSIBLE_HOME=" + tmp.path + "/home", "ANSIBLE_LOCAL_TEMP=" + tmp.path + "/home/tmp",
                               "ANSIBLE_COLLECTIONS_PATH=" + c, "ANSIBLE_NOCOLOR=1"});
    return sitepatch::util::run(argv);
  };
  REQUIRE(ansible({"ansible-galaxy", "collection", "build", std::string(SITEPATCH_SOURCE_DIR) + "/ansible",
                   "--output-path", tmp.path}).status == 0);
  REQUIRE(ansible({"ansible-galaxy", "collection", "install", "--offline", "-p", c,
                   tmp.path + "/sitepatch-fleet-1.0.0.tar.gz"}).status == 0);
  testsupport::spit(tmp.path + "/inventory.ini",
                    "me ansible_connection=local ansible_python_interpreter=/usr/bin/python3 sitepatch_venv=" +
                        env.venv.root + " sitepatch_executable=" SITEPATCH_BIN "\n");
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  std::string bad = env.recipe("bad.yaml",
                               "id: bad\nedits:\n  - module: flashinfer.jit.cpp_ext\n    function: get_cuda_versoin\n"
                               "    replace-body: |\n      return None\n");
  // pip's wheel, to reinstall over the patched files (the recipe file stays unread).
  std::string wheel = e2e::data_wheel("flashinfer-python", "0.5.3", tmp.path + "/wheels");
  auto task = [](const std::string& name, const std::string& body) {
    return "    - name: " + name + "\n" + body + "      register: " + name + "\n      ignore_errors: true\n";
  };
  std::string play =
      "- name: Local\n  hosts: me\n  gather_facts: false\n  tasks:\n" +
      task("check_failed", "      sitepatch.fleet.sitepatch:\n        recipes: [" + recipe +
                               "]\n        check_command: echo warm-up died; exit 7\n") +
      task("applied", "      sitepatch.fleet.sitepatch:\n        recipes: [" + recipe + "]\n") +
      task("info", "      sitepatch.fleet.sitepatch_info:\n") +
      task("reinstalled", "      ansible.builtin.command: /usr/bin/python3 -m pip --python " + env.venv.python +
                          " install --no-index --no-deps --force-reinstall " + wheel + "\n") +
      task("reapplied", "      sitepatch.fleet.sitepatch:\n        state: present\n") +
      task("reapplied_again", "      sitepatch.fleet.sitepatch:\n        state: present\n") +
      task("unknown_function", "      sitepatch.fleet.sitepatch:\n        recipes: [" + bad + "]\n") +
      task("no_venv", "      sitepatch.fleet.sitepatch:\n        recipes: [" + recipe + "]\n        venv: " + tmp.path + "/none\n") +
      task("no_binary", "      sitepatch.fleet.sitepatch:\n        recipes: [" + recipe + "]\n        executable: " + tmp.path + "/nosuch\n") +
      task("become", "      sitepatch.fleet.sitepatch:\n        recipes: [" + recipe + "]\n      become: true\n") +
      task("rolled_back", "      sitepatch.fleet.sitepatch:\n        recipes: [" + recipe + "]\n        state: absent\n") +
      "    - name: Report\n      ansible.builtin.copy:\n"
      "        content: \"{{ dict(check_failed=check_failed, applied=applied, info=info, reapplied=reapplied,"
      " reapplied_again=reapplied_again, unknown_function=unknown_function, no_venv=no_venv,"
      " no_binary=no_binary, become=become, rolled_back=rolled_back) | to_json }}\"\n"
      "        dest: " + tmp.path + "/report.json\n        mode: \"0644\"\n";
  testsupport::spit(tmp.path + "/local.yml", play);
  auto r = ansible({"ansible-playbook", "-i", tmp.path + "/inventory.ini", tmp.path + "/local.yml"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  auto j = json::parse(testsupport::slurp(tmp.path + "/report.json"));

  // A failing check_command: the apply rolled back there, the task failed with its output.
  CHECK(j["check_failed"]["failed"] == true);
  CHECK(j["check_failed"]["rc"] == 1);
  CHECK(j["check_failed"]["msg"] ==
        "check failed: `echo warm-up died; exit 7` exited 7; the apply was rolled back on this host\nwarm-up died");
  CHECK(j["applied"]["changed"] == true);
  CHECK(j["applied"]["cmd"][1] == "--venv");  // no --host for the local connection
  CHECK(j["applied"]["distributions"] == json::array({"flashinfer-python==0.5.3"}));
  CHECK(j["info"]["applied"] == json::array({"flashinfer-dynamo"}));
  CHECK(j["info"]["intact"] == true);
  // state: present without recipes, after a reinstall: the history's copies go back.
  CHECK(j["reapplied"]["changed"] == true);
  CHECK(j["reapplied"]["cmd"][6] == "reapply");
  CHECK(j["reapplied"]["cmd"][7] == "--all");
  CHECK(j["reapplied"]["files"].size() == 2);
  CHECK(j["reapplied_again"]["changed"] == false);
  // sitepatch's own words and exit code.
  CHECK(j["unknown_function"]["failed"] == true);
  CHECK(j["unknown_function"]["rc"] == 1);
  CHECK(j["unknown_function"]["msg"].get<std::string>().rfind(bad + ":", 0) == 0);
  CHECK(j["unknown_function"]["msg"].get<std::string>().find("get_cuda_versoin") != std::string::npos);
  CHECK(j["no_venv"]["rc"] == 2);  // the path names no environment: usage, as none given
  CHECK(j["no_venv"]["msg"].get<std::string>().find(tmp.path + "/none") != std::string::npos);
  CHECK(j["no_binary"]["msg"].get<std::string>().rfind("cannot run sitepatch (" + tmp.path + "/nosuch)", 0) == 0);
  CHECK(j["become"]["msg"] ==
        "sitepatch connects as the host's ansible_user and does not use become: connect as a user who may "
        "write the environment, and set become: false on this task");
  CHECK(j["rolled_back"]["changed"] == true);
  CHECK(j["rolled_back"]["ids"] == json::array({"flashinfer-dynamo"}));
  CHECK(env.pristine());
}
