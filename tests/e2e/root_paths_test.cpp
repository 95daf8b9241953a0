// Safe as root, round 3 (SECURITY.md): every folder a root Python imports from at start
// is checked before it runs, whatever put it on sys.path (a .pth file, the base Python
// of a --system-site-packages venv, the standard library); ACLs and file modes count as
// write; and the folder a command's environment names is never freed for another user to
// claim. The other user is uid 65534; each case first shows its witness can be written.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_support.hpp"
#include "root_support.hpp"
#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"
#include "support/sshd.hpp"

namespace fs = std::filesystem;
using e2e::give;
using sitepatch::util::RunResult;

namespace {

/// Python code that appends who ran it to `witness`.
std::string witness_code(const std::string& witness) {
  return "import os; open(" + sitepatch::util::shell_quote(witness) + ", 'a').write('ran as %d\\n' % os.geteuid())\n";
}

int setfacl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"setfacl"};
  argv.insert(argv.end(), args.begin(), args.end());
  return sitepatch::util::run(argv).status;
}

const std::string kCheckout =
    " (an editable install of a shared checkout? the checkout must belong to root or you, and be writable by no one "
    "else)";

}  // namespace

TEST_CASE("try's run folder lies in root's cache: once removed, no other user can make it again", "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  REQUIRE(::chmod(env.tmp.path.c_str(), 0755) == 0);  // the other user reaches into it
  std::string cache = env.tmp.path + "/cache", seen = env.tmp.path + "/pythonpath";
  auto r = testsupport::run_sitepatch(
      {"--venv", env.venv.root, "try", e2e::bundled("flashinfer-dynamo.yaml"), "--", "sh", "-c",
       "printf %s \"$PYTHONPATH\" > " + seen},
      {{"XDG_CACHE_HOME", cache}, {"TMPDIR", "/tmp"}});
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::string pythonpath = testsupport::slurp(seen);
  std::string folder = pythonpath.substr(0, pythonpath.find(':'));
  CHECK(folder.find(cache + "/sitepatch/run/sitepatch-run-") == 0);
  CHECK_FALSE(fs::exists(folder));  // removed once the command returned
  // A process the command left behind still has that PYTHONPATH: the other user tries to
  // make the folder again, with a sitecustomize of theirs, as they could in /tmp.
  auto m = sitepatch::util::run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "mkdir", "-p", folder});
  CHECK(m.status != 0);
  CHECK(m.err.find("Permission denied") != std::string::npos);
  CHECK_FALSE(fs::exists(folder));
}

TEST_CASE("a folder a .pth file puts on sys.path is checked before root's Python starts", "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  std::string witness = env.tmp.path + "/witness", checkout = env.tmp.path + "/checkout";
  testsupport::spit(checkout + "/sitecustomize.py", witness_code(witness));
  std::string pth = env.venv.site_packages + "/__editable__.shared.pth";
  testsupport::spit(pth, checkout + "\n");
  // Root's own checkout: its sitecustomize runs (the case below could fail).
  REQUIRE(env.sp({"list"}).status == 0);
  REQUIRE(testsupport::slurp(witness) == "ran as 0\n");
  fs::remove(witness);

  SECTION("an editable install of a checkout another user owns") {
    give(checkout);
    auto r = env.sp({"list"});
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: refusing to run " + env.venv.root + "/bin/python3: " + checkout +
                       " belongs to uid 65534, another user, which " + pth + " puts on sys.path" + kCheckout + "\n");
  }
  SECTION("a checkout its group may write, through a POSIX ACL") {
    REQUIRE(setfacl({"-m", "g:65534:rwx", checkout}) == 0);
    auto r = env.sp({"list"});
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: refusing to run " + env.venv.root + "/bin/python3: " + checkout +
                       " is writable by group 65534 through a POSIX ACL (see getfacl " + checkout + "), which " + pth +
                       " puts on sys.path" + kCheckout + "\n");
  }
  SECTION("the .pth file itself is writable by everyone") {
    REQUIRE(::chmod(pth.c_str(), 0666) == 0);
    auto r = env.sp({"list"});
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: refusing to run " + env.venv.root + "/bin/python3: " + pth +
                       " is writable by other users (mode 0666), a .pth file Python runs at every start\n");
  }
  CHECK_FALSE(fs::exists(witness));
}

TEST_CASE("a --system-site-packages venv over a base whose site-packages another group may write is refused",
          "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  testsupport::TempDir tmp;
  auto base = testsupport::base_interpreter(tmp.path + "/base");
  auto venv = testsupport::venv_from(base.python, tmp.path + "/venv", true);
  std::string witness = tmp.path + "/witness";
  testsupport::spit(base.site_packages + "/planted.pth", witness_code(witness));
  auto sp = [&] { return testsupport::run_sitepatch({"--venv", venv.root, "list"}); };
  REQUIRE(sp().status == 0);  // root's own base: its .pth runs
  REQUIRE(fs::exists(witness));
  fs::remove(witness);

  REQUIRE(::chown(base.site_packages.c_str(), 0, 65534) == 0);
  REQUIRE(::chmod(base.site_packages.c_str(), 0775) == 0);
  auto r = sp();
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: refusing to run " + venv.root + "/bin/python3: " + base.site_packages +
                     " is writable by its group 65534 (mode 0775), a site folder whose .pth files and modules Python "
                     "runs\n");
  CHECK_FALSE(fs::exists(witness));
}

TEST_CASE("the standard library, the interpreter and site-packages count an ACL or a file mode as write",
          "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  testsupport::TempDir tmp;
  auto base = testsupport::base_interpreter(tmp.path + "/base");
  auto venv = testsupport::venv_from(base.python, tmp.path + "/venv", false);
  std::string witness = tmp.path + "/witness";
  testsupport::spit(venv.site_packages + "/planted.pth", witness_code(witness));
  auto sp = [&] { return testsupport::run_sitepatch({"--venv", venv.root, "list"}); };
  REQUIRE(sp().status == 0);
  REQUIRE(fs::exists(witness));
  fs::remove(witness);
  std::string refusal = "sitepatch: error: refusing to run " + venv.root + "/bin/python3: ";
  std::string tail = ", who could make it run their code as you; run sitepatch as that user\n";

  SECTION("site-packages shows drwxrwxr-x+ with group root: an ACL names the other user") {
    REQUIRE(setfacl({"-m", "u:65534:rwx", venv.site_packages}) == 0);
    auto r = sp();
    CHECK(r.status == 1);
    CHECK(r.err == refusal + venv.site_packages + " is writable by uid 65534 through a POSIX ACL (see getfacl " +
                       venv.site_packages + ")" + tail);
  }
  SECTION("the standard library the base interpreter starts from is writable by everyone") {
    std::string stdlib = fs::path(base.site_packages).parent_path().string();
    REQUIRE(::chmod(stdlib.c_str(), 0777) == 0);
    auto r = sp();
    CHECK(r.status == 1);
    CHECK(r.err == refusal + stdlib + " is writable by other users (mode 0777)" + tail);
  }
  SECTION("the interpreter itself is writable by everyone") {
    std::string real = fs::canonical(venv.python).string();
    REQUIRE(::chmod(real.c_str(), 0777) == 0);
    auto r = sp();
    CHECK(r.status == 1);
    CHECK(r.err == refusal + real + " is writable by other users (mode 0777)" + tail);
  }
  CHECK_FALSE(fs::exists(witness));
}

TEST_CASE("remote: a .pth's folder, an ACL and a dangling site-packages link are judged before Python runs there",
          "[e2e][root][remote]") {
  REQUIRE(::geteuid() == 0);
  testsupport::TestSshd sshd;
  auto venv = testsupport::Venv::create(sshd.local("/srv/venv"));
  std::string site = "/srv/venv" + venv.site_packages.substr(sshd.local("/srv/venv").size());
  auto sp = [&] {
    return testsupport::run_sitepatch(
        {"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv", "/srv/venv", "list"});
  };
  std::string witness = sshd.local("/srv/witness");
  fs::create_directories(sshd.local("/srv/checkout"));
  testsupport::spit(sshd.local("/srv/checkout/sitecustomize.py"), witness_code("/srv/witness"));
  testsupport::spit(venv.site_packages + "/shared.pth", "/srv/checkout\n");
  REQUIRE(sp().status == 0);  // root's own checkout: it runs
  REQUIRE(fs::exists(witness));
  fs::remove(witness);
  std::string refusal = "sitepatch: error: " + sshd.target() + ": refusing to run /srv/venv/bin/python3: ";

  SECTION("the checkout a .pth names belongs to another user") {
    give(sshd.local("/srv/checkout"));
    auto r = sp();
    CHECK(r.status == 1);
    CHECK(r.err == refusal + "/srv/checkout belongs to uid 65534, another user, which " + site +
                       "/shared.pth puts on sys.path" + kCheckout + "\n");
  }
  SECTION("site-packages carries an ACL: ls shows only a `+`, and the message says what that refuses") {
    REQUIRE(setfacl({"-m", "u:65534:rwx", venv.site_packages}) == 0);
    auto r = sp();
    CHECK(r.status == 1);
    CHECK(r.err == refusal + site + " has a POSIX ACL (drwxrwxr-x+) that may give another user write (this check "
                       "over ssh reads modes, not ACLs: it refuses any ACL that could; see getfacl " + site +
                       "), who could make it run their code as you; run sitepatch as that user\n");
  }
  SECTION("pyvenv.cfg names another user's base with `Home =`, which Python reads as home") {
    fs::create_directories(sshd.local("/srv/theirs/bin"));
    give(sshd.local("/srv/theirs"));
    std::string cfg = venv.root + "/pyvenv.cfg";
    testsupport::spit(cfg, "Home = /srv/theirs/bin\n" + testsupport::slurp(cfg));
    auto r = sp();
    CHECK(r.status == 1);
    CHECK(r.err == refusal + "/srv/theirs belongs to uid 65534, another user, who could make it run their code as "
                       "you; run sitepatch as that user\n");
  }
  SECTION("site-packages is a link into another user's folder that leads nowhere yet") {
    fs::create_directories(sshd.local("/srv/theirs"));
    give(sshd.local("/srv/theirs"));
    fs::remove_all(venv.site_packages);
    fs::create_directory_symlink("/srv/theirs/site-packages", venv.site_packages);
    auto r = sp();
    CHECK(r.status == 1);
    CHECK(r.err == refusal + "/srv/theirs belongs to uid 65534, another user, who could make it run their code as "
                       "you; run sitepatch as that user\n");
  }
  CHECK_FALSE(fs::exists(witness));
}

TEST_CASE("a recipe another user can change is code of theirs: refused before it is read", "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  std::string recipe = env.recipe("fix.yaml", testsupport::slurp(e2e::bundled("flashinfer-dynamo.yaml")));
  std::string refusal = "sitepatch: error: refusing to read the recipe file " + recipe + ": ";
  std::string tail = ", who could make it run their code as you (what it writes into site-packages runs there); keep "
                     "it where only you can write\n";
  SECTION("the file is writable by everyone") {
    REQUIRE(::chmod(recipe.c_str(), 0666) == 0);
    auto r = env.sp({"apply", recipe});
    CHECK(r.status == 1);
    CHECK(r.err == refusal + recipe + " is writable by other users (mode 0666)" + tail);
  }
  SECTION("a folder of recipes another user owns") {
    std::string folder = env.tmp.path + "/theirs";
    fs::create_directories(folder);
    fs::copy_file(recipe, folder + "/fix.yaml");
    give(folder);
    auto r = env.sp({"apply", folder});
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: refusing to read the recipe file " + folder + ": " + folder +
                       " belongs to uid 65534, another user" + tail);
  }
  CHECK(env.pristine());
}

namespace {

/// A shared object whose constructor appends who loaded it to `witness`: what an attacker
/// would build, in place of a module's source.
void build_witness_so(const std::string& so, const std::string& build, const std::string& witness) {
  testsupport::spit(build + "/w.c", "#include <stdio.h>\n#include <unistd.h>\n"
                                    "__attribute__((constructor)) static void w(void) {\n"
                                    "  FILE* f = fopen(\"" + witness + "\", \"a\");\n"
                                    "  if (f) { fprintf(f, \"so ran as %d\\n\", (int)geteuid()); fclose(f); }\n}\n");
  fs::create_directories(fs::path(so).parent_path());
  auto cc = sitepatch::util::run({"cc", "-shared", "-fPIC", build + "/w.c", "-o", so});
  INFO(cc.err);
  REQUIRE(cc.status == 0);
}

}  // namespace

TEST_CASE("an editable finder that maps a name into another user's checkout loads no compiled code of theirs",
          "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  std::string witness = env.tmp.path + "/witness", checkout = env.tmp.path + "/checkout";
  std::string suffix = sitepatch::util::trim(
      env.venv.run_python("import importlib.machinery as m; print(m.EXTENSION_SUFFIXES[0])").out);
  build_witness_so(checkout + "/sitecustomize" + suffix, env.tmp.path, witness);
  // Root's own files, as an editable install (a finder, setuptools' way) leaves them.
  testsupport::spit(env.venv.site_packages + "/__editable___shared_finder.py",
                    "import sys, importlib.util\n\n\nclass F:\n    @classmethod\n"
                    "    def find_spec(cls, name, path=None, target=None):\n"
                    "        if name == 'sitecustomize':\n"
                    "            return importlib.util.spec_from_file_location(name, " +
                        sitepatch::util::shell_quote(checkout + "/sitecustomize" + suffix) + ")\n\n\n"
                    "def install():\n    sys.meta_path.append(F)\n");
  testsupport::spit(env.venv.site_packages + "/__editable__.shared.pth",
                    "import __editable___shared_finder; __editable___shared_finder.install()\n");
  REQUIRE(env.sp({"list"}).status == 0);  // root's own checkout: its compiled code loads
  REQUIRE(testsupport::slurp(witness) == "so ran as 0\n");
  fs::remove(witness);

  give(checkout);
  auto r = env.sp({"list"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: refusing to run " + env.venv.root + "/bin/python3: " + checkout +
                     " belongs to uid 65534, another user, where Python imports code from\n");
  CHECK_FALSE(fs::exists(witness));
}

TEST_CASE("a .pth line through a link and `..`, and a hidden .pth, are judged where site puts them", "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  std::string witness = env.tmp.path + "/witness", theirs = env.tmp.path + "/theirs";
  std::string suffix = sitepatch::util::trim(
      env.venv.run_python("import importlib.machinery as m; print(m.EXTENSION_SUFFIXES[0])").out);
  build_witness_so(theirs + "/p/evilso" + suffix, env.tmp.path, witness);
  fs::create_symlink("/nonexistent/x", theirs + "/l");
  give(theirs);
  // Root's own .pth imports a module from the folder its path line adds.
  testsupport::spit(env.venv.site_packages + "/zz.pth", "import evilso\n");
  std::string pth;
  SECTION("the kernel follows the link before `..`, site undoes `..` on paper") {
    pth = env.venv.site_packages + "/c1.pth";
    testsupport::spit(pth, theirs + "/l/../p\n");
  }
  SECTION("a .pth whose name starts with a dot") {
    pth = env.venv.site_packages + "/.hidden.pth";
    testsupport::spit(pth, theirs + "/p\n");
  }
  auto r = env.sp({"list"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: refusing to run " + env.venv.root + "/bin/python3: " + theirs +
                     " belongs to uid 65534, another user, which " + pth + " puts on sys.path" + kCheckout + "\n");
  CHECK_FALSE(fs::exists(witness));
}

TEST_CASE("every home line of pyvenv.cfg is a base whose standard library is checked, whatever its case",
          "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  std::string theirs = env.tmp.path + "/theirs";
  fs::create_directories(theirs + "/bin");
  give(theirs);
  std::string cfg = env.venv.root + "/pyvenv.cfg";
  testsupport::spit(cfg, "Home = " + theirs + "/bin\n" + testsupport::slurp(cfg));
  auto r = env.sp({"list"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: refusing to run " + env.venv.root + "/bin/python3: " + theirs +
                     " belongs to uid 65534, another user, who could make it run their code as you; run sitepatch as "
                     "that user\n");
}

TEST_CASE("code another user's zip or file holds is not run, whatever its name: zipimport, runpy", "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  std::string witness = env.tmp.path + "/witness", theirs = env.tmp.path + "/theirs";
  fs::create_directories(theirs);
  testsupport::spit(theirs + "/x.conf", witness_code(witness));
  REQUIRE(env.venv.run_python("import zipfile; z = zipfile.ZipFile(" + sitepatch::util::shell_quote(theirs + "/evil.zip") +
                              ", 'w'); z.write(" + sitepatch::util::shell_quote(theirs + "/x.conf") +
                              ", 'evilzip.py'); z.close()")
              .status == 0);
  give(theirs);
  // Root's own .pth files (an import line is the owner's code) that reach into the other
  // user's files, and leave no trace on sys.path.
  std::string pth = env.venv.site_packages + "/reach.pth";
  std::string refused;
  SECTION("a zip put on sys.path and taken off again") {
    testsupport::spit(pth, "import sys; sys.path.insert(0, " + sitepatch::util::shell_quote(theirs + "/evil.zip") +
                               "); import evilzip; sys.path.pop(0)\n");
    refused = theirs + "/evil.zip";
  }
  SECTION("a file runpy runs, named as no module") {
    testsupport::spit(pth, "import runpy; runpy.run_path(" + sitepatch::util::shell_quote(theirs + "/x.conf") + ")\n");
    refused = theirs + "/x.conf";
  }
  auto r = env.sp({"list"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: refusing to run " + env.venv.root + "/bin/python3: " + theirs +
                     " belongs to uid 65534, another user, where Python reads code from\n");
  CHECK_FALSE(fs::exists(witness));
}

TEST_CASE("a venv whose python links into a folder the user cannot read: the error says so, not 'no bin/python3'",
          "[e2e][root]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  // Another user's view: the venv readable, its interpreter's folder not (root's 0700).
  std::string hidden = tmp.path + "/hidden";
  fs::create_directories(hidden + "/bin");
  fs::copy_file(fs::canonical(venv.python), hidden + "/bin/python3");
  fs::permissions(hidden, fs::perms::owner_all, fs::perm_options::replace);
  for (const char* name : {"python3", "python"}) {
    fs::remove(venv.root + "/bin/" + name);
    fs::create_symlink(hidden + "/bin/python3", venv.root + "/bin/" + name);
  }
  fs::permissions(tmp.path, fs::perms::all, fs::perm_options::add);
  auto r = sitepatch::util::run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", SITEPATCH_BIN,
                                 "--venv", venv.root, "list"});
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK(r.err.find(venv.root + " is not a Python environment you can use: " + venv.root + "/bin/python3 is a link to " +
                   hidden + "/bin/python3, which you cannot run (Permission denied)") != std::string::npos);
  CHECK(r.err.find("no bin/python3") == std::string::npos);
}
