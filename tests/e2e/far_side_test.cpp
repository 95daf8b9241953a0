// A far side that breaks the protocol (issue 41, findings 5 and 7): a fake ssh command
// runs a shell script in place of the agent, which sends escape sequences, replies of
// another shape, a reply that never ends, or a flood of stderr. Each gets a message
// naming the host, escaped, and root's memory stays bounded.
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>

#include <catch2/catch.hpp>

#include "e2e_support.hpp"

namespace {

// The fake ssh ignores its arguments, swallows what sitepatch writes (the venv path, the
// bootstrap, requests) and plays `far_side`, a shell script.
struct FarSide {
  testsupport::TempDir tmp;
  std::string ssh;
  explicit FarSide(const std::string& far_side) : ssh(tmp.path + "/fake-ssh") {
    // A background job's stdin is /dev/null unless it is given one: fd 3 keeps ours, so
    // the cat reads what sitepatch sends (more than a pipe holds: the agent is over 64 KB).
    testsupport::spit(ssh, "#!/bin/sh\nexec 3<&0\ncat <&3 >/dev/null 2>&1 &\n" + far_side + "\n");
    ::chmod(ssh.c_str(), 0755);
  }
  sitepatch::util::RunResult sp(const std::string& command = "list",
                                 const std::map<std::string, std::string>& env = {}) const {
    return testsupport::run_sitepatch({"--host", "farhost", "--ssh-command", ssh, "--venv", "/srv/venv", command},
                                      env);
  }
};

// The peak memory of the children this test process waited for, in MB.
long peak_child_mb() {
  struct rusage ru {};
  ::getrusage(RUSAGE_CHILDREN, &ru);
  return ru.ru_maxrss / 1024;
}

// A hello reply the real agent could send, with `notes`.
std::string hello(const std::string& notes) {
  return "printf '%s\\n' '{\"ok\":true,\"protocol\":5,\"python\":\"/srv/venv/bin/python\",\"prefix\":\"/srv/venv\","
         "\"base_prefix\":\"/usr\",\"version\":\"3.11.2\",\"cache_tag\":\"cpython-311\",\"site_dirs\":[],"
         "\"pth_dirs\":[],\"dpkg\":false,\"builtins\":[],\"notes\":" + notes + "}'";
}

}  // namespace

TEST_CASE("far side: the agent's notes and errors reach the terminal escaped", "[e2e][remote]") {
  // A note that would retitle the terminal and paint it red, then an error that would
  // clear the screen: every control character arrives as \xNN, newlines kept.
  FarSide notes(hello("[\"\\u001b]0;owned\\u0007 \\u001b[31mred\"]") + "\n"
                "printf '%s\\n' '{\"ok\":false,\"error\":\"\\u001b[2Jboom\\nsecond line\\r\"}'\n"
                "exec sleep 5");
  auto r = notes.sp();
  CHECK(r.status == 1);
  CHECK(r.err ==
        "sitepatch: farhost: \\x1b]0;owned\\x07 \\x1b[31mred\n"
        "sitepatch: error: \\x1b[2Jboom\nsecond line\\x0d\n");
}

TEST_CASE("far side: a reply of another shape is an error naming the host, not the JSON library's", "[e2e][remote]") {
  struct Case {
    std::string reply, message;
  } cases[] = {
      {"{\"ok\":true,\"protocol\":5,\"site_dirs\":[1,2]}",
       "farhost: the sitepatch agent broke the protocol: its answer to `hello` does not have the expected shape"},
      {"{\"ok\":true,\"protocol\":\"5\"}",
       "farhost: the sitepatch agent broke the protocol: its answer to `hello` does not have the expected shape"},
      {"{\"ok\":false,\"error\":5}", "farhost: the sitepatch agent failed at `hello` without saying why"},
      {"{\"ok\":\"yes\"}", "farhost: the sitepatch agent broke the protocol: its answer to `hello` has no `ok` of "
                           "true or false"},
      {"{\"ok\":true,\"protocol\":3}", "farhost: the sitepatch agent speaks protocol 3, expected 5"},
      {"{not json \\u001b[31m", "farhost: the sitepatch agent broke the protocol: its answer to `hello` is not JSON: "
                                "{not json \\u001b[31m"},
  };
  for (auto& c : cases) {
    FarSide far("printf '%s\\n' '" + c.reply + "'\nexec sleep 5");
    auto r = far.sp();
    INFO(c.reply);
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: " + c.message + "\n");
  }
  // Raw control bytes in a line that is not JSON are escaped too.
  FarSide raw("printf '{\\033[2J\\n'\nexec sleep 5");
  CHECK(raw.sp().err ==
        "sitepatch: error: farhost: the sitepatch agent broke the protocol: its answer to `hello` is not JSON: "
        "{\\x1b[2J\n");
}

TEST_CASE("far side: a reply of 100 MB without a newline stops at 16 MB", "[e2e][remote]") {
  // The far side keeps its stdout open after the 100 MB: only the bound ends the read.
  FarSide far("printf '{\"ok\":'; head -c 100000000 /dev/zero | tr '\\0' 1; exec sleep 30");
  auto r = far.sp();
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: farhost: the sitepatch agent broke the protocol: its answer to `hello` is "
                 "longer than 16 MB, the most sitepatch reads\n");
  INFO("peak MB of a child: " << peak_child_mb());
  CHECK(peak_child_mb() < 90);
}

TEST_CASE("far side: a flood of stderr is kept to its first and last 2 MB, escaped", "[e2e][remote]") {
  // Stray output before any reply, then 100 MB of stderr that starts by retitling the
  // terminal, then the far side exits.
  FarSide far("printf 'banner \\033[5m\\n'\n"
              "{ printf '\\033]0;pwned\\007'; head -c 100000000 /dev/zero | tr '\\0' e; printf 'last words'; } >&2\n"
              "exit 3");
  auto r = far.sp();
  CHECK(r.status == 1);
  std::string head = "sitepatch: error: farhost: the sitepatch agent stopped answering (exit status 3):\n"
                     "banner \\x1b[5m\n\\x1b]0;pwned\\x07eee";
  CHECK(r.err.substr(0, head.size()) == head);
  size_t left_out = 10 + 100000000 + 10 - 2 * sitepatch::util::Process::kStderrKept;
  CHECK(r.err.find("e\n[" + std::to_string(left_out) + " bytes of stderr left out]\neee") != std::string::npos);
  CHECK(r.err.size() < 2 * sitepatch::util::Process::kStderrKept + 200);
  CHECK(r.err.substr(r.err.size() - 13) == "eelast words\n");
  CHECK(r.err.find('\x1b') == std::string::npos);
  INFO("peak MB of a child: " << peak_child_mb());
  CHECK(peak_child_mb() < 90);
}

TEST_CASE("far side: one that floods stderr forever and never says hello is given up on, naming the host",
          "[e2e][remote]") {
  FarSide far("while :; do echo 'still booting' >&2; done");
  auto start = std::chrono::steady_clock::now();
  auto r = far.sp("list", {{"SITEPATCH_REPLY_TIMEOUT", "2"}});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.status == 1);
  std::string head = "sitepatch: error: farhost: the sitepatch agent did not start: no hello within 2 s "
                     "(SITEPATCH_REPLY_TIMEOUT sets the bound); it printed:\n";
  CHECK(r.err.substr(0, head.size()) == head);
  CHECK(r.err.find("still booting\nstill booting") != std::string::npos);
  CHECK(r.err.size() < 2200);
  CHECK(took < 30);  // bounded by the 2 s and the child's tear-down, never the flood
}

TEST_CASE("far side: a hello and then silence is an error naming the operation waited for", "[e2e][remote]") {
  // Beats before the hello do not count: only what comes after it.
  FarSide far("echo '~'; " + hello("[]") + "; sleep 60");
  auto r = far.sp("list", {{"SITEPATCH_REPLY_TIMEOUT", "1.5"}});
  CHECK(r.status == 1);
  CHECK(r.err.find("sitepatch: error: farhost: the sitepatch agent went silent: no answer to `") == 0);
  CHECK(r.err.find("` and no sign of work for 1.5 s (SITEPATCH_REPLY_TIMEOUT sets the bound)") != std::string::npos);
}
