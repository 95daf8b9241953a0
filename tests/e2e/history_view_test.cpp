// log -p and show COMMIT: the history read back as git users read theirs, with each
// entry's diff relative to site-packages.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

using testsupport::slurp;

namespace {

// The file sections of a diff, by path: the same changes whatever their order.
std::map<std::string, std::string> sections(const std::string& diff) {
  std::map<std::string, std::string> out;
  size_t at = 0;
  while ((at = diff.find("diff --git a/", at)) != std::string::npos) {
    size_t end = diff.find("\ndiff --git a/", at);
    end = end == std::string::npos ? diff.size() : end + 1;
    std::string s = diff.substr(at, end - at);
    out[s.substr(13, s.find(' ', 13) - 13)] = s;
    at = end;
  }
  return out;
}

nlohmann::json log_json(const e2e::DemoEnv& env, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--json", "log"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = env.sp(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("log -p: each entry followed by what it did to the files, rollbacks going back", "[e2e][history]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  REQUIRE(env.sp({"apply", recipe}).status == 0);
  std::string patch = env.sp({"show", "flashinfer-dynamo"}).out;
  std::string undo = env.sp({"rollback", "--dry-run", "flashinfer-dynamo"}).out;
  REQUIRE(env.sp({"rollback", "flashinfer-dynamo"}).status == 0);

  // Without -p the entries carry no diff; with it each one does.
  auto plain = log_json(env);
  REQUIRE(plain["entries"].size() == 3);
  CHECK_FALSE(plain["entries"][0].contains("diff"));
  auto doc = log_json(env, {"-p"});
  auto& e = doc["entries"];
  REQUIRE(e.size() == 3);
  CHECK(e[0]["summary"] == "rollback flashinfer-dynamo");
  CHECK(e[0]["diff"] == undo);  // the originals back, as rollback printed it
  CHECK(e[1]["summary"] == "apply flashinfer-dynamo");
  CHECK(sections(e[1]["diff"]) == sections(patch));
  CHECK(sections(patch).size() == 2);
  // Saving the originals changed no file.
  CHECK(e[2]["summary"] == "apply flashinfer-dynamo: originals saved, writing");
  CHECK(e[2]["diff"] == "");
  CHECK(e[1]["author"].get<std::string>().find(" <") != std::string::npos);

  // As text: git's medium format, then the diff.
  auto text = env.sp({"log", "-p"});
  REQUIRE(text.status == 0);
  std::string head = "commit " + e[0]["commit"].get<std::string>() + "\nAuthor: " + e[0]["author"].get<std::string>() +
                     "\nDate:   ";
  CHECK(text.out.rfind(head, 0) == 0);
  CHECK(text.out.find("\n\n    rollback flashinfer-dynamo\n\n    Sitepatch-Rollback: flashinfer-dynamo\n") !=
        std::string::npos);
  CHECK(text.out.find(undo) != std::string::npos);
  CHECK(text.out.find("\ncommit " + e[2]["commit"].get<std::string>() + "\n") != std::string::npos);

  // -n keeps the newest.
  auto one = log_json(env, {"-p", "-n", "1"});
  REQUIRE(one["entries"].size() == 1);
  CHECK(one["entries"][0]["commit"] == e[0]["commit"]);
  auto two = env.sp({"log", "--max-count", "2"});
  CHECK(std::count(two.out.begin(), two.out.end(), '\n') == 2);
}

TEST_CASE("show COMMIT: a log entry by its full or abbreviated id, as git show prints it", "[e2e][history]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  auto doc = log_json(env, {"-p"});
  std::string oid = doc["entries"][0]["commit"];
  std::string log_p = env.sp({"log", "-p", "-n", "1"}).out;

  // Abbreviated as log prints it, full, in capitals, or just 4 digits: the same entry.
  for (std::string id : {oid.substr(0, 10), oid, std::string(oid.substr(0, 7)), oid.substr(0, 4)}) {
    auto r = env.sp({"show", id});
    INFO(id << "\n" << r.err);
    CHECK(r.status == 0);
    CHECK(r.out == log_p);
  }
  std::string upper = oid.substr(0, 8);
  for (auto& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  CHECK(env.sp({"show", upper}).out == log_p);
  auto j = env.sp({"--json", "show", oid.substr(0, 10)});
  REQUIRE(j.status == 0);
  auto shown = nlohmann::json::parse(j.out);
  CHECK(shown["commit"]["commit"] == oid);
  CHECK(shown["commit"]["diff"] == doc["entries"][0]["diff"]);

  // Neither a patch nor a commit: both possibilities named.
  std::string none = oid[0] == 'f' ? "0000000" : "fffffff";
  auto missing = env.sp({"show", none});
  CHECK(missing.status == 1);
  CHECK(missing.err == "sitepatch: error: no applied patch `" + none + "` and no commit starting with `" + none +
                           "` in " + env.venv.root + "/.sitepatch\n");
  // Not hex: only a patch id can be meant.
  auto word = env.sp({"show", "flashinfer-dynamoo"});
  CHECK(word.status == 1);
  CHECK(word.err == "sitepatch: error: no applied patch `flashinfer-dynamoo`; did you mean flashinfer-dynamo? "
                    "(applied: flashinfer-dynamo)\n");
}

TEST_CASE("show: a patch id that is also a commit prefix is the patch, as --help says", "[e2e][history]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  std::string prefix = log_json(env)["entries"][0]["commit"].get<std::string>().substr(0, 6);
  std::string recipe = env.recipe("hex.yaml", "id: " + prefix +
                                                  "\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                                  "    ensure-import: import logging\n");
  auto applied = env.sp({"apply", recipe});
  INFO(applied.err);
  REQUIRE(applied.status == 0);
  auto r = env.sp({"show", prefix});
  CHECK(r.status == 0);
  CHECK(r.out.rfind("diff --git a/flashinfer/jit/cpp_ext.py", 0) == 0);
  CHECK(r.out.find("+import logging") != std::string::npos);
  CHECK(env.sp({"show", "--help"}).out.find("a patch id wins over a commit prefix") != std::string::npos);
}

TEST_CASE("show: an ambiguous commit prefix names the candidates", "[e2e][history]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  std::string git_dir = env.venv.root + "/.sitepatch";
  // Two more commits on the history whose ids share their first 4 digits: the second's
  // message is searched for (git hashes "commit <size>\0<body>").
  std::string script =
      "import hashlib, subprocess, sys\n"
      "g = sys.argv[1]\n"
      "def git(*a, inp=None): return subprocess.run(['git', '--git-dir', g] + list(a), input=inp, check=True,"
      " capture_output=True, text=True).stdout.strip()\n"
      "tree, head = git('rev-parse', 'HEAD^{tree}'), git('rev-parse', 'HEAD')\n"
      "def body(parent, msg): return ('tree %s\\nparent %s\\nauthor t <t@t> 1700000000 +0000\\n"
      "committer t <t@t> 1700000000 +0000\\n\\n%s\\n' % (tree, parent, msg))\n"
      "def oid(b): return hashlib.sha1(('commit %d\\0' % len(b)).encode() + b.encode()).hexdigest()\n"
      "a = body(head, 'note a'); oa = oid(a)\n"
      "n = 0\n"
      "while oid(body(oa, 'note b %d' % n))[:4] != oa[:4]: n += 1\n"
      "b = body(oa, 'note b %d' % n)\n"
      "for x in (a, b): git('hash-object', '-t', 'commit', '-w', '--stdin', inp=x)\n"
      "git('update-ref', 'refs/heads/main', oid(b))\n"
      "print(oa, oid(b), n)\n";
  auto made = sitepatch::util::run({"/usr/bin/python3", "-c", script, git_dir});
  INFO(made.err);
  REQUIRE(made.status == 0);
  auto ids = sitepatch::util::split(sitepatch::util::trim(made.out), ' ');
  REQUIRE(ids.size() == 3);
  auto r = env.sp({"show", ids[0].substr(0, 4)});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: commit prefix `" + ids[0].substr(0, 4) + "` is ambiguous: " + ids[1].substr(0, 12) +
                     " (note b " + ids[2] + "), " + ids[0].substr(0, 12) + " (note a); give more of it\n");
  // One more digit tells them apart (unless they share it too).
  if (ids[0][4] != ids[1][4]) CHECK(env.sp({"show", ids[0].substr(0, 5)}).out.find("    note a\n") != std::string::npos);
}
