// explain --run's warm runs: which commands run warm (plain words, `python SCRIPT` or
// `python -m MODULE`), why the others run cold, and the start line a run writes first.
#include <catch2/catch.hpp>

#include "engine/proofs/warm_impl.hpp"

using namespace sitepatch::engine::detail;
using Words = std::vector<std::string>;

TEST_CASE("plain_words splits as sh does, quotes and backslashes taken off", "[engine][explain][warm]") {
  CHECK(plain_words("python repro.py") == Words{"python", "repro.py"});
  CHECK(plain_words("  python\t'my repro.py'  --n=3 ") == Words{"python", "my repro.py", "--n=3"});
  CHECK(plain_words("python \"a b\" c\\ d ''") == Words{"python", "a b", "c d", ""});
  CHECK(plain_words("python a'b'\"c\"") == Words{"python", "abc"});
}

TEST_CASE("plain_words refuses what sh would do more with, saying what", "[engine][explain][warm]") {
  for (const char* cmd : {"python repro.py | tee log", "python repro.py > log", "python repro.py; echo",
                          "python repro.py && echo", "python $SCRIPT", "python `which x`", "python *.py",
                          "python repro.py # note", "python ~/repro.py", "(python repro.py)", "python a\nb",
                          "python \"$HOME/x.py\"", "python 'open", "python x\\"}) {
    INFO(cmd);
    CHECK(!plain_words(cmd));
  }
  std::string why;
  CHECK(!plain_words("TORCH_LOGS=dynamo python repro.py", &why));
  CHECK(why == "a variable assignment");
  CHECK(!plain_words("python repro.py | cat", &why));
  CHECK(why == "`|`");
  // An = in a later word, or quoted, is a plain character.
  CHECK(plain_words("python repro.py --x=1") == Words{"python", "repro.py", "--x=1"});
}

TEST_CASE("cold_because: only python SCRIPT and python -m MODULE run warm", "[engine][explain][warm]") {
  Words w;
  CHECK(cold_because("python repro.py a b", &w) == "");
  CHECK(w == Words{"python", "repro.py", "a", "b"});
  CHECK(cold_because("python3.11 -m pkg.main --x", &w) == "");
  CHECK(w == Words{"python3.11", "-m", "pkg.main", "--x"});
  CHECK(cold_because("python3 repro.py") == "");
  CHECK(cold_because("python repro.py | cat") == "the command is more than plain words to sh (`|`)");
  CHECK(cold_because("sh run.sh") == "the command does not start with python, python3 or pythonX.Y");
  CHECK(cold_because("/usr/bin/python repro.py") == "the command does not start with python, python3 or pythonX.Y");
  CHECK(cold_because("python -u repro.py") ==
        "only `python SCRIPT ARGS` and `python -m MODULE ARGS` run warm (no other python option)");
  CHECK(cold_because("python") ==
        "only `python SCRIPT ARGS` and `python -m MODULE ARGS` run warm (no other python option)");
  CHECK(cold_because("python -m") == "`python -m` names no module");
  CHECK(cold_because("python -m 9x") == "`python -m` names no module");
}

TEST_CASE("take_start_line takes the client's first line out of stderr", "[engine][explain][warm]") {
  std::string err = "sitepatch-run: warm\nW1206 graph break\n";
  CHECK(take_start_line(err) == "warm");
  CHECK(err == "W1206 graph break\n");
  err = "sitepatch-run: cold: the warm server had imported torch.fx, which this run patches\nTraceback\n";
  CHECK(take_start_line(err) == "cold: the warm server had imported torch.fx, which this run patches");
  CHECK(err == "Traceback\n");
  // Only a first line: the same words later are the program's own.
  err = "x\nsitepatch-run: warm\n";
  CHECK(take_start_line(err) == "");
  CHECK(err == "x\nsitepatch-run: warm\n");
}
