// Which files of a distribution a user changed: RECORD holds pip's sha256 and size of
// each. Hashing all of torch's 20,000 files would take seconds; a file whose size is
// RECORD's and whose time is no later than the install (the .dist-info's INSTALLER)
// is taken as pip's, unless --hash-all.
#include <algorithm>
#include <filesystem>

#include "engine/capture/capture_impl.hpp"
#include "engine/internal.hpp"
#include <nlohmann/json.hpp>

#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/safe_path.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

namespace {

// conda's record of `d`: every file it lists under one of the environment's site
// folders, with the hash of its bytes in the prefix.
std::vector<DistFile> conda_files(Session& s, const site::Distribution& d) {
  std::vector<DistFile> out;
  auto read = s.host.read({s.env.prefix + "/" + d.conda_meta});
  nlohmann::json doc = nlohmann::json::parse(read[0].exists ? read[0].content : "{}", nullptr, false);
  if (!doc.is_object() || !doc.contains("paths_data") || !doc["paths_data"].is_object() ||
      !doc["paths_data"].contains("paths") || !doc["paths_data"]["paths"].is_array())
    return out;
  const nlohmann::json& paths = doc["paths_data"]["paths"];
  for (const auto& entry : paths) {
    if (!entry.is_object() || !entry.contains("_path") || !entry["_path"].is_string()) continue;
    std::string path = entry["_path"];
    std::string hash = entry.value("sha256_in_prefix", entry.value("sha256", std::string()));
    if (hash.size() != 64 || util::ends_with(path, ".pyc")) continue;
    for (auto& dir : s.env.site_dirs) {
      if (!util::starts_with(dir, s.env.prefix + "/")) continue;
      std::string below = dir.substr(s.env.prefix.size() + 1) + "/";
      if (!util::starts_with(path, below)) continue;
      std::string rel = site::normalize_record_path(path.substr(below.size()));
      if (rel.empty() || rel.rfind("../", 0) == 0) continue;
      out.push_back({rel, dir + "/" + rel, "sha256:" + hash, std::to_string(entry.value("size_in_bytes", 0)), ""});
    }
  }
  return out;
}

}  // namespace

bool installed_bytes(const DistFile& f, std::string_view text) {
  if (util::starts_with(f.hash, "sha256:")) return f.hash.compare(7, std::string::npos, util::sha256_hex(text)) == 0;
  return "sha256=" + util::sha256_record(text) == f.hash;
}

const site::Distribution& distribution_named(Session& s, const std::string& name) {
  if (const site::Distribution* d = s.distributions().find(name)) return *d;
  std::vector<std::string> names;
  for (const site::Distribution* d : s.distributions().all()) names.push_back(d->name);
  auto near = util::nearest(name, names);
  throw Error("no distribution named " + name + " is installed in " + s.env.prefix +
              (near.empty() ? "" : "; did you mean " + util::join(near, ", ") + "?"));
}

std::vector<DistFile> hashed_files(Session& s, const site::Distribution& d) {
  std::vector<DistFile> out = d.conda_meta.empty() ? std::vector<DistFile>{} : conda_files(s, d);
  for (const auto& row : d.conda_meta.empty() ? s.distributions().files(d) : std::vector<site::RecordEntry>{}) {
    std::string rel = site::normalize_record_path(row.path);
    if (row.hash.rfind("sha256=", 0) != 0 || rel.empty() || rel[0] == '/' || rel.rfind("../", 0) == 0 ||
        rel.rfind(d.dist_info + "/", 0) == 0 || util::ends_with(rel, ".pyc"))
      continue;
    out.push_back({rel, d.site_dir + "/" + rel, row.hash, row.size, ""});
  }
  if (out.empty())
    throw Error(d.name + " " + d.version + " lists no hash of its files (" +
                (d.conda_meta.empty() ? d.dist_info : d.conda_meta) +
                "): capture tells edited files from the hashes pip's RECORD or conda's record keeps");
  return out;
}

Changes changed_in_place(Session& s, const site::Distribution& d, bool hash_all) {
  Changes out;
  auto files = hashed_files(s, d);
  std::vector<std::string> paths;
  for (auto& f : files) paths.push_back(f.path);
  // conda's packages have no INSTALLER: both times read as 0, and every source is hashed.
  std::string info = d.site_dir + "/" + d.dist_info + "/";
  paths.push_back(info + "INSTALLER");
  paths.push_back(info + "METADATA");
  auto st = s.host.stat(paths);
  int64_t installed = std::max(st[files.size()].mtime_ns, st[files.size() + 1].mtime_ns);
  std::vector<DistFile*> read;
  for (size_t i = 0; i < files.size(); ++i) {
    ++out.checked;
    if (!st[i].exists || !st[i].is_file) {
      out.left_out.push_back(files[i].rel + ": missing");
      continue;
    }
    bool same_size = files[i].size.empty() || files[i].size == std::to_string(st[i].size);
    bool python = util::ends_with(files[i].rel, ".py");
    if (!python) {
      // Not read: a recipe edits sources, and a library can be gigabytes.
      if (!same_size) out.left_out.push_back(files[i].rel + ": not Python source (its size is not RECORD's)");
      continue;
    }
    if (hash_all || !same_size || st[i].mtime_ns > installed || installed == 0) read.push_back(&files[i]);
  }
  std::vector<std::string> wanted;
  for (auto* f : read) wanted.push_back(f->path);
  auto now = s.host.read(wanted);
  out.hashed = read.size();
  for (size_t i = 0; i < read.size(); ++i) {
    DistFile& f = *read[i];
    if (!now[i].exists || installed_bytes(f, now[i].content)) continue;
    f.text = std::move(now[i].content);
    out.python.push_back(f);
  }
  return out;
}

Changes changed_in_copy(Session& s, const site::Distribution& d, const std::string& dir,
                        std::map<std::string, std::string>& installed) {
  // Its bytes are written into the environment as they are: a copy another user could
  // change (the folder, a folder in it, a file, a link on the way) would choose the code
  // others import.
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw Error("--from " + dir + ": no such folder");
  if (auto why = util::unsafe_path(dir)) throw Error("--from " + dir + ": " + *why + "; nothing was written");
  Changes out;
  std::vector<DistFile> changed;
  size_t absent = 0;
  for (auto& f : hashed_files(s, d)) {
    if (!util::ends_with(f.rel, ".py")) continue;  // edit --copy copies the sources
    ++out.checked;
    std::string path = dir + "/" + f.rel;
    if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
      ++absent;  // not copied, or removed from the copy: nothing to capture
      continue;
    }
    if (auto why = util::unsafe_path(path)) throw Error("--from " + dir + ": " + *why + "; nothing was written");
    auto text = util::read_file(path);
    if (!text) throw Error("--from " + dir + ": " + text.error());
    ++out.hashed;
    if (installed_bytes(f, *text)) continue;
    f.text = std::move(*text);
    if (util::ends_with(f.rel, ".py")) changed.push_back(std::move(f));
    else out.left_out.push_back(f.rel + ": not Python source (a recipe edits .py files)");
  }
  std::vector<std::string> paths;
  for (auto& f : changed) paths.push_back(f.path);
  auto now = s.host.read(paths);
  std::vector<std::string> not_pip;
  for (size_t i = 0; i < changed.size(); ++i) {
    if (!now[i].exists || !installed_bytes(changed[i], now[i].content)) not_pip.push_back(changed[i].rel);
    else installed[changed[i].rel] = now[i].content;
  }
  if (!not_pip.empty())
    throw Error("the installed " + util::join(not_pip, ", ") + " of " + d.name + " " + d.version +
                " are not pip's bytes (RECORD's sha256 differs): capture the edits there without --from, or "
                "reinstall first");
  out.python = std::move(changed);
  if (absent == out.checked) throw Error("--from " + dir + " holds none of " + d.name + "'s sources (edit --copy puts them there)");
  if (absent) out.left_out.push_back(std::to_string(absent) + " source(s) not in " + dir + ": taken as pip's");
  return out;
}

std::string module_of(const std::string& rel) {
  if (!util::ends_with(rel, ".py")) return "";
  std::string m = rel.substr(0, rel.size() - 3);
  if (util::ends_with(m, "/__init__")) m.resize(m.size() - 9);
  // Each folder and the file must be a name: `foo.libs/x.py` is no module `foo.libs.x`.
  for (auto& part : util::split(m, '/')) {
    bool ok = !part.empty() && !std::isdigit(static_cast<unsigned char>(part[0]));
    for (unsigned char c : part) ok = ok && (std::isalnum(c) || c == '_' || c >= 0x80);
    if (!ok) return "";
  }
  for (auto& c : m)
    if (c == '/') c = '.';
  return m;
}

}  // namespace sitepatch::engine::detail
