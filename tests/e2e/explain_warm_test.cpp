// Issue 51 item 9: explain --run's warm runs. A run of `python SCRIPT` is forked from one
// Python per session that imported torch once; its verdict must be the cold run's, a
// command with shell syntax runs cold, and neither the server nor a run outlives
// sitepatch (ended, or killed).
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "corpus_env.hpp"
#include "sitepatch/util/process.hpp"

namespace {

using corpus::CorpusEnv;
using corpus::shape;

// A process, not a zombie: the server's parent may be a PID 1 that reaps late.
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] != 'Z';
}

bool gone_within(pid_t pid, int seconds) {
  for (int k = 0; k < seconds * 20; ++k) {
    if (!alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Each run of the repro adds "its pid, its parent's pid" to `file`, first thing.
void record_pids(const CorpusEnv& env, const std::string& file, const std::string& tail = "") {
  std::string repro = testsupport::slurp(env.app + "/repro.py");
  testsupport::spit(env.app + "/repro.py", "import os\nwith open(" + nlohmann::json(file).dump() +
                                               ", 'a') as f:\n    f.write('%d %d\\n' % (os.getpid(), os.getppid()))\n" +
                                               tail + repro);
}

std::vector<std::pair<pid_t, pid_t>> pids_in(const std::string& file) {
  std::vector<std::pair<pid_t, pid_t>> out;
  if (!std::filesystem::exists(file)) return out;
  std::istringstream in(testsupport::slurp(file));
  for (pid_t a, b; in >> a >> b;) out.push_back({a, b});
  return out;
}

}  // namespace

// The same runs and verdicts warm and --cold: explain_corpus_test.cpp's os.environ and
// nvcc shapes (one warm search each, compared with its cold twin).

TEST_CASE("explain --run warm: a command with shell syntax runs cold, and says why", "[e2e][explain][torch][warm]") {
  CorpusEnv env(shape("envread"));
  // Said once for the search (a run's `start` in --json is the same words: the corpus's
  // --cold searches check it there).
  auto r = env.sp({"explain", "--run", "python repro.py | cat", "--max-runs", "1"});
  INFO(r.err);
  CHECK(r.err.find("\nruns start cold: the command is more than plain words to sh (`|`)\n") != std::string::npos);
  CHECK(r.err.find("run 1 started") == std::string::npos);
}

TEST_CASE("explain --run warm: one server per session, gone when explain exits", "[e2e][explain][torch][warm]") {
  CorpusEnv env(shape("envread"));
  std::string pids = env.tmp.path + "/pids";
  record_pids(env, pids);
  auto r = env.sp({"-v", "explain", "--run", "python repro.py", "--max-runs", "12", "--jobs", "1"});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("\nruns start warm: one Python imports torch once and forks each run (--cold: each run its own "
                   "Python)\n") != std::string::npos);
  CHECK(r.err.find("\n  run 1 started warm\n") != std::string::npos);
  CHECK(r.err.find("\n  run 2 started warm\n") != std::string::npos);
  auto runs = pids_in(pids);
  REQUIRE(runs.size() == 2);
  // Both runs forked from the same server, which is not sitepatch's child's child: a
  // process of its own, now gone with its runs.
  CHECK(runs[0].second == runs[1].second);
  CHECK(runs[0].first != runs[1].first);
  CHECK(gone_within(runs[0].second, 5));
  for (auto& [pid, parent] : runs) CHECK(!alive(pid));
}

TEST_CASE("explain --run warm: sitepatch killed mid-run leaves neither the run nor the server",
          "[e2e][explain][torch][warm]") {
  CorpusEnv env(shape("envread"));
  std::string pids = env.tmp.path + "/pids";
  record_pids(env, pids, "import time\ntime.sleep(300)\n");
  sitepatch::util::Process sp({"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", env.app, SITEPATCH_BIN, "--venv",
                               env.venv.root, "explain", "--run", "python repro.py", "--max-runs", "1"});
  for (int k = 0; k < 2400 && pids_in(pids).empty(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto runs = pids_in(pids);
  REQUIRE(runs.size() == 1);
  REQUIRE(alive(runs[0].first));
  ::kill(sp.pid(), SIGKILL);
  sp.wait();
  CHECK(gone_within(runs[0].first, 10));
  CHECK(gone_within(runs[0].second, 10));
}
