// Benchmark: a fleet of N throwaway sshd (8, then 32 when the machine holds them), each
// with a venv holding the FlashInfer stand-in. The bundled flashinfer-dynamo recipe is
// applied and rolled back on every host by
//   - ansible-playbook with the sitepatch.fleet collection (built and installed from its
//     tarball),
//   - ansible-playbook with the same edits as Ansible's own replace/blockinfile tasks
//     (pipelining on, facts off),
//   - a shell loop of `sitepatch --host` commands: one after another, and in parallel
//     (xargs -P 0: all at once, and xargs -P 4).
// forks = N for both playbooks; every ssh master is closed before each measured command,
// so each run starts cold, as one run of a playbook does. Every run is checked to have
// made (or undone) the edits on every host. Prints medians of wall time and of the whole
// machine's busy CPU (controller, sshd and remote side alike: on a machine the run fills,
// the CPU ratio bounds the wall-time ratio) and the ratios; asserts nothing.
//
// usage: sitepatch_bench_fleet [ROUNDS [--hold] [HOSTS...]]   (default: 3 rounds, 8 and 32 hosts)
//   --hold: set the first fleet up, print where its playbooks and command lists are
//           (DIR=, with ANSIBLE_* assignments), wait for Enter; for trying Ansible settings
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sitepatch/util/strings.hpp"
#include "bench_support.hpp"
#include "support/fixture.hpp"
#include "support/sshd.hpp"

namespace {

using benchsupport::median;
using benchsupport::regex_escape;
using benchsupport::sq;

namespace fs = std::filesystem;
using testsupport::spit;
using testsupport::slurp;

sitepatch::util::RunResult must(const std::string& label, const std::vector<std::string>& argv) {
  auto r = sitepatch::util::run(argv);
  if (r.status != 0)
    throw std::runtime_error(label + " failed (" + std::to_string(r.status) + "):\n" + r.out + r.err);
  return r;
}

struct Fleet {
  testsupport::TempDir tmp;
  std::vector<std::unique_ptr<testsupport::TestSshd>> hosts;
  std::vector<testsupport::Venv> venvs;
  std::string site;  // site-packages on every host (the same path: /srv/venv/...)

  explicit Fleet(int n, const std::vector<std::string>& wheels) {
    for (int i = 0; i < n; ++i) {
      hosts.push_back(std::make_unique<testsupport::TestSshd>());
      venvs.push_back(testsupport::Venv::create(hosts.back()->local("/srv/venv")));
      venvs.back().install(wheels);
    }
    site = "/srv/venv" + venvs[0].site_packages.substr(hosts[0]->local("/srv/venv").size()) + "/";
  }
  ~Fleet() { close_masters(); }

  void close_masters() const {
    std::error_code ec;
    for (auto& e : fs::directory_iterator(tmp.path + "/cp", ec))
      sitepatch::util::run({"ssh", "-F", "/dev/null", "-o", "ControlPath=" + e.path().string(), "-O", "exit", "x"});
  }

  // Every host patched (or every host as pip left it).
  void expect(bool patched, const std::string& after, const std::vector<std::string>& pristine) const {
    for (size_t i = 0; i < hosts.size(); ++i) {
      std::string now = slurp(venvs[i].site_packages + "/flashinfer/jit/cpp_ext.py") +
                        slurp(venvs[i].site_packages + "/flashinfer/fp4_quantization.py");
      bool ok = patched ? now.find("    return Version(torch.version.cuda)\n") != std::string::npos &&
                              now.find("@torch.compiler.disable\n") != std::string::npos
                        : now == pristine[i];
      if (!ok) throw std::runtime_error("after " + after + ", host " + std::to_string(i) + " is not as expected");
    }
  }
};

// The FlashInfer stand-in and what it imports, as wheels built from tests/data/packages.
std::vector<std::string> stand_in_wheels(const std::string& out) {
  auto wheel_of = [&](const std::string& name, const std::string& version) {
    testsupport::WheelSpec spec{name, version, {}};
    std::string dir = std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/packages/" + name + "-" + version;
    for (auto& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file()) spec.files[fs::relative(e.path(), dir).string()] = slurp(e.path().string());
    return testsupport::build_wheel(spec, out);
  };
  return {wheel_of("torch", "2.9.0"), wheel_of("packaging", "24.0"), wheel_of("flashinfer-python", "0.5.3")};
}

struct Row {
  int hosts;
  std::map<std::string, std::vector<double>> t, cpu;  // wall and machine-busy seconds per label
};

// The inventory, ansible.cfg and the playbooks: the collection's, the `debug`-only one, and
// the recipe's edits as Ansible's own tasks.
void write_ansible_files(const Fleet& f, const std::string& recipe) {
  const std::string& t = f.tmp.path;
  const int n = int(f.hosts.size());
  // One inventory for both playbooks: the hosts' own ssh settings.
  std::string inv = "[fleet]\n";
  for (int i = 0; i < n; ++i)
    inv += "h" + std::to_string(i) + " ansible_host=" + f.hosts[i]->address() +
           " ansible_ssh_private_key_file=" + f.hosts[i]->client_key() +
           " ansible_ssh_common_args=" + sq(f.hosts[i]->ssh_options()) + "\n";
  inv += "[fleet:vars]\nansible_user=root\nansible_python_interpreter=/usr/bin/python3\n"
         "sitepatch_venv=/srv/venv\nsitepatch_executable=" SITEPATCH_BIN "\n";
  spit(t + "/inventory", inv);
  spit(t + "/ansible.cfg", "[defaults]\nhost_key_checking = False\nstdout_callback = minimal\nforks = " +
                               std::to_string(n) + "\n[ssh_connection]\npipelining = True\ncontrol_path_dir = " +
                               t + "/cp\n");
  std::string head = "- hosts: fleet\n  gather_facts: false\n  tasks:\n";
  spit(t + "/debug.yml", head + "    - ansible.builtin.debug: {msg: nothing}\n");
  spit(t + "/collection.yml", head + "    - sitepatch.fleet.sitepatch: {recipes: [" + recipe + "]}\n");
  spit(t + "/collection_back.yml",
       head + "    - sitepatch.fleet.sitepatch: {recipes: [" + recipe + "], state: absent}\n");

  // The recipe's two edits the way an Ansible user writes them (as bench_remote does).
  std::string cpp = f.site + "flashinfer/jit/cpp_ext.py", fp4 = f.site + "flashinfer/fp4_quantization.py";
  std::string body =
      "    nvcc = os.path.join(get_cuda_path(), \"bin\", \"nvcc\")\n"
      "    txt = subprocess.check_output([nvcc, \"--version\"], text=True)\n"
      "    matches = re.findall(r\"release (\\d+\\.\\d+),\", txt)\n"
      "    if not matches:\n"
      "        raise RuntimeError(f\"Could not parse CUDA version from nvcc --version output: {txt}\")\n"
      "    return Version(matches[0])\n";
  spit(t + "/native.yml",
       head + "    - replace: {path: " + cpp + ", regexp: " + sq(regex_escape(body)) +
           ", replace: " + sq("    return Version(torch.version.cuda)\n") + "}\n"
           "    - replace: {path: " + fp4 + ", regexp: " + sq("^def fp4_quantize\\(") + ", replace: " +
           sq("@torch.compiler.disable\ndef fp4_quantize(") + "}\n"
           "    - blockinfile: {path: " + fp4 + ", insertafter: '^from .jit.cpp_ext import load_cuda_ops$', "
           "block: 'import torch', marker: '# {mark} sitepatch-bench'}\n");
  std::string body_back;  // a replacement template: backslashes doubled
  for (char c : body) body_back += c == '\\' ? std::string("\\\\") : std::string(1, c);
  spit(t + "/native_back.yml",
       head + "    - replace: {path: " + cpp + ", regexp: " + sq("^    return Version\\(torch\\.version\\.cuda\\)\n") +
           ", replace: " + sq(body_back) + "}\n"
           "    - replace: {path: " + fp4 + ", regexp: " + sq("^@torch\\.compiler\\.disable\n") + ", replace: ''}\n"
           "    - blockinfile: {path: " + fp4 + ", state: absent, marker: '# {mark} sitepatch-bench'}\n");

}

// The shell loops' command lists: one sitepatch --host per host.
void write_loops(const Fleet& f, const std::string& recipe) {
  const std::string& t = f.tmp.path;
  const int n = int(f.hosts.size());
  std::string cmds_apply, cmds_back;
  for (int i = 0; i < n; ++i) {
    std::string sp = sitepatch::util::shell_quote(SITEPATCH_BIN) + " -q --host " + f.hosts[i]->target() +
                     " --ssh-command " + sitepatch::util::shell_quote(f.hosts[i]->ssh_command()) +
                     " --venv /srv/venv ";
    cmds_apply += sp + "apply " + sitepatch::util::shell_quote(recipe) + "\n";
    cmds_back += sp + "rollback flashinfer-dynamo\n";
  }
  spit(t + "/apply.cmds", cmds_apply);
  spit(t + "/back.cmds", cmds_back);
}

void print_report(const std::vector<Row>& rows, int rounds) {
  std::printf("fleet benchmark: flashinfer-dynamo (2 edits, 2 files) on every host, %d rounds, cold ssh; medians\n",
              rounds);
  for (auto row : rows) {
    std::printf("\n%d hosts\n%-30s %9s %9s\n", row.hosts, "command", "median s", "cpu s");
    for (auto& [label, s] : row.t) std::printf("%-30s %9.3f %9.2f\n", label.c_str(), median(s), median(row.cpu[label]));
    for (const char* verb : {"apply", "rollback"}) {
      std::string v = verb;
      double ours = median(row.t["collection " + v]), native = median(row.t["native " + v]);
      double best = std::min(median(row.t["loop " + v + ", xargs -P 0"]), median(row.t["loop " + v + ", xargs -P 4"]));
      std::printf("%-9s native/collection %5.2fx (goal >= 3)   collection/best parallel loop %5.2fx (goal <= 1.5)\n",
                  verb, native / ours, ours / best);
      std::printf("%-9s cpu: native/collection %5.2fx   collection/loop -P 0 %5.2fx\n", verb,
                  median(row.cpu["native " + v]) / median(row.cpu["collection " + v]),
                  median(row.cpu["collection " + v]) / median(row.cpu["loop " + v + ", xargs -P 0"]));
    }
  }
}

}  // namespace

int run_bench(int argc, char** argv);

int main(int argc, char** argv) {
  try {
    return run_bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sitepatch_bench_fleet: %s\n", e.what());
    return 1;
  }
}

int run_bench(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  std::vector<int> sizes;
  bool hold = false;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--hold")
      hold = true;
    else
      sizes.push_back(std::atoi(argv[i]));
  }
  if (sizes.empty()) sizes = {8, 32};

  testsupport::TempDir shared;
  std::string src = std::string(SITEPATCH_SOURCE_DIR);
  std::vector<std::string> wheels = stand_in_wheels(shared.path + "/wheels");
  std::string recipe = src + "/recipes/flashinfer-dynamo.yaml";
  std::string collections = shared.path + "/collections", home = shared.path + "/ansible-home";
  std::vector<std::string> ansible_env = {"env", "ANSIBLE_HOME=" + home, "ANSIBLE_LOCAL_TEMP=" + home + "/tmp",
                                          "ANSIBLE_COLLECTIONS_PATH=" + collections, "ANSIBLE_NOCOLOR=1"};
  auto with_env = [&](std::vector<std::string> args) {
    std::vector<std::string> full = ansible_env;
    full.insert(full.end(), args.begin(), args.end());
    return full;
  };
  must("ansible-galaxy collection build",
       with_env({"ansible-galaxy", "collection", "build", src + "/ansible", "--output-path", shared.path}));
  must("ansible-galaxy collection install",
       with_env({"ansible-galaxy", "collection", "install", "--offline", "-p", collections,
                 shared.path + "/sitepatch-fleet-1.0.0.tar.gz"}));

  std::vector<Row> rows;
  for (int n : sizes) {
    std::unique_ptr<Fleet> fleet;
    try {
      fleet = std::make_unique<Fleet>(n, wheels);
    } catch (const std::exception& e) {
      std::printf("%d hosts: the machine does not hold them (%s); skipped\n", n, e.what());
      continue;
    }
    Fleet& f = *fleet;
    std::string t = f.tmp.path;
    std::vector<std::string> pristine;
    for (auto& v : f.venvs)
      pristine.push_back(slurp(v.site_packages + "/flashinfer/jit/cpp_ext.py") +
                         slurp(v.site_packages + "/flashinfer/fp4_quantization.py"));

    write_ansible_files(f, recipe);
    write_loops(f, recipe);
    auto loop = [&](const std::string& cmds, const std::string& how) -> std::vector<std::string> {
      if (how == "sequential") return {"sh", "-e", cmds};
      // -P 0: every host at once.
      return {"sh", "-c", "xargs -P " + how + " -I{} -d '\\n' sh -c {} < " + cmds};
    };
    auto play = [&](const std::string& file) {
      return with_env({"ANSIBLE_CONFIG=" + t + "/ansible.cfg", "ansible-playbook", "-i", t + "/inventory", t + "/" + file});
    };

    if (hold) {  // the set-up stays until Enter
      std::printf("DIR=%s\n", t.c_str());
      for (size_t i = 1; i < ansible_env.size(); ++i) std::printf("%s\n", ansible_env[i].c_str());
      std::printf("ANSIBLE_CONFIG=%s/ansible.cfg\n", t.c_str());
      std::fflush(stdout);
      std::getchar();
      return 0;
    }

    Row row{n, {}};
    auto measure = [&](const std::string& label, const std::vector<std::string>& argv, bool patched) {
      f.close_masters();
      // As in bench_remote: nothing the row before left dirty is written back in this one
      // (every row writes on every host; ext4's first fsync flushes the rest).
      ::sync();
      double busy0 = benchsupport::machine_busy_seconds();
      auto t0 = std::chrono::steady_clock::now();
      must(label, argv);
      row.t[label].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      row.cpu[label].push_back(benchsupport::machine_busy_seconds() - busy0);
      f.expect(patched, label, pristine);
    };
    for (int r = 0; r < rounds; ++r) {
      // What Ansible costs before any work: start, inventory, a task per host on the controller.
      measure("ansible-playbook, debug only", play("debug.yml"), false);
      measure("collection apply", play("collection.yml"), true);
      measure("collection rollback", play("collection_back.yml"), false);
      measure("native apply", play("native.yml"), true);
      measure("native rollback", play("native_back.yml"), false);
      measure("loop apply, sequential", loop(t + "/apply.cmds", "sequential"), true);
      measure("loop rollback, sequential", loop(t + "/back.cmds", "sequential"), false);
      measure("loop apply, xargs -P 0", loop(t + "/apply.cmds", "0"), true);
      measure("loop rollback, xargs -P 0", loop(t + "/back.cmds", "0"), false);
      measure("loop apply, xargs -P 4", loop(t + "/apply.cmds", "4"), true);
      measure("loop rollback, xargs -P 4", loop(t + "/back.cmds", "4"), false);
    }
    rows.push_back(std::move(row));
  }

  print_report(rows, rounds);
  return 0;
}
