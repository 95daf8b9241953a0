// The README's examples, run as written: its recipe and its first five commands against
// a venv holding the FlashInfer stand-in (/srv/model/.venv is that venv), and its `try
// ... && apply` line in a shell, with nothing activated.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include "e2e_support.hpp"
#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"

namespace {

std::string readme() { return testsupport::slurp(std::string(SITEPATCH_SOURCE_DIR) + "/README.md"); }

// The fenced blocks of `text`, each without its fences; `lang` is what follows ```.
std::vector<std::pair<std::string, std::string>> blocks(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  std::string line, lang, body;
  bool inside = false;
  while (std::getline(in, line)) {
    if (sitepatch::util::starts_with(line, "```")) {
      if (inside) out.push_back({lang, body});
      else lang = line.substr(3), body.clear();
      inside = !inside;
      continue;
    }
    if (inside) body += line + "\n";
  }
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("the README's recipe and its first commands run as written", "[e2e][readme]") {
  e2e::DemoEnv env;
  auto all = blocks(readme());
  auto yaml = std::find_if(all.begin(), all.end(), [](auto& b) { return b.first == "yaml"; });
  REQUIRE(yaml != all.end());
  REQUIRE(yaml->second.find("id: flashinfer-dynamo\n") != std::string::npos);
  std::string recipe = env.recipe("flashinfer-dynamo.yaml", yaml->second);
  // The block of commands right after it.
  auto cmds = std::next(yaml);
  REQUIRE(cmds != all.end());
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(cmds->second);
  for (std::string line; std::getline(in, line);) {
    line = sitepatch::util::trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    REQUIRE(sitepatch::util::starts_with(line, "sitepatch --venv /srv/model/.venv "));
    std::vector<std::string> argv;
    for (auto& w : sitepatch::util::split(line.substr(10), ' '))
      if (!w.empty()) argv.push_back(w == "/srv/model/.venv" ? env.venv.root
                                     : w == "recipes/flashinfer-dynamo.yaml" ? recipe : w);
    lines.push_back(argv);
  }
  REQUIRE(lines.size() == 5);
  std::vector<std::string> verbs;
  for (auto& argv : lines) {
    auto r = testsupport::run_sitepatch(argv);
    INFO(sitepatch::util::join(argv, " ") << "\n" << r.out << r.err);
    CHECK(r.status == 0);
    verbs.push_back(argv[2]);
    if (argv[2] == "plan") CHECK(env.pristine());
    if (argv[2] == "apply") CHECK(env.read("flashinfer/jit/cpp_ext.py").find("return Version(torch.version.cuda)") !=
                                  std::string::npos);
    if (argv[2] == "list") CHECK(r.out.find("flashinfer-dynamo") != std::string::npos);
  }
  CHECK(verbs == std::vector<std::string>{"plan", "apply", "list", "verify", "rollback"});
  CHECK(env.pristine());
}

TEST_CASE("the README's `try ... && apply` line runs in a shell with nothing activated", "[e2e][readme]") {
  e2e::DemoEnv env;
  std::string text = readme();
  size_t at = text.find("`sitepatch try fix.yaml -- python -c '");
  REQUIRE(at != std::string::npos);
  size_t end = text.find("`.", at + 1);
  REQUIRE(end != std::string::npos);
  std::string line = replace_all(text.substr(at + 1, end - at - 1), "\n", " ");
  REQUIRE(line.find(" && sitepatch apply fix.yaml") != std::string::npos);
  // fix.yaml is the README's recipe; server.compile_check() asks for what the fix does.
  auto all = blocks(text);
  auto yaml = std::find_if(all.begin(), all.end(), [](auto& b) { return b.first == "yaml"; });
  REQUIRE(yaml != all.end());
  std::string dir = env.tmp.path + "/app";
  std::filesystem::create_directories(dir);
  testsupport::spit(dir + "/fix.yaml", yaml->second);
  testsupport::spit(dir + "/server.py",
                    "import inspect\n"
                    "import flashinfer.jit.cpp_ext as cpp_ext\n"
                    "\n"
                    "\n"
                    "def compile_check():\n"
                    "    assert 'torch.version.cuda' in inspect.getsource(cpp_ext.get_cuda_version), 'not fixed'\n");
  std::string bin = std::filesystem::path(SITEPATCH_BIN).parent_path().string();
  // As a user's shell has it: sitepatch on PATH, the venv named by VIRTUAL_ENV only (no
  // activate: its python is not first on PATH).
  std::string shell = "cd " + dir + " && " + line;
  auto r = sitepatch::util::run({"env", "PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV=" + env.venv.root,
                                 "NO_COLOR=1", "bash", "-c", shell});
  INFO(shell << "\n" << r.out << r.err);
  CHECK(r.status == 0);
  CHECK(env.read("flashinfer/jit/cpp_ext.py").find("return Version(torch.version.cuda)") != std::string::npos);
}
