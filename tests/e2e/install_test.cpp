// The install story: `cmake --install` puts each file where users and shells look for
// it, and `cpack -G DEB` makes a package that installs with apt into a clean Debian
// root (a throwaway overlay of this machine's own) and runs there.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>

#include "e2e_support.hpp"

namespace fs = std::filesystem;
using sitepatch::util::run;

namespace {

const std::string kSource = SITEPATCH_SOURCE_DIR;
const std::string kBuild = SITEPATCH_BUILD_DIR;

// "0.1.0", from the first line of the built binary's --version.
std::string version() {
  auto r = testsupport::run_sitepatch({"--version"});
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, std::regex("^sitepatch ([0-9][^ \n]*) ")));
  return m[1];
}

// Every file an install puts under its prefix (share/... relative), with the source it
// is a copy of ("" where the file is made by the build).
std::map<std::string, std::string> expected_files() {
  std::map<std::string, std::string> out = {
      {"bin/sitepatch", ""},
      {"share/man/man1/sitepatch.1", ""},
      {"share/bash-completion/completions/sitepatch", kSource + "/completions/sitepatch.bash"},
      {"share/zsh/vendor-completions/_sitepatch", kSource + "/completions/_sitepatch"},
      {"share/fish/vendor_completions.d/sitepatch.fish", kSource + "/completions/sitepatch.fish"},
  };
  for (auto& [rel, _] : e2e::read_tree(kSource + "/recipes"))
    if (fs::path(rel).extension() == ".yaml") out["share/sitepatch/recipes/" + rel] = kSource + "/recipes/" + rel;
  for (auto& [rel, _] : e2e::read_tree(kSource + "/docs/guide"))
    if (fs::path(rel).extension() == ".md") out["share/doc/sitepatch/guide/" + rel] = kSource + "/docs/guide/" + rel;
  for (auto& [rel, _] : e2e::read_tree(kSource + "/docs/schema"))
    if (fs::path(rel).extension() == ".json") out["share/sitepatch/docs/schema/" + rel] = kSource + "/docs/schema/" + rel;
  return out;
}

std::string deb_field(const std::string& deb, const std::string& field) {
  auto r = run({"dpkg-deb", "-f", deb, field});
  REQUIRE(r.status == 0);
  return sitepatch::util::trim(r.out);
}

// Run as root in a mount namespace of its own: the root it installs into is an overlay
// whose writes go to a tmpfs that vanishes with the namespace, so the real / is never
// written. Every dependency is already installed here, so apt needs no network.
const char* kInstallInOverlay = R"sh(set -eu
work=$1 deb=$2
mount -t tmpfs sitepatch-root "$work"
mkdir "$work/upper" "$work/work" "$work/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/work" "$work/root"
mount --rbind /proc "$work/root/proc"
mount --rbind /dev "$work/root/dev"
mount -t tmpfs tmp "$work/root/tmp"
cp "$deb" "$work/root/tmp/"
chroot "$work/root" /bin/sh -euc '
  # A container image may drop man pages (dpkg path-exclude); a Debian machine keeps them.
  for f in /etc/dpkg/dpkg.cfg.d/*; do [ -f "$f" ] && sed -i "/^path-exclude/d" "$f"; done
  # No mandb index rebuilt for every page of this machine (4 s of CPU; man -w needs none).
  rm -f /var/lib/man-db/auto-update
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ./tmp/*.deb >/tmp/apt.log 2>&1 ||
    { cat /tmp/apt.log >&2; exit 1; }
  apt-get check -q >/dev/null
  echo "installed: $(dpkg-query -W -f "\${Status}" sitepatch)"
  echo "binary: $(command -v sitepatch)"
  sitepatch --version
  echo "man: $(man -w sitepatch)"
'
)sh";

}  // namespace

TEST_CASE("cmake --install puts the binary, man page, completions and recipes under the prefix", "[e2e][install]") {
  testsupport::TempDir tmp;
  std::string prefix = tmp.path + "/prefix";
  auto install = run({"cmake", "--install", kBuild, "--prefix", prefix});
  INFO(install.out << install.err);
  REQUIRE(install.status == 0);

  // Exactly these files, nothing else.
  auto expected = expected_files();
  auto installed = e2e::read_tree(prefix);
  std::set<std::string> want, got;
  for (auto& [rel, _] : expected) want.insert(rel);
  for (auto& [rel, _] : installed) got.insert(rel);
  CHECK(got == want);

  // Completions and recipes as in the tree; the man page with this version in its footer.
  for (auto& [rel, source] : expected) {
    INFO(rel);
    if (!source.empty() && installed.count(rel)) CHECK(installed.at(rel) == testsupport::slurp(source));
  }
  std::string man = std::regex_replace(testsupport::slurp(kSource + "/docs/man/sitepatch.1"),
                                       std::regex("@PROJECT_VERSION@"), version());
  CHECK(installed["share/man/man1/sitepatch.1"] == man);
  // A shipped file's `# yaml-language-server: $schema=../...` finds its schema installed.
  static const std::regex schema_line("# yaml-language-server: \\$schema=([^\n]+)");
  for (auto& [rel, text] : installed) {
    std::smatch m;
    if (fs::path(rel).extension() != ".yaml" || !std::regex_search(text, m, schema_line)) continue;
    INFO(rel << " names " << m[1]);
    CHECK(fs::is_regular_file(fs::path(prefix) / fs::path(rel).parent_path() / m[1].str()));
  }
  auto man_w = run({"man", "-M", prefix + "/share/man", "-w", "sitepatch"});
  CHECK(man_w.out == prefix + "/share/man/man1/sitepatch.1\n");

  // The installed binary runs, stripped: no symbol table, no debug info.
  std::string bin = prefix + "/bin/sitepatch";
  CHECK(run({bin, "--version"}).out == testsupport::run_sitepatch({"--version"}).out);
  auto sections = run({"readelf", "-S", "-W", bin});
  REQUIRE(sections.status == 0);
  CHECK(sections.out.find(".symtab") == std::string::npos);
  CHECK(sections.out.find(".debug_info") == std::string::npos);
}

TEST_CASE("cpack -G DEB: a package with its dependencies that installs into a clean root and runs",
          "[e2e][install][deb]") {
  // The install below happens in a throwaway root; this machine must not gain the file.
  REQUIRE_FALSE(fs::exists("/usr/bin/sitepatch"));
  testsupport::TempDir tmp;
  // As a user runs it in a build folder: cpack builds `preinstall` (nothing to do once the
  // tests are built), then stages the install rules' files under -B, not in the build folder.
  auto pack = run({"cpack", "-G", "DEB", "--config", kBuild + "/CPackConfig.cmake", "-B", tmp.path + "/out"});
  INFO(pack.out << pack.err);
  REQUIRE(pack.status == 0);
  std::string arch = sitepatch::util::trim(run({"dpkg", "--print-architecture"}).out);
  std::string deb = tmp.path + "/out/sitepatch_" + version() + "_" + arch + ".deb";
  REQUIRE(fs::exists(deb));

  // What apt reads: the libraries dpkg-shlibdeps found, python3, ssh for --host.
  CHECK(deb_field(deb, "Package") == "sitepatch");
  CHECK(deb_field(deb, "Version") == version());
  std::string depends = deb_field(deb, "Depends");
  CHECK(depends.find("libgit2-") != std::string::npos);
  CHECK(depends.find("python3 (>= 3.8)") != std::string::npos);
  CHECK(depends.find("libc6") != std::string::npos);
  CHECK(deb_field(deb, "Recommends") == "openssh-client");
  CHECK(!deb_field(deb, "Maintainer").empty());
  CHECK(deb_field(deb, "Section") == "devel");
  CHECK(deb_field(deb, "Description").rfind("patch installed Python packages by syntax tree, reversibly\n", 0) == 0);

  // Its files are the install's, under /usr.
  auto contents = run({"dpkg-deb", "-c", deb});
  for (auto& [rel, _] : expected_files()) {
    INFO(rel);
    CHECK(contents.out.find(" ./usr/" + rel + "\n") != std::string::npos);
  }

  fs::create_directories(tmp.path + "/root");
  testsupport::spit(tmp.path + "/install.sh", kInstallInOverlay);
  auto r = run({"unshare", "--mount", "--propagation", "private", "/bin/sh", tmp.path + "/install.sh",
                tmp.path + "/root", deb});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("installed: install ok installed\n") != std::string::npos);
  CHECK(r.out.find("binary: /usr/bin/sitepatch\n") != std::string::npos);
  CHECK(r.out.find("sitepatch " + version() + " (commit ") != std::string::npos);
  CHECK(r.out.find("man: /usr/share/man/man1/sitepatch.1\n") != std::string::npos);
  CHECK_FALSE(fs::exists("/usr/bin/sitepatch"));
}
