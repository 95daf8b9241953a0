// Benchmark: the fixed cost of a command on an environment shaped like a GPU server's
// (200 distributions, torch's RECORD 1.25 MB) with a small history (the founding
// 2-edit recipe applied). Times list, verify, status, plan and apply (then rollback)
// against `python -c pass`, rounds alternating; then the bytes one remote command moves
// through the test sshd for 20 and 200 distributions and a short and a long history.
// With SITEPATCH_BENCH_OLD=other/sitepatch, that build runs beside this one, side by side.
// Prints medians; asserts nothing.
//
// usage: [SITEPATCH_BENCH_OLD=old/sitepatch] sitepatch_bench_fixed_cost [ROUNDS (0: remote only)] [--no-remote]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"
#include "bench_support.hpp"
#include "support/fixture.hpp"
#include "support/sshd.hpp"

namespace {

using benchsupport::median;

using testsupport::spit;

constexpr int kDistributions = 200;
constexpr size_t kTorchRecordBytes = 1250 * 1000;

struct Wheels {
  std::string dir;
  std::string of(const std::string& name, const std::string& version, size_t pad_record = 0) const {
    testsupport::WheelSpec spec{name, version, {}};
    std::string src = std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/packages/" + name + "-" + version;
    auto r = sitepatch::util::run({"find", src, "-type", "f"});
    for (auto& f : sitepatch::util::split(r.out, '\n'))
      if (!f.empty()) spec.files[f.substr(src.size() + 1)] = testsupport::slurp(f);
    // torch's RECORD is long because it lists many files: so does this one.
    size_t row = 0;
    for (int i = 0; row < pad_record; ++i) {
      // headers, as torch ships: pip compiles no .pyc for them, which would add rows
      std::string rel = name + "/include/ATen/ops/op_" + std::to_string(i) + ".h";
      spec.files[rel] = "";
      row += rel.size() + 53;  // ",sha256=<43>,0\n"
    }
    return testsupport::build_wheel(spec, dir);
  }
};

// A venv (no pip) holding torch, packaging, flashinfer-python and fillers: `count` in all.
testsupport::Venv make_env(const std::string& root, const Wheels& w, int count) {
  auto venv = testsupport::Venv::create(root);
  std::vector<std::string> args = {w.of("torch", "2.9.0", count > 100 ? kTorchRecordBytes : 0),
                                   w.of("packaging", "24.0"), w.of("flashinfer-python", "0.5.3")};
  for (int i = 0; i + 3 < count; ++i) {
    std::string n = "filler" + std::to_string(i);
    testsupport::WheelSpec spec{"filler-" + std::to_string(i), "1.0",
                                {{n + "/__init__.py", "VALUE = " + std::to_string(i) + "\n"},
                                 {n + "/core.py", "def f():\n    return 1\n"}}};
    args.push_back(testsupport::build_wheel(spec, w.dir));
  }
  venv.install(args);
  return venv;
}

sitepatch::util::RunResult run_ok(const std::vector<std::string>& argv) {
  auto r = sitepatch::util::run(argv);
  if (r.status != 0 && r.status != 3)
    throw std::runtime_error(argv[0] + " " + sitepatch::util::join(argv, " ") + " failed (" +
                             std::to_string(r.status) + "):\n" + r.out + r.err);
  return r;
}

double seconds(const std::vector<std::string>& argv) {
  auto t0 = std::chrono::steady_clock::now();
  run_ok(argv);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const char* kCommands[] = {"list", "verify", "status", "plan", "apply"};

void time_local(const std::vector<std::pair<std::string, std::string>>& bins, const std::string& recipe,
                int rounds) {
  testsupport::TempDir tmp;
  Wheels w{tmp.path};
  auto venv = make_env(tmp.path + "/venv", w, kDistributions);
  std::vector<std::string> env = {"--venv", venv.root};
  run_ok(cat({bins[0].second}, cat(env, {"apply", "-q", recipe})));
  // label -> binary -> seconds
  std::map<std::string, std::map<std::string, std::vector<double>>> t;
  std::vector<double> pass;
  for (int i = 0; i < rounds; ++i) {
    for (auto& [label, bin] : bins) {
      for (const char* c : {"list", "verify", "status"})
        t[c][label].push_back(seconds(cat({bin}, cat(env, {c, "-q"}))));
      run_ok(cat({bin}, cat(env, {"rollback", "-q", "--all"})));
      t["plan"][label].push_back(seconds(cat({bin}, cat(env, {"plan", "-q", recipe}))));
      t["apply"][label].push_back(seconds(cat({bin}, cat(env, {"apply", "-q", recipe}))));
    }
    auto t0 = std::chrono::steady_clock::now();
    run_ok({venv.python, "-c", "pass"});
    pass.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double p = median(pass);
  std::printf("local: %d distributions, torch RECORD %zu bytes, history: the founding recipe applied; "
              "%d rounds; python -c pass %.4f s\n",
              kDistributions, testsupport::slurp(venv.site_packages + "/torch-2.9.0.dist-info/RECORD").size(),
              rounds, p);
  std::printf("%-8s", "command");
  for (auto& b : bins) std::printf(" %10s s %6s x", b.first.c_str(), "");
  std::printf("   (x = median / python -c pass)\n");
  for (const char* c : kCommands) {
    std::printf("%-8s", c);
    for (auto& b : bins) {
      double m = median(t[c][b.first]);
      std::printf(" %12.4f %7.1fx", m, m / p);
    }
    std::printf("\n");
  }
}

// ssh that counts the bytes it carries each way, appending "sent received" to a file.
const char* kRelay = R"(import os, subprocess, sys, threading
count, argv = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
n = [0, 0]
def up():
    while True:
        b = os.read(0, 65536)
        if not b: break
        n[0] += len(b)
        try: p.stdin.write(b)
        except BrokenPipeError: break
    p.stdin.close()
threading.Thread(target=up, daemon=True).start()
while True:
    b = os.read(p.stdout.fileno(), 65536)
    if not b: break
    n[1] += len(b)
    os.write(1, b)
rc = p.wait()
with open(count, "a") as f: f.write("%d %d\n" % (n[0], n[1]))
sys.exit(rc)
)";

void bytes_remote(const std::vector<std::pair<std::string, std::string>>& bins, const std::string& recipe) {
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  Wheels w{tmp.path};
  spit(tmp.path + "/relay.py", kRelay);
  std::string count = tmp.path + "/count";
  std::string ssh = "python3 " + tmp.path + "/relay.py " + count + " " + sshd.ssh_command();
  auto bytes = [&](const std::vector<std::string>& argv) {
    std::remove(count.c_str());
    run_ok(argv);
    long sent = 0, received = 0;
    for (auto& line : sitepatch::util::split(testsupport::slurp(count), '\n')) {
      long a = 0, b = 0;
      if (std::sscanf(line.c_str(), "%ld %ld", &a, &b) == 2) sent += a, received += b;
    }
    return std::make_pair(sent, received);
  };
  // label -> binary -> "sent/received"
  std::map<std::string, std::map<std::string, std::pair<long, long>>> b;
  std::vector<std::string> rows;
  for (int count_dists : {20, kDistributions}) {
    std::string venv_dir = "/srv/v" + std::to_string(count_dists);
    make_env(sshd.local(venv_dir), w, count_dists);
    for (auto& [label, bin] : bins) {
      std::vector<std::string> sp = {bin, "--host", sshd.target(), "--ssh-command", ssh, "--venv", venv_dir};
      std::string d = std::to_string(count_dists) + " dists";
      b["apply, " + d][label] = bytes(cat(sp, {"apply", "-q", recipe}));
      for (const char* c : {"list", "verify", "status"}) b[std::string(c) + ", " + d][label] = bytes(cat(sp, {c, "-q"}));
      run_ok(cat(sp, {"rollback", "-q", "--all"}));
      b["plan, " + d][label] = bytes(cat(sp, {"plan", "-q", recipe}));
      if (count_dists != kDistributions) continue;
      // A long history: 20 more apply and rollback pairs, then the recipe applied.
      for (int i = 0; i < 20; ++i) {
        run_ok(cat(sp, {"apply", "-q", recipe}));
        run_ok(cat(sp, {"rollback", "-q", "--all"}));
      }
      run_ok(cat(sp, {"apply", "-q", recipe}));
      b["list, " + d + ", 43 commits"][label] = bytes(cat(sp, {"list", "-q"}));
      b["status, " + d + ", 43 commits"][label] = bytes(cat(sp, {"status", "-q"}));
      run_ok(cat(sp, {"rollback", "-q", "--all"}));
      // the next binary starts from a fresh history
      run_ok({"rm", "-rf", sshd.local(venv_dir) + "/.sitepatch"});
    }
  }
  std::printf("\nremote: bytes one command moves over ssh (sent / received, the agent's source included)\n");
  std::printf("%-30s", "command");
  for (auto& x : bins) std::printf(" %24s", x.first.c_str());
  std::printf("\n");
  for (auto& [label, per] : b) {
    std::printf("%-30s", label.c_str());
    for (auto& x : bins) {
      auto v = per[x.first];
      std::printf(" %11ld / %10ld", v.first, v.second);
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
    bool remote = !(argc > 2 && std::string(argv[2]) == "--no-remote");
    std::vector<std::pair<std::string, std::string>> bins = {{"this", SITEPATCH_BIN}};
    if (const char* old = std::getenv("SITEPATCH_BENCH_OLD")) bins.insert(bins.begin(), {"old", old});
    std::string recipe = std::string(SITEPATCH_SOURCE_DIR) + "/recipes/flashinfer-dynamo.yaml";
    if (rounds > 0) time_local(bins, recipe, rounds);  // 0: the remote bytes only
    if (remote) bytes_remote(bins, recipe);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sitepatch_bench_fixed_cost: %s\n", e.what());
    return 1;
  }
}
