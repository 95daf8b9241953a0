// Benchmark: sitepatch on a remote environment against Ansible (Debian's ansible-core,
// `replace` and `blockinfile` modules, pipelining on, facts off) doing the same edits
// over the same SSH to the same throwaway sshd, and against a bare `ssh host true`.
// Recipes of 2 edits (the bundled flashinfer-dynamo) and of 50 edits (one function in
// each of 50 modules); apply and rollback each. Connections are counted from sshd's
// log. Every row but the warm ones starts with no ssh master: Ansible's own (its default
// ControlPersist) is closed first, as sitepatch's cold run has none. The warm rows reuse a
// master on both sides: sitepatch's through ControlPersist in --ssh-command, Ansible's the
// one its previous run left. Prints medians; asserts nothing.
//
// usage: sitepatch_bench_remote [ROUNDS [--trace] [--no-ansible] [--hold] [--delay MS]]
//   --trace: -vvv output of two applies and rollbacks and a list first, and what a bare
//            Python costs over the same ssh; --no-ansible: sitepatch and ssh rows only;
//   --hold: set up, print the ssh command and target as shell assignments, wait for Enter
//           (tests/bench/ab_remote.py runs builds side by side against that set-up);
//   --delay MS: every tool's ssh goes through delay_relay.py, MS ms each way (a round
//            trip of 2*MS), as to a server far away.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
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

using testsupport::spit;

struct Sample {
  std::vector<double> seconds;
  std::vector<int> connections;
};

}  // namespace

int run_bench(int argc, char** argv);

int main(int argc, char** argv) {
  try {
    return run_bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sitepatch_bench_remote: %s\n", e.what());
    return 1;
  }
}

int run_bench(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  bool trace = false, ansible = true, hold = false;
  std::string delay_ms;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--trace") trace = true;
    else if (a == "--no-ansible") ansible = false;
    else if (a == "--delay" && i + 1 < argc) delay_ms = argv[++i];
    else if (a == "--hold") hold = true;
    else throw std::runtime_error("unknown option " + a);
  }
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(sshd.local("/srv/venv"));
  std::string src = std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/packages/";
  auto wheel_of = [&](const std::string& name, const std::string& version) {
    testsupport::WheelSpec spec{name, version, {}};
    std::string dir = src + name + "-" + version;
    auto r = sitepatch::util::run({"find", dir, "-type", "f"});
    for (auto& f : sitepatch::util::split(r.out, '\n'))
      if (!f.empty()) spec.files[f.substr(dir.size() + 1)] = testsupport::slurp(f);
    return testsupport::build_wheel(spec, tmp.path);
  };
  testsupport::WheelSpec mods{"benchmods", "1.0", {{"benchmods/__init__.py", ""}}};
  std::string fifty = "id: fifty\nedits:\n";
  std::string ans_fifty = "- hosts: remote\n  gather_facts: false\n  tasks:\n";
  std::string ans_fifty_back = ans_fifty;
  std::string site = "/srv/venv/lib/python3.11/site-packages/";
  {
    auto r = sitepatch::util::run({venv.python, "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"});
    site = "/srv/venv" + sitepatch::util::trim(r.out).substr(sshd.local("/srv/venv").size()) + "/";
  }
  for (int i = 0; i < 50; ++i) {
    std::string m = "m" + std::to_string(i);
    mods.files["benchmods/" + m + ".py"] =
        "import os\n\n\ndef f(x):\n    \"\"\"Doc.\"\"\"\n    return os.getpid() + x\n\n\ndef g():\n    return 2\n";
    fifty += "  - module: benchmods." + m + "\n    function: f\n    replace-body: |\n      return x\n";
    std::string path = site + "benchmods/" + m + ".py";
    ans_fifty += "    - replace: {path: " + path + ", regexp: " + sq(regex_escape("    return os.getpid() + x")) +
                 ", replace: '    return x'}\n";
    ans_fifty_back += "    - replace: {path: " + path + ", regexp: '^    return x$', replace: " +
                      sq("    return os.getpid() + x") + "}\n";
  }
  venv.install({wheel_of("torch", "2.9.0"), wheel_of("packaging", "24.0"),
                wheel_of("flashinfer-python", "0.5.3"), testsupport::build_wheel(mods, tmp.path)});
  spit(tmp.path + "/fifty.yaml", fifty);
  std::string two = std::string(SITEPATCH_SOURCE_DIR) + "/recipes/flashinfer-dynamo.yaml";

  // The same two edits as the bundled recipe, the way an Ansible user writes them.
  std::string cpp = site + "flashinfer/jit/cpp_ext.py", fp4 = site + "flashinfer/fp4_quantization.py";
  std::string body =
      "    nvcc = os.path.join(get_cuda_path(), \"bin\", \"nvcc\")\n"
      "    txt = subprocess.check_output([nvcc, \"--version\"], text=True)\n"
      "    matches = re.findall(r\"release (\\d+\\.\\d+),\", txt)\n"
      "    if not matches:\n"
      "        raise RuntimeError(f\"Could not parse CUDA version from nvcc --version output: {txt}\")\n"
      "    return Version(matches[0])\n";
  std::string head = "- hosts: remote\n  gather_facts: false\n  tasks:\n";
  spit(tmp.path + "/two.yml",
       head + "    - replace: {path: " + cpp + ", regexp: " + sq(regex_escape(body)) +
           ", replace: " + sq("    return Version(torch.version.cuda)\n") + "}\n"
           "    - replace: {path: " + fp4 + ", regexp: " + sq("^def fp4_quantize\\(") + ", replace: " +
           sq("@torch.compiler.disable\ndef fp4_quantize(") + "}\n"
           "    - blockinfile: {path: " + fp4 + ", insertafter: '^from .jit.cpp_ext import load_cuda_ops$', "
           "block: 'import torch', marker: '# {mark} sitepatch-bench'}\n");
  std::string body_back;  // a replacement template: backslashes doubled
  for (char c : body) body_back += c == '\\' ? std::string("\\\\") : std::string(1, c);
  spit(tmp.path + "/two_back.yml",
       head + "    - replace: {path: " + cpp + ", regexp: " + sq("^    return Version\\(torch\\.version\\.cuda\\)\n") +
           ", replace: " + sq(body_back) + "}\n"
           "    - replace: {path: " + fp4 + ", regexp: " + sq("^@torch\\.compiler\\.disable\n") + ", replace: ''}\n"
           "    - blockinfile: {path: " + fp4 + ", state: absent, marker: '# {mark} sitepatch-bench'}\n");
  spit(tmp.path + "/fifty.yml", ans_fifty);
  spit(tmp.path + "/fifty_back.yml", ans_fifty_back);
  std::string ssh = sshd.ssh_command();
  std::string key = sshd.client_key(), common = sshd.ssh_options();
  if (!delay_ms.empty()) {  // the same added latency for every tool: it is in their ssh
    std::string relay = "-o \"ProxyCommand=python3 " SITEPATCH_SOURCE_DIR "/tests/bench/delay_relay.py %h %p " +
                        delay_ms + "\"";
    ssh += " " + relay;
    common += " " + relay;
  }
  spit(tmp.path + "/inventory",
       "remote ansible_host=" + sshd.address() + " ansible_user=root ansible_ssh_private_key_file=" + key +
           " ansible_python_interpreter=/usr/bin/python3 ansible_ssh_common_args=" + sq(common) + "\n");
  // Ansible's default ssh_args keep a master per host (ControlPersist=60s): the folder is
  // ours so the benchmark can close them, for a cold run against a cold run.
  spit(tmp.path + "/ansible.cfg", "[defaults]\nhost_key_checking = False\nstdout_callback = minimal\n"
                                  "[ssh_connection]\npipelining = True\ncontrol_path_dir = " + tmp.path + "/cp\n");

  auto close_masters = [&] {
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator(tmp.path + "/cp", ec))
      sitepatch::util::run({"ssh", "-F", "/dev/null", "-o", "ControlPath=" + e.path().string(), "-O", "exit", "x"});
  };
  std::map<std::string, Sample> t;
  auto measure = [&](const std::string& label, const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& env = {}) {
    // Each row starts with nothing left to write back: on ext4 a command's first fsync
    // also writes what the row before left dirty (Ansible's 50-edit runs leave most).
    ::sync();
    int before = sshd.connections();
    auto t0 = std::chrono::steady_clock::now();
    sitepatch::util::RunResult r;
    if (argv[0] == "sitepatch") {
      r = testsupport::run_sitepatch({argv.begin() + 1, argv.end()}, env);
    } else {
      std::vector<std::string> full = {"env"};
      for (auto& [k, v] : env) full.push_back(k + "=" + v);
      full.insert(full.end(), argv.begin(), argv.end());
      r = sitepatch::util::run(full);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r.status != 0)
      throw std::runtime_error(label + " failed (" + std::to_string(r.status) + "):\n" + r.out + r.err);
    t[label].seconds.push_back(s);
    t[label].connections.push_back(sshd.connections() - before);
  };
  std::vector<std::string> sp = {"sitepatch", "--host", sshd.target(), "--ssh-command", ssh, "--venv", "/srv/venv"};
  // Ansible keeps an ssh master between runs (ControlPersist); the same ssh option for
  // sitepatch, for a warm-against-warm row.
  std::string warm_ssh = ssh + " -o ControlMaster=auto -o ControlPath=" + tmp.path + "/cm-%C -o ControlPersist=600";
  std::vector<std::string> sp_warm = {"sitepatch", "--host", sshd.target(), "--ssh-command", warm_ssh,
                                      "--venv", "/srv/venv"};
  auto with = [](std::vector<std::string> a, std::initializer_list<std::string> more) {
    a.insert(a.end(), more);
    return a;
  };
  std::map<std::string, std::string> ans_env = {{"ANSIBLE_CONFIG", tmp.path + "/ansible.cfg"},
                                                {"ANSIBLE_LOCAL_TEMP", tmp.path + "/ansible-tmp"}};
  auto play = [&](const std::string& f) {
    return std::vector<std::string>{"ansible-playbook", "-i", tmp.path + "/inventory", tmp.path + "/" + f};
  };
  auto bare = sitepatch::util::shell_split(ssh);
  bare.insert(bare.end(), {"-o", "BatchMode=yes", sshd.target(), "true"});
  if (hold) {  // for A/B runs of two builds from outside: the set-up stays until Enter
    std::printf("SSH=%s\nTARGET=%s\nTWO=%s\nFIFTY=%s\nPLAY=%s\nANSIBLE_CONFIG=%s\n", sq(ssh).c_str(),
                sshd.target().c_str(), two.c_str(), (tmp.path + "/fifty.yaml").c_str(), tmp.path.c_str(),
                (tmp.path + "/ansible.cfg").c_str());
    std::fflush(stdout);
    std::getchar();
    return 0;
  }

  // Both tools must really make the edits, and really undo them.
  std::string local_site = sshd.local(site.substr(0, site.size() - 1)) + "/";
  auto snapshot = [&] {
    return testsupport::slurp(local_site + "flashinfer/jit/cpp_ext.py") +
           testsupport::slurp(local_site + "flashinfer/fp4_quantization.py") +
           testsupport::slurp(local_site + "benchmods/m49.py");
  };
  const std::string pristine = snapshot();
  auto expect = [&](bool patched, const std::string& after) {
    std::string now = snapshot();
    bool ok = patched ? now.find("    return Version(torch.version.cuda)\n") != std::string::npos ||
                            now.find("    return x\n") != std::string::npos
                      : now == pristine;
    if (!ok) throw std::runtime_error("after " + after + " the files are not as expected:\n" + now);
  };
  // `--trace`: one -v apply and rollback first, to show where a remote command's time goes.
  if (trace) {
    for (auto args : {with(sp, {"-vvv", "apply", two}), with(sp, {"-vvv", "rollback", "--all"}), with(sp, {"-vvv", "apply", two}), with(sp, {"-vvv", "rollback", "--all"}), with(sp, {"-vvv", "list"})}) {
      auto t0 = std::chrono::steady_clock::now();
      auto r = testsupport::run_sitepatch({args.begin() + 1, args.end()});
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%s(wall %.0f ms)\n", r.err.c_str(), ms);
    }
    // The fixed cost of a command: the handshake, then the agent's start and probe.
    // What any Python agent pays beyond the handshake: the interpreter's start, and its
    // start with the modules ours imports.
    auto py = bare;
    py.back() = "/srv/venv/bin/python3 -c pass";
    auto py_imports = bare;
    py_imports.back() = "/srv/venv/bin/python3 -c 'import binascii, json, os, site, stat, sysconfig, time'";
    for (auto args : {bare, py, py_imports, with(sp, {"list"}), with(sp, {"verify"})}) {
      std::vector<double> s;
      for (int i = 0; i < 5; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        if (args[0] == "sitepatch") testsupport::run_sitepatch({args.begin() + 1, args.end()});
        else sitepatch::util::run(args);
        s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      std::printf("%-40.40s median %.3f s\n", (args[0] + " ... " + args.back()).c_str(), median(s));
    }
  }
  for (int i = 0; i < rounds; ++i) {
    measure("ssh host true", bare);
    measure("sitepatch apply, 2 edits", with(sp, {"apply", "-q", two}));
    expect(true, "sitepatch apply");
    measure("sitepatch rollback, 2 edits", with(sp, {"rollback", "-q", "--all"}));
    expect(false, "sitepatch rollback");
    measure("sitepatch apply, 2 edits, warm", with(sp_warm, {"apply", "-q", two}));
    expect(true, "sitepatch apply (warm)");
    measure("sitepatch rollback, 2 edits, warm", with(sp_warm, {"rollback", "-q", "--all"}));
    expect(false, "sitepatch rollback (warm)");
    if (ansible) {
      // Cold: no master, as sitepatch's cold rows. Warm: the master the run before left.
      close_masters();
      measure("ansible apply, 2 edits", play("two.yml"), ans_env);
      expect(true, "ansible apply");
      measure("ansible rollback, 2 edits, warm", play("two_back.yml"), ans_env);
      expect(false, "ansible rollback (warm)");
      measure("ansible apply, 2 edits, warm", play("two.yml"), ans_env);
      expect(true, "ansible apply (warm)");
      close_masters();
      measure("ansible rollback, 2 edits", play("two_back.yml"), ans_env);
      expect(false, "ansible rollback");
    }
    measure("sitepatch apply, 50 edits", with(sp, {"apply", "-q", tmp.path + "/fifty.yaml"}));
    expect(true, "sitepatch apply (50)");
    measure("sitepatch rollback, 50 edits", with(sp, {"rollback", "-q", "--all"}));
    expect(false, "sitepatch rollback (50)");
    if (ansible) {
      close_masters();
      measure("ansible apply, 50 edits", play("fifty.yml"), ans_env);
      expect(true, "ansible apply (50)");
      close_masters();
      measure("ansible rollback, 50 edits", play("fifty_back.yml"), ans_env);
      expect(false, "ansible rollback (50)");
    }
  }

  if (rounds == 0) return 0;  // `0 --trace`: the trace alone
  double floor = median(t["ssh host true"].seconds);
  auto conns = [&](const std::string& label) {
    auto& c = t[label].connections;
    return *std::max_element(c.begin(), c.end());
  };
  // "-" where the peer did not run (--no-ansible).
  auto ratio = [&](const std::string& theirs, double ours) {
    char buf[32];
    if (t[theirs].seconds.empty()) return std::string("-");
    std::snprintf(buf, sizeof buf, "%.1f", median(t[theirs].seconds) / ours);
    return std::string(buf);
  };
  std::printf("remote benchmark: sshd in a network namespace, %d rounds%s%s; medians\n", rounds,
              delay_ms.empty() ? "" : ", ms added each way: ", delay_ms.c_str());
  std::printf("%-32s %9s %12s %12s %12s\n", "command", "median s", "x ssh true", "conns/run", "ansible/us");
  for (const char* edits : {"2 edits", "50 edits"}) {
    for (const char* verb : {"apply", "rollback"}) {
      std::string ours = std::string("sitepatch ") + verb + ", " + edits;
      std::string theirs = std::string("ansible ") + verb + ", " + edits;
      double mo = median(t[ours].seconds);
      std::printf("%-32s %9.3f %12.2f %12d %12s\n", ours.c_str(), mo, mo / floor, conns(ours),
                  ratio(theirs, mo).c_str());
      if (t[theirs].seconds.empty()) continue;
      double mt = median(t[theirs].seconds);
      std::printf("%-32s %9.3f %12.2f %12d %12s\n", theirs.c_str(), mt, mt / floor, conns(theirs), "");
    }
  }
  for (const char* verb : {"apply", "rollback"}) {
    std::string warm = std::string("sitepatch ") + verb + ", 2 edits, warm";
    std::string theirs = std::string("ansible ") + verb + ", 2 edits, warm";
    double mw = median(t[warm].seconds);
    std::printf("%-32s %9.3f %12.2f %12d %12s\n", warm.c_str(), mw, mw / floor, conns(warm),
                ratio(theirs, mw).c_str());
    if (t[theirs].seconds.empty()) continue;
    double mt = median(t[theirs].seconds);
    std::printf("%-32s %9.3f %12.2f %12d %12s\n", theirs.c_str(), mt, mt / floor, conns(theirs), "");
  }
  std::printf("%-32s %9.3f %12.2f %12d\n", "ssh host true", floor, 1.0, conns("ssh host true"));
  return 0;
}
