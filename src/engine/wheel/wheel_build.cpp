// sitepatch wheel (principal file of the room): a wheel's Python sources laid out as a
// site-packages folder in a private temp folder, the recipes planned there by the same
// plan `apply` runs (locator, re-exports, tree-sitter and the interpreter's compile, the
// compiled-twin refusal), then the patched wheel written from the source's members.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include <spdlog/spdlog.h>

#include "engine/internal.hpp"
#include "engine/wheel/wheel_impl.hpp"
#include "sitepatch/site/environment.hpp"
#include "sitepatch/recipe/version.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch/util/temp_folder.hpp"

namespace fs = std::filesystem;

namespace sitepatch::engine {

namespace {

// A file of the private folder: made new, never through a link.
void put_file(const std::string& path, const std::string& data) {
  fs::create_directories(fs::path(path).parent_path());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw Error(path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw Error(path + ": " + std::strerror(err));
    }
    done += size_t(n);
  }
  ::close(fd);
}

// The wheel as pip would install it into `site`: its sources with their bytes, its
// dist-info's METADATA and RECORD, every other file it installs there as an empty file
// (what the locator asks of those is whether they are there: a compiled twin).
void lay_out(const detail::SourceWheel& w, const std::string& site) {
  for (auto& m : w.members) {
    std::string rel = site::installed_rel(m.name);
    if (m.dir || rel.empty()) continue;
    std::string data;
    if (auto it = w.sources.find(m.name); it != w.sources.end()) data = it->second;
    else if (m.name == w.dist_info + "/METADATA") data = w.metadata;
    else if (m.name == w.dist_info + "/RECORD") data = w.record;
    try {
      put_file(site + "/" + rel, data);
    } catch (const std::exception& e) {
      // Two members that install at one path (pkg/x.py and pkg-1.0.data/purelib/pkg/x.py).
      throw Error(w.path + ": its member " + util::printable(m.name) + " cannot be laid out as " +
                  util::printable(rel) + " (" + e.what() + ")");
    }
  }
}

struct TempTree {
  std::string path;
  ~TempTree() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// The Python that compiles the edits, and the wheel's folder as its only site folder.
Session wheel_session(host::Host& host, const detail::SourceWheel& w, const std::string& python,
                      const std::string& root, WheelResult& r) {
  site::Environment env = host.probe(python);
  r.python = "Python " + env.version + " (" + env.python + ")";
  env.site_dirs = {root + "/site"};
  env.pth_dirs.clear();
  env.prefix = env.base_prefix = root;
  env.dpkg = false;
  // The wheel's own compiled modules shadow its sources whatever this Python's suffixes.
  std::vector<std::string> suffixes = w.ext_suffixes;
  for (auto& s : env.ext_suffixes)
    if (std::find(suffixes.begin(), suffixes.end(), s) == suffixes.end()) suffixes.push_back(s);
  env.ext_suffixes = suffixes;
  Session s(host, std::move(env), root + "/state");
  s.wheel = true;
  return s;
}

// Which interpreter tags the wheel names ("cp311", "py3") that `version` ("3.11.7") is.
bool tag_fits(const std::string& tags, const std::string& version) {
  auto parts = util::split(version, '.');
  if (parts.size() < 2) return false;
  for (auto& t : util::split(tags, '.')) {
    std::string digits = t.size() > 2 ? t.substr(2) : "";
    if (digits == parts[0] || digits == parts[0] + parts[1]) return true;
  }
  return false;
}

void note_what_is_left(const detail::SourceWheel& w, const std::string& python_version, WheelResult& r) {
  r.pure = w.compiled == 0;
  if (!r.pure)
    r.notes.push_back(w.name.file() + " is not pure Python: only its .py files were patched; its " +
                      std::to_string(w.compiled) + " compiled module(s) are copied as they are");
  if (!tag_fits(w.name.python, python_version))
    r.notes.push_back("no Python of the wheel's tag (" + w.name.python + ") compiled the edits: " + r.python +
                      " did (--python chooses another)");
  for (auto& m : w.members)
    if (m.name == w.dist_info + "/RECORD.jws" || m.name == w.dist_info + "/RECORD.p7s")
      r.notes.push_back(w.dist_info + ": its signature (" + m.name.substr(m.name.rfind('/') + 1) +
                        ") no longer holds for the patched files and is left out");
}

}  // namespace

std::string wheel_label(const std::vector<recipe::Recipe>& recipes) {
  std::vector<std::string> keys;
  for (auto& r : recipes) keys.push_back(r.id + " " + r.hash);
  std::sort(keys.begin(), keys.end());
  return "sitepatch." + util::sha256_hex(util::join(keys, "\n")).substr(0, 8);
}

namespace {

// The source's bytes of the module installed as `rel`.
std::string source_text(const detail::SourceWheel& w, const std::string& rel) {
  for (auto& [member, text] : w.sources)
    if (site::installed_rel(member) == rel) return text;
  return "";
}

// The new wheel's version, in PEP 440's normal form (what pip and uv compare file names
// and METADATA with), and its path in the output folder.
void name_output(const detail::SourceWheel& w, const std::vector<recipe::Recipe>& recipes, const WheelRequest& req,
                 WheelResult& r) {
  std::string wanted = req.version.empty() ? site::with_local_label(w.version, wheel_label(recipes)) : req.version;
  auto v = recipe::Version::parse(wanted);
  if (!v) throw Error("--version " + util::printable(wanted) + " is not a version PEP 440 reads", Exit::usage);
  r.version_to = v->normalized();
  site::WheelName out_name = w.name;
  out_name.version = r.version_to;
  r.output = req.out_dir + "/" + out_name.file();
  std::error_code ec;
  if (fs::equivalent(r.output, req.source, ec))
    throw Error("wheel: the patched wheel would replace its source, " + req.source + ": give another -o or --version",
                Exit::usage);
  if (fs::is_directory(fs::symlink_status(r.output, ec)))
    throw Error("wheel: " + r.output + " is a folder; nothing was written", Exit::usage);
}

}  // namespace

WheelResult build_wheel(host::Host& host, std::vector<recipe::Recipe> recipes, const WheelRequest& req) {
  WheelResult r;
  // The same recipes in any order make the same wheel: they apply in id order.
  std::sort(recipes.begin(), recipes.end(), [](auto& a, auto& b) { return a.id < b.id; });
  r.source_file = req.source_name.empty() ? fs::path(req.source).filename().string() : req.source_name;
  detail::SourceWheel w = detail::read_wheel(req.source, r.source_file);
  r.source_sha256 = util::sha256_file_hex(req.source);
  r.name = w.dist_name;
  r.version_from = w.version;
  name_output(w, recipes, req, r);

  TempTree tree{util::make_temp_folder("wheel")};
  lay_out(w, tree.path + "/site");
  Session s = wheel_session(host, w, req.python, tree.path, r);
  note_what_is_left(w, s.env.version, r);
  r.plan = detail::plan_against(s, std::move(recipes), {}, false);
  if (!r.plan.ok() || req.dry_run) return r;

  std::map<std::string, std::string> changed, edited;
  for (auto& fc : r.plan.files) changed[fc.rel] = fc.new_text;
  for (auto& e : r.plan.edits)
    if (!e.file.empty()) {
      auto it = changed.find(e.file);
      edited[e.file] = it != changed.end() ? it->second : source_text(w, e.file);
    }
  auto entries = detail::patched_members(w, changed, edited, r.plan.recipes, r, req.sitepatch_version);
  if (req.before_write) req.before_write(r.output);
  util::write_zip(r.output, req.source, entries);
  r.output_sha256 = util::sha256_file_hex(r.output);
  r.written = true;
  spdlog::info("wheel: {} written ({} member(s), {} changed)", r.output, entries.size(), changed.size());
  return r;
}

}  // namespace sitepatch::engine
