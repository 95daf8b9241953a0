// The history repository: commits written by libgit2, read back by libgit2 and by git.
#include <catch2/catch.hpp>

#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "sitepatch/store/history.hpp"
#include "store/record.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"
#include "support/fixture.hpp"
#include "unit/store_support.hpp"

using namespace sitepatch::store;
using store_test::git;
using store_test::TempDir;
namespace fs = std::filesystem;

namespace {

PatchRecord sample(const std::string& id, const std::string& before, const std::string& after,
                   const std::string& rel = "a/b/c.py") {
  PatchRecord r;
  r.id = id;
  r.description = "make " + id + " dynamo-safe";
  r.recipe_path = "/recipes/" + id + ".yaml";
  r.recipe_hash = std::string(64, 'a');
  r.recipe_text = "id: " + id + "\nedits: []\n";
  r.state = "applied";
  r.applied_at = 1700000000;
  r.files.push_back({rel, "/venv/lib/python3.11/site-packages", "flashinfer", "0.2.1", before,
                     after});
  return r;
}

Transaction apply_tx(const PatchRecord& r) {
  Transaction tx;
  tx.message = "apply " + r.id;
  tx.trailers = {{"Sitepatch-Recipe", r.id}, {"Sitepatch-Recipe-Hash", r.recipe_hash}};
  tx.put.push_back(r);
  for (const auto& f : r.files) tx.site[f.rel] = f.after;
  return tx;
}

std::vector<std::string> text_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("open without create on a missing folder gives nothing and creates nothing",
          "[store]") {
  TempDir tmp;
  CHECK(History::open(tmp / "absent/.sitepatch", false) == nullptr);
  CHECK_FALSE(fs::exists(tmp / "absent"));
}

TEST_CASE("open with create makes a bare repository on main, with parents", "[store]") {
  TempDir tmp;
  const std::string dir = tmp / "env/.sitepatch/history.git";
  auto h = History::open(dir, true);
  REQUIRE(h);
  CHECK(h->path() == dir);
  // Given a brand-new history, nothing is applied and there is no commit.
  CHECK(h->patches().empty());
  CHECK(h->log().empty());
  CHECK_FALSE(h->patch("x"));
  CHECK_FALSE(h->site_file("x.py"));
  // git sees a bare repository whose HEAD is main.
  CHECK(git(dir, {"rev-parse", "--is-bare-repository"}) == "true\n");
  CHECK(git(dir, {"symbolic-ref", "HEAD"}) == "refs/heads/main\n");
  // It opens again without create.
  CHECK(History::open(dir, false));
}

TEST_CASE("a commit reads back through libgit2 and plain git", "[store]") {
  TempDir tmp;
  const std::string dir = tmp / "h";
  auto h = History::open(dir, true);
  PatchRecord r = sample("flashinfer-dynamo", "def f():\n    return 1\n",
                         "def f():\n    return 2\n");
  std::string oid = h->commit(apply_tx(r));
  CHECK(oid.size() == 40);

  // libgit2 side: the record and its bodies come back field for field.
  auto got = h->patch("flashinfer-dynamo");
  REQUIRE(got);
  CHECK(got->id == r.id);
  CHECK(got->description == r.description);
  CHECK(got->recipe_path == r.recipe_path);
  CHECK(got->recipe_hash == r.recipe_hash);
  CHECK(got->recipe_text == r.recipe_text);
  CHECK(got->state == "applied");
  CHECK(got->applied_at == 1700000000);
  REQUIRE(got->files.size() == 1);
  CHECK(got->files[0].rel == "a/b/c.py");
  CHECK(got->files[0].site_dir == r.files[0].site_dir);
  CHECK(got->files[0].dist == "flashinfer");
  CHECK(got->files[0].version == "0.2.1");
  CHECK(got->files[0].before == r.files[0].before);
  CHECK(got->files[0].after == r.files[0].after);
  auto all = h->patches();
  REQUIRE(all.size() == 1);
  CHECK(all[0].id == r.id);

  // git side: HEAD is the commit, files are where the layout says, trailers parse.
  CHECK(git(dir, {"rev-parse", "HEAD"}) == oid + "\n");
  CHECK(git(dir, {"log", "--format=%s"}) == "apply flashinfer-dynamo\n");
  // Authored as git would author it: git's identity when configured, else login@host.
  auto name = sitepatch::util::run({"git", "--git-dir", dir, "config", "user.name"});
  auto email = sitepatch::util::run({"git", "--git-dir", dir, "config", "user.email"});
  if (name.status == 0 && email.status == 0) {
    CHECK(git(dir, {"log", "-1", "--format=%an <%ae>"}) == sitepatch::util::trim(name.out) + " <" +
                                                                   sitepatch::util::trim(email.out) + ">\n");
  } else {
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    CHECK(git(dir, {"log", "-1", "--format=%ae"}) == std::string(::getpwuid(::geteuid())->pw_name) + "@" + host + "\n");
  }
  CHECK(git(dir, {"show", "HEAD:site/a/b/c.py"}) == r.files[0].after);
  CHECK(git(dir, {"show", "HEAD:patches/flashinfer-dynamo/before/a/b/c.py"}) ==
        r.files[0].before);
  CHECK(git(dir, {"show", "HEAD:patches/flashinfer-dynamo/after/a/b/c.py"}) ==
        r.files[0].after);
  CHECK(git(dir, {"show", "HEAD:patches/flashinfer-dynamo/recipe.yaml"}) == r.recipe_text);
  std::string body = git(dir, {"log", "-1", "--format=%B"});
  CHECK(body.find("apply flashinfer-dynamo\n\nSitepatch-Recipe: flashinfer-dynamo\n") == 0);
  CHECK(body.find("Sitepatch-Recipe-Hash: " + r.recipe_hash + "\n") != std::string::npos);
  CHECK(git(dir, {"log", "-1", "--format=%(trailers:key=Sitepatch-Recipe,valueonly)"}) ==
        "flashinfer-dynamo\n\n");
  // patch.json names the bodies by their blob ids and carries no body text.
  std::string json = git(dir, {"show", "HEAD:patches/flashinfer-dynamo/patch.json"});
  std::string before_oid =
      git(dir, {"rev-parse", "HEAD:patches/flashinfer-dynamo/before/a/b/c.py"});
  before_oid.pop_back();
  CHECK(json.find("\"before\": \"" + before_oid + "\"") != std::string::npos);
  CHECK(json.find("return 1") == std::string::npos);
  // Every blob is a regular file.
  for (const auto& line : text_lines(git(dir, {"ls-tree", "-r", "HEAD"})))
    CHECK(line.rfind("100644 blob ", 0) == 0);
  // log -p reads it and the repository is sound.
  CHECK(git(dir, {"log", "-p"}).find("+++ b/site/a/b/c.py") != std::string::npos);
  CHECK_NOTHROW(git(dir, {"fsck", "--strict"}));
}

TEST_CASE("putting a patch again replaces its folder entirely", "[store]") {
  TempDir tmp;
  auto h = History::open(tmp / "h", true);
  PatchRecord r = sample("p", "x = 1\n", "x = 2\n", "pkg/one.py");
  r.files.push_back({"pkg/two.py", "/site", "pkg", "1.0", "y = 1\n", "y = 2\n"});
  h->commit(apply_tx(r));
  // Given a second apply of "p" that touches only one.py, two.py's bodies disappear.
  PatchRecord again = sample("p", "x = 1\n", "x = 3\n", "pkg/one.py");
  again.state = "pending";
  h->commit(apply_tx(again));
  auto got = h->patch("p");
  REQUIRE(got);
  CHECK(got->state == "pending");
  REQUIRE(got->files.size() == 1);
  CHECK(got->files[0].after == "x = 3\n");
  CHECK(git(h->path(), {"ls-tree", "-r", "--name-only", "HEAD", "patches/p"}) ==
        "patches/p/after/pkg/one.py\npatches/p/before/pkg/one.py\n"
        "patches/p/patch.json\npatches/p/recipe.yaml\n");
}

TEST_CASE("drop removes a patch and keeps the others", "[store]") {
  TempDir tmp;
  auto h = History::open(tmp / "h", true);
  h->commit(apply_tx(sample("p1", "a\n", "b\n", "m1.py")));
  h->commit(apply_tx(sample("p2", "c\n", "d\n", "sub/m2.py")));
  CHECK(h->patches().size() == 2);
  Transaction tx;
  tx.message = "rollback p1";
  tx.drop = {"p1"};
  tx.site["m1.py"] = "a\n";
  h->commit(tx);
  auto all = h->patches();
  REQUIRE(all.size() == 1);
  CHECK(all[0].id == "p2");
  CHECK_FALSE(h->patch("p1"));
  CHECK(git(h->path(), {"ls-tree", "--name-only", "HEAD:patches"}) == "p2\n");
  CHECK(git(h->path(), {"show", "HEAD:site/m1.py"}) == "a\n");
  // Dropping the last patch leaves no patches/ folder at all.
  tx.drop = {"p2"};
  tx.site.clear();
  h->commit(tx);
  CHECK(h->patches().empty());
  CHECK(git(h->path(), {"ls-tree", "--name-only", "HEAD"}) == "site\n");
}

TEST_CASE("site_drop removes files and prunes empty folders", "[store]") {
  TempDir tmp;
  auto h = History::open(tmp / "h", true);
  Transaction tx;
  tx.message = "snapshot";
  tx.site = {{"a/b/c.py", "c\n"}, {"a/d.py", "d\n"}};
  h->commit(tx);
  CHECK(git(h->path(), {"ls-tree", "-r", "--name-only", "HEAD"}) == "site/a/b/c.py\nsite/a/d.py\n");
  CHECK(h->site_file("a/b/c.py") == std::optional<std::string>("c\n"));
  tx = {};
  tx.message = "forget c";
  tx.site_drop = {"a/b/c.py"};
  h->commit(tx);
  CHECK_FALSE(h->site_file("a/b/c.py"));
  CHECK(h->site_file("a/d.py") == std::optional<std::string>("d\n"));
  // a/b held only c.py, so a/b is gone too.
  CHECK(git(h->path(), {"ls-tree", "-r", "-t", "--name-only", "HEAD"}) == "site\nsite/a\nsite/a/d.py\n");
  tx.site_drop = {"a/d.py"};
  h->commit(tx);
  CHECK(git(h->path(), {"ls-tree", "-r", "-t", "--name-only", "HEAD"}).empty());
}

TEST_CASE("log lists commits newest first, as git does", "[store]") {
  TempDir tmp;
  auto h = History::open(tmp / "h", true);
  std::vector<std::string> oids;
  for (const char* id : {"one", "two", "three"}) {
    Transaction tx;
    tx.message = std::string("apply ") + id;
    tx.trailers = {{"Sitepatch-Recipe", id}};
    tx.site[std::string(id) + ".py"] = id;
    oids.push_back(h->commit(tx));
  }
  auto log = h->log();
  REQUIRE(log.size() == 3);
  CHECK(log[0].oid == oids[2]);
  CHECK(log[1].oid == oids[1]);
  CHECK(log[2].oid == oids[0]);
  CHECK(log[0].summary == "apply three");
  CHECK(log[0].message == "apply three\n\nSitepatch-Recipe: three\n");
  CHECK(log[0].time > 1600000000);
  CHECK(git(h->path(), {"log", "--format=%H"}) == oids[2] + "\n" + oids[1] + "\n" + oids[0] + "\n");
}

TEST_CASE("bodies round trip byte for byte: CRLF, NUL, no final newline", "[store]") {
  TempDir tmp;
  auto h = History::open(tmp / "h", true);
  const std::string before("line1\r\nline2\r\n\0tail", 19);
  const std::string after = "no newline at end";
  h->commit(apply_tx(sample("bin", before, after, "pkg/data.bin")));
  auto got = History::open(h->path(), false)->patch("bin");
  REQUIRE(got);
  CHECK(got->files[0].before == before);
  CHECK(got->files[0].after == after);
  CHECK(git(h->path(), {"show", "HEAD:patches/bin/before/pkg/data.bin"}) == before);
}

TEST_CASE("bad ids and paths are refused and commit nothing", "[store]") {
  TempDir tmp;
  auto h = History::open(tmp / "h", true);
  CHECK_THROWS_AS(h->commit(apply_tx(sample("a/b", "x", "y"))), sitepatch::Error);
  CHECK_THROWS_AS(h->commit(apply_tx(sample("..", "x", "y"))), sitepatch::Error);
  CHECK_THROWS_AS(h->commit(apply_tx(sample("p", "x", "y", "../evil.py"))), sitepatch::Error);
  CHECK_THROWS_AS(h->commit(apply_tx(sample("p", "x", "y", "/abs.py"))), sitepatch::Error);
  PatchRecord twice = sample("p", "x", "y", "m.py");
  twice.files.push_back(twice.files[0]);
  CHECK_THROWS_AS(h->commit(apply_tx(twice)), sitepatch::Error);
  Transaction tx;
  tx.message = "bad";
  tx.site["a//b.py"] = "x";
  CHECK_THROWS_AS(h->commit(tx), sitepatch::Error);
  CHECK(h->log().empty());
}

TEST_CASE("pack leaves one pack that libgit2 and plain git both read", "[store]") {
  using namespace sitepatch;
  testsupport::TempDir tmp;
  std::string dir = tmp.path + "/h.git";
  auto h = store::History::open(dir, true);
  for (int i = 0; i < 3; ++i) {
    store::Transaction tx;
    tx.message = "commit " + std::to_string(i);
    tx.site["a/b.py"] = "x = " + std::to_string(i) + "\n";
    h->commit(tx);
  }
  h->pack();
  // No loose objects left: only the pack, its index, and git's info folder.
  size_t loose = 0, packs = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir + "/objects")) {
    if (!e.is_regular_file()) continue;
    if (e.path().extension() == ".pack") ++packs;
    else if (e.path().extension() != ".idx" && e.path().parent_path().filename() != "info") ++loose;
  }
  CHECK(loose == 0);
  CHECK(packs == 1);
  CHECK(h->site_file("a/b.py") == std::optional<std::string>("x = 2\n"));
  store::Transaction more;
  more.message = "after the pack";
  more.site["a/b.py"] = "x = 3\n";
  h->commit(more);
  auto log = sitepatch::util::run({"git", "--git-dir", dir, "log", "--format=%s"});
  CHECK(log.out == "after the pack\ncommit 2\ncommit 1\ncommit 0\n");
  CHECK(sitepatch::util::run({"git", "--git-dir", dir, "fsck", "--strict"}).status == 0);
  h->pack();
  CHECK(sitepatch::util::run({"git", "--git-dir", dir, "show", "HEAD~3:site/a/b.py"}).out == "x = 0\n");
}

TEST_CASE("pack adds one small pack per commit, and packs everything into one past sixteen", "[store]") {
  using namespace sitepatch;
  for (bool travels : {false, true}) {
    DYNAMIC_SECTION((travels ? "a travelling history: its commits keep new objects in memory" : "a local history")) {
      testsupport::TempDir tmp;
      std::string dir = tmp.path + "/h.git";
      auto h = store::History::open(dir, true, travels);
      auto count = [&] {
        std::pair<size_t, size_t> n{0, 0};  // packs, loose objects
        for (auto& e : std::filesystem::recursive_directory_iterator(dir + "/objects")) {
          if (!e.is_regular_file()) continue;
          if (e.path().extension() == ".pack") ++n.first;
          else if (e.path().extension() != ".idx" && e.path().parent_path().filename() != "info") ++n.second;
        }
        return n;
      };
      for (int i = 0; i < 17; ++i) {
        store::Transaction tx;
        tx.message = "commit " + std::to_string(i);
        tx.site["a/b.py"] = "x = " + std::to_string(i) + "\n";
        h->commit(tx);
        // Before the pack: the new commit reads back either way, from memory or loose files.
        CHECK(h->site_file("a/b.py") == std::optional<std::string>("x = " + std::to_string(i) + "\n"));
        CHECK((count().second == 0) == travels);
        h->pack();
        // A seventeenth pack would pass the limit: everything goes into one instead.
        size_t packs = i < 16 ? size_t(i + 1) : 1;
        INFO("commit " << i << ": " << count().first << " packs, " << count().second << " loose");
        CHECK(count() == std::pair<size_t, size_t>{packs, 0});
      }
      CHECK(sitepatch::util::run({"git", "--git-dir", dir, "fsck", "--strict"}).status == 0);
      CHECK(sitepatch::util::run({"git", "--git-dir", dir, "show", "HEAD~16:site/a/b.py"}).out == "x = 0\n");
      CHECK(h->site_file("a/b.py") == std::optional<std::string>("x = 16\n"));
      // Reopened as a folder only: everything is on disk.
      auto again = store::History::open(dir, false);
      CHECK(again->log().size() == 17);
    }
  }
}

TEST_CASE("a travelling history packs only the objects its commits wrote, not again what is on disk", "[store]") {
  using namespace sitepatch;
  testsupport::TempDir tmp;
  std::string dir = tmp.path + "/h.git";
  auto objects_in = [&](const std::string& pack_idx) {
    auto r = util::run({"git", "--git-dir", dir, "verify-pack", "-v", pack_idx});
    REQUIRE(r.status == 0);
    std::set<std::string> ids;
    for (auto& line : util::split(r.out, '\n'))
      if (line.size() > 40 && line[40] == ' ') ids.insert(line.substr(0, 40));
    return ids;
  };
  auto packs = [&] {
    std::set<std::string> out;
    for (auto& e : std::filesystem::directory_iterator(dir + "/objects/pack"))
      if (e.path().extension() == ".idx") out.insert(e.path().string());
    return out;
  };
  auto blob = [&](const std::string& rev) {
    return util::trim(util::run({"git", "--git-dir", dir, "rev-parse", rev}).out);
  };
  {
    auto h = store::History::open(dir, true, true);
    store::Transaction tx;
    tx.message = "first";
    tx.site["big/c.py"] = std::string(20000, 'c') + "\n";
    tx.site["a/b.py"] = "x = 0\n";
    h->commit(tx);
    h->pack();
  }
  std::string big = blob("HEAD:site/big/c.py"), zero = blob("HEAD:site/a/b.py");
  auto h = store::History::open(dir, false, true);  // opened again, as the next command does
  int n = 0;
  for (std::string text : {"x = 1\n", "x = 0\n"}) {  // the second goes back: its blob is on disk
    auto before = packs();
    store::Transaction tx;
    tx.message = "b.py is " + text;
    tx.site["a/b.py"] = text;
    tx.site["a/n.py"] = "n = " + std::to_string(++n) + "\n";  // so that a/'s tree is new each time
    h->commit(tx);
    h->pack();
    auto after = packs();
    REQUIRE(after.size() == before.size() + 1);
    std::string added;
    for (auto& p : after)
      if (!before.count(p)) added = p;
    auto ids = objects_in(added);
    // The commit, its root tree and site/ and site/a/ trees; a blob only when new.
    CHECK(ids.count(blob("HEAD")) == 1);
    CHECK(ids.count(blob("HEAD:site/a")) == 1);
    CHECK(ids.count(blob("HEAD:site/a/n.py")) == 1);
    CHECK(ids.count(big) == 0);
    CHECK(ids.count(blob("HEAD:site/big")) == 0);
    CHECK(ids.count(zero) == 0);
    CHECK(ids.count(blob("HEAD:site/a/b.py")) == (text == "x = 1\n" ? 1u : 0u));
  }
  CHECK(util::run({"git", "--git-dir", dir, "fsck", "--strict"}).status == 0);
  CHECK(h->site_file("a/b.py") == std::optional<std::string>("x = 0\n"));
}

TEST_CASE("a record says how its recipe reads replace's later lines, one before format 3 reads them absolute",
          "[store]") {
  TempDir tmp;
  auto h = History::open(tmp / "h", true);
  PatchRecord r = sample("p", "x = 1\n", "x = 2\n");
  r.replace_indent = "absolute";  // a recipe reapplied from an older record keeps its reading
  h->commit(apply_tx(r));
  CHECK(h->patch("p")->replace_indent == "absolute");
  CHECK(git(tmp / "h", {"show", "HEAD:patches/p/patch.json"}).find("\"format\": 3,") != std::string::npos);
  std::vector<detail::FileBlobs> blobs;
  CHECK(detail::record_from_json(R"({"format": 3, "id": "p"})", "p", blobs).replace_indent == "relative");
  CHECK(detail::record_from_json(R"({"format": 2, "id": "p", "replace_indent": "relative"})", "p", blobs)
            .replace_indent == "absolute");
  CHECK(detail::record_from_json(R"({"id": "p"})", "p", blobs).replace_indent == "absolute");
}
